"""The quadrotor's per-env plant parameters (thrust / torque coefficients, motor lag, linear drag) and
its action latency, at the kernel level, against a float64 numpy reference (issue 15)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from track_gen_isaac.quadrotor import CRAZYFLIE, QuadrotorDynamics, QuadrotorModel

from .helpers import rotate_inv


def reference(model, a, rotor, quat, vel, dt, ks, km, tau, drag):
    """One command + substep with the plant factors, float64 (rates mode)."""
    a = np.clip(np.asarray(a, np.float64), -1, 1)
    T = model.weight * (1 + model.thrust_range * a[0])
    J = np.asarray(model.inertia, np.float64)
    w = rotate_inv(quat, vel[3:])
    torque_cmd = J * (np.asarray(model.rate_gains) * (a[1:] * np.asarray(model.max_rates) - w)) + np.cross(w, J * w)
    d = model.arm_length / math.sqrt(2)
    c = model.yaw_moment_coef
    P = np.array([[d, -d], [-d, -d], [-d, d], [d, d]])
    s = np.array([1.0, -1.0, 1.0, -1.0])
    M = np.stack([np.ones(4), P[:, 1], -P[:, 0], c * s])
    f = np.clip(np.linalg.solve(M, np.array([T, *torque_cmd])), 0, model.max_rotor_thrust)
    alpha = 1.0 - math.exp(-dt / tau)
    r = rotor + alpha * (f - rotor)
    M_plant = np.stack([ks * np.ones(4), ks * P[:, 1], -ks * P[:, 0], ks * km * c * s])
    wrench = M_plant @ r
    v_b = rotate_inv(quat, vel[:3])
    force = np.array([0.0, 0.0, wrench[0]]) - np.asarray(drag) * v_b
    return r, force, wrench[1:]


def test_default_plant_is_the_model():
    """Without a randomization event the per-env buffers hold the model's figures (behaviour unchanged)."""
    dyn = QuadrotorDynamics(CRAZYFLIE, 3, "cpu", 0.01)
    np.testing.assert_array_equal(dyn.thrust_scale.numpy(), 1.0)
    np.testing.assert_array_equal(dyn.torque_scale.numpy(), 1.0)
    np.testing.assert_allclose(dyn.alpha_env.numpy(), CRAZYFLIE.motor_alpha(0.01), rtol=1e-6)
    np.testing.assert_array_equal(dyn.drag.numpy(), 0.0)
    np.testing.assert_array_equal(dyn.delay.numpy(), 0)
    assert CRAZYFLIE.linear_drag == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="linear_drag"):
        QuadrotorModel(linear_drag=(0.1, -0.1, 0.0))


def test_per_env_plant_matches_the_float64_reference():
    E, dt = 12, 0.01
    rng = np.random.default_rng(3)
    model = CRAZYFLIE
    dyn = QuadrotorDynamics(model, E, "cpu", dt)
    ks, km = rng.uniform(0.8, 1.2, E), rng.uniform(0.8, 1.2, E)
    tau, drag = rng.uniform(0.01, 0.06, E), rng.uniform(0, 0.02, (E, 3))
    dyn.thrust_scale.assign(ks.astype(np.float32))
    dyn.torque_scale.assign(km.astype(np.float32))
    dyn.alpha_env.assign((1 - np.exp(-dt / tau)).astype(np.float32))
    dyn.drag.assign(drag.astype(np.float32))
    actions = rng.uniform(-1, 1, (E, 4)).astype(np.float32)
    quat = rng.normal(size=(E, 4)).astype(np.float32)
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    vel = rng.normal(0, 3, (E, 6)).astype(np.float32)
    rotor0 = rng.uniform(0, model.max_rotor_thrust, (E, 4)).astype(np.float32)
    dyn.rotor.assign(rotor0)
    force, torque = wp.zeros((E, 1), dtype=wp.vec3f), wp.zeros((E, 1), dtype=wp.vec3f)
    dyn.command(wp.array(actions, dtype=wp.float32))
    dyn.substep(wp.array(quat, dtype=wp.quatf), wp.array(vel, dtype=wp.spatial_vectorf), force, torque)
    for e in range(E):
        r, F, T = reference(model, actions[e], rotor0[e].astype(np.float64), quat[e], vel[e].astype(np.float64), dt,
                            ks[e], km[e], tau[e], drag[e])
        np.testing.assert_allclose(dyn.rotor.numpy()[e], r, rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(force.numpy()[e, 0], F, rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(torque.numpy()[e, 0], T, rtol=1e-3, atol=1e-9)


def test_latency_delays_the_command_by_exactly_the_drawn_steps():
    """Env e with delay d commands at step k the action of step k - d (zeros, i.e. hover, before
    the first action); ``raw`` is always this step's action; a reset clears the history."""
    E, K = 3, 8
    dyn = QuadrotorDynamics(CRAZYFLIE, E, "cpu", 0.01)
    dyn.delay.assign(np.array([0, 1, 2], np.int32))
    rng = np.random.default_rng(0)
    acts = rng.uniform(-0.9, 0.9, (K, E, 4)).astype(np.float32)
    m = CRAZYFLIE
    for k in range(K):
        dyn.command(wp.array(acts[k], dtype=wp.float32))
        np.testing.assert_array_equal(dyn.raw.numpy(), acts[k])
        for e, d in enumerate((0, 1, 2)):
            a = acts[k - d, e] if k - d >= 0 else np.zeros(4, np.float32)
            np.testing.assert_allclose(dyn.thrust_cmd.numpy()[e], m.weight * (1 + m.thrust_range * a[0]), rtol=1e-6)
            np.testing.assert_allclose(dyn.rate_cmd.numpy()[e], a[1:] * np.asarray(m.max_rates), rtol=1e-6, atol=1e-7)
    dyn.reset(wp.array([False, False, True], dtype=wp.bool))
    dyn.command(wp.array(acts[0], dtype=wp.float32))
    np.testing.assert_allclose(dyn.rate_cmd.numpy()[2], 0.0)                    # history cleared: hover
    np.testing.assert_allclose(dyn.rate_cmd.numpy()[1], acts[K - 1, 1, 1:] * np.asarray(m.max_rates), rtol=1e-6)
