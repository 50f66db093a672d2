"""EnvGroup: N Gymnasium env copies stepped in a loop, with the autoreset semantics of envs/env.go."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np

from . import wire

NEXT_STEP = "next-step"
DISABLED = "disabled"


class CopyError(Exception):
    """An exception raised by one env copy; fatal when the batch is left half-stepped."""

    def __init__(self, copy: int, cause: BaseException, fatal: bool) -> None:
        super().__init__(str(cause))
        self.copy = copy
        self.cause = cause
        self.fatal = fatal


class EnvGroup:
    """N copies of one env. Rows of observations are flattened as wire.flatten_into describes."""

    def __init__(self, envs: list[gym.Env[Any, Any]], autoreset: str, want_infos: bool, seeds: list[int] | None) -> None:
        if autoreset not in (NEXT_STEP, DISABLED):
            raise wire.ProtocolError(f"autoreset must be {NEXT_STEP!r} or {DISABLED!r}, got {autoreset!r}")
        self.envs = envs
        self.n = len(envs)
        self.autoreset = autoreset
        self.want_infos = want_infos
        self.obs_space = envs[0].observation_space
        self.act_space = envs[0].action_space
        self.obs_dtype = wire.flat_dtype(self.obs_space)
        self.act_dtype = wire.flat_dtype(self.act_space)
        self.obs_size = wire.flat_size(self.obs_space)
        self.act_size = wire.flat_size(self.act_space)
        self.obs = np.zeros((self.n, self.obs_size), dtype=self.obs_dtype)
        # Step outputs, filled in place (rows lo..hi of a sub-batch) and packed as bytes.
        self.rewards = np.zeros(self.n, dtype=np.float64)
        self.term = np.zeros(self.n, dtype=np.bool_)
        self.trunc = np.zeros(self.n, dtype=np.bool_)
        self.write_obs = wire.row_writer(self.obs_space)
        # A 1-D Box observation of the row's dtype and width is stored with one row assignment (exact,
        # no cast); anything else goes through write_obs.
        self.obs_row_shape = (self.obs_size,) if isinstance(self.obs_space, gym.spaces.Box) else None
        self.act_decoder = wire.BatchDecoder(self.act_space)
        # What a well-formed action block looks like on the wire, for actions_block's fast path (not
        # for bool blocks, whose bytes must be checked, nor on hosts that must swap bytes).
        self.act_wire = wire.wire_name(self.act_dtype)
        self.act_itemsize = self.act_dtype.itemsize
        self.act_fast = wire.FAST_DECODE and self.act_wire != "bool"
        self.started = [False] * self.n
        self.unstarted = self.n  # copies never reset (or whose last reset failed): step refuses them
        self.ended = [False] * self.n  # episode over (disabled: frozen; next-step: reset on next step)
        self.end_term = [False] * self.n
        self.end_trunc = [False] * self.n
        self.pending_seeds: list[int | None] = list(seeds) if seeds is not None else [None] * self.n
        self.closed = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for e in self.envs:
                try:
                    e.close()
                except Exception:  # noqa: BLE001 - closing must reach every copy
                    pass

    def _reset_copy(self, i: int, seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
        if seed is None:
            seed, self.pending_seeds[i] = self.pending_seeds[i], None
        else:
            self.pending_seeds[i] = None
        obs, info = self.envs[i].reset(seed=seed, options=options)
        self.write_obs(obs, self.obs[i])
        if not self.started[i]:
            self.started[i] = True
            self.unstarted -= 1
        self.ended[i] = self.end_term[i] = self.end_trunc[i] = False
        return info

    def reset(self, seeds: list[int] | None, mask: list[bool] | None, options: dict[str, Any] | None,
              per_copy: list[dict[str, Any] | None] | None) -> tuple[np.ndarray, list[Any] | None, float]:
        infos: list[Any] = [None] * self.n
        t = 0.0
        for i in range(self.n):
            if mask is not None and not mask[i]:
                continue
            opts = dict(options or {})
            extra = per_copy[i] if per_copy is not None else None
            if extra:
                opts.update(extra)
            t0 = time.perf_counter()
            try:
                infos[i] = self._reset_copy(i, None if seeds is None else seeds[i], opts or None)
            except Exception as e:  # noqa: BLE001
                # A copy whose reset failed is not usable, but the others are: not fatal for the group.
                if self.started[i]:
                    self.started[i] = False
                    self.unstarted += 1
                raise CopyError(i, e, fatal=False) from e
            t += time.perf_counter() - t0
        return self.obs, (self._plain_infos(infos) if self.want_infos else None), t

    def actions_block(self, obj: Any, rows: int) -> np.ndarray:
        """Decode an encoded action array that must be (rows, act_size) of the action flat dtype.

        The usual case (the right dtype name, shape and byte count, a little-endian host, no bool
        bytes to check) is a few comparisons and one frombuffer; anything else goes through
        wire.decode_array, whose errors say what is wrong.
        """
        if (self.act_fast and type(obj) is dict and obj.get("dtype") == self.act_wire
                and (shape := obj.get("shape")) == [rows, self.act_size] and type(shape[0]) is int and type(shape[1]) is int
                and type(data := obj.get("data")) is bytes and len(data) == rows * self.act_size * self.act_itemsize):
            return np.frombuffer(data, dtype=self.act_dtype).reshape(rows, self.act_size)
        a = wire.decode_array(obj, "actions")
        if a.dtype != self.act_dtype or a.shape != (rows, self.act_size):
            raise wire.ProtocolError(f"actions must be {self.act_dtype.name} of shape ({rows}, {self.act_size}), got {a.dtype.name} {list(a.shape)}")
        return a

    def step(self, lo: int, hi: int, actions: np.ndarray) -> dict[str, Any]:
        """Step copies [lo, hi); actions has hi-lo rows of the right dtype and width. Returns the reply fields.

        Actions are validated and decoded for the whole sub-batch with numpy before any copy steps; the
        per-copy loop does only env.step and writes into preallocated arrays (no per-copy objects
        unless infos were asked for).
        """
        if self.unstarted:
            for i in range(lo, hi):
                if not self.started[i]:
                    raise CopyError(i, RuntimeError("step before the first reset of this copy"), fatal=False)
        k = self.act_decoder.first_bad(actions)
        if k >= 0:
            raise CopyError(lo + k, ValueError(f"action {actions[k].tolist()} is not in {self.act_space}"), fatal=False)
        values = self.act_decoder.values(actions)
        m = hi - lo
        # Per-copy scalars go to Python lists and into the arrays once after the loop: numpy item
        # assignment costs more than the list append it replaces.
        rew_l: list[float] = [0.0] * m
        term_l: list[bool] = [False] * m
        trunc_l: list[bool] = [False] * m
        infos: list[Any] | None = [None] * m if self.want_infos else None
        envs, ended, obs_rows, write = self.envs, self.ended, self.obs, self.write_obs
        row_shape, obs_dtype, ndarray = self.obs_row_shape, self.obs_dtype, np.ndarray
        clock = time.perf_counter
        t = 0.0
        for k in range(m):
            i = lo + k
            t0 = clock()
            try:
                if ended[i]:
                    if self.autoreset == NEXT_STEP:
                        info = self._reset_copy(i, None, None)
                        if infos is not None:
                            infos[k] = info
                    else:
                        term_l[k], trunc_l[k] = self.end_term[i], self.end_trunc[i]
                    t += clock() - t0
                    continue
                o, r, te, tr, info = envs[i].step(values[k])
                t += clock() - t0
                # `is`: numpy's builtin dtypes are singletons; an equal but distinct one takes write().
                if type(o) is ndarray and o.dtype is obs_dtype and o.shape == row_shape:
                    obs_rows[i] = o
                else:
                    write(o, obs_rows[i])
            except Exception as e:  # noqa: BLE001
                # Earlier copies already stepped: the batch is inconsistent, so the group is dead.
                raise CopyError(i, e, fatal=True) from e
            te, tr = bool(te), bool(tr)
            rew_l[k], term_l[k], trunc_l[k] = float(r), te, tr
            if infos is not None:
                infos[k] = info
            if te or tr:
                ended[i], self.end_term[i], self.end_trunc[i] = True, te, tr
        rewards, term, trunc = self.rewards[lo:hi], self.term[lo:hi], self.trunc[lo:hi]
        rewards[:], term[:], trunc[:] = rew_l, term_l, trunc_l
        return {
            "obs": wire.encode_array(obs_rows[lo:hi]),
            "rewards": wire.encode_array(rewards),
            "terminated": wire.encode_array(term),
            "truncated": wire.encode_array(trunc),
            "infos": self._plain_infos(infos) if infos is not None else None,
            "env_seconds": t,
        }

    @staticmethod
    def _plain_infos(infos: list[Any]) -> list[Any]:
        return [wire.plain(x) if x else None for x in infos]
