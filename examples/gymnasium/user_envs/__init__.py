"""A user's Gymnasium envs, kept outside python_server/: the package a user puts on the env server's
PYTHONPATH and names with `pcl train --env-module user_envs` (its ids) or, with `--allow-imports`,
as `user_envs.line:LineEnv` (the class itself)."""

import gymnasium as gym

gym.register(id="UserLine-v0", entry_point="user_envs.line:LineEnv", max_episode_steps=40, reward_threshold=0.5)
