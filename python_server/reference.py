"""Helpers run as scripts by Go tests and `pcl envbench`, with the same in-process loop the server uses.

    python -m python_server.reference trajectory OUT.json --env HalfCheetah-v5 --n 2 --steps 1005 --seed 7
        writes the in-process trajectory of N copies (next-step autoreset, actions from a fixed rule),
        with observations and rewards as hex of float64 bytes so they compare bit for bit.
    python -m python_server.reference bench --env HalfCheetah-v5 --n 16 --steps 2000 [--mode loop|vector]
        prints {"steps_per_second": ...} for in-process stepping of N copies with random actions: a bare
        env.step loop (loop), or Gymnasium's own SyncVectorEnv, which also batches the outputs (vector).
    python -m python_server.reference bench-serve --env HalfCheetah-v5 --n 16 [--mode loop|vector]
        the same, kept alive: prints {"ready": true}, then one result line per line read on stdin:
        a step count, or "for SECONDS" (as many steps as fit, for processes measured at once).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from abc import ABC, abstractmethod
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


class Timed(ABC):
    """A measurement loop over step_batch(), by step count or by wall time."""

    n: int

    @abstractmethod
    def step_batch(self) -> None:
        """Step every copy once."""

    def run(self, steps: int) -> dict[str, Any]:
        """steps batches after steps/10 unmeasured ones."""
        for _ in range(max(steps // 10, 1)):
            self.step_batch()
        t0 = time.perf_counter()
        for _ in range(steps):
            self.step_batch()
        dt = time.perf_counter() - t0
        return {"n": self.n, "steps": steps, "seconds": dt, "steps_per_second": steps * self.n / dt}

    def run_for(self, seconds: float) -> dict[str, Any]:
        """As many batches as fit in `seconds` after two unmeasured ones: processes measured at once
        this way overlap for the whole window, which equal step counts would not guarantee."""
        for _ in range(2):
            self.step_batch()
        t0 = time.perf_counter()
        steps, dt = 0, 0.0
        while dt < seconds:
            self.step_batch()
            steps += 1
            dt = time.perf_counter() - t0
        return {"n": self.n, "steps": steps, "seconds": dt, "steps_per_second": steps * self.n / dt}


class Bench(Timed):
    """N copies stepped in-process exactly as EnvGroup steps them (next-step autoreset), with 16 batches
    of random actions drawn up front, as the Go side of `pcl envbench` does for the bridge: the anchor
    pays for env.step and the loop, not for sampling."""

    def __init__(self, env_id: str, n: int, seed: int) -> None:
        self.envs = [gym.make(env_id) for _ in range(n)]
        self.n = n
        for i, e in enumerate(self.envs):
            e.reset(seed=seed + i)
            e.action_space.seed(seed + i)
        self.actions = [[e.action_space.sample() for e in self.envs] for _ in range(16)]
        self.ended = [False] * n
        self.t = 0

    def step_batch(self) -> None:
        acts = self.actions[self.t % len(self.actions)]
        self.t += 1
        ended = self.ended
        for i, e in enumerate(self.envs):
            if ended[i]:
                e.reset()
                ended[i] = False
                continue
            _, _, te, tr, _ = e.step(acts[i])
            ended[i] = bool(te or tr)


class VectorBench(Timed):
    """N copies in Gymnasium's SyncVectorEnv (next-step autoreset, the default): in-process stepping
    that, like the bridge, hands back batched observations, rewards and flags."""

    def __init__(self, env_id: str, n: int, seed: int) -> None:
        self.env = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync")
        self.n = n
        self.env.reset(seed=seed)
        self.env.action_space.seed(seed)
        self.actions = [self.env.action_space.sample() for _ in range(16)]
        self.t = 0

    def step_batch(self) -> None:
        self.env.step(self.actions[self.t % len(self.actions)])
        self.t += 1


def new_bench(mode: str, env_id: str, n: int, seed: int) -> Timed:
    return VectorBench(env_id, n, seed) if mode == "vector" else Bench(env_id, n, seed)


def bench(mode: str, env_id: str, n: int, steps: int, seed: int) -> dict[str, Any]:
    return {"env": env_id, "mode": mode, **new_bench(mode, env_id, n, seed).run(steps)}


def bench_serve(mode: str, env_id: str, n: int, seed: int) -> None:
    """Make the envs once, print {"ready": true}, then run one measurement per stdin line (a step
    count, or "for SECONDS") and print its JSON: lets `pcl envbench` interleave anchor and bridge
    rounds cheaply."""
    b = new_bench(mode, env_id, n, seed)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        if line.startswith("for "):
            print(json.dumps(b.run_for(float(line[4:]))), flush=True)
        else:
            print(json.dumps(b.run(int(line))), flush=True)


def main(argv: list[str] | None = None) -> int:
    algorithmic.register()
    p = argparse.ArgumentParser(prog="python -m python_server.reference")
    sub = p.add_subparsers(dest="cmd", required=True)
    tp = sub.add_parser("trajectory")
    tp.add_argument("out")
    bp = sub.add_parser("bench")
    sp = sub.add_parser("bench-serve")
    for q in (tp, bp, sp):
        q.add_argument("--env", default="HalfCheetah-v5")
        q.add_argument("--n", type=int, default=2)
        q.add_argument("--steps", type=int, default=1005)
        q.add_argument("--seed", type=int, default=7)
    for q in (bp, sp):
        q.add_argument("--mode", choices=("loop", "vector"), default="loop")
    a = p.parse_args(argv)
    if a.cmd == "trajectory":
        with open(a.out, "w") as f:
            json.dump(trajectory(a.env, a.n, a.steps, a.seed), f)
    elif a.cmd == "bench-serve":
        bench_serve(a.mode, a.env, a.n, a.seed)
    else:
        print(json.dumps(bench(a.mode, a.env, a.n, a.steps, a.seed)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
