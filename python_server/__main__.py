"""Command line: python -m python_server --bind ENDPOINT [--allow-imports] [--idle-timeout S] [--max-message-bytes N]
[--exit-with-parent]."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import PROTOCOL_VERSION
from .server import Server


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m python_server", description="sparsepcl Gymnasium env server (ZeroMQ ROUTER + msgpack)")
    p.add_argument("--bind", required=True, help="ipc:///path or tcp://127.0.0.1:PORT (tcp port 0 picks a free port)")
    p.add_argument("--allow-imports", action="store_true", help="allow 'module:Class' env ids (imports arbitrary modules)")
    p.add_argument("--idle-timeout", type=float, default=300.0, help="close the envs of a client silent this many seconds (0: never)")
    p.add_argument("--max-message-bytes", type=int, default=64 << 20, help="largest request accepted")
    p.add_argument("--exit-with-parent", action="store_true", help="stop when the process that started the server dies")
    args = p.parse_args(argv)
    if args.bind.startswith("tcp://") and not args.bind.startswith(("tcp://127.", "tcp://localhost", "tcp://[::1]")):
        print(f"python_server: warning: binding {args.bind} beyond loopback", file=sys.stderr)
    parent = os.getppid() if args.exit_with_parent else None
    srv = Server(args.bind, args.allow_imports, args.idle_timeout, args.max_message_bytes, parent_pid=parent)
    # The ready handshake: one JSON line on stdout, after the socket is bound.
    print(json.dumps({"ready": True, "protocol": PROTOCOL_VERSION, "endpoint": srv.endpoint, "pid": os.getpid()}), flush=True)
    prof_path = os.environ.get("SPARSEPCL_SERVER_PROFILE")
    if not prof_path:
        srv.serve()
        return 0
    # Developer aid: profile the whole serve loop and dump cProfile stats at exit.
    import cProfile  # noqa: PLC0415

    prof = cProfile.Profile()
    try:
        prof.runcall(srv.serve)
    finally:
        prof.dump_stats(f"{prof_path}.{os.getpid()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
