"""Small envs for tests, served with --allow-imports as 'python_server.testing_envs:Name'."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class SpacesEnv(gym.Env[Any, Any]):
    """Every space kind in its observation and action spaces. The observation after a step is the action
    mapped into the observation space, so a round trip can be checked value by value."""

    def __init__(self) -> None:
        inf = np.inf
        self.observation_space = spaces.Dict({
            "box": spaces.Box(low=np.array([-inf, 0.0, -1.5]), high=np.array([inf, inf, 2.5]), dtype=np.float64),
            "disc": spaces.Discrete(5, start=-2),
            "md": spaces.MultiDiscrete([3, 4], start=[1, -1]),
            "mb": spaces.MultiBinary(3),
            "tup": spaces.Tuple((spaces.Discrete(2), spaces.Box(-1, 1, (2,), dtype=np.float32))),
        })
        self.action_space = spaces.Tuple((
            spaces.Discrete(5, start=-2),
            spaces.Box(low=np.array([-inf, 0.0]), high=np.array([1.0, inf]), dtype=np.float32),
            spaces.MultiDiscrete([3, 4], start=[1, -1]),
            spaces.MultiBinary(3),
        ))
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        obs = self.observation_space.sample()
        return self._obs(-2, [1.0, 2.0, 0.5], [1, -1], [0, 1, 0]), {"seed": seed, "np": np.int64(7), "arr": np.arange(3, dtype=np.float32), "ok": np.bool_(True), "n": obs["disc"]}

    def _obs(self, d: int, box: list[float], md: list[int], mb: list[int]) -> dict[str, Any]:
        return {
            "box": np.array(box, dtype=np.float64), "disc": d, "md": np.array(md, dtype=np.int64),
            "mb": np.array(mb, dtype=np.int8), "tup": (self.t % 2, np.array([0.5, -0.25], dtype=np.float32)),
        }

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.t += 1
        d, b, md, mb = action
        obs = self._obs(int(d), [float(b[0]), float(b[1]), 2.5], [int(x) for x in md], [int(x) for x in mb])
        return obs, float(self.t), self.t >= 3, False, {}


class DictObsEnv(gym.Env[Any, Any]):
    """A Dict observation of a Box, a Discrete, a MultiDiscrete and a MultiBinary (keys given out of
    order: Gymnasium sorts them), drawn from the seeded generator, to check flattening against
    gymnasium.spaces.flatten. Two actions; episodes last 5 steps, reward = action."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict({
            "pos": spaces.Box(low=-2.0, high=3.0, shape=(3,), dtype=np.float32),
            "goal": spaces.Discrete(4, start=-1),
            "cells": spaces.MultiDiscrete([3, 2], start=[1, -1]),
            "bits": spaces.MultiBinary(2),
        })
        self.action_space = spaces.Discrete(2)
        self.t = 0

    def _obs(self) -> dict[str, Any]:
        r = self.np_random
        return {
            "pos": r.uniform(-2.0, 3.0, size=3).astype(np.float32), "goal": int(r.integers(-1, 3)),
            "cells": np.array([r.integers(1, 4), r.integers(-1, 1)], dtype=np.int64), "bits": r.integers(0, 2, size=2).astype(np.int8),
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return self._obs(), float(action), self.t >= 5, False, {}


class SlowEnv(gym.Env[Any, Any]):
    """Steps take `delay` seconds: a hung server for deadline tests."""

    def __init__(self, delay: float = 30.0) -> None:
        self.delay = delay
        self.observation_space = spaces.Box(-1, 1, (1,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        time.sleep(self.delay)
        return np.zeros(1, dtype=np.float32), 0.0, False, False, {}


class ActionDelayEnv(gym.Env[Any, Any]):
    """A step with action a takes a * `unit` seconds and observes a: tests which sub-batch finishes first."""

    def __init__(self, unit: float = 0.1) -> None:
        self.unit = unit
        self.observation_space = spaces.Box(0, 3, (1,), dtype=np.float32)
        self.action_space = spaces.Discrete(4)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        time.sleep(int(action) * self.unit)
        return np.full(1, int(action), dtype=np.float32), 0.0, False, False, {}


class CrashEnv(gym.Env[Any, Any]):
    """Raises in step when the action equals `bad`; errors must come back naming the copy."""

    def __init__(self, bad: int = 1) -> None:
        self.bad = bad
        self.observation_space = spaces.Discrete(3)
        self.action_space = spaces.Discrete(3)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if int(action) == self.bad:
            raise RuntimeError("boom: bad action reached the env")
        return int(action), 0.0, False, False, {}


class SlowMakeEnv(gym.Env[Any, Any]):
    """Takes `make_delay` seconds to construct: a make of many copies that would hold the server."""

    def __init__(self, make_delay: float = 0.05) -> None:
        time.sleep(make_delay)
        self.observation_space = spaces.Discrete(2)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return 0, 0.0, False, False, {}


class AbortEnv(gym.Env[Any, Any]):
    """Writes a line to stderr and aborts the whole process at reset, as a native library failing an
    assertion does: the client's error must carry that line."""

    def __init__(self) -> None:
        self.observation_space = spaces.Discrete(2)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        import os  # noqa: PLC0415
        import sys  # noqa: PLC0415

        print("AbortEnv: native assertion `display != NULL' failed", file=sys.stderr, flush=True)
        os.abort()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return 0, 0.0, False, False, {}
