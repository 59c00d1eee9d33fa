"""Starts one of miles' own Python session servers (v1 or v2) for the cross-check against ours.

Two configurations:
- serve-session: the arguments miles' test helper `_serve_session` builds (tests/session_parity_utils.py at
  31f1ca96): tito_model "qwen3", chat_template_path None (the checkpoint's own template), kwargs
  {"enable_thinking": False}; miles' argument parser never runs.
- production: what miles' argument parser makes of `--tito-model qwen3` (miles/utils/arguments.py): the family's
  fixed template and its pinned kwargs over the parser's default kwargs `{}`.

Usage: serve_miles_session.py MILES_DIR v1|v2 serve-session|production BACKEND_URL HF_CHECKPOINT
Prints `listening on http://127.0.0.1:PORT` once it accepts connections (a free port bound here), then serves
until terminated.
"""

import os
import socket
import sys
from types import SimpleNamespace

miles_dir, version, config, backend_url, hf_checkpoint = sys.argv[1:6]
sys.path.insert(0, miles_dir)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "miles-shim"))

import uvicorn  # noqa: E402

from miles.rollout.session.server import SessionServer  # noqa: E402

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
instance_id = f"session-parity-{version}"

chat_template_path = None
kwargs = {"enable_thinking": False}
if config == "production":
    from miles.utils.chat_template_utils import resolve_fixed_chat_template

    chat_template_path, pinned = resolve_fixed_chat_template("qwen3")
    kwargs = {**{}, **pinned}
elif config != "serve-session":
    raise SystemExit(f"unknown configuration {config!r}: serve-session or production")

args = SimpleNamespace(
    miles_router_timeout=120.0,
    hf_checkpoint=hf_checkpoint,
    chat_template_path=chat_template_path,
    apply_chat_template_kwargs=kwargs,
    tito_model="qwen3",
    sglang_speculative_algorithm=None,
    use_session_server=version,
    use_rollout_routing_replay=False,
    use_rollout_indexer_replay=False,
    session_server_instance_id=instance_id,
    session_server_ip="127.0.0.1",
    session_server_ports=[port],
    session_server_instance_ids={port: instance_id},
    save_debug_trajectory_data=None,
    max_seq_len=None,
    session_verify_cycles=1,
    tool_call_failure_mode="rollback",
    session_sample_picker_path="miles.rollout.session.v2.picker_hub.drop_retries",
    session_sample_postprocessor_path="miles.rollout.session.v2.postprocessor_hub.default_postprocess",
)
app = SessionServer(args, backend_url=backend_url).app
server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))


async def serve() -> None:
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            break
        await asyncio.sleep(0.05)
    else:
        print(f"listening on http://127.0.0.1:{port}", flush=True)
    await task


import asyncio  # noqa: E402

asyncio.run(serve())
