"""The race car (issue 31): its kernels against a float64 numpy reference of the same equations, and
physics checks -- straight-line acceleration, steady cornering (kinematic radius, understeer
gradient), the friction limit -- plus capture replay equal to eager, byte for byte (pure Warp)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from track_gen.capture import strict
from track_gen_isaac.car import F1TENTH, CarDynamics, CarModel
from track_gen_isaac.quadrotor import GRAVITY

G = GRAVITY

# ------------------------------------------------------------------------------ numpy reference


def ref_accel(m: CarModel, mu: float, v: float, a: float) -> float:
    top = min(m.accel_max, mu * G)
    pos = min(top, m.accel_max * m.switch_speed / v) if v > m.switch_speed else top
    if (v <= m.speed_min and a <= 0) or (v >= m.speed_max and a >= 0):
        return 0.0
    return min(max(a, -top), pos)


def ref_rate(m: CarModel, delta: float, rate: float) -> float:
    if (delta <= m.steer_min and rate <= 0) or (delta >= m.steer_max and rate >= 0):
        return 0.0
    return min(max(rate, m.steer_rate_min), m.steer_rate_max)


def ref_kinematic(m: CarModel, mu: float, v: float, delta: float) -> tuple[float, float]:
    l = m.lf + m.lr
    beta = math.atan(m.lr * math.tan(delta) / l)
    kappa = math.cos(beta) * math.tan(delta) / l
    if v * v * abs(kappa) > mu * G:
        kappa = math.copysign(mu * G / (v * v), kappa)
    return beta, kappa


def ref_rhs(m: CarModel, k: dict, s: np.ndarray, rate: float, a: float, dynamic: bool) -> np.ndarray:
    """d/dt (x, y, yaw, v, beta, r, delta): dynamic single-track with saturating tyres, or kinematic."""
    x, y, psi, v, beta, r, delta = s
    ac = ref_accel(m, k["mu"], v, a)
    dr = ref_rate(m, delta, rate)
    if not dynamic:
        bk, kappa = ref_kinematic(m, k["mu"], v, delta)
        c, t = m.lr / (m.lf + m.lr), math.tan(delta)
        slope = v * c * (1 + t * t) / (1 + c * c * t * t)      # v d(beta)/d(delta)
        sigma = np.sign(slope * dr)                             # path acceleration within mu g
        if sigma != 0:
            dr = math.copysign(min(abs(dr), (k["mu"] * G - sigma * v * v * kappa) / abs(slope)), dr)
        return np.array([v * math.cos(psi + bk), v * math.sin(psi + bk), v * kappa, ac, 0.0, 0.0, dr])
    l, mass = m.lf + m.lr, k["m"]
    fzf, fzr = mass * (G * m.lr - ac * m.cog_height) / l, mass * (G * m.lf + ac * m.cog_height) / l
    fyf = k["mu"] * fzf * np.clip(k["cf"] * (delta - beta - m.lf * r / v), -1, 1)
    fyr = k["mu"] * fzr * np.clip(k["cr"] * (m.lr * r / v - beta), -1, 1)
    return np.array([v * math.cos(psi + beta), v * math.sin(psi + beta), r, ac, (fyf + fyr) / (mass * v) - r,
                     (m.lf * fyf - m.lr * fyr) / k["iz"], dr])


def ref_step(m: CarModel, s, cmd, dt: float, steering: str, scales=(1.0, 1.0, 1.0, 1.0)) -> np.ndarray:
    """One env step in float64: clip the commands, ``ceil(dt / max_substep)`` RK4 substeps."""
    ms, js, cs, fs = scales
    k = {"m": m.mass * ms, "iz": m.yaw_inertia * js, "cf": m.cornering_front * cs, "cr": m.cornering_rear * cs,
         "mu": m.friction * fs}
    c0, c1 = (0.0 if not np.isfinite(c) else float(c) for c in cmd)
    c0 = np.clip(c0, m.steer_min, m.steer_max) if steering == "angle" else np.clip(c0, m.steer_rate_min,
                                                                                     m.steer_rate_max)
    c1 = np.clip(c1, -m.accel_max, m.accel_max)
    n = max(1, math.ceil(dt / m.max_substep - 1e-9))
    h = dt / n
    s = np.asarray(s, np.float64).copy()
    for _ in range(n):
        rate = np.clip((c0 - s[6]) / h, m.steer_rate_min, m.steer_rate_max) if steering == "angle" else c0
        dyn = s[3] >= m.kinematic_speed
        k1 = ref_rhs(m, k, s, rate, c1, dyn)
        k2 = ref_rhs(m, k, s + 0.5 * h * k1, rate, c1, dyn)
        k3 = ref_rhs(m, k, s + 0.5 * h * k2, rate, c1, dyn)
        k4 = ref_rhs(m, k, s + h * k3, rate, c1, dyn)
        n_ = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        n_[3] = np.clip(n_[3], m.speed_min, m.speed_max)
        n_[6] = np.clip(n_[6], m.steer_min, m.steer_max)
        if not dyn:
            bk, kappa = ref_kinematic(m, k["mu"], n_[3], n_[6])
            n_[4], n_[5] = bk, n_[3] * kappa
        n_[2] -= 2 * math.pi * math.floor((n_[2] + math.pi) / (2 * math.pi))
        s = n_
    return s


# ------------------------------------------------------------------------------ helpers


def get_state(dyn: CarDynamics) -> np.ndarray:
    """[E, 7] float64: x, y, yaw, speed, slip, yaw rate, steer."""
    p = dyn.pos.numpy()
    cols = [p[:, 0], p[:, 1]] + [a.numpy() for a in (dyn.yaw, dyn.speed, dyn.slip, dyn.yaw_rate, dyn.steer)]
    return np.stack(cols, 1).astype(np.float64)


def set_state(dyn: CarDynamics, s: np.ndarray) -> None:
    s = np.asarray(s, np.float32)
    dyn.pos.assign(s[:, :2].copy())
    for j, a in enumerate((dyn.yaw, dyn.speed, dyn.slip, dyn.yaw_rate, dyn.steer)):
        a.assign(s[:, 2 + j].copy())


def run(dyn: CarDynamics, cmd, dt: float, steps: int) -> np.ndarray:
    """Hold ``cmd`` ([E, 2]) for ``steps`` steps; the states after each step, [steps, E, 7]."""
    acts = wp.array(np.asarray(cmd, np.float32).reshape(dyn.num_envs, 2), dtype=wp.float32, device=dyn.device)
    out = []
    for _ in range(steps):
        dyn.step(acts, dt)
        out.append(get_state(dyn))
    return np.stack(out)


def path_accel(traj: np.ndarray, dt: float) -> np.ndarray:
    """Acceleration across the CoG path [m/s^2] between consecutive states (finite differences of the
    CoG velocity ``v (cos(yaw + slip), sin(yaw + slip))``), [T-1, E]."""
    ang = traj[..., 2] + traj[..., 4]
    vel = traj[..., 3:4] * np.stack([np.cos(ang), np.sin(ang)], -1)
    dv = (vel[1:] - vel[:-1]) / dt
    u = vel[:-1] / np.maximum(np.abs(traj[:-1, :, 3:4]), 1e-9)
    return np.abs(u[..., 0] * dv[..., 1] - u[..., 1] * dv[..., 0])


# ------------------------------------------------------------------------------ the model


def test_f1tenth_figures():
    """The public F1TENTH figures of f1tenth_gym's F110Env (gym/f110_gym/envs/f110_env.py)."""
    m = F1TENTH
    assert (m.mass, m.yaw_inertia, m.lf, m.lr, m.cog_height) == (3.74, 0.04712, 0.15875, 0.17145, 0.074)
    assert (m.cornering_front, m.cornering_rear, m.friction) == (4.718, 5.4562, 1.0489)
    assert (m.steer_min, m.steer_max, m.steer_rate_min, m.steer_rate_max) == (-0.4189, 0.4189, -3.2, 3.2)
    assert (m.speed_min, m.speed_max, m.accel_max, m.switch_speed) == (-5.0, 20.0, 9.51, 7.319)
    assert (m.length, m.width, m.kinematic_speed) == (0.58, 0.31, 0.5)
    assert m.wheelbase == pytest.approx(0.3302)
    assert m.understeer_gradient == pytest.approx((1 / 4.718 - 1 / 5.4562) / (1.0489 * G))
    assert m.substeps(0.01) == 2 and m.substeps(0.005) == 1 and m.substeps(0.02) == 4
    assert m.max_substep * m.stiffest_rate() < 2.5


