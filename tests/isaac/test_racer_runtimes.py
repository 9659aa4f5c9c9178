"""The racer task in both runtimes, step for step, with its domain randomization and observation noise on
(issue 15): the same re-draws at resets, the same flights, rewards and noisy observations."""

from __future__ import annotations

import numpy as np
import torch

from .test_racer import _cfg


def _fly(task, steps=60, edit=None):
    """Fly ``task`` with seeded random actions; ``edit(cfg)`` changes its config first."""
    import gymnasium as gym

    cfg = _cfg(task, 8)
    if edit is not None:
        edit(cfg)
    e = gym.make(task, cfg=cfg)
    base = e.unwrapped
    gen = torch.Generator().manual_seed(0)
    obs, _ = e.reset()
    out = {"obs": [obs["policy"].numpy().copy()], "pos": [], "rew": [], "done": [], "mass": []}
    for _ in range(steps):
        a = torch.rand(8, 4, generator=gen) * 1.2 - 0.6
        obs, rew, term, trunc, _ = e.step(a)
        out["obs"].append(obs["policy"].numpy().copy())
        out["pos"].append((base.scene["robot"].data.root_pos_w.torch - base.scene.env_origins).numpy().copy())
        out["rew"].append(np.asarray(rew).copy())
        out["done"].append((term | trunc).numpy().copy())
        out["mass"].append(base.scene["robot"].data.body_mass.torch.numpy().copy())
    out["delay"] = base.action_manager.get_term("rotors").dyn.delay.numpy().copy()
    e.close()
    return {k: np.asarray(v) for k, v in out.items()}


def test_both_runtimes_fly_the_same_with_randomization_on():
    stable = _fly("TrackGen-Drone-Gates-Race-v0")
    warp = _fly("TrackGen-Drone-Gates-Race-Warp-v0")
    assert stable["done"].any(), "random actions for 1.2 s should end some episodes (re-draws exercised)"
    assert stable["obs"].shape[-1] == 50
    np.testing.assert_array_equal(stable["done"], warp["done"])
    np.testing.assert_array_equal(stable["mass"], warp["mass"])
    np.testing.assert_array_equal(stable["delay"], warp["delay"])
    np.testing.assert_allclose(warp["pos"], stable["pos"], atol=1e-4)
    np.testing.assert_allclose(warp["rew"], stable["rew"], atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(warp["obs"], stable["obs"], atol=1e-3, rtol=1e-3)


def test_the_play_env_flies_the_centre_plant():
    """Read back from the simulation after a reset: every env the same plant, the model's mass and
    coefficients, drag 0.005 N s/m per axis, one step of latency."""
    import gymnasium as gym

    from track_gen_isaac.quadrotor import CRAZYFLIE

    task = "TrackGen-Drone-Gates-Race-Play-v0"
    e = gym.make(task, cfg=_cfg(task, 4))
    try:
        e.reset()
        base = e.unwrapped
        dyn = base.action_manager.get_term("rotors").dyn
        np.testing.assert_array_equal(dyn.delay.numpy(), 1)
        np.testing.assert_allclose(dyn.drag.numpy(), 0.005, rtol=1e-6)
        np.testing.assert_allclose(dyn.thrust_scale.numpy(), 1.0)
        np.testing.assert_allclose(dyn.torque_scale.numpy(), 1.0)
        np.testing.assert_allclose(base.scene["robot"].data.body_mass.torch.numpy()[:, 0], CRAZYFLIE.mass, rtol=1e-6)
        tau = base.event_manager.get_term_cfg("dynamics").func.tau.numpy()
        np.testing.assert_allclose(tau, base.cfg.actions.rotors.model.motor_time_constant, rtol=1e-6)
    finally:
        e.close()
