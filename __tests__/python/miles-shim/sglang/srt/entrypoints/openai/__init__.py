"""Stand-in for SGLang's OpenAI entrypoint package: only the request models miles' session path reads."""