@pytest.mark.parametrize("change, match", [
    ({"mass": float("nan")}, "mass: expected a finite number"),
    ({"lr": 0.0}, "lr: expected > 0"),
    ({"friction": -1.0}, "friction: expected > 0"),
    ({"steer_min": 0.5}, "steer_min < steer_max"),
    ({"steer_max": 2.0}, "pi/2"),
    ({"steer_rate_min": 1.0}, "steer_rate_min: expected < 0"),
    ({"speed_min": 1.0}, "speed_min <= 0"),
    ({"kinematic_speed": 25.0}, "kinematic_speed < speed_max"),
    ({"cog_height": 0.5}, "axle lifts off"),
    ({"max_substep": 0.03}, "kinematic_speed / 2"),
    ({"max_substep": 0.02}, "too long for the tyres"),
    ({"cog_height": True}, "cog_height: expected a finite number"),
])
def test_model_refuses_bad_figures(change, match):
    with pytest.raises(ValueError, match=match):
        CarModel(**change)


def test_dynamics_refuses_bad_arguments():
    with pytest.raises(ValueError, match="steering: expected one of"):
        CarDynamics(F1TENTH, 2, "cpu", steering="torque")
    with pytest.raises(ValueError, match="num_envs"):
        CarDynamics(F1TENTH, 0, "cpu")
    dyn = CarDynamics(F1TENTH, 2, "cpu")
    acts = wp.zeros((2, 2), dtype=wp.float32)
    with pytest.raises(ValueError, match="dt: expected a step > 0"):
        dyn.step(acts, 0.0)
    with pytest.raises(ValueError, match="actions: expected a \\[2, A\\] float32"):
        dyn.step(wp.zeros((3, 2), dtype=wp.float32), 0.01)
    with pytest.raises(ValueError, match="offset"):
        dyn.step(acts, 0.01, offset=1)


