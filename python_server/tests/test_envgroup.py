"""EnvGroup's decoding of action blocks: the fast path agrees with wire.decode_array and errors stay precise."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from python_server import wire
from python_server.envgroup import EnvGroup


class ActEnv(gym.Env[Any, Any]):
    """An env whose only interesting part is its action space."""

    def __init__(self, action_space: spaces.Space[Any]) -> None:
        self.action_space = action_space
        self.observation_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return 0, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return 0, 0.0, False, False, {}


def group(space: spaces.Space[Any]) -> EnvGroup:
    return EnvGroup([ActEnv(space), ActEnv(space)], "next-step", False, None)


BOX = spaces.Box(-1, 1, (3,), dtype=np.float32)
BOOL = spaces.Box(0, 1, (2,), dtype=np.bool_)
good = np.arange(6, dtype=np.float32).reshape(2, 3) / 10


@pytest.mark.parametrize("space, obj, want", [
    (BOX, wire.encode_array(good), good),
    (BOOL, wire.encode_array(np.array([[True, False], [False, True]])), np.array([[True, False], [False, True]])),
    (BOX, wire.encode_array(good.astype(np.float64)), "actions must be float32 of shape (2, 3), got float64 [2, 3]"),
    (BOX, wire.encode_array(good[:1]), "actions must be float32 of shape (2, 3), got float32 [1, 3]"),
    (BOX, {"dtype": "float32", "shape": [2, 3], "data": b"\0" * 20}, "20 bytes do not hold shape [2, 3]"),
    (BOX, {"dtype": "float32", "shape": [2, 3], "data": "text"}, "data must be bytes"),
    (BOX, [0.1, 0.2], "want an array map"),
    (BOX, {"dtype": "float32", "shape": [2.0, 3], "data": good.tobytes()}, "bad shape"),  # equal to [2, 3], not ints
    (BOOL, {"dtype": "bool", "shape": [2, 2], "data": b"\0\1\2\0"}, "bytes other than 0 and 1"),
], ids=["good", "good bool", "dtype", "shape", "byte count", "data type", "not a map", "float dims", "bool bytes"])
def test_actions_block(space: spaces.Space[Any], obj: Any, want: np.ndarray | str) -> None:
    g = group(space)
    if isinstance(want, str):
        with pytest.raises(wire.ProtocolError) as e:
            g.actions_block(obj, 2)
        assert want in str(e.value)
        return
    got = g.actions_block(obj, 2)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    ref = wire.decode_array(obj, "actions")  # the general decoder gives the same array
    assert np.array_equal(got, ref) and got.dtype == ref.dtype
