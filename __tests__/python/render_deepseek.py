"""Reference renderer for the DeepSeek cross-check: the official Python encoders, driven as miles' bridge drives them.

Reads {"encoders": DIR, "cases": [{"encoder", "messages", "tools", "kwargs", "add_generation_prompt"}, ...]} on stdin.
DIR holds miles' vendored encoding_dsv32.py and SGLang's encoding_dsv4.py (the encoders are not shipped with this
package). For each case the bridge's steps (miles/utils/chat_template_utils/deepseek.py and template.py at 31f1ca96):
assistant content None becomes "" and dict tool-call arguments become JSON text; enable_thinking / thinking select
thinking_mode (default "thinking"); the tools, already in the shape SGLang's Tool model dumps them, go into the first
message, a system message (an empty one is inserted when there is none); the encoder renders; without the generation
prompt, the family's next-assistant suffix is cut. Writes a JSON list of strings (or {"error": text}) on stdout.
"""

import copy
import importlib.util
import json
import os
import sys

ASSISTANT = "<｜Assistant｜>"


def load(directory, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(directory, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def encode_config(kwargs):
    config = dict(kwargs)
    for key in ("enable_thinking", "thinking"):
        value = config.pop(key, None)
        if value is not None:
            config.setdefault("thinking_mode", "thinking" if value else "chat")
    config.setdefault("thinking_mode", "thinking")
    return config


def prepare(messages):
    out = copy.deepcopy(messages)
    for message in out:
        if message.get("role") != "assistant":
            continue
        if message.get("content") is None:
            message["content"] = ""
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if isinstance(function.get("arguments"), dict):
                function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
    return out


def suffix(encoder, role, token):
    if role in ("user", "developer"):
        return ASSISTANT + token
    if role == "tool":
        return ("\n\n" + token) if encoder == "deepseek_v32" else ASSISTANT + token
    return None


def render(modules, case):
    encoder = case["encoder"]
    module = modules[encoder]
    config = encode_config(case.get("kwargs") or {})
    messages = prepare(case["messages"])
    tools = case.get("tools")
    if tools:
        if not messages or messages[0].get("role") != "system":
            messages.insert(0, {"role": "system", "content": ""})
        messages[0]["tools"] = tools
    rendered = module.encode_messages(messages, **config)
    if case.get("add_generation_prompt", True) or not case["messages"]:
        return rendered
    token = module.thinking_start_token if config["thinking_mode"] == "thinking" else module.thinking_end_token
    cut = suffix(encoder, case["messages"][-1].get("role"), token)
    if cut is None or not rendered.endswith(cut):
        return rendered
    return rendered[: -len(cut)]


def main():
    request = json.loads(sys.stdin.read())
    modules = {
        "deepseek_v32": load(request["encoders"], "encoding_dsv32"),
        "deepseek_v4": load(request["encoders"], "encoding_dsv4"),
    }
    out = []
    for case in request["cases"]:
        try:
            out.append(render(modules, case))
        except Exception as error:  # noqa: BLE001 - the test reports the case's error text
            out.append({"error": f"{type(error).__name__}: {error}"})
    sys.stdout.write(json.dumps(out))


main()