# ------------------------------------------------------------------------------ against the reference


@pytest.mark.parametrize("steering", CarDynamics.STEERING)
def test_kernel_matches_the_float64_reference(steering):
    """Random states (dynamic and kinematic, some at a steering limit), random actions beyond the limits
    (some NaN), random plant factors; five steps, each from the kernel's state, against float64."""
    E, dt, m = 64, 0.01, F1TENTH
    rng = np.random.default_rng(7 if steering == "rate" else 8)
    s = np.zeros((E, 7))
    s[:, :2] = rng.uniform(-50, 50, (E, 2))
    s[:, 2] = rng.uniform(-math.pi, math.pi, E)
    s[:, 3] = np.where(np.arange(E) % 2 == 0, rng.uniform(1.2, 19.8, E), rng.uniform(-4.9, 0.3, E))
    s[:, 4] = rng.uniform(-0.3, 0.3, E)
    s[:, 5] = rng.uniform(-3, 3, E)
    s[:, 6] = rng.uniform(m.steer_min, m.steer_max, E)
    s[::7, 6] = m.steer_max
    scales = rng.uniform(0.8, 1.2, (E, 4))
    dyn = CarDynamics(m, E, "cpu", steering=steering)
    set_state(dyn, s)
    for arr, col in zip((dyn.mass_scale, dyn.inertia_scale, dyn.stiffness_scale, dyn.friction_scale), scales.T):
        arr.assign(col.astype(np.float32))
    lo, hi = (-0.6, 0.6) if steering == "angle" else (-5.0, 5.0)
    for k in range(5):
        cmd = np.stack([rng.uniform(lo, hi, E), rng.uniform(-15, 15, E)], 1).astype(np.float32)
        cmd[k, 0], cmd[k + 9, 1] = np.nan, np.inf
        before = get_state(dyn)
        dyn.step(wp.array(np.concatenate([np.zeros((E, 1), np.float32), cmd], 1), dtype=wp.float32), dt, offset=1)
        got = get_state(dyn)
        for e in range(E):
            want = ref_step(m, before[e], cmd[e], dt, steering, scales[e].astype(np.float32))
            dyaw = (got[e, 2] - want[2] + math.pi) % (2 * math.pi) - math.pi
            assert abs(dyaw) < 1e-4, (k, e)
            np.testing.assert_allclose(np.delete(got[e], 2), np.delete(want, 2), rtol=1e-4, atol=2e-4,
                                       err_msg=f"step {k}, env {e}")
        c = np.nan_to_num(cmd, nan=0.0, posinf=0.0)
        c[:, 0] = np.clip(c[:, 0], *((m.steer_min, m.steer_max) if steering == "angle"
                                     else (m.steer_rate_min, m.steer_rate_max)))
        c[:, 1] = np.clip(c[:, 1], -m.accel_max, m.accel_max)
        np.testing.assert_array_equal(dyn.command.numpy(), c)
    assert (get_state(dyn)[:, 3] >= m.kinematic_speed).any() and (get_state(dyn)[:, 3] < 0).any()


