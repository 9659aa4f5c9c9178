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


def _race(full: bool, monkeypatch):
    """Positions of 64 envs of the generalist racer (its reset event draws new masses and inertias)
    under bang-bang-ish random actions that crash and reset many of them; ``full``: Newton's full
    hand-over of the new masses instead of :func:`hand_over_inertia`'s short path."""
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.physics as physics
    import track_gen_isaac.tasks  # noqa: F401

    from mujoco_warp._src import io

    calls = {"short": 0}
    real = io.set_const_fixed

    def spy(*args):   # called by the short path only (Newton's goes through the mujoco_warp package)
        calls["short"] += 1
        return real(*args)

    monkeypatch.setattr(io, "set_const_fixed", spy)
    monkeypatch.setattr(physics, "SHORT_HAND_OVER", not full)
    task = "TrackGen-Drone-Gates-Real-v0"
    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs = 64
    cfg.sim.device = "cpu"
    cfg.seed = 5
    env = gym.make(task, cfg=cfg)
    data = env.unwrapped.scene["robot"].data
    env.reset()
    gen = torch.Generator().manual_seed(0)
    pos, resets = [], 0
    for _ in range(60):
        _, _, term, trunc, _ = env.step(torch.rand(64, 4, generator=gen) * 1.8 - 0.9)
        resets += int((torch.as_tensor(term) | torch.as_tensor(trunc)).sum())
        pos.append(data.root_pos_w.torch.clone().numpy())
    env.close()
    return np.stack(pos), resets, calls["short"]


def test_short_inertia_hand_over_is_bit_identical(monkeypatch):
    short, resets, used = _race(False, monkeypatch)
    full, _, used_by_full = _race(True, monkeypatch)
    assert used_by_full == 0
    assert resets > 10 and used > 0, "the comparison must cover resets that drew new masses through the short path"
    assert np.isfinite(short).all()
    np.testing.assert_array_equal(short, full)


def _race_recorded(record: bool):
    """Positions and observations of 64 envs of the generalist racer (resets with new masses, courses
    and placements) with the physics step recorded and replayed (the registered setting) or run
    eagerly (``use_cuda_graph=False``), and whether a graph was replayed."""
    import gymnasium as gym
    from isaaclab_newton.physics import NewtonManager
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401
    from track_gen_isaac.physics_graph import NewtonGraphedMJWarpManager

    task = "TrackGen-Drone-Gates-Real-v0"
    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs = 64
    cfg.sim.device = "cpu"
    cfg.seed = 7
    cfg.sim.physics.use_cuda_graph = record
    env = gym.make(task, cfg=cfg)
    assert env.unwrapped.sim.physics_manager is NewtonGraphedMJWarpManager
    data = env.unwrapped.scene["robot"].data
    obs, _ = env.reset()
    gen = torch.Generator().manual_seed(1)
    pos, obs_all, resets = [], [], 0
    for _ in range(60):
        obs, _, term, trunc, _ = env.step(torch.rand(64, 4, generator=gen) * 1.8 - 0.9)
        resets += int((torch.as_tensor(term) | torch.as_tensor(trunc)).sum())
        pos.append(data.root_pos_w.torch.clone().numpy())
        obs_all.append(obs["policy"].clone().numpy())
    graph = NewtonManager._graph is not None
    env.close()
    return np.stack(pos), np.stack(obs_all), resets, graph


def test_the_physics_step_recorded_on_the_cpu_replays_bit_identically():
    recorded, obs_r, resets, graph = _race_recorded(True)
    eager, obs_e, _, no_graph = _race_recorded(False)
    assert graph and not no_graph, "the registered task records the step on the CPU; use_cuda_graph=False does not"
    assert resets > 10, "the comparison must cross resets (new courses, masses, placements)"
    assert np.abs(recorded[-1] - recorded[0]).max() > 0.05
    np.testing.assert_array_equal(recorded, eager)
    np.testing.assert_array_equal(obs_r, obs_e)
