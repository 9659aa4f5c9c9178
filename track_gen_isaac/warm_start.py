"""Start one task's training from another task's rsl_rl checkpoint whose observation is a prefix of
this task's: the head-to-head racer (``TrackGen-Drone-Gates-Duel-v0``, 71 values) from the solo
generalist (``TrackGen-Drone-Gates-Real-v0``, its first 60), so self-play starts from a drone that
already flies the courses instead of from scratch.

:func:`widen_checkpoint` gives every network's first layer zero weights for the new trailing inputs
and their observation normalizer a mean of 0 and a variance of 1: the widened networks compute
exactly what the source networks did, whatever the new inputs hold, until training moves those
weights. The optimizer state is dropped (its moments have the old shapes) and the iteration
counter restarts at 0. ``python -m track_gen_isaac.main_job --task T --init_from RUN`` widens RUN's
latest checkpoint to T's observation and trains from it (``isaaclab train --checkpoint FILE
--no-resume_optimizer_state``).
"""

from __future__ import annotations

from pathlib import Path

import torch

from track_gen_isaac.policy_average import run_checkpoints

__all__ = ["widen_checkpoint", "task_obs_dims", "latest_checkpoint"]

#: the state-dict entries of rsl_rl's MLP models that carry the observation width
_FIRST_LAYER = "mlp.0.weight"
_NORMALIZER = ("obs_normalizer._mean", "obs_normalizer._var", "obs_normalizer._std")


def latest_checkpoint(run: str | Path) -> Path:
    """``run`` itself when it is a file, else the ``model_<iteration>.pt`` of ``run`` with the highest iteration."""
    p = Path(run)
    if p.is_file():
        return p
    models = run_checkpoints(p)
    if not models:
        raise FileNotFoundError(f"no model_*.pt checkpoint in {p}")
    return models[-1]


def _widen_model(state: dict, width: int, name: str) -> dict:
    w = state.get(_FIRST_LAYER)
    if w is None:
        raise ValueError(f"the {name} network has no {_FIRST_LAYER!r} (an rsl_rl MLP model is expected)")
    old = int(w.shape[1])
    if width < old:
        raise ValueError(f"the checkpoint's {name} sees {old} values, the task {width}: a task can start "
                         "from a checkpoint whose observation is a prefix of its own, not a longer one")
    out = dict(state)
    out[_FIRST_LAYER] = torch.cat([w, w.new_zeros(w.shape[0], width - old)], dim=1)
    for key, fill in zip(_NORMALIZER, (0.0, 1.0, 1.0), strict=True):
        if key in state:
            v = state[key]
            out[key] = torch.cat([v, v.new_full((*v.shape[:-1], width - old), fill)], dim=-1)
    return out


def widen_checkpoint(src: str | Path, dst: str | Path, dims: dict[str, int]) -> Path:
    """Write ``src``'s networks widened to ``dims`` (``{"actor": D, "critic": Dc}``, the observation
    widths of the target task) to ``dst``: new inputs get zero first-layer weights and a 0 / 1
    normalizer, so the networks' outputs are unchanged; no optimizer state; iteration 0."""
    ckpt = torch.load(latest_checkpoint(src), map_location="cpu", weights_only=False)
    out = {"iter": 0, "infos": None}
    for name in ("actor", "critic"):
        key = f"{name}_state_dict"
        if key not in ckpt:
            raise ValueError(f"{src} has no {key!r} (not an rsl_rl PPO checkpoint)")
        out[key] = _widen_model(ckpt[key], int(dims[name]), name)
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    torch.save(out, dst)
    return dst


def task_obs_dims(task: str) -> dict[str, int]:
    """The actor's and the critic's observation widths of registered ``task``: the sums of the
    observation groups its rsl_rl cfg feeds each (``obs_groups``), from a small env of the task on the
    CPU."""
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401

    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    agent = load_cfg_from_registry(task, "rsl_rl_cfg_entry_point")
    cfg.scene.num_envs = max(2, int(getattr(getattr(cfg, "course", None), "agents", 1) or 1))
    cfg.sim.device = "cpu"
    env = gym.make(task, cfg=cfg)
    try:
        dims = {g: int(d[0]) for g, d in env.unwrapped.observation_manager.group_obs_dim.items()}
    finally:
        env.close()
    return {name: sum(dims[g] for g in agent.obs_groups[name]) for name in ("actor", "critic")}
