"""The in-process anchors of `pcl envbench`: measured by step count, or by wall time for processes run at once."""

from __future__ import annotations

import pytest

from python_server import algorithmic, reference


@pytest.mark.parametrize("mode", ["loop", "vector"])
def test_bench_by_steps_and_by_time(mode: str) -> None:
    algorithmic.register()
    b = reference.new_bench(mode, "Copy-v0", 3, 0)
    r = b.run(5)
    assert r["steps"] == 5 and r["n"] == 3 and r["steps_per_second"] == pytest.approx(15 / r["seconds"])
    r = b.run_for(0.05)
    assert r["seconds"] >= 0.05 and r["steps"] >= 1 and r["steps_per_second"] == pytest.approx(3 * r["steps"] / r["seconds"])
