"""Reference for the qwen3_coder value conversion: Python's own ast.literal_eval, int, float and json.dumps.

Reads a JSON list of strings on stdin; writes, for each, {"literal": ..., "int": ..., "float": ...} where each
entry is the json.dumps(ensure_ascii=False) text of the value, "not-literal" when the conversion raises, or
"not-json" when json.dumps refuses the value.
"""

import ast
import json
import sys


def attempt(convert, text):
    try:
        value = convert(text)
    except Exception:  # any failure of the conversion itself
        return "not-literal"
    try:
        return json.dumps(value, ensure_ascii=False)
    except Exception:  # the value exists but JSON cannot hold it
        return "not-json"


out = []
for text in json.loads(sys.stdin.read()):
    out.append({"literal": attempt(ast.literal_eval, text), "int": attempt(int, text), "float": attempt(float, text)})
sys.stdout.write(json.dumps(out))
