"""PLAIN authentication of the server, over real sockets: the credential file's checks, the right,
wrong and missing credential against a real server process, and the refusal to listen beyond
loopback without credentials."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import msgpack
import pytest
import zmq

from python_server import auth

ROOT = Path(__file__).resolve().parents[2]


def write_creds(path: Path, user: str = "u1", password: str = "correct-horse", mode: int = 0o600) -> Path:
    path.write_text(json.dumps({"user": user, "password": password}))
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode,ok", [(0o600, True), (0o400, True), (0o640, False), (0o604, False), (0o620, False)])
def test_load_refuses_files_open_to_others(tmp_path: Path, mode: int, ok: bool) -> None:
    path = write_creds(tmp_path / "auth.json", mode=mode)
    if ok:
        assert auth.load(str(path)) == auth.Credentials("u1", "correct-horse")
        return
    with pytest.raises(auth.AuthFileError, match=f"mode {mode:04o}.*chmod 600"):
        auth.load(str(path))


@pytest.mark.parametrize("body,err", [
    ("user=u1", "not JSON"),
    ('["u1", "p"]', "want an object"),
    ('{"user": "u1"}', '"password" must be a string'),
    ('{"user": "", "password": "p"}', '"user" must be a string of 1 to 255 bytes'),
])
def test_load_refuses_malformed_files(tmp_path: Path, body: str, err: str) -> None:
    path = tmp_path / "auth.json"
    path.write_text(body)
    path.chmod(0o600)
    with pytest.raises(auth.AuthFileError, match=err):
        auth.load(str(path))


def test_credentials_never_print_the_password() -> None:
    assert "correct-horse" not in repr(auth.Credentials("u1", "correct-horse"))


@pytest.mark.parametrize("endpoint,local", [
    ("ipc:///tmp/x.sock", True), ("inproc://x", True), ("tcp://127.0.0.1:5555", True), ("tcp://127.0.0.2:0", True),
    ("tcp://localhost:5555", True), ("tcp://[::1]:5555", True), ("tcp://0.0.0.0:5555", False), ("tcp://*:5555", False),
    ("tcp://10.1.2.3:5555", False), ("tcp://eth0:5555", False), ("tcp://node7:5555", False), ("tcp://[::]:5555", False),
    ("ws://127.0.0.1:5555", False), ("garbage", False),
])
def test_is_local(endpoint: str, local: bool) -> None:
    assert auth.is_local(endpoint) is local


class Proc:
    """A server process (python -m python_server) and its ready line."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.p = subprocess.Popen([sys.executable, "-m", "python_server", *args], cwd=ROOT, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))
        line = self.p.stdout.readline() if self.p.stdout else ""
        self.ready: dict[str, Any] = json.loads(line) if line else {}

    def stop(self) -> str:
        """Stops the server; returns its stderr."""
        if self.p.poll() is None:
            self.p.terminate()
        _, err = self.p.communicate(timeout=20)
        return err


@pytest.fixture()
def plain_server(tmp_path: Path) -> Iterator[tuple[Proc, Path]]:
    creds = write_creds(tmp_path / "auth.json")
    srv = Proc("--bind", "tcp://127.0.0.1:0", "--auth-file", str(creds))
    assert srv.ready.get("auth") == "PLAIN", srv.stop()
    yield srv, creds
    srv.stop()


def ping(endpoint: str, user: bytes | None, password: bytes | None) -> bool:
    """Whether a DEALER with these PLAIN credentials (None: none) gets an answer to ping within 3 s."""
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.DEALER)
    s.linger = 0
    if user is not None and password is not None:
        s.plain_username, s.plain_password = user, password
    try:
        s.connect(endpoint)
        s.send_multipart([struct.pack("<Q", 1), msgpack.packb({"op": "ping"})])
        if not s.poll(3000):
            return False
        rid, body = s.recv_multipart()
        return bool(msgpack.unpackb(body)["ok"])
    finally:
        s.close(0)


def test_plain_server_serves_the_right_credential_and_refuses_others(plain_server: tuple[Proc, Path]) -> None:
    srv, _ = plain_server
    ep = srv.ready["endpoint"]
    assert ping(ep, b"u1", b"correct-horse")
    assert not ping(ep, b"u1", b"wrong")
    assert not ping(ep, b"someone", b"correct-horse")
    assert not ping(ep, None, None)
    assert ping(ep, b"u1", b"correct-horse"), "the server stopped serving after the refusals"
    err = srv.stop()
    assert err.count("refused a client from 127.0.0.1: wrong user or password") == 2, err
    assert f"refused a connection to {ep}" in err, err
    assert "correct-horse" not in err and "wrong" not in err.replace("wrong user or password", ""), err


def test_auth_file_from_the_environment(tmp_path: Path) -> None:
    creds = write_creds(tmp_path / "auth.json")
    srv = Proc("--bind", "tcp://127.0.0.1:0", env={auth.ENV_VAR: str(creds)})
    try:
        assert srv.ready.get("auth") == "PLAIN"
        assert not ping(srv.ready["endpoint"], None, None)
        assert ping(srv.ready["endpoint"], b"u1", b"correct-horse")
    finally:
        srv.stop()


@pytest.mark.parametrize("bind", ["tcp://0.0.0.0:0", "tcp://*:0"])
def test_open_bind_without_credentials_is_refused(bind: str) -> None:
    srv = Proc("--bind", bind)
    err = srv.stop()
    assert srv.p.returncode == 2 and not srv.ready, err
    assert f"refusing to bind {bind}" in err and "--auth-file" in err and "--insecure" in err, err


def test_open_bind_with_insecure_warns_loudly() -> None:
    srv = Proc("--bind", "tcp://0.0.0.0:0", "--insecure")
    try:
        assert srv.ready.get("auth") == "NULL"
        port = srv.ready["endpoint"].rsplit(":", 1)[1]
        assert ping(f"tcp://127.0.0.1:{port}", None, None)
    finally:
        err = srv.stop()
    assert "WARNING: --insecure" in err and "WITHOUT AUTHENTICATION" in err, err


def test_open_bind_with_credentials(tmp_path: Path) -> None:
    creds = write_creds(tmp_path / "auth.json")
    srv = Proc("--bind", "tcp://0.0.0.0:0", "--auth-file", str(creds))
    try:
        port = srv.ready["endpoint"].rsplit(":", 1)[1]
        assert ping(f"tcp://127.0.0.1:{port}", b"u1", b"correct-horse")
        assert not ping(f"tcp://127.0.0.1:{port}", None, None)
    finally:
        err = srv.stop()
    assert "does not encrypt" in err or "nothing is encrypted" in err, err


def test_insecure_auth_file_stops_the_server(tmp_path: Path) -> None:
    creds = write_creds(tmp_path / "auth.json", mode=0o644)
    srv = Proc("--bind", "tcp://127.0.0.1:0", "--auth-file", str(creds))
    err = srv.stop()
    assert srv.p.returncode == 2 and not srv.ready, err
    assert "open to group or others (mode 0644)" in err and "correct-horse" not in err, err


def test_loopback_and_ipc_need_no_credentials(tmp_path: Path) -> None:
    for bind in ("tcp://127.0.0.1:0", f"ipc://{tmp_path}/s.sock"):
        srv = Proc("--bind", bind)
        try:
            assert srv.ready.get("auth") == "NULL"
            assert ping(srv.ready["endpoint"], None, None)
        finally:
            err = srv.stop()
        assert "refusing" not in err and "WARNING" not in err, err
