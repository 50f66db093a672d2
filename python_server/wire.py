"""Encoding of arrays, spaces and values for the wire: raw little-endian bytes with dtype and shape."""

from __future__ import annotations

import sys
from typing import Any

import msgpack
import numpy as np
from gymnasium import spaces

# The dtypes the protocol accepts, by numpy name (the same set as Go's envs.DType).
DTYPES: dict[str, np.dtype] = {
    name: np.dtype(name).newbyteorder("<")
    for name in ("int64", "int32", "int8", "uint8", "bool", "float32", "float64")
}


class ProtocolError(ValueError):
    """A request that does not follow the protocol (bad field, dtype, shape or index)."""


# Wire name of each accepted dtype (native or little-endian), looked up by dtype: faster than .name.
_WIRE_NAME: dict[np.dtype, str] = {}
for _name, _dt in DTYPES.items():
    _WIRE_NAME[_dt] = _name
    _WIRE_NAME[_dt.newbyteorder("=")] = _name
_LITTLE = sys.byteorder == "little"
# Raw bytes are the native layout: arrays can be used as they come off the wire.
FAST_DECODE = _LITTLE


def wire_name(dt: np.dtype) -> str:
    """The protocol's name of a dtype it accepts."""
    name = _WIRE_NAME.get(dt)
    if name is None:
        raise ProtocolError(f"dtype {dt} cannot travel on the wire")
    return name


# Bounds on decoding a request. msgpack sizes its containers from the lengths a message declares
# and builds tens of bytes of Python objects for each one-byte value, so a request far below the
# message cap could still take gigabytes (a 64 MiB request of empty maps: 4.8 GB). A request of at
# most UNCHECKED_BYTES cannot hold more values than bytes, so it is decoded as it is; a longer one
# has every container capped at MAX_CONTAINER_LEN entries and all of them together at
# MAX_REQUEST_ITEMS values, checked as they are built, so decoding stops early. The protocol's needs
# are far below: its large parts are bins (one value), its longest lists hold one entry per copy
# (at most 4096). msgpack's own stack limits nesting to 1024 levels.
UNCHECKED_BYTES = 1 << 16
MAX_CONTAINER_LEN = 1 << 16
MAX_REQUEST_ITEMS = 1 << 20


class _Budget:
    """Counts decoded containers and their entries; raises once there are too many."""

    __slots__ = ("left",)

    def __init__(self, items: int) -> None:
        self.left = items

    def __call__(self, x: Any) -> Any:
        self.left -= len(x) + 1
        if self.left < 0:
            raise ProtocolError(f"request holds more than {MAX_REQUEST_ITEMS} values")
        return x


def decode_request(payload: bytes) -> Any:
    """Decode a request within the bounds above; errors are msgpack's or ProtocolError."""
    if len(payload) <= UNCHECKED_BYTES:
        return msgpack.unpackb(payload, raw=False, strict_map_key=True)
    budget = _Budget(MAX_REQUEST_ITEMS)
    return msgpack.unpackb(payload, raw=False, strict_map_key=True, max_array_len=MAX_CONTAINER_LEN,
                           max_map_len=MAX_CONTAINER_LEN, list_hook=budget, object_hook=budget)


def encode_array(a: np.ndarray) -> dict[str, Any]:
    """Encode an array as {dtype, shape, data} with little-endian raw bytes."""
    name = _WIRE_NAME.get(a.dtype)
    if name is None:
        raise ProtocolError(f"dtype {a.dtype} cannot travel on the wire")
    if _LITTLE or a.dtype.itemsize == 1:
        data = a.tobytes()  # C order, native (= little-endian) bytes
    else:
        data = np.ascontiguousarray(a, dtype=DTYPES[name]).tobytes()
    return {"dtype": name, "shape": list(a.shape), "data": data}


