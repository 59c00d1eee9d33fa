// The error every chat-template input problem raises (unparsable tool arguments, malformed tools, a failed render).
// On its own so the input-normalizing modules and the renderer share it without importing each other.

/** A chat message or tool list could not be turned into template input (e.g. tool arguments that are not JSON). */
export class ChatTemplateError extends Error {
  override readonly name = "ChatTemplateError";
}
