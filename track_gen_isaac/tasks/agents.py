"""rsl_rl runner cfgs for the drone-racing and car-racing tasks, read from ``drone_racing_ppo.toml`` next to this module
(package data, so an installed wheel has it too).

The TOML holds the numbers (shared tables plus per-task overrides); this module turns them into
Isaac Lab's :class:`~isaaclab_rl.rsl_rl.RslRlOnPolicyRunnerCfg`, so ``isaaclab train`` and its
Hydra overrides (``agent.max_iterations=...``) work as for any Isaac Lab task. ``device = "auto"``
resolves to the sim's default device (cuda:0 when torch sees a GPU, else cpu); pass
``agent.device=...`` together with ``--device`` to move both (the training entry point only
moves the sim).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg

from track_gen_isaac.device import default_device

__all__ = ["CONFIG", "load_ppo", "drone_gates_ppo", "drone_track_ppo", "drone_race_ppo", "drone_real_ppo",
           "drone_depth_ppo", "car_track_ppo", "drone_duel_ppo"]

#: the TOML this module reads (``TRACK_GEN_PPO_CONFIG`` overrides the path)
CONFIG = Path(os.environ.get("TRACK_GEN_PPO_CONFIG", Path(__file__).resolve().with_name("drone_racing_ppo.toml")))

_TABLES = ("runner", "actor", "critic", "algorithm")


def _merged(data: dict, task: str) -> dict:
    over = data.get(task, {})
    unknown = sorted(set(over) - set(_TABLES))
    if unknown:
        raise ValueError(f"{CONFIG}: [{task}] may override {_TABLES}, got {unknown}")
    return {t: {**data.get(t, {}), **over.get(t, {})} for t in _TABLES}


def load_ppo(task: str, path: Path | str | None = None) -> RslRlOnPolicyRunnerCfg:
    """The runner cfg of ``task`` (a table name of the TOML: ``gates`` or ``track``)."""
    p = Path(path) if path is not None else CONFIG
    if not p.is_file():
        raise FileNotFoundError(f"rsl_rl config not found: {p} (set TRACK_GEN_PPO_CONFIG to its path)")
    with open(p, "rb") as f:
        data = tomllib.load(f)
    if task not in data:
        raise KeyError(f"{p}: no [{task}] table (tasks: {sorted(k for k in data if k not in _TABLES)})")
    c = _merged(data, task)
    runner = dict(c["runner"])
    if runner.get("device", "auto") == "auto":
        runner["device"] = default_device()
    actor = dict(c["actor"])
    std = float(actor.pop("init_std", 1.0))
    # the action noise's clamp, (min, max): a max holds the noise of a task that needs precision down
    std_range = tuple(float(v) for v in actor.pop("std_range", (1e-6, 1e6)))
    try:
        dist = RslRlMLPModelCfg.GaussianDistributionCfg(init_std=std, std_range=std_range)
        return RslRlOnPolicyRunnerCfg(
            **runner,
            actor=RslRlMLPModelCfg(**actor, distribution_cfg=dist),
            critic=RslRlMLPModelCfg(**c["critic"]),
            algorithm=RslRlPpoAlgorithmCfg(**c["algorithm"]),
        )
    except TypeError as exc:
        raise TypeError(f"{p} [{task}]: {exc}") from None


def drone_gates_ppo() -> RslRlOnPolicyRunnerCfg:
    """PPO for ``TrackGen-Drone-Gates-*``."""
    return load_ppo("gates")


def drone_track_ppo() -> RslRlOnPolicyRunnerCfg:
    """PPO for ``TrackGen-Drone-Track-*``."""
    return load_ppo("track")


def drone_race_ppo() -> RslRlOnPolicyRunnerCfg:
    """PPO for ``TrackGen-Drone-Gates-Race-*``."""
    return load_ppo("race")


def drone_real_ppo() -> RslRlOnPolicyRunnerCfg:
    """PPO for the generalist racer (``[real.*]`` tables)."""
    return load_ppo("real")


def drone_depth_ppo() -> RslRlOnPolicyRunnerCfg:
    """PPO for ``TrackGen-Drone-Gates-Depth-*``."""
    return load_ppo("depth")


def car_track_ppo() -> RslRlOnPolicyRunnerCfg:
    """PPO for ``TrackGen-Car-Track-*`` (the ``[car]`` tables)."""
    return load_ppo("car")


def drone_duel_ppo() -> RslRlOnPolicyRunnerCfg:
    """PPO for the head-to-head task ``TrackGen-Drone-Gates-Duel-*`` (one policy for every drone)."""
    return load_ppo("duel")
