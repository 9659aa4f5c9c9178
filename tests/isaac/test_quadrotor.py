"""The quadrotor model: its kernels against a float64 numpy reference, and its action term in a real
env (hover at thrust = weight, commanded body rates reached after the motor lag, vertical thrust)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen_isaac.quadrotor import CRAZYFLIE, GRAVITY, QuadrotorDynamics, QuadrotorModel

from .helpers import rotate_inv

# ------------------------------------------------------------------------------ numpy reference


def reference_step(model: QuadrotorModel, action, rotor, quat, w_world, dt, command="rates"):
    """One policy command then one substep, in float64: rates loop and X mixer (or the rotor
    commands), clip, lag, wrench."""
    a = np.clip(np.nan_to_num(np.asarray(action, np.float64), nan=0.0, posinf=0.0, neginf=0.0), -1, 1)
    T = model.weight * (1 + model.thrust_range * a[0])
    w_cmd = a[1:] * np.asarray(model.max_rates)
    J = np.asarray(model.inertia, np.float64)
    w = rotate_inv(np.asarray(quat, np.float64), np.asarray(w_world, np.float64))
    tau = J * (np.asarray(model.rate_gains) * (w_cmd - w)) + np.cross(w, J * w)
    d = model.arm_length / math.sqrt(2)
    c = model.yaw_moment_coef
    # rotor positions (x, y) and spin signs: 0 (+,-) +, 1 (-,-) -, 2 (-,+) +, 3 (+,+) -
    P = np.array([[d, -d], [-d, -d], [-d, d], [d, d]])
    s = np.array([1.0, -1.0, 1.0, -1.0])
    M = np.stack([np.ones(4), P[:, 1], -P[:, 0], c * s])  # [T, tx, ty, tz] = M @ f
    f = np.linalg.solve(M, np.array([T, *tau]))
    if command == "motors":
        h = model.weight / 4
        f = np.where(a < 0, h * (1 + a), h + a * (model.max_rotor_thrust - h))
    f = np.clip(f, 0.0, model.max_rotor_thrust)
    alpha = model.motor_alpha(dt)
    r = np.asarray(rotor, np.float64) + alpha * (f - rotor)
    wrench = M @ r
    return r, np.array([0.0, 0.0, wrench[0]]), wrench[1:]


finite = st.floats(-1.5, 1.5, allow_nan=False, width=32)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_kernels_match_the_float64_reference(data):
    E = 16
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1)))
    model = QuadrotorModel(motor_time_constant=data.draw(st.sampled_from([0.0, 0.02, 0.05])),
                           thrust_range=data.draw(st.sampled_from([0.5, 1.0, 2.0])))  # 2.0: motor limits bite
    command = data.draw(st.sampled_from(QuadrotorDynamics.COMMANDS))
    actions = rng.uniform(-1.5, 1.5, (E, 5)).astype(np.float32)
    actions[0, 1] = np.nan  # non-finite counts as 0
    quat = rng.normal(size=(E, 4)).astype(np.float32)
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    w_world = rng.normal(0, 3, (E, 3)).astype(np.float32)
    vel = np.concatenate([rng.normal(size=(E, 3)), w_world], 1).astype(np.float32)  # [lin, ang]
    rotor0 = rng.uniform(0, model.max_rotor_thrust, (E, 4)).astype(np.float32)
    dt = 0.01
    dyn = QuadrotorDynamics(model, E, "cpu", dt, command=command)
    dyn.rotor.assign(rotor0)
    force = wp.zeros((E, 1), dtype=wp.vec3f)
    torque = wp.zeros((E, 1), dtype=wp.vec3f)
    dyn.command(wp.array(actions, dtype=wp.float32), 1)  # offset 1: columns 1..4
    dyn.substep(wp.array(quat, dtype=wp.quatf), wp.array(vel, dtype=wp.spatial_vectorf), force, torque)
    raw = dyn.raw.numpy()
    for e in range(E):
        r, F, tau = reference_step(model, actions[e, 1:5], rotor0[e], quat[e], w_world[e], dt, command)
        np.testing.assert_allclose(raw[e], np.clip(np.nan_to_num(actions[e, 1:5], nan=0.0), -1, 1), atol=0)
        np.testing.assert_allclose(dyn.rotor.numpy()[e], r, rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(force.numpy()[e, 0], F, rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(torque.numpy()[e, 0], tau, rtol=1e-3, atol=1e-9)


def test_reset_puts_masked_rotors_at_hover_and_leaves_the_rest():
    dyn = QuadrotorDynamics(CRAZYFLIE, 4, "cpu", 0.01)
    dyn.rotor.assign(np.full((4, 4), 0.1, np.float32))
    dyn.reset(wp.array([True, False, True, False], dtype=wp.bool))
    r = dyn.rotor.numpy()
    np.testing.assert_allclose(r[[0, 2]], CRAZYFLIE.weight / 4, rtol=1e-6)
    np.testing.assert_array_equal(r[[1, 3]], np.float32(0.1))


def test_model_rejects_bad_parameters():
    with pytest.raises(ValueError, match="thrust_to_weight"):
        QuadrotorModel(thrust_to_weight=0.9)
    with pytest.raises(ValueError, match="inertia"):
        QuadrotorModel(inertia=(1e-5, 0.0, 1e-5))
    with pytest.raises(ValueError, match="mass"):
        QuadrotorModel(mass=float("nan"))
    with pytest.raises(ValueError, match="physics_dt"):
        QuadrotorDynamics(CRAZYFLIE, 2, "cpu", 0.0)
    with pytest.raises(ValueError, match="command"):
        QuadrotorDynamics(CRAZYFLIE, 2, "cpu", 0.01, command="thrust")


def test_altitude_band_parameters_are_checked():
    from track_gen_isaac.mdp.quadrotor import check_altitude

    check_altitude(0.1, 4.0)
    with pytest.raises(ValueError, match="min_height < max_height"):
        check_altitude(2.0, 1.0)
    with pytest.raises(ValueError, match="max_height must be a finite number"):
        check_altitude(0.1, float("inf"))


def test_crazyflie_figures():
    """The published cf2x figures the model cites (gym-pybullet-drones cf2x.urdf)."""
    m = CRAZYFLIE
    assert (m.mass, m.inertia, m.arm_length, m.thrust_to_weight) == (0.027, (1.4e-5, 1.4e-5, 2.17e-5), 0.0397, 2.25)
    assert m.yaw_moment_coef == pytest.approx(7.94e-12 / 3.16e-10)
    assert m.max_rotor_thrust == pytest.approx(2.25 * 0.027 * GRAVITY / 4)


# ------------------------------------------------------------------------------ in a real env


@pytest.fixture(scope="module")
def env():
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.managers import TerminationTermCfg as DoneTerm
    import isaaclab.envs.mdp as imdp

    from track_gen_isaac.tasks.drone_gates_track import DroneGatesEnvCfg

    cfg = DroneGatesEnvCfg()
    cfg.scene.num_envs = 4
    cfg.sim.device = "cpu"
    cfg.episode_length_s = 100.0

    @__import__("isaaclab.utils", fromlist=["configclass"]).configclass
    class OnlyTimeOut:
        time_out = DoneTerm(func=imdp.time_out, time_out=True)

    cfg.terminations = OnlyTimeOut()
    cfg.rewards.crash = None  # it reads the failure terminations removed above
    e = ManagerBasedRLEnv(cfg)
    e.reset()
    yield e
    e.close()


def _state(env):
    d = env.scene["robot"].data
    q = d.root_quat_w.torch.cpu().numpy().astype(np.float64)
    w = np.stack([rotate_inv(q[i], d.root_ang_vel_w.torch[i].cpu().numpy()) for i in range(env.num_envs)])
    return d.root_pos_w.torch.cpu().numpy().copy(), d.root_lin_vel_w.torch.cpu().numpy().copy(), w


def test_zero_action_hovers(env):
    env.reset()
    p0, _, _ = _state(env)
    for _ in range(50):  # 1 s
        env.step(torch.zeros(env.num_envs, 4))
    p1, v1, w1 = _state(env)
    assert np.abs(p1 - p0).max() < 1e-3
    assert np.abs(v1).max() < 1e-3 and np.abs(w1).max() < 1e-3
    term = env.action_manager.get_term("rotors")
    np.testing.assert_allclose(term.rotor_thrusts.numpy(), CRAZYFLIE.weight / 4, rtol=1e-5)


def test_body_rates_reach_their_command_after_the_motor_lag(env):
    env.reset()
    a = torch.zeros(env.num_envs, 4)
    a[0, 1] = 0.5   # roll 3 rad/s
    a[1, 2] = -0.5  # pitch -3 rad/s
    a[2, 3] = 0.8   # yaw 2.4 rad/s
    want = np.zeros((env.num_envs, 3))
    want[0, 0], want[1, 1], want[2, 2] = 3.0, -3.0, 2.4
    rates = []
    for _ in range(20):  # 0.4 s: rate loop ~50 ms behind a 30 ms motor lag
        env.step(a)
        rates.append(_state(env)[2])
    rates = np.asarray(rates)
    # not instantaneous: the first step is well short of the command (lag + finite gain)
    assert abs(rates[0, 0, 0]) < 0.8 * 3.0
    # settled: within 5 % of the command over the last 0.1 s, the other axes near zero
    np.testing.assert_allclose(rates[-5:], np.broadcast_to(want, rates[-5:].shape), atol=0.15)


def test_full_collective_thrust_accelerates_upwards(env):
    env.reset()
    p0, v0, _ = _state(env)
    a = torch.zeros(env.num_envs, 4)
    a[:, 0] = 1.0  # 2 m g
    n = 25  # 0.5 s
    for _ in range(n):
        env.step(a)
    _, v1, _ = _state(env)
    # net +g, minus the motor lag's delay (~tau): v = g (t - tau (1 - e^{-t/tau}))
    tau, t = CRAZYFLIE.motor_time_constant, n * env.step_dt
    expect = GRAVITY * (t - tau * (1 - math.exp(-t / tau)))
    np.testing.assert_allclose(v1[:, 2], expect, rtol=0.03)
    np.testing.assert_allclose(v1[:, :2], 0.0, atol=1e-4)
