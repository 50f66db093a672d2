"""A user's env package outside python_server/ (examples/gymnasium/user_envs): served with
--env-module and as module:Class ids with --allow-imports; a broken package, module or class is
an error that says which, and the server keeps serving."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from python_server.server import RequestError, Server

ROOT = Path(__file__).resolve().parents[2]
USER_ENVS = ROOT / "examples" / "gymnasium"


@pytest.fixture(autouse=True)
def user_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(USER_ENVS))


def test_env_module_that_does_not_import_stops_the_server(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{USER_ENVS}")
    p = subprocess.run([sys.executable, "-m", "python_server", "--bind", f"ipc://{tmp_path}/s.sock", "--env-module", "no_such_pkg"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "--env-module no_such_pkg: ModuleNotFoundError" in p.stderr
    assert p.stdout == ""  # no ready line


def test_module_class_ids(tmp_path: Path) -> None:
    srv = Server(f"ipc://{tmp_path}/s.sock", allow_imports=True, idle_timeout=0, log=lambda s: None)
    try:
        env = srv.new_env("user_envs.line:LineEnv", {})
        obs, _ = env.reset(seed=1)
        assert obs.shape == (1,)
        for env_id, kind, says in [
            ("user_envs.line:NotEnv", "NotAnEnv", "not a gymnasium.Env"),
            ("user_envs.broken:X", "ImportFailed", "broken on purpose"),
            ("user_envs.line:Missing", "UnknownEnv", "has no 'Missing'"),
        ]:
            with pytest.raises(RequestError) as e:
                srv.new_env(env_id, {})
            assert e.value.type == kind and says in e.value.message
        assert srv.new_env("user_envs.line:LineEnv", {}) is not None  # still serving
    finally:
        srv.shutdown()


def test_registered_id_after_import(tmp_path: Path) -> None:
    import user_envs  # noqa: F401, PLC0415 - what --env-module does before serving

    srv = Server(f"ipc://{tmp_path}/s.sock", allow_imports=False, idle_timeout=0, log=lambda s: None)
    try:
        env = srv.new_env("UserLine-v0", {})
        env.reset(seed=0)
        total, done = 0.0, False
        while not done:
            _, r, term, trunc, _ = env.step(1)
            total, done = total + float(r), term or trunc
        assert abs(total - (1 - 0.08)) < 1e-9  # eight steps of -0.01, then the goal
    finally:
        srv.shutdown()
