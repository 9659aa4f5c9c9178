"""CenterlineFromGates / TrackLine against plain numpy float64 references."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen.capture import strict
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools.centerline import CenterlineFromGates, TrackLine
from track_gen.tools.types import CourseLine

from .doubles import Killer

E = 8
FIELDS = [f.name for f in dataclasses.fields(CourseLine)]


# -- helpers --------------------------------------------------------------------------------------


def track(seed=1, **kw):
    return tg.TrackGenerator(presets.track(E, "cpu", **kw), seeds=seed)


def gates(seed=1, **kw):
    return tg.GateGenerator(presets.gates(E, "cpu", gate_width=kw.pop("gate_width", 1.0), **kw), seeds=seed)


def np_line(line: CourseLine) -> dict:
    return {f: getattr(line, f).numpy() for f in FIELDS}


def poison(component, rows):
    """Overwrite ``rows`` of every result buffer with a pattern no kernel writes."""
    for f in dataclasses.fields(component.result):
        arr = getattr(component.result, f.name)
        a = arr.numpy()
        a[rows] = 7
        arr.assign(a)


def state(course) -> dict:
    out = {k: v.numpy().tobytes() for k, v in course.generator.outputs().items()}
    for c in course.components.values():
        for f in dataclasses.fields(c.result):
            out[f"{c.name}.{f.name}"] = getattr(c.result, f.name).numpy().tobytes()
        if hasattr(c, "gate_s"):
            out[f"{c.name}.gate_s"] = c.gate_s.numpy().tobytes()
    return out


def hermite(a, da, b, db, S):
    """S samples (u = q / S, q < S) of the cubic Hermite leg a -> b, end tangents = unit dir * chord."""
    L = np.linalg.norm(b - a)
    u = (np.arange(S) / S)[:, None]
    h00, h10, h01, h11 = 2 * u**3 - 3 * u**2 + 1, u**3 - 2 * u**2 + u, -2 * u**3 + 3 * u**2, u**3 - u**2
    return h00 * a + h10 * L * da + h01 * b + h11 * L * db


def ref_gate_line(g, S):
    """float64 reference of :class:`CenterlineFromGates` (points, tangent, s, count, length, closed, gate_s)."""
    r = g.result
    closed = bool(r.closed)
    pos, nrm = r.pos.numpy().astype(np.float64), r.normal.numpy().astype(np.float64)
    sp, sy = r.start_pos.numpy().astype(np.float64), r.start_yaw.numpy().astype(np.float64)
    G = pos.shape[1]
    N = S * G + (0 if closed else 1)
    out = {"points": np.zeros((E, N, 3)), "tangent": np.zeros((E, N, 3)), "s": np.zeros((E, N)),
           "count": np.zeros(E, int), "length": np.zeros(E), "closed": np.full(E, int(closed)),
           "gate_s": np.zeros((E, G))}
    for e in range(E):
        n = int(r.count.numpy()[e]) if r.valid.numpy()[e] else 0
        if n == 0:
            continue
        if closed:
            ends = [(pos[e, j], nrm[e, j], pos[e, (j + 1) % n], nrm[e, (j + 1) % n]) for j in range(n)]
        else:
            start = (sp[e], np.array([np.cos(sy[e]), np.sin(sy[e]), 0.0]))
            ends = [(*start, pos[e, 0], nrm[e, 0])] + [(pos[e, j - 1], nrm[e, j - 1], pos[e, j], nrm[e, j])
                                                       for j in range(1, n)]
        pts = np.vstack([hermite(*leg, S) for leg in ends] + ([] if closed else [pos[e, n - 1][None]]))
        nxt = np.vstack([pts[1:], pts[:1]])
        d = nxt - pts
        seg = np.linalg.norm(d, axis=1)
        tan = d / seg[:, None]
        if not closed:
            seg[-1], tan[-1] = 0.0, nrm[e, n - 1]
        m = len(pts)
        out["points"][e, :m], out["tangent"][e, :m] = pts, tan
        out["s"][e, :m] = np.r_[0.0, np.cumsum(seg[:-1])]
        out["count"][e], out["length"][e] = m, seg.sum()
        off = 0 if closed else S
        out["gate_s"][e, :n] = out["s"][e, off + S * np.arange(n)]
    return out


def turning(points):
    """Angles [rad] between consecutive segments of an open polyline (one per interior point)."""
    d = np.diff(points, axis=0)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return np.arccos(np.clip(np.einsum("ij,ij->i", d[:-1], d[1:]), -1, 1))


# -- CenterlineFromGates ------------------------------------------------------------------------------
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), closed=st.booleans(), S=st.integers(2, 12))
def test_gate_line_matches_numpy_reference(seed, closed, S):
    g = gates(seed=seed, closed=closed)
    course = Course(g, [CenterlineFromGates(S)])
    comp = course.course_line
    got, ref = np_line(comp.line), ref_gate_line(g, S)
    assert got["points"].shape == (E, S * g.layout.gates + (0 if closed else 1), 3)
    np.testing.assert_array_equal(got["count"], ref["count"])
    np.testing.assert_array_equal(got["closed"], ref["closed"])
    np.testing.assert_allclose(got["points"], ref["points"], atol=1e-5)
    np.testing.assert_allclose(got["tangent"], ref["tangent"], atol=2e-4)
    np.testing.assert_allclose(got["s"], ref["s"], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got["length"], ref["length"], rtol=1e-5)
    np.testing.assert_allclose(comp.gate_s.numpy(), ref["gate_s"], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("closed", [True, False])
def test_gate_line_geometry(closed):
    """Through every gate centre exactly, along its normal, C1 in direction, s increasing."""
    S = 32
    g = gates(seed=21, closed=closed)
    course = Course(g, [CenterlineFromGates(S)])
    line = np_line(course.course_line.line)
    gate_s = course.course_line.gate_s.numpy()
    r = g.result
    pos, nrm, cnt, valid = r.pos.numpy(), r.normal.numpy(), r.count.numpy(), r.valid.numpy()
    assert valid.sum() >= E // 2
    off = 0 if closed else S
    for e in np.flatnonzero(valid):
        n, m = cnt[e], line["count"][e]
        assert m == n * S + (0 if closed else 1) and line["closed"][e] == int(closed)
        pts, s, tan = line["points"][e, :m].astype(np.float64), line["s"][e, :m], line["tangent"][e, :m]
        gi = off + S * np.arange(n)
        np.testing.assert_array_equal(line["points"][e, gi], pos[e, :n])  # exactly through the centres
        np.testing.assert_array_equal(line["s"][e, gi], gate_s[e, :n])
        loop = np.vstack([pts, pts[:1]]) if closed else pts
        li = gi if closed else gi[:-1]  # a sprint's last gate is its end
        leave = loop[li + 1] - loop[li]
        enter = pts[gi] - pts[gi - 1]  # index -1: the last point, before gate 0 of a loop
        for d, k in ((leave, len(li)), (enter, n)):  # the line crosses each gate along its normal
            d /= np.linalg.norm(d, axis=1, keepdims=True)
            assert (np.einsum("ij,ij->i", d, nrm[e, :k]) > 0.995).all(), np.einsum("ij,ij->i", d, nrm[e, :k])
        turns = turning(np.vstack([pts[-1:], pts, pts[:1]]) if closed else pts)
        assert turns.max() < 0.2, turns.max()  # C1: no kink anywhere, the gates and the closing leg included
        assert s[0] == 0 and (np.diff(s) > 0).all()
        np.testing.assert_allclose(np.linalg.norm(tan, axis=1), 1.0, atol=1e-5)
        seg = np.linalg.norm(np.diff(loop, axis=0), axis=1)
        np.testing.assert_allclose(line["length"][e], seg.sum(), rtol=1e-5)
        assert (line["points"][e, m:] == 0).all() and (line["s"][e, m:] == 0).all()
        if not closed:
            np.testing.assert_array_equal(pts[0], r.start_pos.numpy()[e])  # a sprint starts at the start pose
            sy = r.start_yaw.numpy()[e]
            d0 = (pts[1] - pts[0]) / np.linalg.norm(pts[1] - pts[0])
            assert d0 @ np.array([np.cos(sy), np.sin(sy), 0.0]) > 0.995
            np.testing.assert_array_equal(tan[-1], nrm[e, n - 1])  # the open end: the last gate's normal
            assert np.isclose(line["length"][e], s[-1])
        else:
            assert gate_s[e, 0] == 0.0


def test_gate_line_arguments_and_utility():
    for bad, exc in ((1, ValueError), (0, ValueError), (2.0, TypeError), (True, TypeError), ("8", TypeError)):
        with pytest.raises(exc, match="samples_per_gate"):
            CenterlineFromGates(bad)
    with pytest.raises(ValueError, match="samples_per_gate: must be >= 2"):
        CenterlineFromGates(1)
    course = Course(gates(), [CenterlineFromGates()])
    c = course.components["centerline"]
    assert course.course_line is c and c.line is c.result and isinstance(c.line, CourseLine)
    assert c.samples_per_gate == 8 and c.capacity == 8 * course.generator.layout.gates
    with pytest.raises(TypeError, match="families"):
        Course(track(), [CenterlineFromGates()])
    with pytest.raises(TypeError, match="families"):
        Course(gates(), [TrackLine()])


@pytest.mark.parametrize("cls", [CenterlineFromGates, TrackLine])
def test_name_argument(cls):
    gen = gates if cls is CenterlineFromGates else track
    assert cls().name == "centerline"
    comp = cls(name="line2")
    course = Course(gen(), [comp])
    assert list(course.components) == ["line2"] and comp.line.count.numpy().max() > 0
    for bad in ("", 5, None):
        with pytest.raises(TypeError, match="name"):
            cls(name=bad)
    with pytest.raises(TypeError):
        cls(4, "line2") if cls is CenterlineFromGates else cls("line2")  # keyword only


# -- TrackLine ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("elevated", [False, True])
def test_track_line_is_the_band_centerline(elevated):
    g = track(seed=31, elevated=elevated)
    course = Course(g, [TrackLine()])
    line = np_line(course.course_line.line)
    r = g.result
    N = r.xy.shape[1]
    assert line["points"].shape == (E, N, 3)
    valid = r.valid.numpy() != 0
    assert valid.sum() >= E // 2
    xyz = np.concatenate([r.xy.numpy(), r.z.numpy()[..., None]], axis=2)
    if elevated:
        assert np.abs(np.diff(xyz[valid, :, 2], axis=1)).max() > 0
    for e in np.flatnonzero(valid):
        np.testing.assert_array_equal(line["points"][e], xyz[e])
        np.testing.assert_array_equal(line["s"][e], r.s.numpy()[e])
        assert line["length"][e] == r.length.numpy()[e] and line["count"][e] == N and line["closed"][e] == 1
        d = np.roll(xyz[e], -1, axis=0).astype(np.float64) - xyz[e]
        np.testing.assert_allclose(line["tangent"][e], d / np.linalg.norm(d, axis=1, keepdims=True), atol=1e-5)


# -- masks, capture, invalid courses ------------------------------------------------------------------
CASES = {
    "track": (lambda: track(seed=41, elevated=True), lambda: [TrackLine()]),
    "loop": (lambda: gates(seed=41), lambda: [CenterlineFromGates(5)]),
    "sprint": (lambda: gates(seed=41, closed=False), lambda: [CenterlineFromGates(4)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_masked_regeneration_equals_full_for_masked_envs_only(case):
    make, comps = CASES[case]
    masked, full = Course(make(), comps()), Course(make(), comps())
    m = np.zeros(E, np.int32)
    m[[1, 2, 7]] = 1
    poison(masked.components['centerline'], m == 0)  # a component that rewrote unmasked rows would lose this
    before = state(masked)
    masked.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
    full.regenerate(advance=True)
    after, ref = state(masked), state(full)
    changed = False
    for k in before:
        b, a, r = (np.frombuffer(x[k], np.uint8).reshape(E, -1) for x in (before, after, ref))
        assert (a[m == 0] == b[m == 0]).all(), k
        assert (a[m == 1] == r[m == 1]).all(), k
        changed |= k.startswith("centerline") and bool((a[m == 1] != b[m == 1]).any())
    assert changed


@pytest.mark.parametrize("case", list(CASES))
def test_capture_replay_equals_eager(case):
    make, comps = CASES[case]
    eager, graph = Course(make(), comps()), Course(make(), comps())
    m_e, m_g = wp.zeros(E, dtype=wp.int32), wp.zeros(E, dtype=wp.int32)
    with wp.ScopedCapture(device="cpu") as cap, strict():
        graph.regenerate(mask=m_g, advance=True)
    rng = np.random.default_rng(1)
    for it in range(3):
        m = (rng.random(E) < 0.5).astype(np.int32)
        m[it] = 1
        m_e.assign(m)
        m_g.assign(m)
        eager.regenerate(mask=m_e, advance=True)
        wp.capture_launch(cap.graph)
        assert state(eager) == state(graph), it


@pytest.mark.parametrize("case", list(CASES))
def test_invalid_courses_have_an_empty_line(case):
    make, comps = CASES[case]
    kill = np.zeros(E, np.int32)
    kill[[0, 4]] = 1
    inner = make()
    killer = Killer(inner, np.zeros(E, np.int32))
    course = Course(killer, comps())
    c = course.components["centerline"]
    assert (c.line.count.numpy()[[0, 4]] > 0).all()
    killer.kill.assign(kill)  # the same courses, now invalid: the rows written before must go
    course.regenerate()
    line = np_line(c.line)
    for e in (0, 4):
        assert line["count"][e] == 0 and line["length"][e] == 0
        for f in ("points", "tangent", "s"):
            assert (line[f][e] == 0).all(), f
        if hasattr(c, "gate_s"):
            assert (c.gate_s.numpy()[e] == 0).all()
    ok = inner.result.valid.numpy() != 0
    assert ok.sum() >= 4 and (line["count"][ok] > 0).all()
    for f in FIELDS:
        assert np.isfinite(line[f].astype(np.float64)).all(), f


def test_gate_course_without_valid_envs():
    course = Course(gates(gate_width=0.0), [CenterlineFromGates()])
    line = np_line(course.course_line.line)
    assert (course.generator.result.valid.numpy() == 0).all()
    assert (line["count"] == 0).all() and (line["length"] == 0).all() and (line["points"] == 0).all()


def test_track_line_nonfinite_length_stays_local():
    g = track(seed=8)
    course = Course(g, [TrackLine()])
    before = np_line(course.course_line.line)
    L = g.result.length.numpy()
    L[3] = np.nan
    g.result.length.assign(L)
    course.components["centerline"].on_generate(course._ctx, course._all)
    got = np_line(course.course_line.line)
    assert got["count"][3] == 0 and (got["points"][3] == 0).all()
    for e in set(range(E)) - {3}:
        for f in FIELDS:
            np.testing.assert_array_equal(got[f][e], before[f][e])
