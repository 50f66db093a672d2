"""Command line: python -m python_server --bind ENDPOINT [--auth-file FILE] [--insecure] [--allow-imports] [--env-module MODULE]...
[--allow-render] [--idle-timeout S] [--max-message-bytes N] [--max-groups-per-client N] [--max-copies-per-client N] [--max-copies N]
[--max-inflight N] [--exit-with-parent] [--remove-dir]."""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import json
import os
import signal
import sys

from . import PROTOCOL_VERSION, auth
from .server import Limits, Server


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m python_server", description="sparsepcl Gymnasium env server (ZeroMQ ROUTER + msgpack)")
    p.add_argument("--bind", required=True, help="ipc:///path or tcp://127.0.0.1:PORT (tcp port 0 picks a free port)")
    p.add_argument("--auth-file", default=os.environ.get(auth.ENV_VAR) or None, metavar="FILE",
                   help=f"require ZeroMQ PLAIN credentials from FILE (mode 0600; `pcl auth new FILE` makes one); default ${auth.ENV_VAR}")
    p.add_argument("--insecure", action="store_true",
                   help="allow binding beyond loopback without --auth-file: anyone who can reach the port can use the server")
    p.add_argument("--allow-imports", action="store_true", help="allow 'module:Class' env ids (imports arbitrary modules)")
    p.add_argument("--env-module", action="append", default=[], metavar="MODULE",
                   help="import MODULE before serving: a user package that registers Gymnasium ids (repeatable)")
    p.add_argument("--idle-timeout", type=float, default=300.0, help="close the envs of a client silent this many seconds (0: never)")
    p.add_argument("--max-message-bytes", type=int, default=64 << 20, help="largest request accepted")
    p.add_argument("--allow-render", action="store_true", help="allow render modes that may need a display (e.g. human)")
    d = Limits()
    p.add_argument("--max-groups-per-client", type=int, default=d.groups_per_client, help="env groups one client may hold")
    p.add_argument("--max-copies-per-client", type=int, default=d.copies_per_client, help="env copies one client may hold")
    p.add_argument("--max-copies", type=int, default=d.copies_total, help="env copies over all clients")
    p.add_argument("--max-inflight", type=int, default=d.inflight_per_client, help="requests queued per client before the server stops reading it")
    p.add_argument("--exit-with-parent", action="store_true", help="stop when the process that started the server dies")
    p.add_argument("--remove-dir", action="store_true", help="on exit, also remove the directory of the ipc socket if it is left empty")
    args = p.parse_args(argv)
    for name in ("max_groups_per_client", "max_copies_per_client", "max_copies", "max_inflight", "max_message_bytes"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    for module in args.env_module:
        try:
            importlib.import_module(module)
        except Exception as e:  # noqa: BLE001 - whatever the user's module raises, say so and stop
            print(f"python_server: --env-module {module}: {type(e).__name__}: {e} (is it on the server's PYTHONPATH?)", file=sys.stderr)
            return 2
    # A crash in native code (an abort in a GL library, a segfault) prints the Python stack to stderr,
    # which a Go client that started the server puts in its error.
    faulthandler.enable()
    creds = None
    if args.auth_file:
        try:
            creds = auth.load(args.auth_file)
        except auth.AuthFileError as e:
            print(f"python_server: {e}", file=sys.stderr)
            return 2
    if not auth.is_local(args.bind):
        if creds is None and not args.insecure:
            print(f"python_server: refusing to bind {args.bind}: it is reachable from other machines and no credentials are set. "
                  f"Give --auth-file FILE (or ${auth.ENV_VAR}; `pcl auth new FILE` makes one), or bind tcp://127.0.0.1:PORT "
                  "and reach it through an SSH tunnel, or pass --insecure to serve anyone who can reach the port.", file=sys.stderr)
            return 2
        if creds is None:
            print(f"python_server: WARNING: --insecure: serving {args.bind} WITHOUT AUTHENTICATION. Anyone who can reach "
                  "this port can make envs here" + (" and import any installed module (--allow-imports)" if args.allow_imports else "")
                  + ". Use --auth-file on any network you do not fully trust.", file=sys.stderr)
        else:
            print(f"python_server: serving {args.bind} with PLAIN credentials: they authenticate clients but nothing is "
                  "encrypted; across an untrusted network use an SSH tunnel or a VPN (docs/bridge.md).", file=sys.stderr)
    parent = os.getppid() if args.exit_with_parent else None
    limits = Limits(groups_per_client=args.max_groups_per_client, copies_per_client=args.max_copies_per_client,
                    copies_total=args.max_copies, inflight_per_client=args.max_inflight)
    srv = Server(args.bind, args.allow_imports, args.idle_timeout, args.max_message_bytes, parent_pid=parent,
                 limits=limits, allow_render=args.allow_render, remove_dir=args.remove_dir,
                 credentials=creds)
    # Before the ready line: a SIGTERM sent as soon as the server says it is ready must stop it
    # cleanly (closing the envs and removing the socket file), not kill it.
    signal.signal(signal.SIGTERM, srv.stop)
    signal.signal(signal.SIGINT, srv.stop)
    # The ready handshake: one JSON line on stdout, after the socket is bound.
    print(json.dumps({"ready": True, "protocol": PROTOCOL_VERSION, "endpoint": srv.endpoint, "pid": os.getpid(),
                      "auth": "PLAIN" if creds is not None else "NULL"}), flush=True)
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