# ------------------------------------------------------------------------------ physics


def test_straight_line_acceleration_from_rest():
    """Commanded a: v = a t up to the speed limit; full throttle: a_max up to switch_speed, then constant
    power (v dv/dt = a_max switch_speed) up to speed_max; the car stays on its line."""
    m, dt, T = F1TENTH, 0.01, 800
    dyn = CarDynamics(m, 2, "cpu")
    traj = run(dyn, [[0.0, 3.0], [0.0, 50.0]], dt, T)
    t = dt * np.arange(1, T + 1)
    np.testing.assert_allclose(traj[:, 0, 3], np.minimum(3.0 * t, m.speed_max), rtol=2e-5, atol=2e-5)
    ts = m.switch_speed / m.accel_max
    power = np.sqrt(m.switch_speed ** 2 + 2 * m.accel_max * m.switch_speed * np.maximum(t - ts, 0))
    want = np.minimum(np.where(t <= ts, m.accel_max * t, power), m.speed_max)
    np.testing.assert_allclose(traj[:, 1, 3], want, rtol=2e-4, atol=2e-4)
    reach = 3.0 * t[t <= m.speed_max / 3.0]
    np.testing.assert_allclose(traj[: reach.size, 0, 0], 1.5 * t[: reach.size] ** 2, rtol=2e-4, atol=1e-4)
    np.testing.assert_array_equal(traj[..., [1, 2, 4, 5, 6]], 0.0)
    assert traj[-1, 1, 3] == pytest.approx(m.speed_max) and dyn.command.numpy()[1, 1] == pytest.approx(m.accel_max)


def steady_turn(model: CarModel, speed: float, steer: float, seconds: float = 4.0, dt: float = 0.01):
    """A car at ``speed`` (acceleration 0) steered to ``steer`` (angle command), run to a steady turn:
    (path radius from speed / yaw rate, path radius from a circle fitted to the last second, states)."""
    dyn = CarDynamics(model, 1, "cpu", steering="angle")
    s = np.zeros((1, 7))
    s[0, 3] = speed
    set_state(dyn, s)
    traj = run(dyn, [[steer, 0.0]], dt, int(seconds / dt))
    last = traj[-int(1.0 / dt):, 0]
    x, y = last[:, 0], last[:, 1]
    A = np.stack([x, y, np.ones_like(x)], 1)
    a, b, c = np.linalg.lstsq(A, x * x + y * y, rcond=None)[0]  # x^2 + y^2 = a x + b y + c
    fit = math.sqrt(c + (a / 2) ** 2 + (b / 2) ** 2)
    return last[-1, 3] / last[-1, 5], fit, traj


def test_kinematic_cornering_radius():
    """Below kinematic_speed the CoG circles at sqrt(lr^2 + (l / tan(delta))^2): l / tan(delta) at the
    rear axle."""
    m = F1TENTH
    for steer in (0.1, 0.2, -0.35):
        r_yaw, r_fit, _ = steady_turn(m, 0.3, steer)
        l_tan = m.wheelbase / math.tan(abs(steer))
        want = math.hypot(m.lr, l_tan)
        assert abs(r_yaw) == pytest.approx(want, rel=1e-4)
        assert r_fit == pytest.approx(want, rel=1e-3)
        assert r_fit == pytest.approx(l_tan, rel=0.02)   # within 2 % up to |delta| = 0.35 rad


def test_dynamic_cornering_radius_follows_the_understeer_gradient():
    """Above kinematic_speed, at low lateral acceleration the radius is close to l / tan(delta); at speed
    it grows as R = (l + K v^2) / delta (the understeer gradient of the stiffnesses)."""
    m = F1TENTH
    r_yaw, r_fit, traj = steady_turn(m, 1.0, 0.1)
    assert traj[-1, 0, 3] == pytest.approx(1.0) and traj[-1, 0, 3] >= m.kinematic_speed
    assert r_fit == pytest.approx(m.wheelbase / math.tan(0.1), rel=0.02)
    for speed, steer in ((1.0, 0.1), (4.0, 0.05), (5.0, 0.05), (6.0, 0.03)):
        r_yaw, r_fit, traj = steady_turn(m, speed, steer)
        want = (m.wheelbase + m.understeer_gradient * speed ** 2) / steer
        assert r_yaw == pytest.approx(want, rel=2e-3), (speed, steer)
        assert r_fit == pytest.approx(want, rel=5e-3), (speed, steer)
        assert speed ** 2 / want < 0.5 * m.friction * G   # well inside the linear tyre range
    assert want > 1.2 * m.wheelbase / math.tan(0.03)     # understeer: much wider than kinematic at speed


