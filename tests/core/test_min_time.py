"""track_gen.reference.lap: the minimum-time reference against closed forms, an independent dynamic
programme on random paths, and the courses' own course lines."""

from __future__ import annotations

import math

import numpy as np
import pytest

from track_gen.reference.lap import (VehicleLimits, open_profile, periodic_profile, reference_laps, sample_path,
                                     speed_limits)

LIM = VehicleLimits.from_thrust_to_weight(2.0)  # the drone tasks in rate mode: 2 m g of collective thrust
A_H = math.sqrt(LIM.max_accel**2 - LIM.gravity**2)  # level flight: the horizontal part of the thrust


def _line(p0, p1, n=11):
    return np.linspace(np.asarray(p0, float), np.asarray(p1, float), n)


def _circle(radius, n=64, z=1.5):
    th = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    return np.stack([radius * np.cos(th), radius * np.sin(th), np.full(n, z)], 1)


# -- closed forms -------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [5.0, 20.0, 60.0])
def test_level_sprint_from_rest_is_the_bang_bang_time(d):
    ref = reference_laps(_line((0, 0, 1), (d, 0, 1)), LIM, closed=False)
    assert ref.first_lap_s == pytest.approx(math.sqrt(2 * d / A_H), rel=1e-6)
    assert math.isnan(ref.flying_lap_s) and ref.flying is None
    # rest to rest: accelerate half way, brake half way
    stop = open_profile(sample_path(_line((0, 0, 1), (d, 0, 1)), False), LIM, v_end=0.0)
    assert stop.time == pytest.approx(2 * math.sqrt(d / A_H), rel=1e-4)


def test_vertical_sprints_use_thrust_minus_or_plus_gravity():
    up = reference_laps(_line((0, 0, 0), (0, 0, 10)), LIM, closed=False)
    down = reference_laps(_line((0, 0, 10), (0, 0, 0)), LIM, closed=False)
    assert up.first_lap_s == pytest.approx(math.sqrt(2 * 10 / (LIM.max_accel - LIM.gravity)), rel=1e-6)
    assert down.first_lap_s == pytest.approx(math.sqrt(2 * 10 / (LIM.max_accel + LIM.gravity)), rel=1e-6)


def test_speed_cap_accelerates_then_cruises():
    cap = VehicleLimits(LIM.max_accel, max_speed=5.0)
    d = 30.0
    ref = reference_laps(_line((0, 0, 1), (d, 0, 1)), cap, closed=False)
    expected = 5.0 / A_H + (d - 25.0 / (2 * A_H)) / 5.0
    assert ref.first_lap_s == pytest.approx(expected, rel=1e-3)
    assert ref.first.v.max() <= 5.0 + 1e-9


@pytest.mark.parametrize("radius", [2.0, 5.0, 12.0])
def test_level_circle_flies_at_the_centripetal_limit(radius):
    ref = reference_laps(_circle(radius), LIM, closed=True)
    a_lat = A_H  # |v^2/R n + g z| = a_max, n horizontal
    assert ref.flying_lap_s == pytest.approx(2 * math.pi * radius / math.sqrt(a_lat * radius), rel=1e-3)
    assert ref.flying.v == pytest.approx(math.sqrt(a_lat * radius), rel=1e-3)
    assert ref.lap_length == pytest.approx(2 * math.pi * radius, rel=1e-4)
    # a standing start loses time against the flying lap, and never beats it
    assert ref.flying_lap_s < ref.first_lap_s < ref.flying_lap_s + math.sqrt(a_lat * radius) / A_H + 1e-6


def test_a_vertical_loop_has_gravity_in_its_speed_limits():
    # top: gravity pulls towards the centre, |v^2/R - g| <= a; bottom: against it, v^2/R + g <= a
    radius = 4.0
    th = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    pts = np.stack([radius * np.cos(th), np.zeros_like(th), 5 + radius * np.sin(th)], 1)
    path = sample_path(pts, True)
    vl = speed_limits(path, LIM)
    top, bottom = np.argmax(path.pos[:, 2]), np.argmin(path.pos[:, 2])
    assert vl[top] == pytest.approx(math.sqrt((LIM.max_accel + LIM.gravity) * radius), rel=2e-3)
    assert vl[bottom] == pytest.approx(math.sqrt((LIM.max_accel - LIM.gravity) * radius), rel=2e-3)
    prof = periodic_profile(path, LIM)
    assert prof.v[0] == prof.v[-1]  # periodic
    assert np.all(prof.v[:-1] <= vl + 1e-9)


