"""The server under hostile input and faults (issue 15): bounded request decoding (a property test
over random and mutated messages), per-client handles and quotas, refused render modes, makes that
do not starve other clients, and socket files removed on exit. Real sockets and real processes."""

from __future__ import annotations

import os
import random
import signal
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Iterator

import msgpack
import pytest
import zmq

from python_server import wire
from python_server.server import Limits, Server

ROOT = Path(__file__).resolve().parents[2]

# --- the request decoder --------------------------------------------------------------------------


def random_value(rng: random.Random, depth: int = 0) -> Any:
    """A random msgpack value of the kinds requests hold."""
    kinds = ["int", "neg", "float", "str", "bin", "nil", "bool"] + (["list", "map"] * 2 if depth < 5 else [])
    k = rng.choice(kinds)
    if k == "int":
        return rng.choice([0, 1, 127, 128, 255, 65535, 1 << 32, (1 << 64) - 1])
    if k == "neg":
        return -rng.choice([1, 32, 33, 1 << 15, 1 << 31, 1 << 63])
    if k == "float":
        return rng.choice([0.0, -1.5, 1e300, float("inf")])
    if k == "str":
        return "".join(rng.choice("op handle é") for _ in range(rng.randrange(40)))
    if k == "bin":
        return rng.randbytes(rng.randrange(300))
    if k == "nil":
        return None
    if k == "bool":
        return rng.random() < 0.5
    if k == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(20))]
    return {f"k{i}": random_value(rng, depth + 1) for i in range(rng.randrange(20))}


HEADERS = [b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xc6\x7f\xff\xff\xff", b"\xdb\xff\xff\xff\xff",
           b"\xdc\xff\xff", b"\x91" * 50, b"\xc1", b"\xd4\x01\x00"]


def mutate(rng: random.Random, b: bytes) -> bytes:
    """Flip, cut, or splice a hostile header into an encoded message."""
    b = bytearray(b)
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(4)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:
            del b[rng.randrange(len(b)):]
        elif op == 2:
            i = rng.randrange(len(b) + 1)
            b[i:i] = rng.choice(HEADERS)
        else:
            b += rng.randbytes(rng.randrange(8))
    return bytes(b)


def decodes_or_refuses(b: bytes) -> Any:
    """decode_request's contract: a value, or an exception that the server turns into a DecodeError reply."""
    try:
        return wire.decode_request(b)
    except (MemoryError, RecursionError, SystemError) as e:
        raise AssertionError(f"decoding {b[:40]!r}... ({len(b)} bytes) failed the process way: {e!r}") from e
    except Exception:  # noqa: BLE001 - any other error is a refused request
        return ...


def test_decode_request_property() -> None:
    """Random values round-trip; random mutations and random bytes are decoded or refused, never crash."""
    rng = random.Random(15)
    for trial in range(1000):
        v = {"op": "step", "x": random_value(rng)}
        b = msgpack.packb(v, use_bin_type=True)
        assert wire.decode_request(b) == v, trial
        decodes_or_refuses(mutate(rng, b))
        decodes_or_refuses(rng.randbytes(rng.randrange(64)))
    # The same above UNCHECKED_BYTES, where the container and value caps apply.
    for trial in range(100):
        pad = b"\x00" * (wire.UNCHECKED_BYTES + rng.randrange(1000))
        v = {"op": "reset", "pad": pad, "x": random_value(rng)}
        b = msgpack.packb(v, use_bin_type=True)
        assert wire.decode_request(b) == v, trial
        decodes_or_refuses(mutate(rng, b))


