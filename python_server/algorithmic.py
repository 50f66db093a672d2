"""The algorithmic tasks of the sparse PCL paper as Gymnasium envs (semantics: reference algorithmic_tasks.md,
following gym 0.9's gym/envs/algorithmic). Registered as Copy-v0 ... ReversedAddition3-v0.

reset(options={"input": [...]}) uses an explicit input (tape: symbols; grid: a list of columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Curriculum:
    """The shared min_length and shortfall record (gym kept these as class attributes)."""

    def __init__(self, min_length: int, last: int, threshold: float) -> None:
        self.min_length = min_length
        self.last = last
        self.threshold = threshold
        self.shortfalls: list[float] = []

    def record(self, shortfall: float) -> None:
        self.shortfalls.append(shortfall)
        self.shortfalls = self.shortfalls[-self.last :]
        if len(self.shortfalls) == self.last and min(self.shortfalls) >= self.threshold and self.min_length < 30:
            self.min_length += 1
            self.shortfalls = []


class AlgorithmicEnv(gym.Env[int, tuple[int, int, int]]):
    """Base of the tape and grid tasks."""

    metadata = {"render_modes": ["ansi"]}
    DEFAULT_BASE = 5
    MIN_LENGTH = 2
    LAST = 10
    THRESHOLD = -1.0
    MOVES = 2

    def __init__(self, base: int | None = None, curriculum: Curriculum | None = None, render_mode: str | None = None) -> None:
        self.base = int(base if base is not None else self.DEFAULT_BASE)
        if self.base < 2:
            raise ValueError(f"base must be >= 2, got {self.base}")
        self.curriculum = curriculum or self.new_curriculum()
        self.render_mode = render_mode
        self.observation_space = spaces.Discrete(self.base + 1)
        self.action_space = spaces.Tuple((spaces.Discrete(self.MOVES), spaces.Discrete(2), spaces.Discrete(self.base)))
        self.input_data: list[Any] = []
        self.target: list[int] = []
        self.episode_total_reward: float | None = None
        self.time = 0
        self.write_pos = 0
        self.done = True
        self.last_action: tuple[int, int, int] | None = None
        self.last_reward = 0.0

    @classmethod
    def new_curriculum(cls) -> Curriculum:
        return Curriculum(cls.MIN_LENGTH, cls.LAST, cls.THRESHOLD)

    # Task-specific parts.
    def generate_input(self, length: int) -> list[Any]:
        return [int(x) for x in self.np_random.integers(self.base, size=length)]

    def check_input(self, data: Any) -> list[Any]:
        if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
            raise ValueError(f"input must be a list of symbols, got {type(data).__name__}")
        if len(data) == 0:
            raise ValueError("input is empty")
        out = []
        for i, x in enumerate(data):
            if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= int(x) < self.base:
                raise ValueError(f"input symbol {i} = {x!r} is not in 0..{self.base - 1}")
            out.append(int(x))
        return out

    def target_from_input(self, data: list[Any]) -> list[int]:
        raise NotImplementedError

    def time_limit(self) -> int:
        return len(self.input_data) + len(self.target) + 4

    def reset_head(self) -> None:
        self.head = 0

    def move(self, m: int) -> None:
        self.head += -1 if m == 0 else 1

    def read(self) -> int:
        if 0 <= self.head < len(self.input_data):
            return int(self.input_data[self.head])
        return self.base

    # Gymnasium API.
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        given = None
        if options and "input" in options:
            given = self.check_input(options["input"])  # reject before touching the curriculum
        if self.episode_total_reward is not None:
            self.curriculum.record(self.episode_total_reward - len(self.target))
        if given is None:
            length = self.curriculum.min_length + int(self.np_random.integers(3))
            given = self.generate_input(length)
        self.input_data = given
        self.target = self.target_from_input(given)
        self.reset_head()
        self.write_pos = 0
        self.time = 0
        self.episode_total_reward = 0.0
        self.done = False
        self.last_action = None
        self.last_reward = 0.0
        return self.read(), {}

    def step(self, action: Any) -> tuple[int, float, bool, bool, dict[str, Any]]:
        if self.done:
            raise RuntimeError("step after the episode ended; call reset")
        if not self.action_space.contains(tuple(np.int64(a) for a in action)):
            raise ValueError(f"action {action!r} not in {self.action_space}")
        move, write, char = (int(a) for a in action)
        self.last_action = (move, write, char)
        self.time += 1
        reward = 0.0
        done = False
        if write == 1:
            if char == self.target[self.write_pos]:
                reward = 1.0
            else:
                reward = -0.5
                done = True
            self.write_pos += 1
            if self.write_pos >= len(self.target):
                done = True
        self.move(move)
        if self.time > self.time_limit():
            reward = -1.0
            done = True
        self.last_reward = reward
        self.episode_total_reward += reward
        self.done = done
        return self.read(), reward, done, False, {}

    def render(self) -> str:
        return (
            f"input: {self.input_data} head: {self.head}\n"
            f"target so far: {self.target[: self.write_pos]}\n"
            f"action: {self.last_action} reward: {self.last_reward}\n"
        )


class CopyEnv(AlgorithmicEnv):
    def target_from_input(self, data: list[Any]) -> list[int]:
        return list(data)


class DuplicatedInputEnv(AlgorithmicEnv):
    def generate_input(self, length: int) -> list[Any]:
        out: list[Any] = []
        for _ in range(max(length, 2) // 2):
            c = int(self.np_random.integers(self.base))
            out += [c, c]
        return out

    def check_input(self, data: Any) -> list[Any]:
        out = super().check_input(data)
        if len(out) % 2:
            raise ValueError(f"DuplicatedInput needs an even-length input, got length {len(out)}")
        return out

    def target_from_input(self, data: list[Any]) -> list[int]:
        return list(data[::2])


class RepeatCopyEnv(AlgorithmicEnv):
    LAST = 50
    THRESHOLD = -0.1

    def target_from_input(self, data: list[Any]) -> list[int]:
        return list(data) + list(reversed(data)) + list(data)


class ReverseEnv(AlgorithmicEnv):
    DEFAULT_BASE = 2
    MIN_LENGTH = 1
    LAST = 50
    THRESHOLD = -0.1

    def target_from_input(self, data: list[Any]) -> list[int]:
        return list(reversed(data))


class ReversedAdditionEnv(AlgorithmicEnv):
    DEFAULT_BASE = 3
    MOVES = 4
    ROWS = 2

    def __init__(self, rows: int | None = None, **kwargs: Any) -> None:
        self.rows = int(rows if rows is not None else self.ROWS)
        super().__init__(**kwargs)

    def generate_input(self, length: int) -> list[Any]:
        return [[int(x) for x in self.np_random.integers(self.base, size=self.rows)] for _ in range(length)]

    def check_input(self, data: Any) -> list[Any]:
        if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
            raise ValueError(f"input must be a list of columns, got {type(data).__name__}")
        if len(data) == 0:
            raise ValueError("input has no columns")
        out = []
        for i, col in enumerate(data):
            if not isinstance(col, Sequence) or len(col) != self.rows:
                raise ValueError(f"input column {i} = {col!r} must have {self.rows} rows")
            out.append([int(x) for x in super().check_input(col)])
        return out

    def target_from_input(self, data: list[Any]) -> list[int]:
        carry, target = 0, []
        for col in data:
            total = sum(col) + carry
            target.append(total % self.base)
            carry = total // self.base
        if carry > 0:
            target.append(carry)
        return target

    def time_limit(self) -> int:
        return 2 * len(self.input_data) + 4

    def reset_head(self) -> None:
        self.x, self.y = 0, 0

    @property
    def head(self) -> tuple[int, int]:  # type: ignore[override]
        return (self.x, self.y)

    def move(self, m: int) -> None:
        dx, dy = ((-1, 0), (1, 0), (0, -1), (0, 1))[m]
        self.x += dx
        self.y += dy

    def read(self) -> int:
        if 0 <= self.x < len(self.input_data) and 0 <= self.y < self.rows:
            return int(self.input_data[self.x][self.y])
        return self.base


class ReversedAddition3Env(ReversedAdditionEnv):
    ROWS = 3


TASKS: dict[str, type[AlgorithmicEnv]] = {
    "Copy-v0": CopyEnv,
    "DuplicatedInput-v0": DuplicatedInputEnv,
    "RepeatCopy-v0": RepeatCopyEnv,
    "Reverse-v0": ReverseEnv,
    "ReversedAddition-v0": ReversedAdditionEnv,
    "ReversedAddition3-v0": ReversedAddition3Env,
}


# The reward_threshold that gym registered for each task (the Go side's agent/success uses the same).
REWARD_THRESHOLDS: dict[str, float] = {
    "Copy-v0": 25.0,
    "DuplicatedInput-v0": 9.0,
    "RepeatCopy-v0": 75.0,
    "Reverse-v0": 25.0,
    "ReversedAddition-v0": 25.0,
    "ReversedAddition3-v0": 25.0,
}


def register() -> None:
    """Register the tasks with Gymnasium (idempotent), with gym's reward thresholds."""
    for env_id, cls in TASKS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=cls, disable_env_checker=True, reward_threshold=REWARD_THRESHOLDS[env_id])
