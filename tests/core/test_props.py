"""Props (gate frames and edge cones) against float64 numpy references from the generator result."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen.capture import check_component, strict
from track_gen.course import Course
from track_gen.errors import CapacityWarning
from track_gen.pipeline import presets
from track_gen.tools.props import PARK_POSITION, Props, PropSet

from .doubles import Killer

E = 8
PARK_Q = np.array([0.0, 0.0, 0.0, 1.0])


# ------------------------------------------------------------------------------------------------
# building blocks
# ------------------------------------------------------------------------------------------------
def track(num_envs=E, seed=1, **kw):
    return tg.TrackGenerator(presets.track(num_envs, "cpu", **kw), seeds=seed)


def gates(num_envs=E, seed=1, **kw):
    return tg.GateGenerator(presets.gates(num_envs, "cpu", gate_width=kw.pop("gate_width", 1.0), **kw), seeds=seed)


def np_props(p: PropSet) -> dict:
    return {"pos": p.pos.numpy().copy(), "quat": p.quat.numpy().copy(), "count": p.count.numpy().copy()}


def yaw_quat(yaw):
    yaw = np.asarray(yaw, np.float64)
    return np.stack([0 * yaw, 0 * yaw, np.sin(yaw / 2), np.cos(yaw / 2)], -1)


def rotate_x(q):
    """The local x axis rotated by quaternions q [..., 4] (x, y, z, w), float64."""
    x, y, z, w = (q[..., i].astype(np.float64) for i in range(4))
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)], -1)


def assert_parked(got, e, k0):
    assert (got["pos"][e, k0:] == np.float32(PARK_POSITION)).all()
    assert (got["quat"][e, k0:] == PARK_Q).all()


def ceil32(length, spacing):
    return np.ceil(np.float32(length) / np.float32(spacing))


def cone_ref(g, spacing, K, offset=0.0):
    """float64 reference of the cone slots from the generator's committed track."""
    r = g.result
    xy, z, hw, nrm = (a.numpy().astype(np.float64) for a in (r.xy, r.z, r.half_width, r.normal))
    s32, L32, valid = r.s.numpy(), r.length.numpy(), r.valid.numpy()
    Eg, N = s32.shape
    pos = np.tile(np.float64(PARK_POSITION), (Eg, K, 1))
    quat = np.tile(PARK_Q, (Eg, K, 1))
    count = np.zeros(Eg, int)
    for e in range(Eg):
        if not valid[e] or not np.isfinite(L32[e]) or L32[e] <= 0:
            continue
        n = int(np.clip(ceil32(L32[e], spacing), 1, K // 2))
        L = float(L32[e])
        sk32 = np.arange(n, dtype=np.float32) * np.float32(L32[e]) / np.float32(n)  # as the kernel rounds it
        sk = sk32.astype(np.float64)
        s_ext = np.append(s32[e], L32[e]).astype(np.float64)
        i = np.clip(np.searchsorted(np.append(s32[e], L32[e]), sk32, side="right") - 1, 0, N - 1)
        j = (i + 1) % N
        f = np.clip((sk - s_ext[i]) / (s_ext[i + 1] - s_ext[i]), 0, 1)[:, None]
        p = xy[e, i] * (1 - f) + xy[e, j] * f
        n_ = nrm[e, i] * (1 - f) + nrm[e, j] * f
        n_ /= np.linalg.norm(n_, axis=1, keepdims=True)
        hz = z[e, i] * (1 - f[:, 0]) + z[e, j] * f[:, 0]
        off = (hw[e, i] * (1 - f[:, 0]) + hw[e, j] * f[:, 0] + offset)[:, None]
        left, right = p + off * n_, p - off * n_
        pos[e, 0:2 * n:2] = np.c_[left, hz]
        pos[e, 1:2 * n:2] = np.c_[right, hz]
        q = yaw_quat(np.arctan2(-n_[:, 0], n_[:, 1]))
        quat[e, 0:2 * n:2] = q
        quat[e, 1:2 * n:2] = q
        count[e] = 2 * n
        assert abs(L - s_ext[-1]) == 0
    return {"pos": pos, "quat": quat, "count": count}


def assert_cones(got, ref):
    np.testing.assert_array_equal(got["count"], ref["count"])
    np.testing.assert_allclose(got["pos"], ref["pos"], atol=2e-5)
    np.testing.assert_allclose(got["quat"], ref["quat"], atol=2e-5)


# ------------------------------------------------------------------------------------------------
# gate frames
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("closed", [True, False])
def test_gate_props_equal_gate_data(closed):
    g = gates(seed=9, closed=closed)
    course = Course(g, [Props()])
    comp = course.components["props"]
    got = np_props(comp.result)
    assert comp.result.kind == comp.kind == "gate" and comp.capacity == g.layout.gates
    assert got["pos"].shape == (E, g.layout.gates, 3)
    r = g.result
    pos, yaw, nrm, cnt, valid = (a.numpy() for a in (r.pos, r.yaw, r.normal, r.count, r.valid))
    assert valid.sum() >= 4
    for e in range(E):
        n = int(cnt[e]) if valid[e] else 0
        assert got["count"][e] == n
        np.testing.assert_array_equal(got["pos"][e, :n], pos[e, :n])  # the gate centre, exactly
        np.testing.assert_allclose(got["quat"][e, :n], yaw_quat(yaw[e, :n]), atol=1e-6)
        # the frame's local x axis is the gate normal (the direction of passage), z stays up
        np.testing.assert_allclose(rotate_x(got["quat"][e, :n]), nrm[e, :n], atol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(got["quat"][e, :n], axis=1), 1.0, atol=1e-6)
        assert_parked(got, e, n)


# ------------------------------------------------------------------------------------------------
# cones
# ------------------------------------------------------------------------------------------------
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), spacing=st.floats(0.4, 5.0), elevated=st.booleans(),
       variation=st.sampled_from([0.0, 0.5]), offset=st.sampled_from([0.0, 0.15]))