def decode_array(obj: Any, what: str) -> np.ndarray:
    """Decode and validate an encoded array; `what` names it in errors. The result is read-only."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"{what}: want an array map, got {type(obj).__name__}")
    dtype, shape, data = obj.get("dtype"), obj.get("shape"), obj.get("data")
    dt = DTYPES.get(dtype) if isinstance(dtype, str) else None
    if dt is None:
        raise ProtocolError(f"{what}: unsupported dtype {dtype!r}")
    if not isinstance(shape, list):
        raise ProtocolError(f"{what}: bad shape {shape!r}")
    n = 1
    for s in shape:
        if type(s) is not int or not 0 <= s < 1 << 31:
            raise ProtocolError(f"{what}: bad shape {shape!r}")
        n *= s
    if not isinstance(data, bytes):
        raise ProtocolError(f"{what}: data must be bytes")
    if n * dt.itemsize != len(data):
        raise ProtocolError(f"{what}: {len(data)} bytes do not hold shape {shape} of {dtype}")
    a = np.frombuffer(data, dtype=dt).reshape(shape)
    if dtype == "bool" and n and max(data) > 1:
        raise ProtocolError(f"{what}: bool array holds bytes other than 0 and 1")
    return a if _LITTLE else a.astype(dt.newbyteorder("="))


def plain(v: Any) -> Any:
    """Convert a value (info entries, numpy scalars) into something msgpack packs losslessly."""
    if isinstance(v, (bool, int, float, str, bytes)) or v is None:
        return v
    if isinstance(v, np.ndarray):
        if v.dtype.name in DTYPES:
            return encode_array(v)
        return [plain(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return str(v)


def flat_dtype(space: spaces.Space) -> np.dtype:
    """The dtype of a batch row: the leaves' dtype when they agree, float64 otherwise (as in Go)."""
    if isinstance(space, spaces.Discrete) or isinstance(space, spaces.MultiDiscrete):
        return np.dtype(np.int64)
    if isinstance(space, spaces.MultiBinary):
        return np.dtype(np.int8)
    if isinstance(space, spaces.Box):
        if space.dtype.name not in DTYPES:
            raise ProtocolError(f"Box dtype {space.dtype} is not supported")
        return np.dtype(space.dtype)
    if isinstance(space, (spaces.Tuple, spaces.Dict)):
        leaves = [flat_dtype(s) for s in children(space)]
        if not leaves:
            return np.dtype(np.float64)
        return leaves[0] if all(d == leaves[0] for d in leaves) else np.dtype(np.float64)
    raise ProtocolError(f"unsupported space {space}")


def children(space: spaces.Tuple | spaces.Dict) -> list[spaces.Space]:
    """Sub-spaces in canonical order (Dict: sorted keys)."""
    if isinstance(space, spaces.Tuple):
        return list(space.spaces)
    return [space.spaces[k] for k in sorted(space.spaces.keys())]


def flat_size(space: spaces.Space) -> int:
    if isinstance(space, spaces.Discrete):
        return 1
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return int(np.prod(space.shape, dtype=np.int64))
    if isinstance(space, (spaces.Tuple, spaces.Dict)):
        return sum(flat_size(s) for s in children(space))
    raise ProtocolError(f"unsupported space {space}")


def flatten_into(space: spaces.Space, value: Any, out: np.ndarray) -> None:
    """Write one value's flat elements into out (a row of flat_size(space) elements)."""
    if isinstance(space, spaces.Discrete):
        out[0] = int(value)
    elif isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        out[:] = np.asarray(value).reshape(-1)
    elif isinstance(space, spaces.Tuple):
        off = 0
        for s, v in zip(space.spaces, value):
            k = flat_size(s)
            flatten_into(s, v, out[off : off + k])
            off += k
    elif isinstance(space, spaces.Dict):
        off = 0
        for key in sorted(space.spaces.keys()):
            s = space.spaces[key]
            k = flat_size(s)
            flatten_into(s, value[key], out[off : off + k])
            off += k
    else:
        raise ProtocolError(f"unsupported space {space}")


def row_writer(space: spaces.Space) -> Any:
    """A function (value, out_row) doing flatten_into for this space, with the common cases inlined."""
    if isinstance(space, spaces.Discrete):
        def write_discrete(value: Any, out: np.ndarray) -> None:
            out[0] = int(value)
        return write_discrete
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        size = flat_size(space)

        def write_array(value: Any, out: np.ndarray) -> None:
            a = np.asarray(value)
            if a.size != size:
                raise ProtocolError(f"{space}: value of shape {a.shape} does not fit {size} elements")
            out[:] = a.reshape(-1)
        return write_array
    return lambda value, out: flatten_into(space, value, out)


def unflatten(space: spaces.Space, row: np.ndarray) -> Any:
    """Build one value from its flat row; the caller checks membership."""
    if isinstance(space, spaces.Discrete):
        x = row[0]
        if isinstance(x, np.floating) and float(x) != np.trunc(x):
            raise ProtocolError(f"{space}: value {x} is not integral")
        return np.int64(x)
    if isinstance(space, spaces.Box):
        return np.asarray(row, dtype=space.dtype).reshape(space.shape)
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        if row.dtype.kind == "f" and np.any(row != np.trunc(row)):
            raise ProtocolError(f"{space}: value {row} is not integral")
        return np.asarray(row, dtype=space.dtype).reshape(space.shape)
    if isinstance(space, spaces.Tuple):
        parts, off = [], 0
        for s in space.spaces:
            k = flat_size(s)
            parts.append(unflatten(s, row[off : off + k]))
            off += k
        return tuple(parts)
    if isinstance(space, spaces.Dict):
        d, off = {}, 0
        for key in sorted(space.spaces.keys()):
            s = space.spaces[key]
            k = flat_size(s)
            d[key] = unflatten(s, row[off : off + k])
            off += k
        return d
    raise ProtocolError(f"unsupported space {space}")


