"""The ROUTER loop: decode a request, dispatch it, send exactly one reply. See bridge/PROTOCOL.md."""

from __future__ import annotations

import collections
import importlib
import os
import platform
import secrets
import signal
import stat
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Generator

import gymnasium as gym
import msgpack
import numpy as np
import zmq

from . import PROTOCOL_VERSION, SERVER_VERSION, algorithmic, auth, wire
from .envgroup import EnvGroup, CopyError

MAX_COPIES = 4096

# Render modes that never draw on their own: the server never calls env.render(), so these only
# matter to a client that asks for frames through some other channel. Every other mode (above all
# "human", which opens a window at every reset and step, and aborts the whole process in GLFW on a
# machine without a display) is refused unless the server runs with --allow-render.
SAFE_RENDER_MODES = frozenset({None, "rgb_array", "rgb_array_list", "depth_array", "depth_array_list",
                               "ansi", "ansi_list", "rgbd_tuple", "rgbd_tuple_list"})

# A make that runs longer than this between two looks at the socket lets other clients' requests in
# (the copies are made by a job that the loop advances between messages).
MAKE_SLICE_SECONDS = 0.005


@dataclass
class Limits:
    """Per-client quotas (a client is a connection: its DEALER identity) and server-wide caps."""

    groups_per_client: int = 64
    copies_per_client: int = 1024
    copies_total: int = 4096
    # Requests queued in libzmq per client before the server stops reading that client (ZMQ_RCVHWM):
    # bytes in flight per client are at most this many times --max-message-bytes.
    inflight_per_client: int = 32


class RequestError(Exception):
    """An error reply: type, message, copy (-1: none) and whether the env group is gone."""

    def __init__(self, type_: str, message: str, copy: int = -1, fatal: bool = False, tb: str = "") -> None:
        super().__init__(message)
        self.type, self.message, self.copy, self.fatal, self.tb = type_, message, copy, fatal, tb


@dataclass
class Client:
    last_seen: float
    handles: set[int] = field(default_factory=set)
    copies: int = 0
    # A make in progress for this client: its later requests wait in backlog, so that each client's
    # requests are still answered in the order they were sent.
    busy: bool = False
    backlog: collections.deque[list[bytes]] = field(default_factory=collections.deque)


@dataclass
class Job:
    """A request being carried out in slices between other clients' messages (a make of many copies)."""

    ident: bytes
    rid: bytes
    start: float
    gen: Generator[None, None, dict[str, Any]]


def _field(req: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    v = req.get(name, default)
    if v is ...:
        raise wire.ProtocolError(f"missing field {name!r}")
    if v is None and default is None:
        return None
    if not isinstance(v, kind) or (isinstance(v, bool) and kind is int):
        raise wire.ProtocolError(f"field {name!r} has type {type(v).__name__}")
    return v


def _seed_list(v: Any, n: int, what: str) -> list[int] | None:
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != n or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 64 for s in v):
        raise wire.ProtocolError(f"{what} must be a list of {n} non-negative integers")
    return list(v)


def error_reply(e: Exception) -> dict[str, Any]:
    """The error reply for an exception raised while answering a request."""
    if isinstance(e, RequestError):
        err = {"type": e.type, "message": e.message, "traceback": e.tb, "copy": e.copy, "fatal": e.fatal}
    elif isinstance(e, wire.ProtocolError):
        err = {"type": "ProtocolError", "message": str(e), "traceback": "", "copy": -1, "fatal": False}
    else:
        err = {"type": type(e).__name__, "message": str(e), "traceback": traceback.format_exc(), "copy": -1, "fatal": False}
    return {"ok": False, "error": err}


def _log_stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass  # stderr is gone with whoever read it: nobody left to tell