def test_start_and_finish_select_the_stretch():
    pts = _circle(5.0)
    half = reference_laps(pts, LIM, closed=True, start_s=0.0, finish_s=math.pi * 5.0)
    assert half.first_lap_length == pytest.approx(math.pi * 5.0, rel=1e-2)
    wrap = reference_laps(pts, LIM, closed=True, start_s=math.pi * 5.0, finish_s=0.0)  # wraps around
    assert wrap.first_lap_s == pytest.approx(half.first_lap_s, rel=1e-3)  # the circle is symmetric


def test_rigid_motions_and_resampling_change_nothing():
    rng = np.random.default_rng(3)
    pts = _random_loop(rng)
    ref = reference_laps(pts, LIM, closed=True)
    c, s = math.cos(0.7), math.sin(0.7)
    rot = pts @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T + np.array([3.0, -2.0, 0.5])
    moved = reference_laps(rot, LIM, closed=True)
    assert moved.flying_lap_s == pytest.approx(ref.flying_lap_s, rel=1e-6)
    assert moved.first_lap_s == pytest.approx(ref.first_lap_s, rel=1e-6)
    fine = reference_laps(pts, LIM, closed=True, ds=0.02)
    assert fine.flying_lap_s == pytest.approx(ref.flying_lap_s, rel=5e-3)


# -- an independent computation: dynamic programming over a speed grid ----------------------------
def _random_loop(rng, n=24):
    th = np.linspace(0, 2 * np.pi, n, endpoint=False)
    r = 5 + rng.uniform(-1.5, 1.5) * np.cos(2 * th + rng.uniform(0, 6)) + rng.uniform(-1, 1) * np.sin(3 * th)
    z = 1.5 + rng.uniform(-0.6, 0.6) * np.sin(th + rng.uniform(0, 6))
    return np.stack([r * np.cos(th), r * np.sin(th), z], 1)


def _random_open(rng, n=16):
    x = np.linspace(0, 18, n)
    y = rng.uniform(-2, 2) * np.sin(x / rng.uniform(2, 4)) + rng.uniform(-1, 1) * np.cos(x / 1.7)
    z = 1.5 + rng.uniform(-1, 1) * np.sin(x / 3.0)
    return np.stack([x, y, z], 1)


