"""The quadrotor action term's direct rotor-thrust command (``command="motors"``) in a real env:
zero hovers, a rotor pair above hover rolls the body the way the mixer's geometry says, and a bad
command name fails at construction."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from track_gen_isaac.quadrotor import CRAZYFLIE

from .helpers import rotate_inv


def _cfg(command):
    import isaaclab.envs.mdp as imdp
    from isaaclab.managers import TerminationTermCfg as DoneTerm
    from isaaclab.utils import configclass

    from track_gen_isaac.tasks.drone_gates_track import DroneGatesEnvCfg

    cfg = DroneGatesEnvCfg()
    cfg.scene.num_envs = 2
    cfg.sim.device = "cpu"
    cfg.episode_length_s = 100.0
    cfg.actions.rotors.command = command

    @configclass
    class OnlyTimeOut:
        time_out = DoneTerm(func=imdp.time_out, time_out=True)

    cfg.terminations = OnlyTimeOut()
    cfg.rewards.crash = None  # it reads the failure terminations removed above
    return cfg


@pytest.fixture(scope="module")
def env():
    from isaaclab.envs import ManagerBasedRLEnv

    e = ManagerBasedRLEnv(_cfg("motors"))
    e.reset()
    yield e
    e.close()


def test_zero_rotor_command_hovers(env):
    env.reset()
    p0 = env.scene["robot"].data.root_pos_w.torch.clone()
    for _ in range(25):
        env.step(torch.zeros(env.num_envs, 4))
    assert (env.scene["robot"].data.root_pos_w.torch - p0).abs().max() < 1e-3
    term = env.action_manager.get_term("rotors")
    np.testing.assert_allclose(term.processed_actions.numpy(), CRAZYFLIE.weight / 4, rtol=1e-5)


def test_left_rotors_up_roll_the_body_right(env):
    """Rotors 2 and 3 sit at +y: more thrust there is a torque r x F = (y f, ...) about +x, a
    positive roll rate; rotors 0 and 1 at -y the mirror image. The commands follow the mapping."""
    env.reset()
    a = torch.zeros(env.num_envs, 4)
    a[0, 2] = a[0, 3] = 0.2
    a[1, 0] = a[1, 1] = 0.2  # the mirror image: rotors at -y
    env.step(a)
    env.step(a)
    d = env.scene["robot"].data
    w = np.stack([rotate_inv(d.root_quat_w.torch[i].numpy(), d.root_ang_vel_w.torch[i].numpy()) for i in range(2)])
    assert w[0, 0] > 0.05 and w[1, 0] < -0.05
    np.testing.assert_allclose(w[:, 1:], 0.0, atol=1e-3)
    np.testing.assert_allclose(w[0, 0], -w[1, 0], rtol=1e-3)
    term = env.action_manager.get_term("rotors")
    h, fmax = CRAZYFLIE.weight / 4, CRAZYFLIE.max_rotor_thrust
    np.testing.assert_allclose(term.processed_actions[0].numpy(), [h, h, h + 0.2 * (fmax - h), h + 0.2 * (fmax - h)],
                               rtol=1e-5)
