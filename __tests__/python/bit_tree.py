"""Reference bit tree for the number-kinds test: reads a JSON list of samples payloads (hex) on stdin, decodes each
`_samples_meta` with json.loads as a Python driver does, and prints, per payload, its leaves as [path, kind, value]
with the seed's kinds: ("float64", the 8 bytes in hex) for a float, ("int", digits) for an int, plus whether each
payload's tree equals each other's."""

import json
import struct
import sys


def leaves(value, path, out):
    if isinstance(value, dict):
        for key in sorted(value):
            leaves(value[key], f"{path}.{key}", out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            leaves(item, f"{path}[{i}]", out)
    elif isinstance(value, bool):
        out.append([path, "bool", str(value)])
    elif isinstance(value, int):
        out.append([path, "int", str(value)])
    elif isinstance(value, float):
        out.append([path, "float64", struct.pack(">d", value).hex()])
    else:
        out.append([path, type(value).__name__, repr(value)])
    return out


def meta_of(payload):
    (header_len,) = struct.unpack("<Q", payload[:8])
    header = json.loads(payload[8 : 8 + header_len])
    start, end = header["_samples_meta"]["data_offsets"]
    return json.loads(payload[8 + header_len :][start:end].decode("utf-8"))


trees = [leaves(meta_of(bytes.fromhex(text)), "meta", []) for text in json.loads(sys.stdin.read())]
print(json.dumps({"leaves": trees, "equal": [[a == b for b in trees] for a in trees]}))
