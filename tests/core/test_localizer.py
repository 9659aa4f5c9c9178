"""Localizer: projection on the course line against a float64 numpy brute force, warm start,
masks, capture, and the documented results of invalid courses and non-finite poses."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen.capture import check_component, strict
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import Component
from track_gen.tools.localizer import SEARCH_GLOBAL, SEARCH_NONE, SEARCH_WARM, Localizer
from track_gen.tools.types import CourseLine

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
FRAME_FIELDS = ("s", "lateral", "vertical", "heading", "tangent", "segment", "distance")


# -- test components: CourseLines named "centerline" ------------------------------------------------
@wp.kernel
def _fill_line(active: wp.array(dtype=wp.int32), use_mask: int, src: wp.array2d(dtype=wp.vec3f),
               src_count: wp.array(dtype=wp.int32), src_closed: wp.array(dtype=wp.int32),
               points: wp.array2d(dtype=wp.vec3f), tangent: wp.array2d(dtype=wp.vec3f),
               s: wp.array2d(dtype=wp.float32), count: wp.array(dtype=wp.int32),
               length: wp.array(dtype=wp.float32), closed: wp.array(dtype=wp.int32)):
    """The straight polyline through the first ``src_count`` rows of ``src`` (masked envs)."""
    e = wp.tid()
    if use_mask != 0 and active[e] == 0:
        return
    cap = points.shape[1]
    n = wp.clamp(src_count[e], 0, cap)
    c = src_closed[e]
    acc = float(0.0)
    last = wp.vec3f(0.0, 0.0, 0.0)
    for i in range(cap):
        if i < n:
            points[e, i] = src[e, i]
        else:
            points[e, i] = wp.vec3f(0.0, 0.0, 0.0)
            tangent[e, i] = wp.vec3f(0.0, 0.0, 0.0)
            s[e, i] = 0.0
    for i in range(n):
        s[e, i] = acc
        nxt = i + 1
        if nxt == n:
            nxt = 0
        if i + 1 < n or c != 0:
            d = points[e, nxt] - points[e, i]
            acc = acc + wp.length(d)
            if wp.length(d) > 0.0:
                last = wp.normalize(d)
        tangent[e, i] = last
    count[e] = src_count[e]
    length[e] = acc
    closed[e] = c


class _LineComponent(Component):
    name = "centerline"

    def _alloc(self, ctx, N):
        E, d = ctx.num_envs, ctx.device
        self.result = CourseLine(
            points=wp.zeros((E, N), dtype=wp.vec3f, device=d), tangent=wp.zeros((E, N), dtype=wp.vec3f, device=d),
            s=wp.zeros((E, N), dtype=wp.float32, device=d), count=wp.zeros(E, dtype=wp.int32, device=d),
            length=wp.zeros(E, dtype=wp.float32, device=d), closed=wp.zeros(E, dtype=wp.int32, device=d))
        self._all = wp.ones(E, dtype=wp.int32, device=d)

    def on_generate(self, ctx, mask):
        r = self.result
        wp.launch(_fill_line, dim=ctx.num_envs,
                  inputs=[self._all if mask is None else mask, int(mask is not None), self._src, self._count,
                          self._closed], outputs=[r.points, r.tangent, r.s, r.count, r.length, r.closed],
                  device=ctx.device)


class GateCenterline(_LineComponent):
    """The straight polyline through the gate centres (closed for loops)."""

    def attach(self, ctx):
        res = ctx.result
        self._alloc(ctx, res.pos.shape[1])
        self._src, self._count = res.pos, res.count
        self._closed = wp.full(ctx.num_envs, int(res.closed), dtype=wp.int32, device=ctx.device)


class ArrayLine(_LineComponent):
    """Any polyline: ``pts`` [E, N], ``count``, ``closed`` written by the test before regenerating."""

    def __init__(self, num_points):
        self.num_points = num_points

    def attach(self, ctx):
        E, d, N = ctx.num_envs, ctx.device, self.num_points
        self._alloc(ctx, N)
        self._src = wp.zeros((E, N), dtype=wp.vec3f, device=d)
        self._count = wp.zeros(E, dtype=wp.int32, device=d)
        self._closed = wp.zeros(E, dtype=wp.int32, device=d)

    def write(self, pts, count, closed):
        self._src.assign(np.asarray(pts, np.float32))
        self._count.assign(np.asarray(count, np.int32))
        self._closed.assign(np.asarray(closed, np.int32))


# -- float64 reference ---------------------------------------------------------------------------
def line_np(line: CourseLine) -> dict:
    return {f.name: getattr(line, f.name).numpy().astype(np.float64) for f in dataclasses.fields(line)}


def wrap(a):
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def body_yaw(q):
    """Yaw of the rotated x axis of the xyzw quaternion q (normalized first)."""
    x, y, z, w = np.asarray(q, np.float64) / np.linalg.norm(q)
    return math.atan2(2 * (x * y + z * w), 1 - 2 * (y * y + z * z))


def ref_usable(L, e, gen_valid):
    n = int(L["count"][e])
    if not gen_valid[e] or n < 2 or n > L["points"].shape[1]:
        return False
    return bool(np.isfinite(L["points"][e, :n]).all() and np.isfinite(L["s"][e, :n]).all()
                and np.isfinite(L["length"][e]))


def ref_segments(L, e):
    n = int(L["count"][e])
    P = L["points"][e, :n]
    if L["closed"][e]:
        return P, np.roll(P, -1, axis=0)
    return P[:-1], P[1:]


def ref_all(A, B, p):
    """Per segment: t in [0, 1], distance, offset from the projection."""
    d = B - A
    l2 = (d * d).sum(1)
    v = p - A
    t = np.where(l2 > 0, (v * d).sum(1) / np.where(l2 > 0, l2, 1), 0).clip(0, 1)
    off = v - t[:, None] * d
    return t, np.sqrt((off * off).sum(1)), off


def ref_frame(L, e, j, p, q):
    """Frame fields for segment j (float64)."""
    A, B = ref_segments(L, e)
    t, dist, off = ref_all(A[j:j + 1], B[j:j + 1], p)
    t, dist, off = t[0], dist[0], off[0]
    d = B[j] - A[j]
    n = int(L["count"][e])
    s0 = L["s"][e, j]
    s1 = L["length"][e] if j + 1 == n else L["s"][e, j + 1]
    hl = math.hypot(d[0], d[1])
    lat = (d[0] * off[1] - d[1] * off[0]) / hl if hl > 0 else 0.0
    ln = np.linalg.norm(d)
    return dict(s=s0 + t * (s1 - s0), lateral=lat, vertical=off[2], tangent=d / ln if ln > 0 else np.zeros(3),
                distance=dist, heading=0.0 if q is None else float(wrap(body_yaw(q) - math.atan2(d[1], d[0]))))


def frame_np(frame) -> dict:
    return {f: getattr(frame, f).numpy().copy() for f in FRAME_FIELDS}


def check_invalid(F, e):
    assert F["segment"][e] == -1
    for f in FRAME_FIELDS:
        if f != "segment":
            assert (F[f][e] == 0).all(), (f, e)


def check_reference(loc, pos, quat=None, gen_valid=None, envs=None):
    """Every env of ``loc.result`` against the float64 brute force over all segments."""
    F = frame_np(loc.result)
    L = line_np(loc.line)
    E = len(pos)
    gen_valid = np.ones(E, bool) if gen_valid is None else gen_valid
    search = loc.search.numpy()
    for f in FRAME_FIELDS:
        assert np.isfinite(F[f]).all(), f
    assert (F["heading"] >= -np.float32(np.pi)).all() and (F["heading"] < np.float32(np.pi)).all()
    for e in range(E) if envs is None else envs:
        p = pos[e].astype(np.float64)
        if not ref_usable(L, e, gen_valid) or not np.isfinite(p).all():
            check_invalid(F, e)
            assert search[e] == SEARCH_NONE
            continue
        A, B = ref_segments(L, e)
        _, dist, _ = ref_all(A, B, p)
        dmin = dist.min()
        tol = 3e-6 * (1.0 + np.abs(A).max() + np.abs(p).max())
        j = int(F["segment"][e])
        assert 0 <= j < len(A), (e, j)
        assert dist[j] <= dmin + tol, (e, j, dist[j], dmin)
        order = np.argsort(dist, kind="stable")
        if len(order) == 1 or dist[order[1]] > dmin + 4 * tol:  # a clear winner must be found
            assert j == order[0], (e, j, order[0])
        R = ref_frame(L, e, j, p, None if quat is None else quat[e])
        hl = math.hypot(*(B[j] - A[j])[:2])
        np.testing.assert_allclose(F["distance"][e], R["distance"], atol=tol, err_msg=f"distance env {e}")
        np.testing.assert_allclose(F["s"][e], R["s"], atol=4 * tol, err_msg=f"s env {e}")
        np.testing.assert_allclose(F["vertical"][e], R["vertical"], atol=tol, err_msg=f"vertical env {e}")
        np.testing.assert_allclose(F["lateral"][e], R["lateral"], atol=4 * tol, err_msg=f"lateral env {e}")
        np.testing.assert_allclose(F["tangent"][e], R["tangent"], atol=1e-5, err_msg=f"tangent env {e}")
        if hl > 1e-3:
            assert abs(wrap(F["heading"][e] - R["heading"])) < 2e-4, (e, F["heading"][e], R["heading"])
    return F


# -- random courses and poses ---------------------------------------------------------------------
def random_lines(rng, E, N, min_count=2, dup=0.1):
    """Random-walk polylines (self-crossing allowed), open or closed, some repeated points."""
    pts = np.zeros((E, N, 3))
    count = rng.integers(min_count, N + 1, E)
    closed = rng.integers(0, 2, E)
    for e in range(E):
        n = count[e]
        step = rng.uniform(0.2, 2.0, n)
        yaw = rng.uniform(-np.pi, np.pi) + np.cumsum(rng.normal(0, 0.7, n))
        xy = np.cumsum(step[:, None] * np.stack([np.cos(yaw), np.sin(yaw)], 1), 0)
        z = rng.uniform(0, 2) + np.cumsum(rng.normal(0, 0.15, n))
        P = np.column_stack([xy - xy.mean(0), z])
        for k in range(1, n):
            if rng.random() < dup:
                P[k] = P[k - 1]  # a zero-length segment
        pts[e, :n] = P
    return pts, count, closed


def random_poses(rng, pts, count, closed):
    """Per env: near a random point of its line, far off, or exactly on a vertex."""
    E = len(count)
    pos = np.zeros((E, 3))
    for e in range(E):
        n = count[e]
        kind = rng.integers(0, 4)
        k = rng.integers(0, n)
        a, b = pts[e, k], pts[e, (k + 1) % n]
        if kind == 0:
            pos[e] = a + rng.random() * (b - a) + rng.normal(0, 0.3, 3)
        elif kind == 1:
            pos[e] = a + rng.random() * (b - a) + rng.normal(0, 3.0, 3)
        elif kind == 2:
            pos[e] = rng.uniform(-15, 15, 3)
        else:
            pos[e] = a
    quat = rng.normal(size=(E, 4)) * rng.uniform(0.2, 3.0, (E, 1))  # any nonzero scale
    return pos.astype(np.float32), quat.astype(np.float32)


def array_course(E=32, N=40, warm=3, seeds=5):
    g = tg.TrackGenerator(presets.track(E, "cpu", num_points=32), seeds=seeds)
    line = ArrayLine(N)
    warm_loc = Localizer(warm_window=warm, source="centerline")
    glob = Localizer(source="centerline", name="global")
    course = Course(g, [line, warm_loc, glob])
    assert g.result.valid.numpy().all()
    pos = wp.zeros(E, dtype=wp.vec3f)
    quat = wp.zeros(E, dtype=wp.quatf)
    course.bind(position=pos, orientation=quat)
    return course, line, warm_loc, glob, pos, quat


@pytest.fixture(scope="module")
def arr():
    return array_course()


# -- global search --------------------------------------------------------------------------------
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_global_matches_float64_brute_force(arr, seed):
    course, line, _, glob, pos, quat = arr
    rng = np.random.default_rng(seed)
    pts, count, closed = random_lines(rng, course.num_envs, line.num_points)
    line.write(pts, count, closed)
    course.regenerate()
    for _ in range(3):
        p, q = random_poses(rng, pts, count, closed)
        pos.assign(p)
        quat.assign(q)
        course.step()
        check_reference(glob, p, q)
        assert (glob.search.numpy() == SEARCH_GLOBAL).all()


@pytest.mark.parametrize("elevated", [False, True])
def test_band_track_without_source(elevated):
    """source=None copies the track (closed, N points) and projects on it exactly."""
    E = 16
    g = tg.TrackGenerator(presets.track(E, "cpu", num_points=64, elevated=elevated), seeds=3)
    loc = Localizer()
    course = Course(g, [loc])
    assert course.localizer is loc and loc.requires == () and loc.source is None
    r = g.result
    L = line_np(loc.line)
    xy, z = r.xy.numpy(), r.z.numpy()
    np.testing.assert_array_equal(L["points"][..., :2], xy)
    np.testing.assert_array_equal(L["points"][..., 2], z)
    np.testing.assert_array_equal(L["s"], r.s.numpy())
    np.testing.assert_array_equal(L["length"], r.length.numpy())
    assert (L["count"] == 64).all() and (L["closed"] == 1).all()
    chord = np.roll(L["points"], -1, axis=1) - L["points"]
    np.testing.assert_allclose(L["tangent"], chord / np.linalg.norm(chord, axis=2, keepdims=True), atol=1e-6)
    if elevated:
        assert np.ptp(z) > 0.1
    rng = np.random.default_rng(1)
    pos = wp.zeros(E, dtype=wp.vec3f)
    quat = wp.zeros(E, dtype=wp.quatf)
    course.bind(position=pos, orientation=quat)
    valid = r.valid.numpy().astype(bool)
    for _ in range(4):
        k = rng.integers(0, 64, E)
        base = L["points"][np.arange(E), k]
        p = (base + rng.normal(0, 0.4, (E, 3))).astype(np.float32)
        q = rng.normal(size=(E, 4)).astype(np.float32)
        pos.assign(p)
        quat.assign(q)
        course.step()
        F = check_reference(loc, p, q, gen_valid=valid)
    # left of travel is positive: a point at +normal of the generator is to the left
    nrm = r.normal.numpy()
    p = np.zeros((E, 3), np.float32)
    p[:, :2] = xy[:, 10] + 0.5 * (xy[:, 11] - xy[:, 10]) + 0.2 * nrm[:, 10]
    p[:, 2] = z[:, 10] + 0.5 * (z[:, 11] - z[:, 10]) + 0.3
    pos.assign(p)
    course.step()
    F = frame_np(loc.result)
    assert (F["lateral"][valid] > 0.15).all() and np.allclose(F["vertical"][valid], 0.3, atol=0.02)


def test_band_track_full_resolution_capacity():
    """N = 256 points (16 blocks of the global search), flat and random poses."""
    E = 8
    g = tg.TrackGenerator(presets.track(E, "cpu", num_points=256), seeds=11)
    loc = Localizer()
    course = Course(g, [loc])
    rng = np.random.default_rng(2)
    pos = wp.zeros(E, dtype=wp.vec3f)
    course.bind(position=pos)
    pts = loc.line.points.numpy()
    for _ in range(4):
        p = (pts[np.arange(E), rng.integers(0, 256, E)] + rng.normal(0, 1.0, (E, 3))).astype(np.float32)
        pos.assign(p)
        course.step()
        F = check_reference(loc, p, None, gen_valid=g.result.valid.numpy().astype(bool))
        assert (F["heading"] == 0).all()  # orientation not bound: heading 0


@pytest.mark.parametrize("closed", [True, False])
def test_gate_centerline_source(closed):
    """A CourseLine through the gate centres (open sprint or loop), from a source component."""
    E = 16
    g = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, closed=closed), seeds=4)
    loc = Localizer(source="centerline")  # global: random poses jump about
    course = Course(g, [loc, GateCenterline()])  # the source is ordered first
    assert list(course.components) == ["centerline", "localizer"]
    assert loc.requires == ("centerline",) and loc.line is course.components["centerline"].result
    L = line_np(loc.line)
    count = g.result.count.numpy()
    np.testing.assert_array_equal(L["count"], count)
    assert (L["closed"] == int(closed)).all()
    pos = wp.zeros(E, dtype=wp.vec3f)
    quat = wp.zeros(E, dtype=wp.quatf)
    course.bind(position=pos, orientation=quat)
    rng = np.random.default_rng(5)
    valid = g.result.valid.numpy().astype(bool)
    for _ in range(4):
        p, q = random_poses(rng, L["points"], count, L["closed"])
        pos.assign(p)
        quat.assign(q)
        course.step()
        check_reference(loc, p, q, gen_valid=valid)
    if not closed:  # behind the first gate: segment 0, s clamped at 0, distance to the gate
        P = L["points"]
        d = P[:, 1] - P[:, 0]
        p = (P[:, 0] - 2.0 * d / np.linalg.norm(d, axis=1, keepdims=True)).astype(np.float32)
        course.reset()
        pos.assign(p)
        course.step()
        F = frame_np(loc.result)
        assert (F["segment"] == 0).all() and (F["s"] == 0).all() and np.allclose(F["distance"], 2.0, atol=1e-5)


def test_with_the_built_in_course_lines():
    """TrackLine gives the same frames as source=None; CenterlineFromGates (loop and sprint)
    against the brute force."""
    from track_gen.tools import CenterlineFromGates, TrackLine

    E = 12
    g = tg.TrackGenerator(presets.track(E, "cpu", num_points=64, elevated=True), seeds=6)
    own, via = Localizer(warm_window=4), Localizer(warm_window=4, source="centerline", name="via")
    course = Course(g, [own, via, TrackLine()])
    pos, quat = wp.zeros(E, dtype=wp.vec3f), wp.zeros(E, dtype=wp.quatf)
    course.bind(position=pos, orientation=quat)
    rng = np.random.default_rng(7)
    P = own.line.points.numpy().copy()
    for k in range(6):
        pos.assign((P[np.arange(E), (3 * k + np.arange(E)) % 64] + rng.normal(0, 0.3, (E, 3))).astype(np.float32))
        quat.assign(rng.normal(size=(E, 4)).astype(np.float32))
        course.step()
        for f in FRAME_FIELDS:
            assert getattr(own.result, f).numpy().tobytes() == getattr(via.result, f).numpy().tobytes(), (k, f)
    for closed in (True, False):
        gg = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, closed=closed), seeds=6)
        loc = Localizer(source="centerline")
        course = Course(gg, [CenterlineFromGates(), loc])
        pos, quat = wp.zeros(E, dtype=wp.vec3f), wp.zeros(E, dtype=wp.quatf)
        course.bind(position=pos, orientation=quat)
        L = line_np(loc.line)
        n = L["count"].astype(int)
        for _ in range(3):
            p, q = random_poses(rng, L["points"], np.maximum(n, 1), L["closed"])
            pos.assign(p)
            quat.assign(q)
            course.step()
            check_reference(loc, p, q, gen_valid=gg.result.valid.numpy().astype(bool))


# -- warm start -----------------------------------------------------------------------------------
def point_at(P, closed, s):
    """The point at arc length s of the polyline P (float64), s wrapped (closed) or clamped (open)."""
    Q = np.vstack([P, P[:1]]) if closed else P
    seg = np.linalg.norm(np.diff(Q, axis=0), axis=1)
    cum = np.concatenate([[0], np.cumsum(seg)])
    s = s % cum[-1] if closed else np.clip(s, 0, cum[-1])
    k = min(np.searchsorted(cum, s, side="right") - 1, len(seg) - 1)
    t = 0.0 if seg[k] == 0 else (s - cum[k]) / seg[k]
    return Q[k] + t * (Q[k + 1] - Q[k])


def in_window(j, prev, w, m, closed):
    if prev < 0:
        return False
    if closed:
        g = abs(j - prev) % m
        return min(g, m - g) <= w
    return abs(j - prev) <= w


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_warm_equals_global_along_smooth_trajectories(arr, seed):
    """Every step where the global nearest segment is within the window: bytes equal."""
    course, line, warm, glob, pos, quat = arr
    E, W = course.num_envs, warm.warm_window
    rng = np.random.default_rng(seed)
    pts, count, closed = random_lines(rng, E, line.num_points, min_count=12, dup=0.05)
    line.write(pts, count, closed)
    course.regenerate()
    speed = rng.uniform(0.02, 0.6, E)  # metres per step (segments: 0.2 .. 2 m)
    s0 = rng.uniform(0, 10, E)
    phase = rng.uniform(0, 2 * np.pi, E)
    checked = warm_steps = total = 0
    for k in range(40):
        p = np.zeros((E, 3))
        for e in range(E):
            P = pts[e, :count[e]]
            p[e] = point_at(P, closed[e], s0[e] + speed[e] * k)
            p[e] += 0.3 * np.array([np.sin(0.2 * k + phase[e]), np.cos(0.3 * k + phase[e]), 0.5 * np.sin(0.1 * k)])
        q = rng.normal(size=(E, 4))
        prev = warm.last_segment.numpy().copy()
        pos.assign(p.astype(np.float32))
        quat.assign(q.astype(np.float32))
        course.step()
        Fw, Fg = frame_np(warm.result), frame_np(glob.result)
        search = warm.search.numpy()
        for e in range(E):
            m = count[e] if closed[e] else count[e] - 1
            total += 1
            warm_steps += search[e] == SEARCH_WARM
            if search[e] == SEARCH_WARM:  # accepted only with a previous segment, inside its window
                assert in_window(Fw["segment"][e], prev[e], W, m, closed[e])
            if in_window(Fg["segment"][e], prev[e], W, m, closed[e]) or search[e] == SEARCH_GLOBAL:
                checked += 1
                for f in FRAME_FIELDS:
                    assert Fw[f][e].tobytes() == Fg[f][e].tobytes(), (k, e, f, Fw[f][e], Fg[f][e])
    # most steps must exercise the comparison (a hairpin in the window can leave some unchecked)
    assert checked >= 0.75 * total and warm_steps >= 0.5 * total, (checked, warm_steps, total)
    check_reference(glob, p.astype(np.float32), q.astype(np.float32))


def straight_course(n=41, closed=0, W=4, E=4):
    """Every env: a straight line along x through n unit-spaced points (plus custom envs)."""
    course, line, warm, glob, pos, quat = array_course(E=E, N=max(n, 8), warm=W)
    pts = np.zeros((E, line.num_points, 3))
    pts[:, :n, 0] = np.arange(n)
    line.write(pts, np.full(E, n), np.full(E, closed))
    course.regenerate()
    return course, line, warm, glob, pos


def go(course, pos, xyz):
    pos.assign(np.broadcast_to(np.asarray(xyz, np.float32), (course.num_envs, 3)).copy())
    course.step()


def test_warm_fallback_rules_straight_line():
    course, line, warm, glob, pos = straight_course()
    seg = warm.result.segment
    go(course, pos, (20.5, 0.3, 0))  # rule 1: no previous segment
    assert (warm.search.numpy() == SEARCH_GLOBAL).all() and (seg.numpy() == 20).all()
    go(course, pos, (23.5, 0.3, 0))  # 3 segments ahead, interior of the window 16..24
    assert (warm.search.numpy() == SEARCH_WARM).all() and (seg.numpy() == 23).all()
    go(course, pos, (27.5, 0.3, 0))  # window 19..27: nearest is its last segment -> rule 3
    assert (warm.search.numpy() == SEARCH_GLOBAL).all() and (seg.numpy() == 27).all()
    go(course, pos, (35.5, 0.0, 0))  # a jump past the window: the edge is nearest -> global
    assert (warm.search.numpy() == SEARCH_GLOBAL).all() and (seg.numpy() == 35).all()
    go(course, pos, (35.5, 4.4, 0))  # window 31..39 ends at the open end: reach 4.5 m back > 4.4 m
    assert (warm.search.numpy() == SEARCH_WARM).all()
    go(course, pos, (35.5, 4.6, 0))  # rule 4: farther from the line than the window reaches
    assert (warm.search.numpy() == SEARCH_GLOBAL).all()
    go(course, pos, (39.9, 0.0, 0.0))  # window 31..39 is clamped at the open end: no edge there
    assert (warm.search.numpy() == SEARCH_WARM).all() and (seg.numpy() == 39).all()
    go(course, pos, (42.0, 0.0, 1.0))  # beyond the end: no edge, reach 5 m back from the end
    assert (warm.search.numpy() == SEARCH_WARM).all() and (seg.numpy() == 39).all()
    F = frame_np(warm.result)
    assert np.allclose(F["s"], 40) and np.allclose(F["distance"], math.hypot(2, 1)) and np.allclose(F["vertical"], 1)
    go(course, pos, (45.0, 0.0, 1.0))  # 5.1 m from the end > 5 m reach back along the window
    assert (warm.search.numpy() == SEARCH_GLOBAL).all() and (seg.numpy() == 39).all()
    for f in FRAME_FIELDS:
        np.testing.assert_array_equal(frame_np(warm.result)[f], frame_np(glob.result)[f])
    go(course, pos, (1.5, 0.3, 0.0))  # back to the start: a jump (edge 31) -> global
    assert (warm.search.numpy() == SEARCH_GLOBAL).all() and (seg.numpy() == 1).all()
    go(course, pos, (-0.5, 0.1, 0.0))  # window clamped to 0..5 at the open start: no edge at 0
    assert (warm.search.numpy() == SEARCH_WARM).all() and (seg.numpy() == 0).all()
    np.testing.assert_array_equal(warm.result.s.numpy(), 0)
    go(course, pos, (39.5, 0.0, 0.0))
    course.reset(wp.array([1, 0, 1, 0], dtype=wp.int32))  # rule 1 again, masked envs only
    np.testing.assert_array_equal(warm.last_segment.numpy(), [-1, 39, -1, 39])
    go(course, pos, (39.5, 0.0, 0.0))
    np.testing.assert_array_equal(warm.search.numpy(), [SEARCH_GLOBAL, SEARCH_WARM] * 2)


def test_window_covering_the_line_searches_globally():
    course, _, warm, _, pos = straight_course(n=9, closed=1, W=4)  # 9 segments <= 2 * 4 + 1
    for x in (2.5, 3.5, 4.5):
        go(course, pos, (x, 0.1, 0))
        assert (warm.search.numpy() == SEARCH_GLOBAL).all()
    course, _, warm, _, pos = straight_course(n=10, closed=0, W=4)  # open: window 0..8 from 4
    go(course, pos, (4.5, 0.1, 0))
    go(course, pos, (4.5, 0.1, 0))
    assert (warm.search.numpy() == SEARCH_GLOBAL).all()


def test_teleport_falls_back_to_the_global_result():
    """A jump across the course: the warm localizer finds what the global one finds."""
    E = 8
    g = tg.TrackGenerator(presets.track(E, "cpu", num_points=128), seeds=9)
    warm = Localizer(warm_window=8)
    glob = Localizer(name="global")
    course = Course(g, [warm, glob])
    pos = wp.zeros(E, dtype=wp.vec3f)
    course.bind(position=pos)
    P = warm.line.points.numpy()
    for k in (10, 12, 14, 75, 77):  # 14 -> 75 is a jump
        pos.assign(P[:, k] + np.float32([0.05, -0.02, 0.1]))
        course.step()
        np.testing.assert_array_equal(warm.result.segment.numpy(), glob.result.segment.numpy())
        expect = SEARCH_GLOBAL if k in (10, 75) else SEARCH_WARM
        assert (warm.search.numpy() == expect).all(), (k, warm.search.numpy())
        for f in FRAME_FIELDS:
            assert getattr(warm.result, f).numpy().tobytes() == getattr(glob.result, f).numpy().tobytes()


def test_hairpin_drift_keeps_following_the_current_leg():
    """The documented limit: a slow drift towards another leg within the window's reach is not a
    jump, so the warm localizer keeps the current leg while the global one switches."""
    course, line, warm, glob, pos, _ = array_course(E=2, N=64, warm=8)
    leg = np.arange(30, dtype=np.float64) * 0.5
    pts = np.zeros((2, 64, 3))
    pts[:, :30, 0] = leg  # out along y = 0, back along y = 2
    pts[:, 30:60, 0] = leg[::-1]
    pts[:, 30:60, 1] = 2.0
    line.write(pts, [60, 60], [1, 1])
    course.regenerate()
    for y in np.linspace(0.0, 1.4, 8):
        go(course, pos, (7.25, y, 0.0))
    assert (warm.search.numpy() == SEARCH_WARM).all()
    assert (warm.result.segment.numpy() == 14).all() and (glob.result.segment.numpy() == 44).all()
    np.testing.assert_allclose(warm.result.lateral.numpy(), 1.4, atol=1e-6)
    go(course, pos, (7.25, 5.0, 0.0))  # well off the line: farther than the reach -> global
    assert (warm.search.numpy() == SEARCH_GLOBAL).all() and (warm.result.segment.numpy() == 44).all()


# -- heading, orientation -------------------------------------------------------------------------
def _yaw_defined(q):
    x, y, z, w = np.asarray(q, np.float64) / max(np.linalg.norm(q), 1e-30)
    return np.linalg.norm(q) > 0.05 and math.hypot(1 - 2 * (y * y + z * z), 2 * (x * y + z * w)) > 0.05


@SETTINGS
@given(quats=st.lists(st.tuples(*[st.floats(-1, 1)] * 4).filter(_yaw_defined), min_size=4, max_size=4),
       yaw=st.floats(-np.pi, np.pi))
def test_heading_from_random_quaternions(quats, yaw):
    course, _, warm, glob, pos = straight_course(E=4, W=2)
    line = course.components["centerline"]
    pts = np.zeros((4, line.num_points, 3))
    pts[:, :3, 0] = [0, math.cos(yaw), 2 * math.cos(yaw)]
    pts[:, :3, 1] = [0, math.sin(yaw), 2 * math.sin(yaw)]
    line.write(pts, np.full(4, 3), np.zeros(4))
    course.regenerate()
    q = np.asarray(quats, np.float32)
    course.bind(position=pos, orientation=wp.array(q, dtype=wp.quatf))
    go(course, pos, (0.5 * math.cos(yaw), 0.5 * math.sin(yaw), 0.3))
    h = glob.result.heading.numpy()
    for e in range(4):
        ref = wrap(body_yaw(q[e]) - np.arctan2(np.float32(math.sin(yaw)), np.float32(math.cos(yaw))))
        assert abs(wrap(h[e] - ref)) < 1e-4, (q[e], h[e], ref)
    assert ((h >= -np.float32(np.pi)) & (h < np.float32(np.pi))).all()


def test_heading_examples_and_nonfinite_orientation():
    course, line, warm, glob, pos = straight_course(E=4)
    c, s = math.cos(0.25), math.sin(0.25)  # yaw 0.5 about z: (0, 0, sin, cos)
    q = np.float32([[0, 0, s, c], [0, 0, math.sin(1.6), math.cos(1.6)], [np.nan, 0, 0, 1], [0, 0, 0, 5]])
    course.bind(position=pos, orientation=wp.array(q, dtype=wp.quatf))
    go(course, pos, (3.5, 1.0, 0.0))
    h = glob.result.heading.numpy()
    np.testing.assert_allclose(h[:2], [0.5, wrap(3.2)], atol=1e-6)
    assert h[2] == 0 and h[3] == 0  # NaN quaternion: 0; a scaled identity: yaw 0
    assert (glob.result.segment.numpy() == 3).all()  # the rest of the NaN-orientation env is fine
    np.testing.assert_allclose(glob.result.lateral.numpy(), 1.0)
    course.bind(position=pos)  # orientation unbound: heading 0
    go(course, pos, (3.5, 1.0, 0.0))
    assert (glob.result.heading.numpy() == 0).all()


# -- masks, reset, capture ------------------------------------------------------------------------
def loc_state(loc) -> dict[str, np.ndarray]:
    out = {f"line.{f.name}": getattr(loc.line, f.name).numpy() for f in dataclasses.fields(loc.line)}
    out.update({f"frame.{f}": getattr(loc.result, f).numpy() for f in FRAME_FIELDS})
    for k in ("_pts", "_spheres", "_num_seg"):
        out[k] = getattr(loc, k).numpy()
    out["last_segment"] = loc.last_segment.numpy()
    out["search"] = loc.search.numpy()
    return {k: v.copy() for k, v in out.items()}  # CPU .numpy() is a view of the live buffer


def rows(a):
    return np.ascontiguousarray(a).view(np.uint8).reshape(a.shape[0], -1)


def track_course(E=12, warm=4, family="track"):
    if family == "track":
        g = tg.TrackGenerator(presets.track(E, "cpu", num_points=48), seeds=21)
        comps = [Localizer(warm_window=warm)]
    else:
        g = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=21)
        comps = [GateCenterline(), Localizer(warm_window=warm, source="centerline")]
    return Course(g, comps)


@pytest.mark.parametrize("family", ["track", "gates"])
def test_masked_regeneration_changes_masked_envs_only(family):
    E = 12
    masked, full = track_course(E, 2, family), track_course(E, 2, family)  # gates: 6+ segments > 2 * 2 + 1
    pos = wp.array(masked.generator.result.start_pos.numpy(), dtype=wp.vec3f)
    for c in (masked, full):
        c.bind(position=pos)
        c.step()
        c.step()  # warm state: last_segment >= 0
    m = (np.random.default_rng(0).random(E) < 0.5).astype(np.int32)
    m[:2] = [1, 0]
    loc = masked.localizer
    before = loc_state(loc)
    assert (before["last_segment"] >= 0).all()
    masked.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
    full.regenerate(advance=True)
    after, ref = loc_state(loc), loc_state(full.localizer)
    assert not np.array_equal(after["line.points"][m == 1], before["line.points"][m == 1])  # a new course
    for k in before:
        if k.startswith("frame.") or k == "search":  # per-step outputs: untouched by regeneration
            assert np.array_equal(rows(after[k]), rows(before[k])), k
            continue
        assert (rows(after[k])[m == 0] == rows(before[k])[m == 0]).all(), k
        assert (rows(after[k])[m == 1] == rows(ref[k])[m == 1]).all(), k
    assert (after["last_segment"][m == 1] == -1).all()
    masked.step()  # masked envs search globally (state invalidated), the others stay warm
    search = loc.search.numpy()
    assert (search[m == 1] == SEARCH_GLOBAL).all() and (search[m == 0] == SEARCH_WARM).all()


@pytest.mark.parametrize("warm", [None, 4])
@pytest.mark.parametrize("family", ["track", "gates"])
def test_capture_replay_equals_eager(warm, family):
    """step() + masked regeneration recorded in a strict CPU capture == eager, byte for byte."""
    E = 12
    eager, graph = track_course(E, warm, family), track_course(E, warm, family)
    ins = {}
    for name, c in (("e", eager), ("g", graph)):
        ins[name] = (wp.zeros(E, dtype=wp.vec3f), wp.zeros(E, dtype=wp.quatf), wp.zeros(E, dtype=wp.int32))
        c.bind(position=ins[name][0], orientation=ins[name][1])
    check_component(graph)  # every hook recorded alone in a strict capture

    def body(course, m):
        course.step()
        course.regenerate(mask=m, advance=True)

    with strict(), wp.ScopedCapture(device="cpu") as cap:
        body(graph, ins["g"][2])
    rng = np.random.default_rng(4)
    P = eager.localizer.line.points.numpy()
    for it in range(6):
        m = (rng.random(E) < 0.3).astype(np.int32)
        p = (P[np.arange(E), rng.integers(0, 6, E)] + rng.normal(0, 0.3, (E, 3))).astype(np.float32)
        if it == 3:
            p[0] = np.nan  # replayed NaN handling too
        q = rng.normal(size=(E, 4)).astype(np.float32)
        for name in ("e", "g"):
            ins[name][0].assign(p)
            ins[name][1].assign(q)
            ins[name][2].assign(m)
        body(eager, ins["e"][2])
        wp.capture_launch(cap.graph)
        a, b = loc_state(eager.localizer), loc_state(graph.localizer)
        for k in a:
            assert a[k].tobytes() == b[k].tobytes(), (it, k)
        P = eager.localizer.line.points.numpy()


# -- invalid courses, non-finite poses ------------------------------------------------------------
class ValidOverride:
    """A generator whose ``valid`` flags the test writes (the generator surface, duck typed)."""

    def __init__(self, inner, valid):
        self.inner, self.layout, self.device, self.family = inner, inner.layout, inner.device, inner.family
        self.result = dataclasses.replace(inner.result, valid=valid)

    def enqueue(self, ctx=None, *, advance=False, mask=None):
        self.inner.enqueue(ctx, advance=advance, mask=mask)


def test_invalid_courses_and_nonfinite_positions_stay_in_their_env():
    E, N = 9, 16
    valid = wp.ones(E, dtype=wp.int32)
    g = ValidOverride(tg.TrackGenerator(presets.track(E, "cpu", num_points=32), seeds=2), valid)
    line = ArrayLine(N)
    warm = Localizer(warm_window=2, source="centerline")
    glob = Localizer(source="centerline", name="global")
    course = Course(g, [line, warm, glob])
    rng = np.random.default_rng(8)
    pts, count, closed = random_lines(rng, E, N, min_count=6, dup=0.0)
    p_good, q = random_poses(rng, pts, count, closed)
    pos, quat = wp.array(p_good, dtype=wp.vec3f), wp.array(q, dtype=wp.quatf)
    course.bind(position=pos, orientation=quat)

    def run(bad):
        line.write(pts, count, closed)
        course.regenerate()
        pos.assign(p_good)
        course.step()
        p = p_good.copy()
        if bad:
            p[5] = np.nan
            p[6] = [np.inf, 0, 0]
            p[7] = 1e20  # its squared distance overflows float32
        pos.assign(p)
        course.step()
        return {n: frame_np(c.result) for n, c in (("warm", warm), ("global", glob))}

    clean = run(False)
    valid.assign(np.int32([1, 0, 1, 1, 1, 1, 1, 1, 1]))  # env 1: the generator says invalid
    count[2] = 1  # a single point
    count[3] = N + 1  # more points than the line holds
    pts[4, 2] = np.nan  # a non-finite point
    pts[8, 1], pts[8, 2] = 3e38, -3e38  # finite points, but the segment vector overflows float32
    bad = run(True)
    for n, c in (("warm", warm), ("global", glob)):
        for e in range(1, E):
            check_invalid(bad[n], e)
        for f in FRAME_FIELDS:  # env 0 never notices
            assert bad[n][f][0].tobytes() == clean[n][f][0].tobytes(), (n, f)
        assert (c.search.numpy()[1:] == SEARCH_NONE).all() and (c.last_segment.numpy()[1:] == -1).all()
    usable = valid.numpy().astype(bool) & (np.arange(E) != 8)
    check_reference(glob, np.where(np.arange(E)[:, None] >= 5, np.nan, p_good).astype(np.float32), q, gen_valid=usable)
    pos.assign(p_good)  # finite again: envs 5..7 search globally and are right
    course.step()
    np.testing.assert_array_equal(warm.search.numpy()[5:8], SEARCH_GLOBAL)
    check_reference(warm, p_good, q, gen_valid=usable)


# -- construction ---------------------------------------------------------------------------------
@pytest.mark.parametrize("w", [0, -1, 1.5, True, "8", np.int64(0)])
def test_warm_window_must_be_a_positive_int(w):
    with pytest.raises(ValueError, match="warm_window"):
        Localizer(warm_window=w)


def test_name_argument():
    assert Localizer().name == "localizer" and Localizer(name="other").name == "other"
    for bad in ("", 2, None):
        with pytest.raises(TypeError, match="name"):
            Localizer(name=bad)
    with pytest.raises(TypeError):
        Localizer(None, None, "other")  # keyword only
    g = tg.TrackGenerator(presets.track(4, "cpu", num_points=32), seeds=1)
    a, b = Localizer(), Localizer(warm_window=2, name="warm")
    course = Course(g, [a, b])
    assert list(course.components) == ["localizer", "warm"] and course.localizer is a
    pos = wp.zeros(4, dtype=wp.vec3f)
    course.bind(position=pos)
    course.step()
    assert a.result.s.numpy().tobytes() == b.result.s.numpy().tobytes()  # both ran: the same first answer


def test_construction_checks():
    assert Localizer(warm_window=np.int32(3)).warm_window == 3
    loc = Localizer(source="centerline")
    assert loc.name == "localizer" and loc.source == "centerline" and loc.requires == ("centerline",)
    assert loc.inputs["orientation"].required is False and loc.inputs["position"].required
    with pytest.raises(TypeError, match="source"):
        Localizer(source=3)
    gates = tg.GateGenerator(presets.gates(4, "cpu", gate_width=1.0), seeds=1)
    with pytest.raises(TypeError, match="source='centerline'"):
        Course(gates, [Localizer()])
    with pytest.raises(ValueError, match="'centerline'"):
        Course(tg.TrackGenerator(presets.track(4, "cpu", num_points=32), seeds=1), [Localizer(source="centerline")])

    class NotALine(Component):
        name = "centerline"
        result = wp.zeros(4, dtype=wp.float32)

    with pytest.raises(TypeError, match="CourseLine"):
        Course(tg.TrackGenerator(presets.track(4, "cpu", num_points=32), seeds=1),
               [NotALine(), Localizer(source="centerline")])
    course = Course(tg.TrackGenerator(presets.track(4, "cpu", num_points=32), seeds=1), [Localizer()])
    with pytest.raises(RuntimeError, match="localizer.position"):
        course.step()
