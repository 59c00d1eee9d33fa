"""Reference json for the py-json test: reads a JSON list of texts on stdin; for each, json.loads it and writes
back what json.dumps gives under the settings the miles session server uses at each site, plus Python's type
names of the top-level values, or the JSONDecodeError text."""

import json
import sys


def type_tree(value):
    if isinstance(value, dict):
        return {k: type_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [type_tree(v) for v in value]
    return type(value).__name__


out = []
for text in json.loads(sys.stdin.read()):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        out.append({"error": str(exc)})
        continue
    entry = {
        "default": json.dumps(value),
        "tojson": json.dumps(value, ensure_ascii=False),
        "meta": json.dumps(value, ensure_ascii=False, separators=(",", ":")),
        "types": json.dumps(type_tree(value), ensure_ascii=False),
    }
    try:
        entry["response"] = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:
        entry["response_error"] = str(exc)
    out.append(entry)
sys.stdout.write(json.dumps(out))
