"""track_gen.reference.path (and its spline / gradient modules): the path-optimised minimum-time
reference against closed forms, finite differences, the course-line reference, and an independent
replay of the progress component's pass rule on the optimised paths."""

from __future__ import annotations

import math

import numpy as np
import pytest

from track_gen.reference.lap import VehicleLimits, reference_laps, sample_path
from track_gen.reference.gradient import lap_time_grad
from track_gen.reference.path import Openings, PathOptions, opening_axes, path_reference_laps
from track_gen.reference.spline import chord_knots, spline_basis

LIM = VehicleLimits.from_thrust_to_weight(2.0)
A_H = math.sqrt(LIM.max_accel**2 - LIM.gravity**2)  # level flight: the horizontal part of the thrust


def _ring_of_gates(n, radius, z=1.5):
    th = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    pos = np.stack([radius * np.cos(th), radius * np.sin(th), np.full(n, z)], 1)
    nrm = np.stack([-np.sin(th), np.cos(th), np.zeros(n)], 1)  # counter-clockwise
    return pos, nrm


def _replay_progress(pos, op: Openings, order, margin, tol=1e-3):
    """The progress rule on a polyline, written out again: each segment crossing the plane of the
    next opening forwards must cross inside the (shrunk) opening; returns the openings passed, or
    raises on a miss."""
    lat, ver = opening_axes(op.normal)
    k = 0
    for a, b in zip(pos[:-1], pos[1:]):
        while k < len(order):
            g = order[k]
            da, db = np.dot(a - op.pos[g], op.normal[g]), np.dot(b - op.pos[g], op.normal[g])
            if not (da < 0.0 <= db + 1e-9):
                break
            x = a + (b - a) * (da / (da - db)) - op.pos[g]
            lx, vx = float(np.dot(x, lat[g])), float(np.dot(x, ver[g]))
            assert abs(lx) <= op.half_width[g] - margin[0] + tol, (g, lx)
            assert abs(vx) <= op.half_height[g] - margin[1] + tol, (g, vx)
            k += 1
    return k


# -- the spline and the gradient -----------------------------------------------------------------
def test_fixed_knot_spline_is_the_chord_length_spline_of_min_time():
    rng = np.random.default_rng(4)
    for closed in (True, False):
        X = rng.uniform(-3, 3, (9, 3))
        knots = chord_knots(X, closed)
        ref = sample_path(X, closed, ds=0.1)  # chord-length knots of the same points
        basis = spline_basis(knots, closed, u=ref.u)
        np.testing.assert_allclose(basis.S0 @ X, ref.pos, atol=1e-9)
        d1 = basis.S1 @ X
        np.testing.assert_allclose(d1 / np.linalg.norm(d1, axis=1, keepdims=True), ref.tangent, atol=1e-9)


@pytest.mark.parametrize("closed", [True, False])
@pytest.mark.parametrize("seed", [0, 1])
def test_time_gradient_matches_central_differences(closed, seed):
    rng = np.random.default_rng(seed)
    n = 10
    if closed:
        th = np.linspace(0, 2 * np.pi, n, endpoint=False)
        r = 4 + rng.uniform(-1, 1, n)
        X = np.stack([r * np.cos(th), r * np.sin(th), 1.5 + 0.3 * rng.uniform(-1, 1, n)], 1)
    else:
        X = np.stack([np.linspace(0, 12, n), rng.uniform(-1, 1, n), 1.5 + 0.3 * rng.uniform(-1, 1, n)], 1)
    basis = spline_basis(chord_knots(X, closed), closed, 0.2)
    grad = lap_time_grad(basis, X, LIM).grad
    h = 1e-6
    fd = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        e = np.zeros_like(X)
        e[idx] = h
        fd[idx] = (lap_time_grad(basis, X + e, LIM, want_grad=False).time
                   - lap_time_grad(basis, X - e, LIM, want_grad=False).time) / (2 * h)
    # piecewise smooth: the active bounds may switch inside the difference step
    assert np.abs(grad - fd).max() <= 1e-2 * np.abs(fd).max()
    assert np.corrcoef(grad.ravel(), fd.ravel())[0, 1] > 0.999