@pytest.mark.parametrize("accel", [0.0, -9.51, 9.51])
def test_lateral_acceleration_never_exceeds_the_friction_limit(accel):
    """Full steer at high speed (and in reverse, in the kinematic model), coasting, braking or
    accelerating, with the nominal and a scaled friction: the acceleration across the path never
    exceeds mu g, and it reaches it (the linear tyre alone would give several g)."""
    m, dt = F1TENTH, 0.005
    E = 4
    dyn = CarDynamics(m, E, "cpu", steering="angle")
    fs = np.array([1.0, 0.6, 1.0, 0.6], np.float32)
    dyn.friction_scale.assign(fs)
    s = np.zeros((E, 7))
    s[:, 3] = [15.0, 15.0, m.speed_min, m.speed_min]
    set_state(dyn, s)
    cmd = [[m.steer_max, accel], [m.steer_min, accel], [m.steer_max, 0.0], [m.steer_min, 0.0]]
    traj = run(dyn, cmd, dt, 300)
    lat = path_accel(traj, dt)
    limit = m.friction * fs * G
    moving = np.abs(traj[:-1, :, 3]) > 1.0
    assert np.all(lat[moving] <= (limit * 1.002)[np.nonzero(moving)[1]]), (lat.max(0), limit)
    assert np.all(lat.max(0) >= 0.97 * limit), (lat.max(0), limit)
    linear = 15.0 ** 2 * m.steer_max / (m.wheelbase + m.understeer_gradient * 15.0 ** 2)
    assert linear > 5 * m.friction * G


# ------------------------------------------------------------------------------ grip steering (the action term)


