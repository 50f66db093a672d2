"""Tests of the server: protocol over a real ROUTER socket, errors, and the algorithmic tasks' semantics."""

from __future__ import annotations

import struct
from typing import Any, Iterator

import msgpack
import numpy as np
import pytest
import zmq

from python_server import PROTOCOL_VERSION, algorithmic, wire
from python_server.server import Server


def connect(srv: Server) -> tuple[Any, Any]:
    """A DEALER socket to srv and a call function: one request answered by srv.handle_one()."""
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(srv.endpoint)
    ids = iter(range(1, 1 << 30))

    def call(payload: Any, raw: bool = False) -> dict[str, Any]:
        rid = struct.pack("<Q", next(ids))
        sock.send_multipart([rid, payload if raw else msgpack.packb(payload, use_bin_type=True)])
        assert srv.sock.poll(5000), "no request reached the server"
        srv.handle_one()
        assert sock.poll(5000)
        got_id, body = sock.recv_multipart()
        assert got_id == rid
        return msgpack.unpackb(body, raw=False)

    return sock, call


@pytest.fixture()
def client(tmp_path: Any) -> Iterator[Any]:
    srv = Server(f"ipc://{tmp_path}/s.sock", allow_imports=False, idle_timeout=0, max_message_bytes=1 << 16, log=lambda s: None)
    sock, call = connect(srv)
    yield call
    sock.close(0)
    srv.shutdown()


def test_silent_client_loses_its_envs_without_a_reap(tmp_path: Any) -> None:
    """A client silent past the idle timeout finds its envs closed on its next request, even when the
    server's loop never ran its periodic reap (a server starved of CPU); one that speaks in time keeps them.
    The server reads a clock the test steps, so the load of the machine cannot move the verdict."""
    now = [1000.0]
    srv = Server(f"ipc://{tmp_path}/s.sock", idle_timeout=0.2, log=lambda s: None, clock=lambda: now[0])
    sock, call = connect(srv)
    try:
        h = call({"op": "make", "env_id": "Copy-v0", "num_envs": 1})["result"]["handle"]
        now[0] += 0.15
        assert call({"op": "reset", "handle": h})["ok"]  # in time: kept
        now[0] += 0.15
        assert call({"op": "reset", "handle": h})["ok"]  # 0.3 s after make, 0.15 after its last word: kept
        now[0] += 0.25
        r = call({"op": "reset", "handle": h})
        assert not r["ok"] and r["error"]["type"] == "UnknownHandle", r
        assert srv.copies == 0 and not srv.groups
    finally:
        sock.close(0)
        srv.shutdown()


def test_hello_and_ping(client: Any) -> None:
    r = client({"op": "hello"})
    assert r["ok"] and r["result"]["protocol"] == PROTOCOL_VERSION and r["result"]["idle_timeout"] == 0 and r["result"]["gymnasium"]
    assert client({"op": "ping"})["ok"]


@pytest.mark.parametrize("env_id,threshold,max_steps", [
    ("CartPole-v1", 475.0, 500),
    ("FrozenLake-v1", 0.7, 100),
    ("Pendulum-v1", None, 200),
    ("Copy-v0", 25.0, None),
    ("DuplicatedInput-v0", 9.0, None),
])
def test_spec(client: Any, env_id: str, threshold: float | None, max_steps: int | None) -> None:
    r = client({"op": "spec", "env_id": env_id})
    assert r["ok"], r
    assert r["result"] == {"id": env_id, "reward_threshold": threshold, "max_episode_steps": max_steps}


@pytest.mark.parametrize("env_id,err", [("Nope-v0", "UnknownEnv"), ("python_server.testing_envs:CrashEnv", "ImportRefused")])
def test_spec_errors(client: Any, env_id: str, err: str) -> None:
    r = client({"op": "spec", "env_id": env_id})
    assert not r["ok"] and r["error"]["type"] == err


@pytest.mark.parametrize("payload,err", [
    (b"\xc1garbage", "DecodeError"),
    (msgpack.packb([1, 2]), "ProtocolError"),
    (msgpack.packb({"op": "nope"}), "ProtocolError"),
    (b"x" * ((1 << 16) + 1), "MessageTooLarge"),
    (msgpack.packb({"op": "make", "env_id": "Nope-v0", "num_envs": 1}), "UnknownEnv"),
    (msgpack.packb({"op": "make", "env_id": "python_server.testing_envs:CrashEnv", "num_envs": 1}), "ImportRefused"),
    (msgpack.packb({"op": "step", "handle": 42}), "UnknownHandle"),
])
def test_errors(client: Any, payload: bytes, err: str) -> None:
    r = client(payload, raw=True)
    assert not r["ok"] and r["error"]["type"] == err
    assert client({"op": "ping"})["ok"]  # still serving


