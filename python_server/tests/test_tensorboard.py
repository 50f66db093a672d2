"""pcl train's TensorBoard event files, read with TensorBoard's own event reader and checked against
metrics.csv, including a run resumed from its fallback checkpoint (rows after it recomputed)."""

from __future__ import annotations

import csv
import json
import math
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tensorboard.backend.event_processing import event_accumulator, event_file_loader

TRAIN = ["train", "--env", "Copy-v0", "--base", "2", "--batch", "16", "--eval-every", "2", "--eval-episodes", "4",
         "--checkpoint-every", "3", "--progress-every", "0"]


def read_metrics(path: Path) -> tuple[list[str], list[list[float]]]:
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]


def load(run: Path) -> event_accumulator.EventAccumulator:
    acc = event_accumulator.EventAccumulator(str(run), size_guidance={event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0})
    acc.Reload()
    return acc


def check_against_metrics(run: Path) -> None:
    header, rows = read_metrics(run / "metrics.csv")
    acc = load(run)
    tags = set(acc.Tags()["scalars"])
    # A column gets a tag once it has a value (the LSTM runs leave the value diagnostics NaN).
    measured = [j for j in range(1, len(header)) if any(not math.isnan(r[j]) for r in rows)]
    assert header.index("greedy_reward") in measured and header.index("loss") in measured
    assert tags == {f"metrics/{header[j]}" for j in measured}
    for j in measured:
        h = header[j]
        got = {e.step: e.value for e in acc.Scalars(f"metrics/{h}")}
        want = {int(r[0]): r[j] for r in rows if not math.isnan(r[j])}
        assert sorted(got) == sorted(want), h  # one value per iteration (NaN cells left out), no stale ones
        for step, x in want.items():
            assert got[step] == pytest.approx(x, rel=1e-6, abs=1e-30), (h, step)  # float32 in the event file
    for tag, name in [("config", "config.json"), ("run", "run.json")]:  # the config and the provenance as text
        text = acc.Tensors(tag)[-1].tensor_proto.string_val[0].decode()
        assert json.loads(textwrap.dedent(text)) == json.loads((run / name).read_text())


def test_event_files_match_metrics(pcl: Any, tmp_path: Path) -> None:
    pcl(*TRAIN, "--iters", "5", "--out", "run", cwd=tmp_path)
    run = tmp_path / "run"
    files = sorted(run.glob("events.out.tfevents.*"))
    assert len(files) == 1
    # Every record's CRCs check out and the file starts with its version.
    events = list(event_file_loader.EventFileLoader(str(files[0])).Load())
    assert events[0].file_version == "brain.Event:2"
    check_against_metrics(run)


def test_resumed_run_replaces_recomputed_rows(pcl: Any, tmp_path: Path) -> None:
    pcl(*TRAIN, "--iters", "5", "--out", "run", cwd=tmp_path)
    run = tmp_path / "run"
    _, before = read_metrics(run / "metrics.csv")
    # Damage the newest checkpoint (iteration 5): the resume falls back to iteration 3's, cuts rows 3
    # and 4 from metrics.csv and recomputes them (with new wall times) in a second event file.
    ckpt = run / "checkpoint.bin"
    ckpt.write_bytes(ckpt.read_bytes()[:50])
    pcl("train", "--out", "run", "--resume", "--iters", "8", "--progress-every", "0", cwd=tmp_path)
    assert len(list(run.glob("events.out.tfevents.*"))) == 2
    header, after = read_metrics(run / "metrics.csv")
    wall = header.index("wall_seconds")
    assert [r[0] for r in after] == list(range(8)) and after[3][wall] != before[3][wall]
    check_against_metrics(run)