def _integral(x: np.ndarray) -> np.ndarray:
    """Rows (of a 2-D block) whose values are all integral; integer dtypes always are."""
    if x.dtype.kind != "f":
        return np.ones(x.shape[0], dtype=np.bool_)
    return np.all(x == np.trunc(x), axis=1)


def check_batch(space: spaces.Space, block: np.ndarray) -> np.ndarray:
    """Which rows of a (rows, flat_size) block hold a member of space, for the whole batch at once.

    Equivalent to space.contains(unflatten(space, row)) for every row, except that integer leaves given
    as floats must be integral (a Box of ints no longer truncates 1.5 to 1 silently).
    """
    if isinstance(space, spaces.Discrete):
        col = block[:, 0]
        ok = (col >= space.start) & (col < space.start + space.n)
        return ok & _integral(block) if block.dtype.kind == "f" else ok
    if isinstance(space, spaces.MultiDiscrete):
        start = np.asarray(space.start).reshape(-1)
        stop = start + np.asarray(space.nvec).reshape(-1)
        return np.all((block >= start) & (block < stop), axis=1) & _integral(block)
    if isinstance(space, spaces.MultiBinary):
        return np.all((block == 0) | (block == 1), axis=1)
    if isinstance(space, spaces.Box):
        x = block.astype(space.dtype, copy=False)
        low = np.asarray(space.low, dtype=space.dtype).reshape(-1)
        high = np.asarray(space.high, dtype=space.dtype).reshape(-1)
        ok = np.all((x >= low) & (x <= high), axis=1)
        if space.dtype.kind in "iub" and block.dtype.kind == "f":
            ok &= _integral(block)
        return ok
    if isinstance(space, (spaces.Tuple, spaces.Dict)):
        ok, off = np.ones(block.shape[0], dtype=np.bool_), 0
        for s in children(space):
            k = flat_size(s)
            ok &= check_batch(s, block[:, off : off + k])
            off += k
        return ok
    raise ProtocolError(f"unsupported space {space}")


def _flat_bounds(space: spaces.Space, flat: np.dtype) -> list[tuple[np.ndarray, np.ndarray, bool]] | None:
    """Per-leaf (low, high, integer) bounds in the flat dtype, or None when a leaf cannot be checked
    that way (a Box whose dtype differs from the flat dtype compares after a cast)."""
    if isinstance(space, spaces.Discrete):
        return [(np.array([space.start]), np.array([space.start + space.n - 1]), True)]
    if isinstance(space, spaces.MultiDiscrete):
        start = np.asarray(space.start, dtype=np.int64).reshape(-1)
        return [(start, start + np.asarray(space.nvec, dtype=np.int64).reshape(-1) - 1, True)]
    if isinstance(space, spaces.MultiBinary):
        k = flat_size(space)
        return [(np.zeros(k), np.ones(k), True)]
    if isinstance(space, spaces.Box):
        if space.dtype != flat or space.dtype.kind == "b":
            return None
        return [(np.asarray(space.low).reshape(-1), np.asarray(space.high).reshape(-1), False)]
    if isinstance(space, (spaces.Tuple, spaces.Dict)):
        out: list[tuple[np.ndarray, np.ndarray, bool]] = []
        for c in children(space):
            b = _flat_bounds(c, flat)
            if b is None:
                return None
            out.extend(b)
        return out
    raise ProtocolError(f"unsupported space {space}")


