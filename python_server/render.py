"""Replays a recorded action sequence in a Gymnasium env with render_mode="rgb_array" and writes the
frames as an animated GIF: how `pcl eval --record` shows a trained agent. The Go side plays the
greedy episode through the env server and records the env's actions; MuJoCo is deterministic for the
same seed and actions, so the replay is the same episode (the return printed is checked by the caller).

Command line: python -m python_server.render --env ID --seed S --actions FILE.json --out OUT.gif
[--fps 30] [--width 240 --height 160] [--every 4]
Prints one JSON line: {"frames": n, "steps": n, "return": R}.
Headless MuJoCo needs MUJOCO_GL=egl (or osmesa); egl is the default here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import numpy as np


def replay(env_id: str, seed: int, actions: list[Any], width: int, height: int, every: int) -> tuple[list[np.ndarray], float]:
    """Plays actions from reset(seed) and returns every `every`-th frame and the undiscounted return."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    import gymnasium as gym

    from . import algorithmic

    algorithmic.register()
    kwargs: dict[str, Any] = {"render_mode": "rgb_array"}
    if width and height:
        kwargs.update(width=width, height=height)
    # Gymnasium 1.x's MuJoCo envs render through a free camera that stays where the first frame put
    # it while the agent runs out of the picture; the models' own "track" camera follows the body.
    env = None
    for extra in ({"camera_name": "track"}, {}):
        try:
            env = gym.make(env_id, **kwargs, **extra)
            break
        except TypeError:  # not a MuJoCo env, or no frame size: fewer keywords
            continue
    if env is None:
        env = gym.make(env_id, render_mode="rgb_array")
    try:
        env.reset(seed=seed)
        frames = [np.array(env.render(), copy=True)]
        total = 0.0
        for t, a in enumerate(actions):
            action = np.asarray(a, dtype=env.action_space.dtype) if isinstance(a, list) else a
            _, r, terminated, truncated, _ = env.step(action)
            total += float(r)
            if (t + 1) % every == 0:
                frames.append(np.array(env.render(), copy=True))
            if terminated or truncated:
                break
        return frames, total
    finally:
        env.close()


def write_gif(frames: list[np.ndarray], path: str, fps: int) -> None:
    from PIL import Image

    images = [Image.fromarray(f) for f in frames]
    tmp = path + ".tmp"
    images[0].save(tmp, format="GIF", save_all=True, append_images=images[1:], duration=max(1, round(1000 / fps)), loop=0)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m python_server.render", description=__doc__.split("\n\n")[0])
    p.add_argument("--env", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--actions", required=True, help="JSON list of actions (numbers or lists of numbers)")
    p.add_argument("--out", required=True)
    p.add_argument("--fps", type=int, default=30)
    p.add_argument("--width", type=int, default=240)
    p.add_argument("--height", type=int, default=160)
    p.add_argument("--every", type=int, default=4, help="keep every n-th frame")
    a = p.parse_args(argv)
    with open(a.actions) as f:
        actions = json.load(f)
    if not isinstance(actions, list) or not actions:
        print("render: the actions file holds no list of actions", file=sys.stderr)
        return 2
    frames, total = replay(a.env, a.seed, actions, a.width, a.height, max(1, a.every))
    write_gif(frames, a.out, a.fps)
    print(json.dumps({"frames": len(frames), "steps": len(actions), "return": total}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
