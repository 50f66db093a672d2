"""Helpers run as scripts by Go tests and `pcl envbench`, with the same in-process loop the server uses.

    python -m python_server.reference trajectory OUT.json --env HalfCheetah-v5 --n 2 --steps 1005 --seed 7
        writes the in-process trajectory of N copies (next-step autoreset, actions from a fixed rule),
        with observations and rewards as hex of float64 bytes so they compare bit for bit.
    python -m python_server.reference bench --env HalfCheetah-v5 --n 16 --steps 2000
        prints {"steps_per_second": ...} for in-process stepping of N copies with random actions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np

from . import algorithmic, wire


def halfcheetah_action(copy: int, t: int, dim: int) -> float:
    """The deterministic action rule shared with the Go test: a grid point of 5 per dimension."""
    j = (copy * 7 + t * 3 + dim * 5) % 5
    return float(np.float32(-1.0 + j * 0.5))


def trajectory(env_id: str, n: int, steps: int, seed: int) -> dict[str, Any]:
    envs = [gym.make(env_id) for _ in range(n)]
    space = envs[0].observation_space
    size = wire.flat_size(space)
    row = np.zeros(size, dtype=np.float64)
    ended = [False] * n
    out: dict[str, Any] = {"env": env_id, "n": n, "steps": steps, "seed": seed, "reset_obs": [], "obs": [], "rewards": [], "terminated": [], "truncated": []}
    for i, e in enumerate(envs):
        o, _ = e.reset(seed=seed + i)
        wire.flatten_into(space, o, row)
        out["reset_obs"].append(row.tobytes().hex())
    for t in range(steps):
        obs_t, rew_t, te_t, tr_t = [], [], [], []
        for i, e in enumerate(envs):
            if ended[i]:  # next-step autoreset: the action is ignored
                o, _ = e.reset()
                r, te, tr = 0.0, False, False
                ended[i] = False
            else:
                a = np.array([halfcheetah_action(i, t, d) for d in range(e.action_space.shape[0])], dtype=np.float32)
                o, r, te, tr, _ = e.step(a)
                ended[i] = bool(te or tr)
            wire.flatten_into(space, o, row)
            obs_t.append(row.tobytes().hex())
            rew_t.append(np.float64(r).tobytes().hex())
            te_t.append(bool(te))
            tr_t.append(bool(tr))
        out["obs"].append(obs_t)
        out["rewards"].append(rew_t)
        out["terminated"].append(te_t)
        out["truncated"].append(tr_t)
    return out


def bench(env_id: str, n: int, steps: int, seed: int) -> dict[str, Any]:
    envs = [gym.make(env_id) for _ in range(n)]
    rng = np.random.default_rng(seed)
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
        e.action_space.seed(seed + i)
    ended = [False] * n
    warm = max(steps // 10, 1)
    t0 = 0.0
    for t in range(steps + warm):
        if t == warm:
            t0 = time.perf_counter()
        for i, e in enumerate(envs):
            if ended[i]:
                e.reset()
                ended[i] = False
                continue
            _, _, te, tr, _ = e.step(e.action_space.sample())
            ended[i] = bool(te or tr)
    dt = time.perf_counter() - t0
    del rng
    return {"env": env_id, "n": n, "steps": steps, "seconds": dt, "steps_per_second": steps * n / dt}


def main(argv: list[str] | None = None) -> int:
    algorithmic.register()
    p = argparse.ArgumentParser(prog="python -m python_server.reference")
    sub = p.add_subparsers(dest="cmd", required=True)
    tp = sub.add_parser("trajectory")
    tp.add_argument("out")
    bp = sub.add_parser("bench")
    for q in (tp, bp):
        q.add_argument("--env", default="HalfCheetah-v5")
        q.add_argument("--n", type=int, default=2)
        q.add_argument("--steps", type=int, default=1005)
        q.add_argument("--seed", type=int, default=7)
    a = p.parse_args(argv)
    if a.cmd == "trajectory":
        with open(a.out, "w") as f:
            json.dump(trajectory(a.env, a.n, a.steps, a.seed), f)
    else:
        print(json.dumps(bench(a.env, a.n, a.steps, a.seed)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