class BatchDecoder:
    """Checks and decodes (rows, flat_size) action blocks of one space, compiled once per env group.

    check() is check_batch() and values() is unflatten_batch(); when every leaf can be compared in the
    flat dtype, check() is one vectorised comparison against per-column bounds.
    """

    def __init__(self, space: spaces.Space) -> None:
        self.space = space
        self.flat = flat_dtype(space)
        bounds = _flat_bounds(space, self.flat)
        self.low = self.high = self.integral = None
        if bounds is not None and bounds:
            self.low = np.concatenate([b[0].astype(self.flat) for b in bounds])
            self.high = np.concatenate([b[1].astype(self.flat) for b in bounds])
            ints = np.concatenate([np.full(b[0].size, b[2]) for b in bounds])
            # Integer leaves sent as floats must be integral; int dtypes always are.
            self.integral = ints if self.flat.kind == "f" and ints.any() else None
        self.box = space if isinstance(space, spaces.Box) else None
        # Tuples of Discretes (the algorithmic tasks) sent as int64: tuples of int64 scalars, column-wise.
        self.discrete_tuple = (isinstance(space, spaces.Tuple) and len(space.spaces) > 0 and self.flat == np.int64
                               and all(isinstance(c, spaces.Discrete) for c in space.spaces))

    def check(self, block: np.ndarray) -> np.ndarray:
        if self.low is None:
            return check_batch(self.space, block)
        ok = ((block >= self.low) & (block <= self.high)).all(axis=1)
        if self.integral is not None:
            sub = block[:, self.integral]
            ok &= (sub == np.trunc(sub)).all(axis=1)
        return ok

    def first_bad(self, block: np.ndarray) -> int:
        """The first row of block that is not a member of the space, or -1: check() for the hot path.

        When every leaf compares in the flat dtype this is a few whole-block numpy calls and raises no
        floating-point warnings (comparisons with NaN are simply false), so it needs no errstate.
        """
        if self.low is None:
            with np.errstate(invalid="ignore", over="ignore"):  # casts inside check_batch
                ok = check_batch(self.space, block)
        else:
            inside = (block >= self.low) & (block <= self.high)
            if self.integral is not None:
                sub = block[:, self.integral]
                inside[:, self.integral] &= sub == np.trunc(sub)
            if inside.all():
                return -1
            ok = inside.all(axis=1)
        return -1 if ok.all() else int(np.argmin(ok))

    def values(self, block: np.ndarray) -> list[Any]:
        if self.box is not None:
            return list(np.array(block, dtype=self.box.dtype).reshape((block.shape[0], *self.box.shape)))
        if self.discrete_tuple and block.dtype == np.int64:
            return list(zip(*block.T))
        return unflatten_batch(self.space, block)


def unflatten_batch(space: spaces.Space, block: np.ndarray) -> list[Any]:
    """The values of every row of a checked (rows, flat_size) block, built column-wise with numpy.

    Discrete values are numpy int64 scalars, Box/MultiDiscrete/MultiBinary values writable arrays of
    the space's dtype and shape (views into one fresh array per call), Tuple values tuples, Dict values
    dicts: what unflatten gives row by row.
    """
    rows = block.shape[0]
    if isinstance(space, spaces.Discrete):
        return list(block[:, 0].astype(np.int64))
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return list(np.array(block, dtype=space.dtype).reshape((rows, *space.shape)))
    if isinstance(space, (spaces.Tuple, spaces.Dict)):
        parts, off = [], 0
        for s in children(space):
            k = flat_size(s)
            parts.append(unflatten_batch(s, block[:, off : off + k]))
            off += k
        if isinstance(space, spaces.Tuple):
            return list(zip(*parts)) if parts else [() for _ in range(rows)]
        keys = sorted(space.spaces.keys())
        return [dict(zip(keys, vals)) for vals in zip(*parts)] if parts else [{} for _ in range(rows)]
    raise ProtocolError(f"unsupported space {space}")


def encode_space(space: spaces.Space) -> dict[str, Any]:
    """Describe a space for the client; Box bounds travel as float64 arrays (±inf kept)."""
    if isinstance(space, spaces.Discrete):
        return {"kind": "discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.Box):
        flat_dtype(space)
        return {
            "kind": "box",
            "shape": [int(s) for s in space.shape],
            "dtype": space.dtype.name,
            "low": encode_array(np.asarray(space.low, dtype=np.float64).reshape(-1)),
            "high": encode_array(np.asarray(space.high, dtype=np.float64).reshape(-1)),
        }
    if isinstance(space, spaces.MultiDiscrete):
        return {
            "kind": "multi_discrete",
            "nvec": encode_array(np.asarray(space.nvec, dtype=np.int64).reshape(-1)),
            "starts": encode_array(np.asarray(space.start, dtype=np.int64).reshape(-1)),
        }
    if isinstance(space, spaces.MultiBinary):
        return {"kind": "multi_binary", "n": flat_size(space)}
    if isinstance(space, spaces.Tuple):
        return {"kind": "tuple", "spaces": [encode_space(s) for s in space.spaces]}
    if isinstance(space, spaces.Dict):
        keys = sorted(space.spaces.keys())
        return {"kind": "dict", "keys": keys, "spaces": [encode_space(space.spaces[k]) for k in keys]}
    raise ProtocolError(f"unsupported space {type(space).__name__}: {space}")
