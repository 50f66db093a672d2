"""sparsepcl's Python environment server: Gymnasium envs served over ZeroMQ (ROUTER) with msgpack.

See bridge/PROTOCOL.md for the wire protocol. Run with ``python -m python_server --bind ipc:///tmp/x``.
"""

PROTOCOL_VERSION = 2
SERVER_VERSION = "0.6.0"