# -- closed forms ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("gates", "radius", "margin"), [(8, 5.0, 0.0), (12, 4.0, 0.1)])
def test_ring_of_gates_flies_the_tightest_circle_the_openings_allow(gates, radius, margin):
    # a level circle at the centripetal limit takes 2 pi R / sqrt(a R) = 2 pi sqrt(R / a): the
    # smaller the radius the faster, so the optimum hugs the inner edges, R' = R - (w/2 - margin)
    pos, nrm = _ring_of_gates(gates, radius)
    op = Openings(pos, nrm, 0.5, 0.5, closed=True)
    ref = path_reference_laps(op, LIM, options=PathOptions(margin=(margin, margin)))
    inner = radius - (0.5 - margin)
    closed_form = 2 * math.pi * inner / math.sqrt(A_H * inner)
    assert ref.flying_lap_s == pytest.approx(closed_form, rel=3e-3)
    line = reference_laps(pos, LIM, closed=True)
    assert line.flying_lap_s == pytest.approx(2 * math.pi * radius / math.sqrt(A_H * radius), rel=5e-3)
    assert ref.flying_lap_s < line.flying_lap_s
    r = np.linalg.norm(ref.flying_path.pos[:, :2], axis=1)
    assert r.min() >= inner - 0.02 and r.max() <= inner + 0.05


def _row_of_gates(d, n=5):
    pos = np.stack([np.linspace(d / n, d, n), np.zeros(n), np.full(n, 1.5)], 1)
    return Openings(pos, np.tile([1.0, 0.0, 0.0], (n, 1)), 0.5, 0.5, closed=False)


@pytest.mark.parametrize("d", [6.0, 20.0])
def test_sprint_through_a_row_of_gates_is_the_bang_bang_time(d):
    op = _row_of_gates(d)
    start = np.array([0.0, 0.0, 1.5])
    # level: the straight line at the level acceleration
    level = path_reference_laps(op, LIM, start=start, options=PathOptions(vertical=False))
    assert level.first_lap_s == pytest.approx(math.sqrt(2 * d / A_H), rel=1e-3)
    assert math.isnan(level.flying_lap_s) and level.flying is None
    # free to dive within the openings: from rest the reachable set of a constant-thrust ball is
    # a ball, so the best path is a straight line to the best point of the last opening
    best = math.inf
    for y in np.linspace(-0.5, 0.5, 41):
        for z in np.linspace(-0.5, 0.5, 41):
            p = np.array([d, y, z])
            u = p / np.linalg.norm(p)
            acc = -LIM.gravity * u[2] + math.sqrt(LIM.max_accel**2 - LIM.gravity**2 * (1 - u[2] ** 2))
            best = min(best, math.sqrt(2 * np.linalg.norm(p) / acc))
    free = path_reference_laps(op, LIM, start=start)
    assert free.first_lap_s == pytest.approx(best, rel=1e-3)
    assert free.first_lap_s < level.first_lap_s


# -- generated courses -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gate_courses():
    from track_gen.course import Course
    from track_gen.pipeline import presets

    course = Course.gates(presets.gates(num_envs=4, device="cpu", gate_width=1.0, gate_height=1.0, size=10.0),
                          seeds=11)
    line, cps, res = course.course_line.line, course.checkpoints, course.result
    out = []
    for e in range(4):
        n, k = int(line.count.numpy()[e]), int(cps.count.numpy()[e])
        op = Openings(cps.pos.numpy()[e, :k], cps.normal.numpy()[e, :k], cps.half_width.numpy()[e, :k],
                      cps.half_height.numpy()[e, :k], bool(cps.closed.numpy()[e]))
        out.append((line.points.numpy()[e, :n].astype(np.float64), float(cps.s.numpy()[e, k - 1]), op,
                    res.start_pos.numpy()[e].astype(np.float64)))
    return out


MARGIN = (0.046, 0.015)


def _projection(points, p):
    """Arc length of the point of the closed polyline ``points`` nearest to ``p``."""
    a, b = points, np.roll(points, -1, axis=0)
    d = b - a
    t = np.clip(np.einsum("ij,ij->i", p - a, d) / np.einsum("ij,ij->i", d, d), 0.0, 1.0)
    i = int(np.argmin(np.linalg.norm(a + t[:, None] * d - p, axis=1)))
    seg = np.linalg.norm(d, axis=1)
    return float(np.concatenate([[0.0], np.cumsum(seg)])[i] + t[i] * seg[i])


