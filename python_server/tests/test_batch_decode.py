"""The vectorised action path (wire.BatchDecoder) against the per-row reference: space.contains(unflatten(row))."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from python_server import wire

INF = np.inf
SPACES = [
    spaces.Discrete(5, start=-2),
    spaces.Box(low=np.array([-1.0, 0.0], dtype=np.float32), high=np.array([1.0, INF], dtype=np.float32), dtype=np.float32),
    spaces.Box(low=-3, high=3, shape=(2,), dtype=np.int32),
    spaces.MultiDiscrete([3, 4], start=[1, -1]),
    spaces.MultiBinary(3),
    spaces.Tuple((spaces.Discrete(2), spaces.Discrete(2), spaces.Discrete(5))),
    spaces.Tuple((spaces.Discrete(5, start=-2), spaces.Box(low=np.array([-INF, 0.0], dtype=np.float32), high=np.array([1.0, INF], dtype=np.float32), dtype=np.float32),
                  spaces.MultiDiscrete([3, 4], start=[1, -1]), spaces.MultiBinary(3))),
    spaces.Dict({"b": spaces.Discrete(3), "a": spaces.Box(-1, 1, (2,), dtype=np.float64)}),
]


def equal(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))


def reference_contains(space: spaces.Space, row: np.ndarray) -> bool:
    """The old per-row path: unflatten (which rejects non-integral Discrete values) then contains."""
    try:
        return bool(space.contains(wire.unflatten(space, row)))
    except wire.ProtocolError:
        return False


@pytest.mark.parametrize("space", SPACES, ids=[str(s) for s in SPACES])
def test_batch_decoder_matches_per_row(space: spaces.Space) -> None:
    rng = np.random.default_rng(3)
    space.seed(4)
    dec = wire.BatchDecoder(space)
    size, dtype = wire.flat_size(space), wire.flat_dtype(space)
    for trial in range(300):
        block = np.zeros((5, size), dtype=dtype)
        for r in range(5):
            wire.flatten_into(space, space.sample(), block[r])
        for _ in range(rng.integers(0, 3)):  # spoil a few elements
            r, c = rng.integers(0, 5), rng.integers(0, size)
            if dtype.kind == "f":
                # ±inf only for pure Boxes: the old path cast ±inf in an integer leaf to garbage.
                extra = [INF, -INF] if isinstance(space, spaces.Box) else []
                block[r, c] = rng.choice([block[r, c] + 1, block[r, c] - 1, block[r, c] + 0.5, np.nan, *extra])
            else:
                block[r, c] += rng.choice([1, -1, 7])
        with np.errstate(invalid="ignore", over="ignore"):
            got = dec.check(block)
            want = np.array([reference_contains(space, block[r]) for r in range(5)])
        assert got.tolist() == want.tolist(), f"trial {trial}: {block}"
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the hot path runs without an errstate
            first = dec.first_bad(block)
        assert first == (want.tolist().index(False) if not want.all() else -1), f"trial {trial}: {block}"
        good = block[got]
        for v, r in zip(dec.values(good), good):
            assert equal(v, wire.unflatten(space, r)), (v, r)


def test_float_rows_for_int_leaves_must_be_integral() -> None:
    space = spaces.Tuple((spaces.Discrete(3), spaces.Box(-1, 1, (1,), dtype=np.float64)))
    dec = wire.BatchDecoder(space)
    block = np.array([[1.0, 0.5], [1.5, 0.5], [3.0, 0.0], [2.0, 1.5]])
    assert dec.check(block).tolist() == [True, False, False, False]
