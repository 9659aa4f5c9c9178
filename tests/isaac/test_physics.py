"""The drone tasks' physics settings (:mod:`track_gen_isaac.physics`): MuJoCo-Warp with no
constraint rows integrates the free body exactly as it did with one row and one solver iteration,
and the Euler step's implicit damping, which would freeze the body, is off."""

from __future__ import annotations

import numpy as np
import torch

STEPS = 40


def _fly(njmax: int | None):
    """Positions and velocities of 4 envs of the gate task under a seeded random action sequence;
    ``njmax`` overrides the task's solver setting (None: as registered)."""
    import gymnasium as gym
    from isaaclab_newton.physics import NewtonManager
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry
    from mujoco_warp._src.types import DisableBit

    import track_gen_isaac.tasks  # noqa: F401

    task = "TrackGen-Drone-Gates-v0"
    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs = 4
    cfg.sim.device = "cpu"
    cfg.seed = 3
    if njmax is not None:
        cfg.sim.physics.solver_cfg.njmax = njmax
    env = gym.make(task, cfg=cfg)
    base = env.unwrapped
    solver = NewtonManager._solver
    out = {"njmax": int(solver.mjw_data.njmax),
           "eulerdamp_off": bool(solver.mjw_model.opt.disableflags & int(DisableBit.EULERDAMP))}
    env.reset()
    gen = torch.Generator().manual_seed(0)
    data = base.scene["robot"].data
    p0 = data.root_pos_w.torch.clone()
    pos, vel = [], []
    for _ in range(STEPS):
        env.step(torch.rand(4, 4, generator=gen) * 1.2 - 0.6)
        pos.append((data.root_pos_w.torch - p0).clone().numpy())
        vel.append(data.root_lin_vel_w.torch.clone().numpy())
    env.close()
    out.update(pos=np.stack(pos), vel=np.stack(vel))
    return out


def test_no_constraint_rows_fly_as_one_row_did():
    task, one_row = _fly(None), _fly(1)
    assert task["njmax"] == 0 and task["eulerdamp_off"], "the drone tasks run MuJoCo-Warp with no constraint rows"
    assert one_row["njmax"] == 1
    # the body moves (with no rows and implicit damping on it would stay where it was placed) ...
    assert np.abs(task["pos"][-1]).max() > 0.05
    # ... along the same trajectory the former settings gave, to float rounding
    np.testing.assert_allclose(task["pos"], one_row["pos"], atol=1e-4)
    np.testing.assert_allclose(task["vel"], one_row["vel"], atol=1e-3)
