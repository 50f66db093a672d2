"""SB3 PPO with its defaults on HalfCheetah-v5 over the same joint action grid as pcl's --grid.

The grid is the one envs/wrappers builds on the Go side: k points per torque, point j of a
dimension = low + j*(high - low)/(k - 1), the first dimension least significant, one Discrete of
k^6 actions (729 at k = 3). The run's per-iteration return is recorded as pcl records it (every
100 env steps, the mean return of the episodes that ended in those steps, else the last one), so
that `pcl report`'s last-20% metric and "first passes 1,423" read the same series. Not a test and
not part of CI: scripts/ppo-grid makes its own virtual environment.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

STEPS_PER_ROW = 100


class JointGrid(gym.ActionWrapper[np.ndarray, int, np.ndarray]):
    """A Box action space as one Discrete of k^d grid points, first dimension least significant."""

    def __init__(self, env: gym.Env[np.ndarray, np.ndarray], k: int) -> None:
        super().__init__(env)
        space = env.action_space
        assert isinstance(space, gym.spaces.Box) and k >= 2
        self.low = space.low.astype(np.float64)
        self.high = space.high.astype(np.float64)
        self.k = k
        self.dims = int(np.prod(space.shape))
        self.action_space = gym.spaces.Discrete(k**self.dims)

    def action(self, action: int) -> np.ndarray:
        index = int(action)
        point = np.empty(self.dims, dtype=np.float64)
        for d in range(self.dims):
            j = index % self.k
            index //= self.k
            point[d] = self.low[d] + j * (self.high[d] - self.low[d]) / (self.k - 1)
        return point.astype(np.float32)


class Rows:
    """pcl's metrics rows: every 100 env steps the mean return of the episodes that ended."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.ended: list[float] = []
        self.last = float("nan")
        self.ret = 0.0
        self.steps = 0
        self.start = time.monotonic()

    def step(self, reward: float, done: bool) -> None:
        self.ret += reward
        self.steps += 1
        if done:
            self.ended.append(self.ret)
            self.ret = 0.0
        if self.steps % STEPS_PER_ROW == 0:
            if self.ended:
                self.last = float(np.mean(self.ended))
                self.ended = []
            self.rows.append({"iteration": len(self.rows) + 1, "env_steps": self.steps,
                              "wall_seconds": time.monotonic() - self.start, "mean_reward": self.last})


class Recorder(gym.Wrapper[np.ndarray, int, np.ndarray, int]):
    """Feeds every step's reward and end to Rows."""

    def __init__(self, env: gym.Env[np.ndarray, int], rows: Rows) -> None:
        super().__init__(env)
        self.rows_ = rows

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.rows_.step(float(reward), bool(terminated or truncated))
        return obs, float(reward), terminated, truncated, info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--grid", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    import stable_baselines3
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)  # one core per run, as every pcl run here
    rows = Rows()
    env = Recorder(JointGrid(gym.make("HalfCheetah-v5"), args.grid), rows)
    model = PPO("MlpPolicy", env, seed=args.seed, device="cpu", verbose=0)
    model.learn(total_timesteps=args.steps)

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "metrics.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["iteration", "env_steps", "wall_seconds", "mean_reward"])
        w.writeheader()
        w.writerows(rows.rows)
    tail = [r["mean_reward"] for r in rows.rows[len(rows.rows) - max(1, len(rows.rows) // 5):]]
    result = {
        "algo": "SB3 PPO, defaults, MlpPolicy", "env": "HalfCheetah-v5", "grid": args.grid, "actions": args.grid**6,
        "seed": args.seed, "env_steps": rows.steps, "wall_seconds": rows.rows[-1]["wall_seconds"],
        "last20_return": float(np.nanmean(tail)),
        "versions": {"stable_baselines3": stable_baselines3.__version__, "torch": torch.__version__,
                     "gymnasium": gym.__version__, "numpy": np.__version__, "python": platform.python_version()},
        "host": platform.node(), "command": " ".join(["python", "scripts/ppo/ppo_grid.py", *sys.argv[1:]]),
    }
    (args.out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