def ref_action_scale(m: CarModel, grip: float, speed: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """float64 reference of the car action's scaling: clip to [-1, 1] (non-finite: 0); steering times
    ``steer_max``, or with ``grip > 0`` times ``min(steer_max, grip mu g (l / v^2 + K))``."""
    a = np.clip(np.nan_to_num(np.asarray(actions, np.float64), nan=0.0, posinf=0.0, neginf=0.0), -1, 1)
    v2 = np.asarray(speed, np.float64) ** 2
    steer = np.full(v2.shape, m.steer_max)
    if grip > 0:
        with np.errstate(divide="ignore"):
            turn = grip * m.friction * G * (m.wheelbase / v2 + m.understeer_gradient)
        steer = np.minimum(steer, np.where(v2 > 0, turn, np.inf))
    return np.stack([a[:, 0] * steer, a[:, 1] * m.accel_max], 1)


def _scale(m: CarModel, grip: float, speed: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from track_gen_isaac.mdp.car import car_scale_kernel

    E = len(speed)
    raw, scaled = wp.zeros((E, 2), dtype=wp.float32), wp.zeros((E, 2), dtype=wp.float32)
    wp.launch(car_scale_kernel, dim=E,
              inputs=[0, m.steer_max, m.accel_max, grip * m.friction * G, m.wheelbase, m.understeer_gradient,
                      wp.array(np.asarray(speed, np.float32)), wp.array(np.asarray(actions, np.float32))],
              outputs=[raw, scaled])
    return raw.numpy(), scaled.numpy()


@pytest.mark.parametrize("grip", [0.0, 0.5, 1.5])
def test_action_scale_matches_the_float64_reference(grip):
    """Random speeds (forward, reverse, at rest) and actions beyond [-1, 1] (some non-finite): the
    scaled steering and acceleration equal the reference; off (grip 0) it is steer_max at every speed."""
    rng = np.random.default_rng(int(grip * 10))
    E, m = 256, F1TENTH
    speed = rng.uniform(-5, 20, E).astype(np.float32)
    speed[:8] = 0.0
    act = rng.uniform(-1.5, 1.5, (E, 2)).astype(np.float32)
    act[8, 0], act[9, 1], act[10, 0] = np.nan, np.inf, -np.inf
    raw, scaled = _scale(m, grip, speed, act)
    want = ref_action_scale(m, grip, speed, act)
    np.testing.assert_allclose(scaled, want, rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(raw, np.clip(np.nan_to_num(act, nan=0.0, posinf=0.0, neginf=0.0), -1, 1))
    fast = np.abs(speed) > 8
    full = np.abs(raw[:, 0]) == 1
    if grip == 0:
        assert np.all(np.abs(scaled[full, 0]) == np.float32(m.steer_max))
    else:
        assert np.all(np.abs(scaled[fast & full, 0]) < 0.5 * m.steer_max)  # limited at speed
        assert np.all(np.abs(scaled[(np.abs(speed) < 1) & full, 0]) == np.float32(m.steer_max))  # full lock slow


@pytest.mark.parametrize("speed", [6.0, 10.0, 14.0])
def test_grip_steering_asks_for_that_share_of_the_friction_limit(speed):
    """A full steering action held at constant speed with grip 0.5 settles into a turn whose
    acceleration across the path is half the friction limit (the steady-state steering the scale is
    built on: ``delta = a_y (l / v^2 + K)``), at three speeds."""
    m, dt = F1TENTH, 0.01
    dyn = CarDynamics(m, 1, "cpu", steering="angle")
    s = np.zeros((1, 7))
    s[0, 3] = speed
    set_state(dyn, s)
    for _ in range(300):
        _, scaled = _scale(m, 0.5, dyn.speed.numpy(), np.array([[1.0, 0.0]], np.float32))
        dyn.step(wp.array(scaled, dtype=wp.float32), dt)
    st = get_state(dyn)[0]
    assert st[3] == pytest.approx(speed)
    assert st[3] * st[5] == pytest.approx(0.5 * m.friction * G, rel=0.02)


# ------------------------------------------------------------------------------ reset and capture


def test_reset_puts_masked_cars_at_the_start_at_rest():
    E = 4
    dyn = CarDynamics(F1TENTH, E, "cpu")
    run(dyn, [[1.0, 5.0]] * E, 0.01, 30)
    before = get_state(dyn)
    start = wp.array(np.array([[1, 2, 9], [3, 4, 9], [5, 6, 9], [7, 8, 9]], np.float32), dtype=wp.vec3f)
    yaw = wp.array(np.array([0.1, 0.2, 0.3, 0.4], np.float32), dtype=wp.float32)
    dyn.reset(wp.array([True, False, True, False], dtype=wp.bool), start, yaw)
    after = get_state(dyn)
    np.testing.assert_array_equal(after[[1, 3]], before[[1, 3]])
    np.testing.assert_allclose(after[[0, 2]], [[1, 2, 0.1, 0, 0, 0, 0], [5, 6, 0.3, 0, 0, 0, 0]], atol=1e-7)
    np.testing.assert_array_equal(dyn.command.numpy()[[0, 2]], 0.0)
    dyn.reset()
    np.testing.assert_array_equal(get_state(dyn), 0.0)


@pytest.mark.parametrize("steering", CarDynamics.STEERING)
def test_capture_replay_equals_eager_byte_for_byte(steering):
    """Record one step (strict: no allocation or readback while recording), then replay it with the
    actions and plant factors rewritten in place between replays: every state byte equals eager steps."""
    E, dt = 16, 0.02
    rng = np.random.default_rng(3)
    eager, graph = CarDynamics(F1TENTH, E, "cpu", steering), CarDynamics(F1TENTH, E, "cpu", steering)
    s0 = np.zeros((E, 7))
    s0[:, 3] = rng.uniform(-2, 12, E)
    for d in (eager, graph):
        set_state(d, s0)
    acts_e = wp.zeros((E, 2), dtype=wp.float32)
    acts_g = wp.zeros((E, 2), dtype=wp.float32)
    with wp.ScopedCapture(device="cpu") as cap, strict():
        graph.step(acts_g, dt)
    np.testing.assert_array_equal(get_state(graph), get_state(eager))  # recording ran nothing
    for k in range(25):
        a = np.stack([rng.uniform(-3.5, 3.5, E), rng.uniform(-12, 12, E)], 1).astype(np.float32)
        fs = rng.uniform(0.7, 1.3, E).astype(np.float32)
        for d, acts in ((eager, acts_e), (graph, acts_g)):
            acts.assign(a)
            d.friction_scale.assign(fs)
        eager.step(acts_e, dt)
        wp.capture_launch(cap.graph)
        for name in ("pos", "yaw", "speed", "slip", "yaw_rate", "steer", "command"):
            assert getattr(graph, name).numpy().tobytes() == getattr(eager, name).numpy().tobytes(), (k, name)
    assert np.abs(get_state(graph)[:, 5]).max() > 0.5   # the cars did turn
