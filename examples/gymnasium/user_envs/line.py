"""A walk along a line of ten cells to its far end: Box observation (the position in [0, 1]),
Discrete(2) actions (left, right), reward 1 on arrival and -0.01 per step before it."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class LineEnv(gym.Env[np.ndarray, np.int64]):
    cells = 10

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.pos = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.pos / (self.cells - 1)], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.pos = 0
        return self._obs(), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is outside {self.action_space}")
        self.pos = max(0, min(self.cells - 1, self.pos + (1 if int(action) == 1 else -1)))
        done = self.pos == self.cells - 1
        return self._obs(), 1.0 if done else -0.01, done, False, {}


class NotEnv:
    """A class that is not a gymnasium.Env: the server refuses to make it."""


class WrongShapeEnv(LineEnv):
    """A deliberately broken env: its reset observation has two elements where its space declares one."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}
