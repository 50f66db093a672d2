"""Writes f32trig.json: numpy's np.cos and np.sin of float32 inputs, as float32 bit patterns.

Run with the project's venv: .venv/bin/python envs/classic/testdata/gen_f32trig.py
"""
import json
import pathlib

import numpy as np

rng = np.random.default_rng(2024)
x = np.concatenate([
    rng.uniform(-0.1, 0.1, 2000),       # Acrobot's default reset range
    rng.uniform(-1.0, 1.0, 1000),
    rng.uniform(-4.0, 4.0, 1000),
    rng.uniform(-1000.0, 1000.0, 500),
    rng.uniform(-1e6, 1e6, 200),        # beyond the SIMD kernel's range: the C library's cosf/sinf
]).astype(np.float32)
x = np.concatenate([x, np.array([0.0, -0.0, np.pi / 4, 71476.0625, 71476.07, np.inf, np.nan], dtype=np.float32)])
c, s = np.cos(x), np.sin(x)
rows = [[int(a), int(b), int(d)] for a, b, d in zip(x.view(np.uint32), c.view(np.uint32), s.view(np.uint32))]
out = pathlib.Path(__file__).with_name("f32trig.json")
out.write_text(json.dumps({"numpy": np.__version__, "rows": rows}) + "\n")
print(f"wrote {len(rows)} rows to {out}")