def _dp_time(path, limits, levels):
    """Minimum time from rest to the end of an open path by dynamic programming on a grid of
    ``v^2`` values, with the same pairwise constraints (reach: ``w' <= w + 2 ds a_acc(w)``; brake:
    ``w <= w' + 2 ds a_dec(w')``; ``w <= v_lim^2``) but no sweeps: it searches every grid profile."""
    g, a = limits.gravity, limits.max_accel
    t, k = path.tangent, path.curvature
    h = g * (np.array([0.0, 0.0, 1.0]) - t[:, 2:3] * t)
    wl = speed_limits(path, limits) ** 2
    wmax = min(float(wl.max()), 2 * (a + g) * path.length)  # no more speed than thrust and gravity give
    grid = np.linspace(0.0, wmax, levels)

    def acc(j, w):
        perp = w[:, None] * k[j] + h[j]
        r = np.sqrt(np.maximum(a * a - np.sum(perp * perp, 1), 0.0))
        return -g * t[j, 2] + r, g * t[j, 2] + r

    best = np.full(levels, np.inf)
    best[0] = 0.0
    for j in range(len(path.s) - 1):
        ds = path.s[j + 1] - path.s[j]
        up, _ = acc(j, grid)
        _, down = acc(j + 1, grid)
        w0, w1 = grid[:, None], grid[None, :]
        ok = (w1 <= w0 + 2 * ds * up[:, None] + 1e-9) & (w0 <= w1 + 2 * ds * down[None, :] + 1e-9)
        ok &= (w1 <= wl[j + 1] + 1e-9) & (w0 <= wl[j] + 1e-9)
        with np.errstate(divide="ignore"):
            dt = 2 * ds / (np.sqrt(w0) + np.sqrt(w1))
        cost = np.where(ok, best[:, None] + dt, np.inf)
        best = cost.min(0)
    return float(best.min())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sweeps_match_a_dynamic_programme_on_random_paths(seed):
    rng = np.random.default_rng(seed)
    path = sample_path(_random_open(rng), False, ds=0.25)
    prof = open_profile(path, LIM)
    coarse, fine = _dp_time(path, LIM, 250), _dp_time(path, LIM, 1000)
    # a grid profile can only lose time, and loses less as the grid refines (about 1/levels)
    assert prof.time <= fine * (1 + 1e-9) and fine < coarse
    assert fine <= prof.time * 1.025


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_profile_is_feasible_and_tight_everywhere(seed):
    rng = np.random.default_rng(seed)
    path = sample_path(_random_loop(rng), True, ds=0.1)
    prof = periodic_profile(path, LIM)
    g, a = LIM.gravity, LIM.max_accel
    v = prof.v
    w = v**2
    ds = np.diff(prof.s)
    n = len(path.s)
    idx = np.arange(n + 1) % n
    t, k = path.tangent[idx], path.curvature[idx]
    h = g * (np.array([0.0, 0.0, 1.0]) - t[:, 2:3] * t)
    r = np.sqrt(np.maximum(a * a - np.sum((w[:, None] * k + h) ** 2, 1), 0.0))
    up, down = -g * t[:, 2] + r, g * t[:, 2] + r
    assert np.all(w <= prof.v_limit**2 * (1 + 1e-9) + 1e-9)
    reach = w[1:] <= w[:-1] + 2 * ds * up[:-1] + 1e-7
    brake = w[:-1] <= w[1:] + 2 * ds * down[1:] + 1e-7
    assert reach.all() and brake.all()
    # maximal: every sample is at its speed limit or held by a reach / brake bound
    tight_reach = np.concatenate([[False], np.isclose(w[1:], w[:-1] + 2 * ds * up[:-1], rtol=1e-6, atol=1e-6)])
    tight_brake = np.concatenate([np.isclose(w[:-1], w[1:] + 2 * ds * down[1:], rtol=1e-6, atol=1e-6), [False]])
    at_limit = np.isclose(w, prof.v_limit**2, rtol=1e-6)
    tight = tight_reach | tight_brake | at_limit
    tight[0] |= tight[-1]  # the wrap-around sample is sample 0
    tight[-1] = tight[0]
    assert tight.all()
    assert prof.time == pytest.approx(float(np.sum(2 * ds / (v[1:] + v[:-1]))))


# -- the courses' own lines ---------------------------------------------------------------------
def test_reference_of_generated_gate_courses():
    from track_gen.course import Course
    from track_gen.pipeline import presets

    course = Course.gates(presets.gates(num_envs=4, device="cpu", gate_width=1.0, size=10.0), seeds=1)
    line = course.course_line.line
    pts, cnt, closed = line.points.numpy(), line.count.numpy(), line.closed.numpy()
    cps = course.checkpoints
    for e in range(4):
        n = int(cps.count.numpy()[e])
        ref = reference_laps(pts[e, : cnt[e]], LIM, closed=bool(closed[e]), start_s=0.0,
                             finish_s=float(cps.s.numpy()[e, n - 1]))
        assert ref.lap_length == pytest.approx(float(line.length.numpy()[e]), rel=2e-2)
        vmax = ref.flying.v.max()
        assert 0 < ref.lap_length / vmax <= ref.flying_lap_s < ref.lap_length / 1.0
        assert np.isfinite(ref.first_lap_s) and ref.first_lap_s > 0


# -- errors -------------------------------------------------------------------------------------
def test_bad_input_is_refused_with_a_message():
    with pytest.raises(ValueError, match="max_accel"):
        VehicleLimits(9.0)
    with pytest.raises(ValueError, match="max_speed"):
        VehicleLimits(20.0, max_speed=0.0)
    with pytest.raises(ValueError, match=r"\[N, 3\]"):
        reference_laps(np.zeros((4, 4)), LIM)
    with pytest.raises(ValueError, match="finite"):
        reference_laps(np.array([[0, 0, 0], [1, 0, 0], [np.nan, 1, 0]]), LIM)
    with pytest.raises(ValueError, match="at least 3"):
        reference_laps(np.array([[0, 0, 0], [1, 0, 0], [1, 0, 0]]), LIM, closed=True)
    with pytest.raises(ValueError, match="ds"):
        sample_path(_circle(3.0), True, ds=0.0)
