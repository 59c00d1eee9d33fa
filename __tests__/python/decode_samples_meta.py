"""Decodes a samples payload (safetensors) from stdin with struct and json only, as a Python driver would, and
prints the Python type names of each sample's reward and of the metadata values the test asks about."""

import json
import struct
import sys

payload = sys.stdin.buffer.read()
(header_len,) = struct.unpack("<Q", payload[:8])
header = json.loads(payload[8 : 8 + header_len])
start, end = header["_samples_meta"]["data_offsets"]
body = payload[8 + header_len :]
meta = json.loads(body[start:end].decode("utf-8"))
samples = meta["samples"]
print(
    json.dumps(
        {
            "reward": [[type(s["reward"]).__name__, repr(s["reward"])] for s in samples],
            "agent": {k: [type(v).__name__, repr(v)] for k, v in meta["session_metadata"]["agent"].items()},
            "metadata_keys": [list(s["metadata"].keys()) for s in samples],
        }
    )
)