def peak_bytes(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


BOMBS = {
    # Just under 64 MiB (the default message cap) of empty maps under one declared length: 4.8 GB before.
    "array32 of 64 Mi empty maps": b"\xdd" + struct.pack(">I", (64 << 20) - 64) + b"\x80" * ((64 << 20) - 64),
    # The same split into many containers, each under the per-container cap.
    "16 Mi empty maps in lists of 1000": b"\xdc\x40\x00" + (b"\xdc\x03\xe8" + b"\x80" * 1000) * (1 << 14),
    "a map of 100,000 entries": b"\xdf\x00\x01\x86\xa0" + b"".join(msgpack.packb(f"k{i}") + b"\xc0" for i in range(100_000)),
    "array32 of 2^32-1": b"\xdd\xff\xff\xff\xff",
    "arrays nested 100,000 deep": b"\x91" * 100_000 + b"\xc0",
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_memory_bombs_are_refused_within_bounds(name: str) -> None:
    b = BOMBS[name]
    result: list[Any] = []
    peak = peak_bytes(lambda: result.append(decodes_or_refuses(b)))
    assert result[0] is ..., f"{name}: decoded"
    # MAX_REQUEST_ITEMS small objects at most (about 64 B for an empty dict), not one per byte.
    assert peak < 200 << 20, f"{name}: decoding took {peak >> 20} MiB"


# --- one server, several clients ------------------------------------------------------------------


Call = Callable[..., dict[str, Any]]


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[Server, Callable[[], Call]]]:
    """A server driven by hand (handle_one) and a factory of clients, each its own DEALER (identity)."""
    srv = Server(f"ipc://{tmp_path}/s.sock", idle_timeout=0, log=lambda s: None,
                 limits=Limits(groups_per_client=2, copies_per_client=4, copies_total=6), allow_imports=True)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    socks: list[zmq.Socket[bytes]] = []
    ids = iter(range(1, 1 << 30))

    def new_client() -> Call:
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(srv.endpoint)
        socks.append(sock)

        def call(payload: dict[str, Any]) -> dict[str, Any]:
            rid = struct.pack("<Q", next(ids))
            sock.send_multipart([rid, msgpack.packb(payload, use_bin_type=True)])
            assert srv.sock.poll(5000), "no request reached the server"
            srv.handle_one()
            assert sock.poll(5000)
            got_id, body = sock.recv_multipart()
            assert got_id == rid
            reply: dict[str, Any] = msgpack.unpackb(body, raw=False)
            return reply
        return call

    yield srv, new_client
    for s in socks:
        s.close(0)
    srv.shutdown()


def make(call: Call, n: int, env_id: str = "Copy-v0", **kwargs: Any) -> dict[str, Any]:
    return call({"op": "make", "env_id": env_id, "num_envs": n, "kwargs": kwargs})


def test_handles_belong_to_their_client(server: tuple[Server, Callable[[], Call]]) -> None:
    _, new_client = server
    a, b = new_client(), new_client()
    r = make(a, 1)
    assert r["ok"], r
    h = r["result"]["handle"]
    h2 = make(a, 1)["result"]["handle"]
    assert h > 1 << 20 and h2 > 1 << 20 and abs(h - h2) != 1, "handles are not small counters"
    assert a({"op": "reset", "handle": h})["ok"]
    step = {"op": "step", "handle": h, "actions": {"dtype": "int64", "shape": [1, 3], "data": b"\x00" * 24}}
    for req in [step, {"op": "reset", "handle": h}, {"op": "spaces", "handle": h}, {"op": "close", "handle": h}]:
        r = b(req)
        assert not r["ok"] and r["error"]["type"] == "UnknownHandle", (req["op"], r)
    assert a(step)["ok"], "the owner's group was touched"
    assert a({"op": "close", "handle": h})["ok"]


def test_quotas(server: tuple[Server, Callable[[], Call]]) -> None:
    srv, new_client = server
    a, b = new_client(), new_client()
    assert make(a, 3)["ok"]
    r = make(a, 2)
    assert r["error"]["type"] == "QuotaExceeded" and "--max-copies-per-client" in r["error"]["message"], r
    h = make(a, 1)["result"]["handle"]  # 4 copies, 2 groups: both at the cap
    r = make(a, 1)
    assert r["error"]["type"] == "QuotaExceeded", r
    r = make(b, 3)  # 4 + 3 > 6 on the server
    assert r["error"]["type"] == "QuotaExceeded" and "--max-copies)" in r["error"]["message"], r
    assert make(b, 2)["ok"]
    assert srv.copies == 6
    assert a({"op": "close", "handle": h})["ok"]
    assert srv.copies == 5
    r = make(a, 1)
    assert r["ok"], r
    # A make that fails after its quota was reserved gives it back.
    r = make(b, 1, env_id="python_server.testing_envs:SlowMakeEnv", make_delay="not a number")
    assert not r["ok"] and srv.copies == 6, (r, srv.copies)


def test_render_modes(server: tuple[Server, Callable[[], Call]]) -> None:
    srv, new_client = server
    a = new_client()
    for mode in ["human", "anything-else", 3]:
        r = make(a, 1, env_id="CartPole-v1", render_mode=mode)
        assert not r["ok"] and r["error"]["type"] == "RenderModeRefused" and "--allow-render" in r["error"]["message"], r
    r = make(a, 1, env_id="CartPole-v1", render_mode="rgb_array")
    assert r["ok"], r
    srv.allow_render = True
    r = make(a, 1, env_id="CartPole-v1", render_mode="human")
    assert r["ok"] or r["error"]["type"] != "RenderModeRefused", r


# --- a server process ----------------------------------------------------------------------------


def start_server(endpoint: str, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "python_server", "--bind", endpoint, *args], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert p.stdout is not None
    line = p.stdout.readline()
    assert '"ready": true' in line, line
    return p


def dealer(endpoint: str) -> zmq.Socket[bytes]:
    s: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(endpoint)
    return s


def send(s: zmq.Socket[bytes], rid: int, payload: Any, raw: bool = False) -> None:
    s.send_multipart([struct.pack("<Q", rid), payload if raw else msgpack.packb(payload, use_bin_type=True)])


def recv(s: zmq.Socket[bytes], timeout_ms: int = 30000) -> tuple[int, dict[str, Any]]:
    assert s.poll(timeout_ms), "no reply"
    rid, body = s.recv_multipart()
    reply: dict[str, Any] = msgpack.unpackb(body, raw=False)
    return struct.unpack("<Q", rid)[0], reply


def peak_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_socket_file_and_dir_removed_on_sigterm(tmp_path: Path) -> None:
    sock = tmp_path / "by-hand.sock"
    p = start_server(f"ipc://{sock}")
    assert sock.exists()
    p.send_signal(signal.SIGTERM)
    assert p.wait(30) == 0
    assert not sock.exists(), "the ipc socket file was left behind"
    d = tmp_path / "owned"
    d.mkdir()
    p = start_server(f"ipc://{d}/env.sock", "--remove-dir")
    p.send_signal(signal.SIGTERM)
    assert p.wait(30) == 0
    assert not d.exists(), "--remove-dir left the socket's directory"


def test_memory_bomb_and_slow_make_do_not_hold_other_clients(tmp_path: Path) -> None:
    endpoint = f"ipc://{tmp_path}/s.sock"
    p = start_server(endpoint, "--allow-imports", "--idle-timeout", "0")
    try:
        bomber, other = dealer(endpoint), dealer(endpoint)
        send(other, 1, {"op": "hello"})
        recv(other)
        base = peak_rss_bytes(p.pid)
        for i, name in enumerate(["array32 of 64 Mi empty maps", "16 Mi empty maps in lists of 1000"]):
            send(bomber, 10 + i, BOMBS[name], raw=True)
            rid, r = recv(bomber)
            assert rid == 10 + i and not r["ok"] and r["error"]["type"] == "DecodeError", r
        grown = peak_rss_bytes(p.pid) - base
        # The 64 MiB message itself (held by libzmq and by Python) plus at most MAX_REQUEST_ITEMS objects.
        assert grown < 600 << 20, f"the server's peak memory grew by {grown >> 20} MiB"

        # A make of 40 copies taking 0.05 s each: another client's requests are answered while it
        # runs, and the maker's own later request only after its make (each client's order is kept).
        send(bomber, 20, {"op": "make", "env_id": "python_server.testing_envs:SlowMakeEnv", "num_envs": 40, "kwargs": {"make_delay": 0.05}})
        send(bomber, 21, {"op": "ping"})
        send(other, 2, {"op": "ping"})
        rid, r = recv(other)
        assert rid == 2 and r["ok"]
        assert not bomber.poll(0), "the other client's ping waited for the whole make"
        got = [recv(bomber), recv(bomber)]
        assert [g[0] for g in got] == [20, 21] and all(g[1]["ok"] for g in got), got
        bomber.close(0)
        other.close(0)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)
