"""PLAIN authentication of the server's socket: the credential file, the check of the bind address,
the ZAP handler (pyzmq's ThreadAuthenticator) and the log of refused handshakes.

PLAIN authenticates a client by a user and password sent in clear: it does not encrypt. Across an
untrusted network, run the bridge through an SSH tunnel or a VPN (docs/bridge.md)."""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import stat
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import zmq
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils.monitor import recv_monitor_message

# The environment variable naming the credential file when --auth-file is not given.
ENV_VAR = "SPARSEPCL_AUTH_FILE"

# The longest user or password PLAIN can carry (each is sent with a one-byte length).
MAX_FIELD = 255


class AuthFileError(Exception):
    """A credential file that cannot be used: missing, unreadable, readable by others, malformed."""


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str = field(repr=False)  # never printed


def load(path: str) -> Credentials:
    """Reads a credential file ({"user": ..., "password": ...}), refusing one that is not a regular
    file of this user's that only this user can read and write."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise AuthFileError(f"auth file {path}: {e.strerror}") from e
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise AuthFileError(f"auth file {path}: not a regular file")
        if st.st_uid != os.getuid():
            raise AuthFileError(f"auth file {path} belongs to uid {st.st_uid}, not to this user (uid {os.getuid()})")
        if st.st_mode & 0o077:
            raise AuthFileError(f"auth file {path} is open to group or others (mode {stat.S_IMODE(st.st_mode):04o}): "
                                f"it holds a password; run chmod 600 {path}")
        raw = f.read(16 << 10)
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise AuthFileError(f"auth file {path}: not JSON ({e.__class__.__name__}); make one with `pcl auth new FILE`") from e
    if not isinstance(doc, dict):
        raise AuthFileError(f"auth file {path}: want an object with \"user\" and \"password\"")
    vals = []
    for key in ("user", "password"):
        v = doc.get(key)
        if not isinstance(v, str) or not 1 <= len(v.encode()) <= MAX_FIELD:
            raise AuthFileError(f"auth file {path}: \"{key}\" must be a string of 1 to {MAX_FIELD} bytes")
        vals.append(v)
    return Credentials(vals[0], vals[1])


def is_local(endpoint: str) -> bool:
    """Whether binding endpoint is reachable only from this machine: ipc, inproc, or tcp on a loopback
    address (127.0.0.0/8, ::1, localhost). Anything else (0.0.0.0, *, a host name, an interface) is
    open to the network."""
    scheme, sep, rest = endpoint.partition("://")
    if not sep:
        return False
    if scheme in ("ipc", "inproc"):
        return True
    if scheme != "tcp":
        return False
    host = rest.rpartition(":")[0]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Quiet:
    """A logger that drops everything: pyzmq's authenticator logs credentials at debug level."""

    def __getattr__(self, _name: str) -> Callable[..., None]:
        return lambda *_a, **_k: None


class _Authenticator(ThreadAuthenticator):
    """pyzmq's ZAP handler with one user, compared in constant time; a refusal is logged with the
    client's address (never the user or password it tried)."""

    def __init__(self, context: zmq.Context[Any], creds: Credentials, log: Callable[[str], None]) -> None:
        super().__init__(context, log=_Quiet())
        self._user = creds.user.encode()
        self._password = creds.password.encode()
        self._log = log
        self._address = "?"

    async def handle_zap_message(self, msg: list[bytes]) -> None:
        # The address is the 4th frame of a ZAP request (RFC 27); one request is handled at a time.
        self._address = msg[3].decode(errors="replace") if len(msg) > 3 else "?"
        await super().handle_zap_message(msg)

    def _authenticate_plain(self, domain: str, username: str, password: str) -> tuple[bool, bytes]:
        ok = hmac.compare_digest(username.encode(), self._user) & hmac.compare_digest(password.encode(), self._password)
        if not ok:
            self._log(f"python_server: refused a client from {self._address}: wrong user or password")
        return ok, b"OK" if ok else b"wrong user or password"


# Handshake failures the monitor logs (a wrong credential is logged by the ZAP handler, with the address).
_FAILURES = zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL


def _describe(event: int, value: int) -> str:
    if event == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL and value == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
        return "no credential (the client did not use PLAIN: give it the auth file)"
    if event == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
        return f"ZMTP handshake failed (protocol error {value:#x})"
    return (f"the client hung up during the handshake ({os.strerror(value)}), as one without credentials "
            "(or not speaking ZMTP) does")


class Guard:
    """Requires PLAIN credentials on sock: sets it up as a PLAIN server (call before bind), answers
    ZAP requests in a thread of pyzmq's (logging a wrong credential with the client's address), and
    logs the other refused handshakes from another (socket monitor events, which name only the
    server's endpoint). stop() ends both."""

    def __init__(self, ctx: zmq.Context[Any], sock: zmq.Socket[Any], creds: Credentials, log: Callable[[str], None]) -> None:
        self.sock = sock
        self.log = log
        self.auth = _Authenticator(ctx, creds, log)
        self.auth.start()
        sock.setsockopt(zmq.PLAIN_SERVER, 1)
        sock.setsockopt(zmq.ZAP_DOMAIN, b"sparsepcl")
        self.monitor = sock.get_monitor_socket(_FAILURES)
        self.thread = threading.Thread(target=self._watch, name="auth-refusals", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        try:
            while True:
                ev = recv_monitor_message(self.monitor)
                if ev["event"] == zmq.EVENT_MONITOR_STOPPED:
                    return
                peer = ev["endpoint"].decode(errors="replace") if isinstance(ev["endpoint"], bytes) else str(ev["endpoint"])
                self.log(f"python_server: refused a connection to {peer}: {_describe(ev['event'], ev['value'])}")
        except zmq.ZMQError:
            return  # the context is going away
        finally:
            self.monitor.close(0)

    def stop(self) -> None:
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.thread.join(timeout=2)
        self.auth.stop()
