"""Reference renderer for the cross-check test: Python's Jinja2 in transformers' chat-template environment.

Reads {"template": str, "cases": [str, ...], "variables": {...}} on stdin, where each case is the JSON text of
{"messages", "tools", "add_generation_prompt", "kwargs"} and the optional "variables" are the checkpoint's
special-token variables (transformers passes tokenizer.special_tokens_map under the caller's kwargs); writes a
JSON list of rendered strings (or {"error": text}) on stdout. Any checkpoint's template, not only Qwen3's. Inputs are prepared the way miles' template helpers prepare them: tool-call
arguments given as strings are read with json.loads, tools are dumped in the shape of SGLang's Tool model.
"""

import json
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def strftime_now(format):
    return datetime.now().strftime(format)


def build_environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def prepare_messages(messages):
    prepared = []
    for message in messages:
        message = json.loads(json.dumps(message))
        if message.get("role") == "assistant":
            if message.get("content") is None:
                message["content"] = ""
            for call in message.get("tool_calls") or []:
                function = call.get("function")
                if function and isinstance(function.get("arguments"), str):
                    function["arguments"] = json.loads(function["arguments"])
        prepared.append(message)
    return prepared


def sglang_tool_dump(tool):
    wrapped = tool if isinstance(tool, dict) and "function" in tool else {"type": "function", "function": tool}
    function = wrapped["function"]
    tool_defer = wrapped.get("defer_loading")
    function_defer = function.get("defer_loading")
    if function_defer is None:
        function_defer = tool_defer
    dumped_function = {
        "description": function.get("description"),
        "name": function["name"],
        "parameters": function.get("parameters"),
        "strict": bool(function.get("strict", False)),
    }
    if function_defer is not None:
        dumped_function["defer_loading"] = function_defer
    return {"type": wrapped.get("type", "function"), "function": dumped_function, "defer_loading": tool_defer}


def main():
    request = json.loads(sys.stdin.read())
    template = build_environment().from_string(request["template"])
    variables = request.get("variables") or {}
    out = []
    for text in request["cases"]:
        case = json.loads(text)
        tools = case.get("tools")
        tools = [sglang_tool_dump(t) for t in tools] if tools else None
        try:
            out.append(
                template.render(
                    messages=prepare_messages(case["messages"]),
                    tools=tools,
                    documents=None,
                    add_generation_prompt=case["add_generation_prompt"],
                    **{**variables, **case["kwargs"]},
                )
            )
        except Exception as exc:  # reported to the test, which fails naming the case
            out.append({"error": f"{type(exc).__name__}: {exc}"})
    sys.stdout.write(json.dumps(out))


main()