class Server:
    def __init__(self, bind: str, allow_imports: bool = False, idle_timeout: float = 300.0,
                 max_message_bytes: int = 64 << 20, log: Callable[[str], None] | None = None,
                 parent_pid: int | None = None, limits: Limits | None = None, allow_render: bool = False,
                 remove_dir: bool = False, credentials: auth.Credentials | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        algorithmic.register()
        self.bind = bind
        self.allow_imports = allow_imports
        self.allow_render = allow_render
        self.idle_timeout = idle_timeout
        # The clock of the idle timeout: a test steps its own instead of sleeping, so a loaded
        # machine cannot make a client that spoke in time look silent.
        self.clock = clock
        self.max_message_bytes = max_message_bytes
        self.limits = limits or Limits()
        # On exit, also remove the (then empty) directory holding the ipc socket: the Go client makes
        # one per server and passes --remove-dir, so a server outliving a killed client cleans up.
        self.remove_dir = remove_dir
        # When set, the server stops once this process is no longer its parent (it died).
        self.parent_pid = parent_pid
        self.log = log or _log_stderr
        self.ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        # libzmq drops a peer whose message exceeds this before it is ever buffered whole;
        # messages between the cap and this get a proper error reply.
        self.sock.setsockopt(zmq.MAXMSGSIZE, max_message_bytes + 4096)
        self.sock.setsockopt(zmq.RCVHWM, max(1, self.limits.inflight_per_client))
        # With credentials, every connection must pass PLAIN before its first message: set up before
        # the bind, so that no client gets in unchecked.
        self.guard = auth.Guard(self.ctx, self.sock, credentials, self.log) if credentials is not None else None
        try:
            self.sock.bind(bind)
        except zmq.ZMQError:
            if self.guard is not None:
                self.guard.stop()
            self.sock.close(0)
            raise
        self.endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self.groups: dict[int, EnvGroup] = {}
        self.owner: dict[int, bytes] = {}
        self.clients: dict[bytes, Client] = {}
        self.copies = 0  # copies made or being made, over all clients
        self.jobs: collections.deque[Job] = collections.deque()
        self.stopping = False
        self.ops: dict[str, Callable[[bytes, dict[str, Any]], dict[str, Any]]] = {
            "hello": self.op_hello, "ping": self.op_ping, "make": self.op_make, "spaces": self.op_spaces,
            "reset": self.op_reset, "step": self.op_step, "close": self.op_close, "spec": self.op_spec,
        }

    def stop(self, *_: Any) -> None:
        self.stopping = True

    def serve(self) -> None:
        """Serve until SIGTERM/SIGINT or stop(); then close every env."""
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        # A blocking receive that gives up after 200 ms (so stop requests, the parent watch and idle
        # reaping run) rather than a Poller: no extra zmq_poll pass per message.
        self.sock.setsockopt(zmq.RCVTIMEO, 200)
        try:
            next_reap = 0.0
            while not self.stopping:
                try:
                    # With a job in progress, look for a message without waiting, then advance it.
                    frames = self.sock.recv_multipart(zmq.NOBLOCK if self.jobs else 0, copy=True)
                except zmq.Again:
                    pass
                else:
                    self.handle(frames)
                if self.jobs:
                    self.advance_job()
                now = self.clock()
                if now >= next_reap:
                    if self.parent_pid is not None and os.getppid() != self.parent_pid:
                        self.log(f"python_server: parent process {self.parent_pid} is gone; stopping")
                        break
                    self.reap_idle()
                    next_reap = now + min(1.0, self.idle_timeout / 10) if self.idle_timeout > 0 else now + 1.0
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        for job in self.jobs:
            job.gen.close()  # closes the copies made so far
        self.jobs.clear()
        for g in self.groups.values():
            g.close()
        self.groups.clear()
        if self.guard is not None:
            self.guard.stop()
        self.sock.close(0)
        self.remove_socket_file()

    def remove_socket_file(self) -> None:
        """Remove the ipc socket file (libzmq unlinks it only in a context that is terminated) and,
        with remove_dir, its directory when that is left empty."""
        if not self.endpoint.startswith("ipc://"):
            return
        path = self.endpoint[len("ipc://"):]
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)
        except OSError:
            pass
        if self.remove_dir:
            try:
                os.rmdir(os.path.dirname(path) or ".")
            except OSError:
                pass  # not empty, or gone: leave it

    def silent_too_long(self, c: Client, now: float) -> bool:
        """Whether client c, not waiting on a job, has sent nothing for longer than the idle timeout."""
        return self.idle_timeout > 0 and now - c.last_seen > self.idle_timeout and not c.busy

    def reap_idle(self) -> None:
        now = self.clock()
        for ident, c in list(self.clients.items()):
            if self.silent_too_long(c, now):
                self.close_client(ident, c)

    def close_client(self, ident: bytes, c: Client) -> None:
        """Close every env group of client c and forget it."""
        for h in c.handles:
            g = self.groups.pop(h, None)
            if g is not None:
                self.copies -= g.n
                g.close()
            self.owner.pop(h, None)
        del self.clients[ident]
        self.log(f"python_server: client {ident.hex()} idle for {self.idle_timeout}s; closed {len(c.handles)} env group(s)")

    def handle_one(self) -> None:
        """Receive one message (blocking) and answer it, finishing any job it starts (for tests)."""
        self.handle(self.sock.recv_multipart(copy=True))
        while self.jobs:
            self.advance_job()

    def handle(self, frames: list[bytes]) -> None:
        """Answer one received message: [client identity, request id, payload]."""
        if len(frames) != 3 or len(frames[1]) != 8:
            # Without a request id there is nobody to answer: drop it.
            self.log(f"python_server: dropped a message of {len(frames)} frames")
            return
        ident, rid, payload = frames
        start = time.perf_counter()
        now = self.clock()
        client = self.clients.get(ident)
        if client is not None and self.silent_too_long(client, now):
            # Its envs are closed whether or not the periodic reap got to it first: a server starved
            # of CPU must not let a late message revive a client that was silent past the timeout.
            self.close_client(ident, client)
            client = None
        if client is None:
            client = self.clients[ident] = Client(now)
        client.last_seen = now
        if client.busy:
            if len(client.backlog) >= self.limits.inflight_per_client:
                self.send_reply(ident, rid, error_reply(RequestError(
                    "QuotaExceeded", f"more than {self.limits.inflight_per_client} requests queued behind a make in progress")))
            else:
                client.backlog.append(frames)  # answered in order, once the job in progress is done
            return
        try:
            if len(payload) > self.max_message_bytes:
                raise RequestError("MessageTooLarge", f"request of {len(payload)} bytes exceeds the cap of {self.max_message_bytes}")
            try:
                req = wire.decode_request(payload)
            except Exception as e:  # noqa: BLE001 - any decode failure is the client's error
                raise RequestError("DecodeError", f"cannot decode request: {type(e).__name__}: {e}") from e
            if not isinstance(req, dict):
                raise RequestError("ProtocolError", "request must be a map")
            op = req.get("op")
            if op == "make":
                gen = self.make_job(ident, req)
                self.jobs.append(Job(ident, rid, start, gen))
                client.busy = True
                return
            fn = self.ops.get(op) if isinstance(op, str) else None
            if fn is None:
                raise RequestError("ProtocolError", f"unknown op {op!r}")
            result = fn(ident, req)
            if "env_seconds" in result:  # reset and step: the server's share of the call, for telemetry
                result["server_seconds"] = time.perf_counter() - start
            reply: dict[str, Any] = {"ok": True, "result": result}
        except Exception as e:  # noqa: BLE001 - a bad request never kills the server
            reply = error_reply(e)
        self.send_reply(ident, rid, reply)

    def advance_job(self) -> None:
        """Run the oldest job for one slice; a finished job is answered, and its client's backlog with it."""
        job = self.jobs.popleft()
        try:
            next(job.gen)
        except StopIteration as done:
            reply: dict[str, Any] | None = {"ok": True, "result": done.value}
        except Exception as e:  # noqa: BLE001
            reply = error_reply(e)
        else:
            reply = None
            self.jobs.append(job)  # round robin with other clients' jobs
        if reply is None:
            return
        self.send_reply(job.ident, job.rid, reply)
        client = self.clients.get(job.ident)
        if client is None:
            return
        client.busy = False
        while client.backlog and not client.busy:
            self.handle(client.backlog.popleft())

    def send_reply(self, ident: bytes, rid: bytes, reply: dict[str, Any]) -> None:
        try:
            out = msgpack.packb(reply, use_bin_type=True)
        except Exception as e:  # noqa: BLE001
            out = msgpack.packb({"ok": False, "error": {"type": "EncodeError", "message": str(e), "traceback": traceback.format_exc(), "copy": -1, "fatal": False}})
        # Frame by frame: send_multipart's generic loop costs a few microseconds more per message.
        self.sock.send(ident, zmq.SNDMORE)
        self.sock.send(rid, zmq.SNDMORE)
        self.sock.send(out, copy=False)

    # --- operations -------------------------------------------------------------------------

    def group(self, ident: bytes, req: dict[str, Any]) -> tuple[int, EnvGroup]:
        h = _field(req, "handle", int)
        g = self.groups.get(h)
        # Another client's group is reported exactly like a missing one: handles are not shared.
        if g is None or self.owner.get(h) != ident:
            raise RequestError("UnknownHandle", f"no env group with handle {h} (closed, reaped after idling, never made, or another client's)")
        return h, g

    def op_hello(self, ident: bytes, req: dict[str, Any]) -> dict[str, Any]:
        try:
            import mujoco  # noqa: PLC0415 - optional; report its version when present
            mj = str(mujoco.__version__)
        except ImportError:
            mj = ""
        return {
            "protocol": PROTOCOL_VERSION, "server": SERVER_VERSION, "python": platform.python_version(),
            "gymnasium": gym.__version__, "numpy": np.__version__, "pyzmq": zmq.__version__,
            "msgpack": ".".join(map(str, msgpack.version)), "mujoco": mj,
            # Clients that may idle longer than this ping in the background (see PROTOCOL.md, Liveness).
            "idle_timeout": float(max(self.idle_timeout, 0.0)),
        }

    def op_spec(self, ident: bytes, req: dict[str, Any]) -> dict[str, Any]:
        """An env id's registration (gymnasium.spec), without making the env: its reward_threshold
        and max_episode_steps, None where it registers none."""
        env_id = _field(req, "env_id", str)
        if ":" in env_id and not self.allow_imports:
            raise RequestError("ImportRefused", f"env id {env_id!r} imports a module; start the server with --allow-imports to permit it")
        if ":" not in env_id and env_id not in gym.registry:
            raise RequestError("UnknownEnv", f"env id {env_id!r} is not registered")
        try:
            spec = gym.spec(env_id)
        except gym.error.Error:  # a module:Class id names a class, not a registration
            return {"id": env_id, "reward_threshold": None, "max_episode_steps": None}
        threshold = spec.reward_threshold
        return {"id": spec.id, "reward_threshold": None if threshold is None else float(threshold),
                "max_episode_steps": spec.max_episode_steps}

    def op_ping(self, ident: bytes, req: dict[str, Any]) -> dict[str, Any]:
        return {"time": time.time()}

    def new_env(self, env_id: str, kwargs: dict[str, Any]) -> gym.Env[Any, Any]:
        if ":" in env_id:
            if not self.allow_imports:
                raise RequestError("ImportRefused", f"env id {env_id!r} imports a module; start the server with --allow-imports to permit it")
            mod, _, attr = env_id.partition(":")
            try:
                module = importlib.import_module(mod)
            except Exception as e:  # noqa: BLE001 - the user's module: any failure is this request's
                raise RequestError("ImportFailed", f"env id {env_id!r}: module {mod!r} does not import: {type(e).__name__}: {e}") from e
            target = getattr(module, attr, None)
            if target is None:
                raise RequestError("UnknownEnv", f"env id {env_id!r}: module {mod!r} has no {attr!r}")
            if isinstance(target, type):
                if not issubclass(target, gym.Env):
                    raise RequestError("NotAnEnv", f"env id {env_id!r} names {target.__module__}.{target.__qualname__}, which is not a gymnasium.Env")
                return target(**kwargs)
            return gym.make(env_id, **kwargs)
        if env_id not in gym.registry:
            raise RequestError("UnknownEnv", f"env id {env_id!r} is not registered")
        return gym.make(env_id, **kwargs)

    def op_make(self, ident: bytes, req: dict[str, Any]) -> dict[str, Any]:
        """make, carried out at once (the loop runs make_job in slices instead)."""
        gen = self.make_job(ident, req)
        while True:
            try:
                next(gen)
            except StopIteration as done:
                result: dict[str, Any] = done.value
                return result

    def new_handle(self) -> int:
        """An unguessable handle (62 random bits), unique on this server."""
        while True:
            h = secrets.randbits(62) + 1
            if h not in self.groups and h not in self.owner:
                return h

    def make_job(self, ident: bytes, req: dict[str, Any]) -> Generator[None, None, dict[str, Any]]:
        """Check a make request against the protocol and the quotas, then make its copies, yielding
        whenever MAKE_SLICE_SECONDS have passed so that other clients are served in between."""
        env_id = _field(req, "env_id", str)
        kwargs = _field(req, "kwargs", dict, None) or {}
        n = _field(req, "num_envs", int)
        if not 1 <= n <= MAX_COPIES:
            raise wire.ProtocolError(f"num_envs must be in 1..{MAX_COPIES}, got {n}")
        seeds = _seed_list(req.get("seeds"), n, "seeds")
        autoreset = _field(req, "autoreset", str, "next-step")
        want_infos = _field(req, "infos", bool, False)
        mode = kwargs.get("render_mode")
        if not self.allow_render and (not isinstance(mode, (str, type(None))) or mode not in SAFE_RENDER_MODES):
            raise RequestError("RenderModeRefused", f"render_mode {mode!r} may need a display and can abort the whole server; "
                               f"start it with --allow-render to permit it (safe: {sorted(m for m in SAFE_RENDER_MODES if m)})")
        client = self.clients[ident]
        lim = self.limits
        if len(client.handles) >= lim.groups_per_client:
            raise RequestError("QuotaExceeded", f"this client already has {len(client.handles)} env groups, the most allowed (--max-groups-per-client)")
        if client.copies + n > lim.copies_per_client:
            raise RequestError("QuotaExceeded", f"{n} more copies would give this client {client.copies + n}, over the cap of {lim.copies_per_client} (--max-copies-per-client)")
        if self.copies + n > lim.copies_total:
            raise RequestError("QuotaExceeded", f"{n} more copies would make {self.copies + n} on this server, over the cap of {lim.copies_total} (--max-copies)")
        client.copies += n  # reserved now: another client's make in progress counts against the total too
        self.copies += n
        shared = None
        if env_id in algorithmic.TASKS and not kwargs.pop("per_copy_curriculum", False):
            shared = algorithmic.TASKS[env_id].new_curriculum()
        envs: list[gym.Env[Any, Any]] = []
        done = False
        try:
            clock = time.perf_counter
            slice_end = clock() + MAKE_SLICE_SECONDS
            for i in range(n):
                if clock() > slice_end:
                    yield
                    slice_end = clock() + MAKE_SLICE_SECONDS
                kw = dict(kwargs)
                if shared is not None:
                    kw["curriculum"] = shared
                try:
                    envs.append(self.new_env(env_id, kw))
                except RequestError:
                    raise
                except Exception as e:  # noqa: BLE001
                    raise RequestError(type(e).__name__, f"making copy {i} of {env_id!r}: {e}", copy=i, tb=traceback.format_exc()) from e
            group = EnvGroup(envs, autoreset, want_infos, seeds)
            spaces = {"observation_space": wire.encode_space(group.obs_space), "action_space": wire.encode_space(group.act_space)}
            done = True
        finally:
            if not done:  # an error, or the server stopping (GeneratorExit)
                for made in envs:
                    made.close()
                client.copies -= n
                self.copies -= n
        h = self.new_handle()
        self.groups[h] = group
        self.owner[h] = ident
        client.handles.add(h)
        return {"handle": h, **spaces}

    def op_spaces(self, ident: bytes, req: dict[str, Any]) -> dict[str, Any]:
        _, g = self.group(ident, req)
        return {"observation_space": wire.encode_space(g.obs_space), "action_space": wire.encode_space(g.act_space)}

    def drop_group(self, h: int) -> None:
        """Close group h and release its quota."""
        g = self.groups.pop(h)
        g.close()
        self.copies -= g.n
        owner = self.owner.pop(h, None)
        c = self.clients.get(owner) if owner is not None else None
        if c is not None:
            c.handles.discard(h)
            c.copies -= g.n

    def op_close(self, ident: bytes, req: dict[str, Any]) -> dict[str, Any]:
        h, _ = self.group(ident, req)
        self.drop_group(h)
        return {}

    def _copy_error(self, h: int, e: CopyError) -> RequestError:
        if e.fatal:
            self.drop_group(h)
        tb = "".join(traceback.format_exception(e.cause))
        return RequestError(type(e.cause).__name__, str(e), copy=e.copy, fatal=e.fatal, tb=tb)

    def op_reset(self, ident: bytes, req: dict[str, Any]) -> dict[str, Any]:
        h, g = self.group(ident, req)
        seeds = _seed_list(req.get("seeds"), g.n, "seeds")
        mask = req.get("mask")
        if mask is not None:
            m = wire.decode_array(mask, "mask")
            if m.dtype != np.bool_ or m.shape != (g.n,):
                raise wire.ProtocolError(f"mask must be a bool array of shape ({g.n},), got {m.dtype} {m.shape}")
            mask = [bool(x) for x in m]
        options = _field(req, "options", dict, None)
        per_copy = req.get("per_copy")
        if per_copy is not None and (not isinstance(per_copy, list) or len(per_copy) != g.n or not all(x is None or isinstance(x, dict) for x in per_copy)):
            raise wire.ProtocolError(f"per_copy must be a list of {g.n} maps or nils")
        try:
            obs, infos, t = g.reset(seeds, mask, options, per_copy)
        except CopyError as e:
            raise self._copy_error(h, e) from e
        return {"obs": wire.encode_array(obs), "infos": infos, "env_seconds": t}

    def op_step(self, ident: bytes, req: dict[str, Any]) -> dict[str, Any]:
        h, g = self.group(ident, req)
        lo = _field(req, "lo", int, 0)
        hi = _field(req, "hi", int, g.n)
        if not 0 <= lo < hi <= g.n:
            raise wire.ProtocolError(f"copy range [{lo}, {hi}) is not inside [0, {g.n})")
        a = g.actions_block(req.get("actions"), hi - lo)
        try:
            return g.step(lo, hi, a)
        except CopyError as e:
            raise self._copy_error(h, e) from e
