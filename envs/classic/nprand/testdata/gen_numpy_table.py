"""Writes numpy_table.json: numpy's own SeedSequence, PCG64 and Generator outputs for a table of seeds.

Run with the project's venv: .venv/bin/python envs/classic/nprand/testdata/gen_numpy_table.py
"""
import json
import pathlib

import numpy as np

SEEDS = [0, 1, 2, 3, 7, 42, 123, 1000, 12345, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1,
         2**40 + 17, 2**53 + 1, 2**62, 2**63 - 1, 987654321987, 31337]


def hexf(x):
    return float(x).hex()


rows = []
for seed in SEEDS:
    ss = np.random.SeedSequence(seed)
    st = np.random.PCG64(np.random.SeedSequence(seed)).state["state"]
    bg = np.random.PCG64(np.random.SeedSequence(seed))
    raw = [int(v) for v in bg.random_raw(6)]
    g = np.random.default_rng(seed)
    doubles = [hexf(v) for v in g.random(6)]
    g = np.random.default_rng(seed)
    unif4 = [hexf(v) for v in g.uniform(low=-0.05, high=0.05, size=(4,))]
    g = np.random.default_rng(seed)
    unif1 = hexf(g.uniform(low=-0.6, high=-0.4))
    g = np.random.default_rng(seed)
    arr = [hexf(v) for v in g.uniform(low=-np.array([np.pi, 1.0]), high=np.array([np.pi, 1.0]))]
    rows.append({
        "seed": seed,
        "state32": [int(v) for v in ss.generate_state(8, np.uint32)],
        "state64": [str(int(v)) for v in ss.generate_state(4, np.uint64)],
        "pcg_state": str(st["state"]), "pcg_inc": str(st["inc"]),
        "raw": [str(v) for v in raw],
        "doubles": doubles, "uniform4": unif4, "uniform1": unif1, "uniform_pendulum": arr,
    })
out = pathlib.Path(__file__).with_name("numpy_table.json")
out.write_text(json.dumps({"numpy": np.__version__, "rows": rows}, indent=1) + "\n")
print(f"wrote {len(rows)} rows to {out}")
