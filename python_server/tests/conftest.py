"""Shared fixtures: the Go command `pcl`, built from this checkout for the tests that run it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def require(condition: bool, reason: str) -> None:
    """Skips the test when condition is false, or fails it under CI=true, where nothing may be missing."""
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: a missing part is a failure)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pcl_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pcl binary built from this checkout (go build ./cmd/pcl)."""
    go = shutil.which("go")
    require(go is not None, "the Go toolchain (go) is not on PATH")
    assert go is not None
    out = tmp_path_factory.mktemp("bin") / "pcl"
    subprocess.run([go, "build", "-o", str(out), "./cmd/pcl"], cwd=ROOT, check=True, timeout=600)
    return out


class Pcl:
    """Runs the pcl binary."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def __call__(self, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Runs pcl with args in cwd, failing the test with its output when it exits non-zero."""
        return run_pcl(self.binary, *args, cwd=cwd, timeout=timeout)


@pytest.fixture()
def pcl(pcl_binary: Path) -> Pcl:
    """Runs pcl built from this checkout: pcl("train", ..., cwd=dir)."""
    return Pcl(pcl_binary)


def run_pcl(pcl: Path, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Runs the binary pcl with args in cwd, failing the test with its output when it exits non-zero."""
    env = dict(os.environ, SPARSEPCL_ROOT=str(ROOT))
    env.setdefault("SPARSEPCL_PYTHON", sys.executable)  # the servers pcl starts use this interpreter
    p = subprocess.run([str(pcl), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        pytest.fail(f"pcl {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p
