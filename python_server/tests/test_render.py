"""The replay renderer: the same seed and actions give the env's own return, and a GIF of the frames."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image

from python_server import render


def test_replay_matches_the_env_and_writes_a_gif(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    actions = [list(rng.uniform(-1, 1, 6)) for _ in range(12)]
    env = gym.make("HalfCheetah-v5")
    env.reset(seed=3)
    want = sum(float(env.step(np.asarray(a, dtype=np.float32))[1]) for a in actions)
    env.close()
    path = tmp_path / "actions.json"
    path.write_text(json.dumps(actions))
    out = tmp_path / "cheetah.gif"
    assert render.main(["--env", "HalfCheetah-v5", "--seed", "3", "--actions", str(path), "--out", str(out), "--width", "64", "--height", "48", "--every", "3"]) == 0
    frames, total = render.replay("HalfCheetah-v5", 3, actions, 64, 48, 3)
    assert total == want
    assert len(frames) == 1 + 12 // 3
    assert len({f.tobytes() for f in frames}) == len(frames), "frames alias one render buffer"

    with Image.open(out) as im:
        assert im.size == (64, 48) and im.n_frames == len(frames)


def test_empty_actions_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "actions.json"
    path.write_text("[]")
    assert render.main(["--env", "CartPole-v1", "--seed", "0", "--actions", str(path), "--out", str(tmp_path / "x.gif")]) == 2


def test_the_camera_follows_the_agent() -> None:
    """Without a tracking camera the cheetah leaves the picture and later frames are all floor."""
    rng = np.random.default_rng(1)
    actions = [list(rng.uniform(-1, 1, 6)) for _ in range(900)]
    frames, _ = render.replay("HalfCheetah-v5", 3, actions, 48, 32, 30)
    assert len({f.tobytes() for f in frames}) == len(frames)