def test_cones_match_numpy_reference(seed, spacing, elevated, variation, offset):
    g = track(seed=seed, elevated=elevated, half_width_variation=variation)
    course = Course(g, [Props(spacing, offset=offset)])
    comp = course.components["props"]
    assert comp.kind == "cone" and comp.capacity % 2 == 0
    got = np_props(comp.result)
    assert_cones(got, cone_ref(g, spacing, comp.capacity, offset))
    # the written definition, independently of the interpolation: pairs straddle the centreline
    # symmetrically at evenly spaced arc lengths, at the band edge (+ offset), heading along travel
    r = g.result
    xy, hw = r.xy.numpy().astype(np.float64), r.half_width.numpy().astype(np.float64)
    for e in np.flatnonzero(r.valid.numpy()):
        c = got["count"][e]
        n, L = c // 2, float(r.length.numpy()[e])
        assert c >= 2 and L / n <= spacing * (1 + 1e-5) or n == comp.capacity // 2
        left, right = got["pos"][e, 0:c:2].astype(np.float64), got["pos"][e, 1:c:2].astype(np.float64)
        mid = 0.5 * (left + right)
        s_ext = np.append(r.s.numpy()[e], L)
        sk = np.arange(n) * L / n
        at = np.stack([np.interp(sk, s_ext, np.append(xy[e, :, k], xy[e, 0, k])) for k in range(2)], 1)
        np.testing.assert_allclose(mid[:, :2], at, atol=1e-4)
        half = 0.5 * np.linalg.norm(left[:, :2] - right[:, :2], axis=1)
        hw_at = np.interp(sk, s_ext, np.append(hw[e], hw[e, 0]))
        np.testing.assert_allclose(half, hw_at + offset, atol=1e-4)
        np.testing.assert_array_equal(left[:, 2], right[:, 2])
        z_at = np.interp(sk, s_ext, np.append(r.z.numpy()[e], r.z.numpy()[e, 0]))
        np.testing.assert_allclose(left[:, 2], z_at, atol=1e-5)
        fwd = np.stack([np.interp((sk + 0.05) % L, s_ext, np.append(xy[e, :, k], xy[e, 0, k])) for k in range(2)], 1)
        d = fwd - at
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        heading = rotate_x(got["quat"][e, 0:c:2])
        assert (np.einsum("ij,ij->i", heading[:, :2], d) > 0.99).all()
        lat = left[:, :2] - right[:, :2]  # the left cone lies to the left of travel
        assert (d[:, 0] * lat[:, 1] - d[:, 1] * lat[:, 0] > 0).all()
        assert_parked(got, e, c)