def test_make_reset_step_and_validation(client: Any) -> None:
    r = client({"op": "make", "env_id": "Copy-v0", "num_envs": 2, "kwargs": {"base": 3}, "autoreset": "disabled"})
    assert r["ok"], r
    h = r["result"]["handle"]
    assert r["result"]["action_space"]["kind"] == "tuple"
    r = client({"op": "reset", "handle": h, "per_copy": [{"input": [2]}, {"input": [0, 1]}]})
    assert wire.decode_array(r["result"]["obs"], "obs").tolist() == [[2], [0]]
    good = wire.encode_array(np.array([[1, 1, 2], [1, 1, 0]], dtype=np.int64))
    r = client({"op": "step", "handle": h, "actions": good})
    res = r["result"]
    assert wire.decode_array(res["rewards"], "r").tolist() == [1.0, 1.0]
    assert wire.decode_array(res["terminated"], "t").tolist() == [True, False]
    assert 0 < res["env_seconds"] < res["server_seconds"] < 1, res  # telemetry: the env's share, the server's
    bad_range = wire.encode_array(np.array([[1, 1, 2], [1, 1, 5]], dtype=np.int64))
    r = client({"op": "step", "handle": h, "actions": bad_range})
    assert not r["ok"] and r["error"]["copy"] == 1 and not r["error"]["fatal"]
    bad_dtype = wire.encode_array(np.zeros((2, 3), dtype=np.int32))
    assert client({"op": "step", "handle": h, "actions": bad_dtype})["error"]["type"] == "ProtocolError"
    bad_bytes = {"dtype": "int64", "shape": [2, 3], "data": b"\x00" * 7}
    assert client({"op": "step", "handle": h, "actions": bad_bytes})["error"]["type"] == "ProtocolError"
    assert client({"op": "close", "handle": h})["ok"]


def run(env: algorithmic.AlgorithmicEnv, inp: Any, actions: list[tuple[int, int, int]]) -> list[tuple[int, float, bool]]:
    obs, _ = env.reset(options={"input": inp})
    out = [(obs, 0.0, False)]
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        assert not trunc
        out.append((obs, r, term))
        if term:
            break
    return out


def test_copy_hand_checked() -> None:
    env = algorithmic.CopyEnv(base=3)
    # input [1, 2]: write 1 moving right, then write 2: +1, +1, ends after the last symbol.
    assert run(env, [1, 2], [(1, 1, 1), (1, 1, 2)]) == [(1, 0.0, False), (2, 1.0, False), (3, 1.0, True)]
    # a wrong symbol ends the episode with -0.5; moving left off the tape reads blank.
    assert run(env, [1, 2], [(0, 0, 0), (1, 1, 0)]) == [(1, 0.0, False), (3, 0.0, False), (1, -0.5, True)]


def test_time_limit_and_targets() -> None:
    env = algorithmic.ReverseEnv(base=2)
    # input [0, 1]: target [1, 0]; time limit 2 + 2 + 4 = 8, so step 9 ends with -1.
    traj = run(env, [0, 1], [(1, 0, 0)] * 20)
    assert len(traj) == 10 and traj[-1][1:] == (-1.0, True)
    assert algorithmic.RepeatCopyEnv(base=5).target_from_input([1, 2]) == [1, 2, 2, 1, 1, 2]
    assert algorithmic.DuplicatedInputEnv(base=5).target_from_input([3, 3, 1, 1]) == [3, 1]
    add = algorithmic.ReversedAdditionEnv(base=3)
    assert add.target_from_input([[2, 2], [1, 0]]) == [1, 2]  # 4 = 1 carry 1; 1+0+1 = 2
    assert add.target_from_input([[2, 2], [2, 2]]) == [1, 2, 1]
    # grid moves: down reads row 1, right moves a column, up off the grid reads blank.
    assert run(add, [[1, 2], [0, 1]], [(3, 0, 0), (1, 0, 0), (2, 0, 0), (2, 0, 0)]) == [
        (1, 0.0, False), (2, 0.0, False), (1, 0.0, False), (0, 0.0, False), (3, 0.0, False)]
    assert add.time_limit() == 2 * 2 + 4


def test_bad_inputs_and_curriculum() -> None:
    with pytest.raises(ValueError):
        algorithmic.CopyEnv(base=3).reset(options={"input": [3]})
    with pytest.raises(ValueError):
        algorithmic.DuplicatedInputEnv(base=3).reset(options={"input": [1, 1, 2]})
    with pytest.raises(ValueError):
        algorithmic.ReversedAdditionEnv(base=3).reset(options={"input": [[1, 1, 1]]})
    cur = algorithmic.CopyEnv.new_curriculum()
    env = algorithmic.CopyEnv(base=3, curriculum=cur)
    for _ in range(11):  # 10 perfect episodes recorded at the following resets -> level up once
        run(env, [1], [(1, 1, 1)])
    assert cur.min_length == 3 and cur.shortfalls == []