def _check_passes(ref, op: Openings, margin, first: int = 0):
    G = len(op.pos)
    # the flying loop starts at opening 0's control point (sample 0, on its plane): replay two laps
    # from the sample after it
    pos = ref.flying_path.pos
    loop2 = np.concatenate([pos[1:], pos, pos[:1]])
    order = (list(range(1, G)) + [0]) * 2
    assert _replay_progress(loop2, op, order, margin) == len(order)
    order = list(range(first, G))
    assert _replay_progress(ref.first_path.pos, op, order, margin) == len(order)


def test_generated_gate_courses_beat_their_course_line_and_pass_every_opening(gate_courses):
    for points, finish, op, start in gate_courses:
        line = reference_laps(points, LIM, closed=True, start_s=_projection(points, start), finish_s=finish)
        ref = path_reference_laps(op, LIM, start=start, options=PathOptions(margin=MARGIN))
        # cutting inside 1 m openings on ~17 m loops: 18-44 % faster than the line on gates-v1
        assert ref.flying_lap_s < 0.97 * line.flying_lap_s
        assert ref.first_lap_s < line.first_lap_s
        assert ref.flying_lap_s >= ref.lap_length / ref.flying.v.max() - 1e-9
        _check_passes(ref, op, MARGIN)


def test_band_track_moves_laterally_inside_its_checkpoints():
    from track_gen import tools
    from track_gen.course import Course
    from track_gen.pipeline import presets

    course = Course.track(presets.track(num_envs=1, device="cpu", size=12.0, elevated=True, half_width=0.4,
                                        min_length=12.0), checkpoint_spacing=1.0, seeds=5, extra=[tools.TrackLine()])
    line, cps, res = course.course_line.line, course.checkpoints, course.result
    n, k = int(line.count.numpy()[0]), int(cps.count.numpy()[0])
    op = Openings(cps.pos.numpy()[0, :k], cps.normal.numpy()[0, :k], cps.half_width.numpy()[0, :k],
                  cps.half_height.numpy()[0, :k], True)
    points = line.points.numpy()[0, :n].astype(np.float64)
    start = res.start_pos.numpy()[0].astype(np.float64)
    ref = path_reference_laps(op, LIM, start=start, options=PathOptions(margin=MARGIN, vertical=False,
                                                                        waypoints_per_leg=0))
    lref = reference_laps(points, LIM, closed=True, finish_s=float(cps.s.numpy()[0, k - 1]))
    assert ref.flying_lap_s < lref.flying_lap_s and ref.first_lap_s < lref.first_lap_s
    _check_passes(ref, op, MARGIN)
    # lateral only: every control point stays at its checkpoint's height
    np.testing.assert_allclose(ref.flying_points[:, 2], op.pos[:, 2], atol=1e-9)


def test_same_input_gives_the_same_numbers(gate_courses):
    _, _, op, start = gate_courses[0]
    a = path_reference_laps(op, LIM, start=start, options=PathOptions(margin=MARGIN))
    b = path_reference_laps(op, LIM, start=start, options=PathOptions(margin=MARGIN))
    assert a.flying_lap_s == b.flying_lap_s and a.first_lap_s == b.first_lap_s
    np.testing.assert_array_equal(a.flying_points, b.flying_points)


# -- errors ------------------------------------------------------------------------------------------
def test_bad_input_is_refused_with_a_message():
    pos, nrm = _ring_of_gates(6, 3.0)
    with pytest.raises(ValueError, match=r"Openings.pos"):
        Openings(pos[:, :2], nrm, 0.5, 0.5)
    with pytest.raises(ValueError, match=r"Openings.normal"):
        Openings(pos, nrm[:3], 0.5, 0.5)
    with pytest.raises(ValueError, match=r"half_width"):
        Openings(pos, nrm, -0.5, 0.5)
    with pytest.raises(ValueError, match=r"finite"):
        Openings(pos, nrm, np.nan, 0.5)
    with pytest.raises(ValueError, match="vertical normal"):
        opening_axes(np.array([[0.0, 0.0, 1.0]]))
    with pytest.raises(ValueError, match="margin"):
        PathOptions(margin=(-0.1, 0.0))
    with pytest.raises(ValueError, match="waypoints_per_leg"):
        PathOptions(waypoints_per_leg=-1)
    with pytest.raises(ValueError, match="ds"):
        path_reference_laps(Openings(pos, nrm, 0.5, 0.5), LIM, ds=0.0)