def test_auto_capacity_from_max_loop_length_and_explicit_int():
    g = track()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        auto = Course(g, [Props(0.7)]).components["props"]
    assert auto.capacity == 2 * math.ceil(40.0 / 0.7) and auto.capacity_source == "max_loop_length"
    assert Course(track(), [Props(100.0)]).components["props"].capacity == 2  # at least one pair
    got = np_props(Course(track(), [Props(100.0)]).components["props"].result)
    assert (got["count"][track().result.valid.numpy() == 1] == 2).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)  # clipping under your own capacity is silent
        g6 = track()
        c6 = Course(g6, [Props(0.5, max_cones=6)])
    comp = c6.components["props"]
    assert comp.capacity == 6 and comp.capacity_source == "max_cones"
    got = np_props(comp.result)
    assert (got["count"][g6.result.valid.numpy() == 1] == 6).all()  # 3 per edge, spacing widens
    assert_cones(got, cone_ref(g6, 0.5, 6))


def test_auto_capacity_that_clips_warns_once():
    spec = dataclasses.replace(presets.track(E, "cpu"), max_loop_length=12.0)
    g = tg.TrackGenerator(spec, seeds=1)
    with pytest.warns(CapacityWarning, match=r"; pass a larger max_cones$") as rec:
        course = Course(g, [Props(1.0)])
    assert len([w for w in rec if issubclass(w.category, CapacityWarning)]) == 1
    comp = course.components["props"]
    assert comp.capacity == 24
    assert_cones(np_props(comp.result), cone_ref(g, 1.0, 24))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        course.regenerate(advance=True)  # once: later generations stay silent
        Course(tg.TrackGenerator(spec, seeds=1), [Props(1.0, max_cones=24)])  # your capacity never warns


@pytest.mark.parametrize("prepare", [True, False])
def test_elevated_capacity_reads_the_construction_batch_back(prepare):
    g = tg.TrackGenerator(presets.track(E, "cpu", elevated=True), seeds=5, prepare=prepare)
    assert g.layout.max_loop_length is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        course = Course(g, [Props(0.9)])
    comp = course.components["props"]
    L, valid = g.result.length.numpy(), g.result.valid.numpy() != 0
    assert valid.any()
    assert comp.capacity == 2 * int(ceil32(L[valid], 0.9).max()) and comp.capacity_source == "readback"
    got = np_props(comp.result)
    assert got["count"].max() == comp.capacity
    assert_cones(got, cone_ref(g, 0.9, comp.capacity))


# ------------------------------------------------------------------------------------------------
# masks, capture, invalid courses
# ------------------------------------------------------------------------------------------------
MAKERS = {
    "cones": (lambda: track(seed=2), lambda: [Props(0.8)]),
    "elevated": (lambda: track(seed=2, elevated=True), lambda: [Props(1.3, max_cones=40)]),
    "gates": (lambda: gates(seed=2), lambda: [Props()]),
}


def poison(comp, rows):
    for f in ("pos", "quat", "count"):
        arr = getattr(comp.result, f)
        a = arr.numpy()
        a[rows] = 7
        arr.assign(a)


@pytest.mark.parametrize("kind", list(MAKERS))
def test_masked_regeneration_equals_full_for_masked_envs_only(kind):
    make, comps = MAKERS[kind]
    masked, full = Course(make(), comps()), Course(make(), comps())
    m = np.zeros(E, np.int32)
    m[[0, 3, 4]] = 1
    poison(masked.components["props"], m == 0)  # a component that rewrote unmasked rows would lose this
    before = np_props(masked.components["props"].result)
    masked.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
    full.regenerate(advance=True)
    after, ref = np_props(masked.components["props"].result), np_props(full.components["props"].result)
    for k in before:
        assert after[k][m == 0].tobytes() == before[k][m == 0].tobytes(), k
        assert after[k][m == 1].tobytes() == ref[k][m == 1].tobytes(), k
    assert after["pos"][m == 1].tobytes() != before["pos"][m == 1].tobytes()


