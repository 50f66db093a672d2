"""Encoding of arrays, spaces and values for the wire: raw little-endian bytes with dtype and shape."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

# The dtypes the protocol accepts, by numpy name (the same set as Go's envs.DType).
DTYPES: dict[str, np.dtype] = {
    name: np.dtype(name).newbyteorder("<")
    for name in ("int64", "int32", "int8", "uint8", "bool", "float32", "float64")
}


class ProtocolError(ValueError):
    """A request that does not follow the protocol (bad field, dtype, shape or index)."""


def encode_array(a: np.ndarray) -> dict[str, Any]:
    """Encode an array as {dtype, shape, data} with little-endian raw bytes."""
    name = a.dtype.name
    if name not in DTYPES:
        raise ProtocolError(f"dtype {a.dtype} cannot travel on the wire")
    return {"dtype": name, "shape": [int(s) for s in a.shape], "data": np.ascontiguousarray(a, dtype=DTYPES[name]).tobytes()}


def decode_array(obj: Any, what: str) -> np.ndarray:
    """Decode and validate an encoded array; `what` names it in errors."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"{what}: want an array map, got {type(obj).__name__}")
    dtype, shape, data = obj.get("dtype"), obj.get("shape"), obj.get("data")
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ProtocolError(f"{what}: unsupported dtype {dtype!r}")
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 31 for s in shape):
        raise ProtocolError(f"{what}: bad shape {shape!r}")
    if not isinstance(data, bytes):
        raise ProtocolError(f"{what}: data must be bytes")
    dt = DTYPES[dtype]
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if n * dt.itemsize != len(data):
        raise ProtocolError(f"{what}: {len(data)} bytes do not hold shape {shape} of {dtype}")
    a = np.frombuffer(data, dtype=dt).reshape(shape)
    if dtype == "bool" and a.size and np.frombuffer(data, dtype=np.uint8).max() > 1:
        raise ProtocolError(f"{what}: bool array holds bytes other than 0 and 1")
    return a.astype(dt.newbyteorder("="), copy=False)


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