@pytest.mark.parametrize("kind", list(MAKERS))
def test_capture_replay_equals_eager(kind):
    make, comps = MAKERS[kind]
    eager, graph = Course(make(), comps()), Course(make(), comps())
    check_component(graph)
    m_e, m_g = wp.zeros(E, dtype=wp.int32), wp.zeros(E, dtype=wp.int32)
    with wp.ScopedCapture(device="cpu") as cap, strict():
        graph.regenerate(mask=m_g, advance=True)
    rng = np.random.default_rng(1)
    seen = set()
    for it in range(3):
        m = (rng.random(E) < 0.5).astype(np.int32)
        m[it] = 1
        m_e.assign(m)
        m_g.assign(m)
        eager.regenerate(mask=m_e, advance=True)
        wp.capture_launch(cap.graph)
        a, b = np_props(eager.components["props"].result), np_props(graph.components["props"].result)
        for k in a:
            assert a[k].tobytes() == b[k].tobytes(), (it, k)
        seen.add(b["pos"].tobytes())
    assert len(seen) == 3


@pytest.mark.parametrize("kind", ["cones", "gates"])
def test_invalid_courses_park_every_slot(kind):
    make, comps = MAKERS[kind]
    kill = np.zeros(E, np.int32)
    kill[[1, 5]] = 1
    inner = make()
    killer = Killer(inner, np.zeros(E, np.int32))
    course = Course(killer, comps())
    comp = course.components["props"]
    assert (np_props(comp.result)["count"][[1, 5]] > 0).all()
    killer.kill.assign(kill)  # the same courses, now invalid: the transforms written before must go
    course.regenerate()
    got = np_props(comp.result)
    for e in (1, 5):
        assert got["count"][e] == 0
        assert_parked(got, e, 0)
    ok = inner.result.valid.numpy() != 0
    assert ok.sum() >= 4 and (got["count"][ok] >= 2).all()
    assert np.isfinite(got["pos"]).all() and np.isfinite(got["quat"]).all()


def test_nonfinite_layout_stays_local():
    g = track(seed=8)
    course = Course(g, [Props(1.0)])
    comp = course.components["props"]
    before = np_props(comp.result)
    L = g.result.length.numpy()
    L[2], L[6] = np.nan, np.inf
    g.result.length.assign(L)
    xy = g.result.xy.numpy()
    xy[4, :] = np.nan  # every point of env 4: every cone of env 4 is parked, count kept
    g.result.xy.assign(xy)
    comp.on_generate(course._ctx, course._all)  # the component alone, on the poked layout
    got = np_props(comp.result)
    for e in (2, 6):
        assert got["count"][e] == 0
        assert_parked(got, e, 0)
    assert got["count"][4] == before["count"][4] > 0
    assert_parked(got, 4, 0)
    for e in (0, 1, 3, 5, 7):
        for k in got:
            assert got[k][e].tobytes() == before[k][e].tobytes(), (k, e)


def test_parking_before_the_first_generation_and_unused_gate_slots():
    course = Course(gates(gate_width=0.0), [Props()])  # no opening: no course is valid
    got = np_props(course.components["props"].result)
    assert (got["count"] == 0).all()
    for e in range(E):
        assert_parked(got, e, 0)
    c = Course(gates(min_gates=3, max_gates=12), [Props()])
    got = np_props(c.components["props"].result)
    assert (got["count"] < 12).any()
    for e in range(E):
        assert_parked(got, e, got["count"][e])


# ------------------------------------------------------------------------------------------------
# arguments
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(cone_spacing=0), ValueError, "cone_spacing: must be > 0"),
    (dict(cone_spacing=float("nan")), ValueError, "cone_spacing"),
    (dict(cone_spacing=True), TypeError, "cone_spacing"),
    (dict(cone_spacing="1"), TypeError, "cone_spacing"),
    (dict(max_cones=3), ValueError, "max_cones: must be an even int"),
    (dict(max_cones=0), ValueError, "max_cones"),
    (dict(max_cones=4.0), TypeError, "max_cones"),
    (dict(max_cones=True), TypeError, "max_cones"),
    (dict(max_cones="many"), ValueError, "max_cones"),
    (dict(offset=float("inf")), ValueError, "offset"),
    (dict(offset=None), TypeError, "offset"),
    (dict(offset=True), TypeError, "offset"),
    (dict(name=""), TypeError, "name"),
])
def test_argument_checks(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Props(**kwargs)


def test_name_and_repr():
    course = Course(gates(num_envs=2), [Props(name="scene")])
    comp = course.components["scene"]
    assert comp.utility is comp and repr(comp) == "Props(kind='gate', capacity=10, name='scene')"
