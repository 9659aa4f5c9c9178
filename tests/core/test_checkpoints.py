"""Checkpoints / GateCheckpoints / CheckpointSampler against plain numpy float64 references."""

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
from track_gen.capture import strict
from track_gen.course import Course
from track_gen.errors import CapacityWarning
from track_gen.pipeline import presets
from track_gen.tools.centerline import CenterlineFromGates
from track_gen.tools.checkpoints import DEFAULT_HALF_HEIGHT, Checkpoints, CheckpointSampler, GateCheckpoints
from track_gen.tools.types import CheckpointSet

from .doubles import Killer

E = 8
FIELDS = [f.name for f in dataclasses.fields(CheckpointSet)]


# -- helpers --------------------------------------------------------------------------------------


def track(num_envs=E, seed=1, **kw):
    return tg.TrackGenerator(presets.track(num_envs, "cpu", **kw), seeds=seed)


def gates(num_envs=E, seed=1, **kw):
    return tg.GateGenerator(presets.gates(num_envs, "cpu", gate_width=kw.pop("gate_width", 1.0), **kw), seeds=seed)


def np_set(cs: CheckpointSet) -> dict:
    return {f: getattr(cs, f).numpy() for f in FIELDS}


def poison(component, rows):
    """Overwrite ``rows`` of every result buffer with a pattern no kernel writes."""
    for f in dataclasses.fields(component.result):
        arr = getattr(component.result, f.name)
        a = arr.numpy()
        a[rows] = 7
        arr.assign(a)


def state(course) -> dict:
    out = {k: v.numpy().tobytes() for k, v in course.generator.outputs().items()} if hasattr(
        course.generator, "outputs") else {}
    for c in course.components.values():
        for f in dataclasses.fields(c.result):
            out[f"{c.name}.{f.name}"] = getattr(c.result, f.name).numpy().tobytes()
    return out


def ceil32(length, spacing):
    return np.ceil(np.float32(length) / np.float32(spacing))


def ref_track(g, spacing, C, half_height=DEFAULT_HALF_HEIGHT):
    """float64 reference of :class:`Checkpoints` from the generator's committed track."""
    r = g.result
    xy, z, hw, tan, s = (a.numpy().astype(np.float64) for a in (r.xy, r.z, r.half_width, r.tangent, r.s))
    L, valid = r.length.numpy(), r.valid.numpy()
    Eg, N = s.shape
    out = {"pos": np.zeros((Eg, C, 3)), "normal": np.zeros((Eg, C, 3)), "half_width": np.zeros((Eg, C)),
           "half_height": np.zeros((Eg, C)), "s": np.zeros((Eg, C)), "count": np.zeros(Eg, int),
           "length": np.zeros(Eg), "closed": np.ones(Eg, int)}
    for e in range(Eg):
        if not valid[e] or not np.isfinite(L[e]) or L[e] <= 0:
            continue
        n = int(np.clip(ceil32(L[e], spacing), 3, C))
        Le = float(L[e])
        # s_k rounded as float32, so that a checkpoint right at a centerline point picks the same
        # segment as the kernel (the z slope is constant per segment: it jumps at points)
        sk32 = np.arange(1, n + 1, dtype=np.float32) * np.float32(L[e]) / np.float32(n)
        sk = sk32.astype(np.float64)
        s_ext = np.append(s[e], Le)
        nxt = np.r_[np.arange(1, N), 0]
        i = np.clip(np.searchsorted(np.append(r.s.numpy()[e], L[e]), sk32, side="right") - 1, 0, N - 1)
        ds = s_ext[i + 1] - s_ext[i]
        f = (sk - s_ext[i]) / ds
        for c in range(2):
            out["pos"][e, :n, c] = np.interp(sk, s_ext, np.append(xy[e, :, c], xy[e, 0, c]))
        out["pos"][e, :n, 2] = np.interp(sk, s_ext, np.append(z[e], z[e, 0]))
        out["half_width"][e, :n] = np.interp(sk, s_ext, np.append(hw[e], hw[e, 0]))
        t = tan[e, i] * (1 - f)[:, None] + tan[e, nxt[i]] * f[:, None]
        t /= np.linalg.norm(t, axis=1, keepdims=True)
        nrm = np.c_[t, (z[e, nxt[i]] - z[e, i]) / ds]
        out["normal"][e, :n] = nrm / np.linalg.norm(nrm, axis=1, keepdims=True)
        out["half_height"][e, :n] = half_height
        out["s"][e, :n] = sk
        out["count"][e], out["length"][e] = n, Le
    return out


def assert_matches(got, ref, pos_tol=2e-4, normal_tol=2e-3):
    np.testing.assert_array_equal(got["count"], ref["count"])
    np.testing.assert_array_equal(got["closed"], ref["closed"])
    np.testing.assert_allclose(got["length"], ref["length"], rtol=1e-6)
    np.testing.assert_allclose(got["pos"], ref["pos"], atol=pos_tol)
    np.testing.assert_allclose(got["normal"], ref["normal"], atol=normal_tol)
    np.testing.assert_allclose(got["half_width"], ref["half_width"], atol=1e-5)
    np.testing.assert_allclose(got["half_height"], ref["half_height"], rtol=1e-6)
    np.testing.assert_allclose(got["s"], ref["s"], rtol=1e-5, atol=1e-4)


def point_polyline_dist(p, pts):
    """Distance from p to the closed polyline pts (float64)."""
    a, b = pts, np.roll(pts, -1, axis=0)
    d = b - a
    t = np.clip(np.einsum("ij,ij->i", p - a, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-300), 0, 1)
    return np.min(np.linalg.norm(a + d * t[:, None] - p, axis=1))


# -- band-track checkpoints ---------------------------------------------------------------------------
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), spacing=st.floats(0.3, 6.0), elevated=st.booleans(),
       variation=st.sampled_from([0.0, 0.5]))
def test_track_checkpoints_match_numpy_reference(seed, spacing, elevated, variation):
    g = track(seed=seed, elevated=elevated, half_width_variation=variation)
    course = Course(g, [Checkpoints(spacing)])
    comp = course.components["checkpoints"]
    got = np_set(course.checkpoints)
    assert got["pos"].shape == (E, comp.capacity, 3)
    assert_matches(got, ref_track(g, spacing, comp.capacity))
    # the written definition, independently: on the centerline, evenly spaced, along travel
    r = g.result
    xyz = np.concatenate([r.xy.numpy(), r.z.numpy()[..., None]], axis=2).astype(np.float64)
    for e in np.flatnonzero(r.valid.numpy()):
        n, L = got["count"][e], float(got["length"][e])
        assert 3 <= n <= comp.capacity and L / n <= spacing * (1 + 1e-5)
        if n < comp.capacity:
            assert L / max(n - 1, 1) > spacing * (1 - 1e-5)  # no more checkpoints than needed
        np.testing.assert_allclose(np.diff(got["s"][e, :n]), L / n, rtol=1e-4)
        for k in range(n):
            assert point_polyline_dist(got["pos"][e, k].astype(np.float64), xyz[e]) < 1e-4
        # along travel: the polyline's local direction around s_k (a centred difference of +-1 point)
        s_ext, pts = np.append(r.s.numpy()[e], L), np.vstack([xyz[e], xyz[e, :1]])

        def at(q, L=L, s_ext=s_ext, pts=pts):
            return np.stack([np.interp(q % L, s_ext, pts[:, c]) for c in range(3)], axis=1)

        h = L / xyz.shape[1]
        local = at(got["s"][e, :n] + h) - at(got["s"][e, :n] - h)
        local /= np.linalg.norm(local, axis=1, keepdims=True)
        assert (np.einsum("ij,ij->i", local, got["normal"][e, :n]) > 0.99).all()
        np.testing.assert_allclose(np.linalg.norm(got["normal"][e, :n], axis=1), 1.0, atol=1e-5)
        assert (got["pos"][e, n:] == 0).all() and (got["normal"][e, n:] == 0).all()
    # the last checkpoint lies on the start line (passing it completes a lap)
    n0 = got["count"][0]
    np.testing.assert_allclose(got["pos"][0, n0 - 1], g.result.start_pos.numpy()[0], atol=1e-4)


def test_elevated_normals_carry_the_slope():
    g = track(elevated=True, seed=3)
    course = Course(g, [Checkpoints(0.5, half_height=0.75)])
    got = np_set(course.checkpoints)
    assert np.abs(got["normal"][..., 2]).max() > 1e-3  # a flat normal would fail this
    assert (got["half_height"][got["count"][:, None] > np.arange(got["s"].shape[1])] == 0.75).all()
    assert_matches(got, ref_track(g, 0.5, course.components["checkpoints"].capacity, 0.75))


# -- capacity --------------------------------------------------------------------------------------
def test_auto_capacity_from_max_loop_length_and_explicit_int():
    g = track()
    assert g.layout.max_loop_length == 40.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        auto = Course(g, [Checkpoints(0.7)]).components["checkpoints"]
    assert auto.capacity == math.ceil(40.0 / 0.7) and auto.capacity_source == "max_loop_length"
    assert Course(track(), [Checkpoints(100.0)]).components["checkpoints"].capacity == 3  # at least 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)  # clipping under your own capacity is silent
        g5 = track()
        c5 = Course(g5, [Checkpoints(0.5, max_checkpoints=5)])
    got = np_set(c5.checkpoints)
    assert got["pos"].shape[1] == 5 and (got["count"] == 5).all()
    L = g5.result.length.numpy()
    np.testing.assert_allclose(got["s"], np.arange(1, 6)[None] * L[:, None] / 5, rtol=1e-5)  # spacing widens
    assert_matches(got, ref_track(g5, 0.5, 5))


def test_auto_capacity_that_clips_warns_once():
    spec = dataclasses.replace(presets.track(E, "cpu"), max_loop_length=12.0)
    g = tg.TrackGenerator(spec, seeds=1)
    with pytest.warns(CapacityWarning, match=r"; pass a larger max_checkpoints$") as rec:
        course = Course(g, [Checkpoints(1.0)])
    assert len([w for w in rec if issubclass(w.category, CapacityWarning)]) == 1
    comp = course.components["checkpoints"]
    assert comp.capacity == 12
    got = np_set(course.checkpoints)
    assert (got["count"] == 12).all()  # every course is longer than 12 m
    assert_matches(got, ref_track(g, 1.0, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        course.regenerate(advance=True)  # once: later generations stay silent
    # a capacity you chose never warns
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        Course(tg.TrackGenerator(spec, seeds=1), [Checkpoints(1.0, max_checkpoints=12)])


@pytest.mark.parametrize("prepare", [True, False])
def test_elevated_capacity_reads_the_construction_batch_back(prepare):
    g = tg.TrackGenerator(presets.track(E, "cpu", elevated=True), seeds=5, prepare=prepare)
    assert g.layout.max_loop_length is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        course = Course(g, [Checkpoints(0.9)])
    comp = course.components["checkpoints"]
    L, valid = g.result.length.numpy(), g.result.valid.numpy() != 0
    assert valid.any()
    assert comp.capacity == int(ceil32(L[valid], 0.9).max()) and comp.capacity_source == "readback"
    assert np_set(course.checkpoints)["count"].max() == comp.capacity
    assert_matches(np_set(course.checkpoints), ref_track(g, 0.9, comp.capacity))


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(spacing=0), ValueError, "spacing: must be > 0"),
    (dict(spacing=-1.0), ValueError, "spacing"),
    (dict(spacing=float("nan")), ValueError, "spacing"),
    (dict(spacing=float("inf")), ValueError, "spacing"),
    (dict(spacing=True), TypeError, "spacing"),
    (dict(spacing="1"), TypeError, "spacing"),
    (dict(spacing=1.0, max_checkpoints=2), ValueError, "max_checkpoints: must be >= 3"),
    (dict(spacing=1.0, max_checkpoints=4.0), TypeError, "max_checkpoints"),
    (dict(spacing=1.0, max_checkpoints=True), TypeError, "max_checkpoints"),
    (dict(spacing=1.0, max_checkpoints="big"), ValueError, "max_checkpoints"),
    (dict(spacing=1.0, half_height=0.0), ValueError, "half_height"),
])
def test_argument_checks(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Checkpoints(**kwargs)


def test_topology():
    with pytest.raises(TypeError, match="families"):
        Course(gates(), [Checkpoints(1.0)])
    with pytest.raises(TypeError, match="families"):
        Course(track(), [GateCheckpoints()])


# -- masks, capture, invalid courses --------------------------------------------------------------------
def masked_pair(make, comps):
    return Course(make(), comps()), Course(make(), comps())


@pytest.mark.parametrize("family", ["track", "gates", "gates-line-after"])
def test_masked_regeneration_equals_full_for_masked_envs_only(family):
    if family == "track":
        make, comps = (lambda: track(seed=2)), (lambda: [Checkpoints(0.8)])
    elif family == "gates":
        make, comps = (lambda: gates(seed=2)), (lambda: [CenterlineFromGates(6), GateCheckpoints()])
    else:
        make, comps = (lambda: gates(seed=2)), (lambda: [GateCheckpoints(), CenterlineFromGates(6)])
    masked, full = masked_pair(make, comps)
    m = np.zeros(E, np.int32)
    m[[0, 3, 4]] = 1
    poison(masked.components['checkpoints'], m == 0)  # a component that rewrote unmasked rows would lose this
    before = state(masked)
    masked.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
    full.regenerate(advance=True)
    after, ref = state(masked), state(full)
    changed = False
    for k in before:
        b, a, r = (np.frombuffer(x[k], np.uint8).reshape(E, -1) for x in (before, after, ref))
        assert (a[m == 0] == b[m == 0]).all(), k
        assert (a[m == 1] == r[m == 1]).all(), k
        changed |= k.startswith("checkpoints") and bool((a[m == 1] != b[m == 1]).any())
    assert changed  # the masked envs really got new checkpoints


@pytest.mark.parametrize("family", ["track", "gates", "gates-line-after"])
def test_capture_replay_equals_eager(family):
    """regenerate(mask) + sampler.sample recorded strictly into a CPU graph == eager, byte for byte."""
    if family == "track":
        make, comps = (lambda: track(seed=4)), (lambda: [Checkpoints(1.1)])
    elif family == "gates":
        make, comps = (lambda: gates(seed=4, closed=False)), (lambda: [GateCheckpoints()])
    else:
        make, comps = (lambda: gates(seed=4, closed=False)), (lambda: [GateCheckpoints(), CenterlineFromGates(4)])
    eager, graph = masked_pair(make, comps)
    outs = {id(c): (wp.zeros(E, dtype=wp.int32), wp.zeros(E, dtype=wp.vec3f), wp.zeros(E, dtype=wp.float32))
            for c in (eager, graph)}
    masks = {id(c): wp.zeros(E, dtype=wp.int32) for c in (eager, graph)}

    def body(c):
        c.regenerate(mask=masks[id(c)], advance=True)
        c.checkpoint_sampler.sample(masks[id(c)], *outs[id(c)], jitter=(0.1, 0.05, 0.2))

    with wp.ScopedCapture(device="cpu") as cap, strict():
        body(graph)
    rng = np.random.default_rng(0)
    for it in range(3):
        m = (rng.random(E) < 0.5).astype(np.int32)
        m[it] = 1
        for c in (eager, graph):
            masks[id(c)].assign(m)
        body(eager)
        wp.capture_launch(cap.graph)
        assert state(eager) == state(graph), it
        if family == "gates-line-after":
            assert_follows_line(graph)
        for a, b in zip(outs[id(eager)], outs[id(graph)], strict=True):
            assert a.numpy().tobytes() == b.numpy().tobytes(), it
        assert (eager.checkpoint_sampler.counter.numpy() == graph.checkpoint_sampler.counter.numpy()).all()


@pytest.mark.parametrize("family", ["track", "gates"])
def test_invalid_courses_have_no_checkpoints(family):
    kill = np.zeros(E, np.int32)
    kill[[1, 5]] = 1
    inner = track(seed=6) if family == "track" else gates(seed=6)
    comp = Checkpoints(0.6) if family == "track" else GateCheckpoints()
    killer = Killer(inner, np.zeros(E, np.int32))
    course = Course(killer, [comp])
    assert (np_set(course.checkpoints)["count"][[1, 5]] > 0).all()
    killer.kill.assign(kill)  # the same courses, now invalid: the rows written before must go
    course.regenerate()
    got = np_set(course.checkpoints)
    for e in (1, 5):
        assert got["count"][e] == 0 and got["length"][e] == 0
        for f in ("pos", "normal", "half_width", "half_height", "s"):
            assert (got[f][e] == 0).all(), f
    ok = inner.result.valid.numpy() != 0
    assert ok.sum() >= 4 and (got["count"][ok] >= (3 if family == "track" else 2)).all()
    for f in FIELDS:
        assert np.isfinite(got[f].astype(np.float64)).all(), f
    # the sampler: index -1 and the generator's start pose
    idx, pos, yaw = wp.full(E, 7, dtype=wp.int32), wp.zeros(E, dtype=wp.vec3f), wp.zeros(E, dtype=wp.float32)
    course.checkpoint_sampler.sample(wp.ones(E, dtype=wp.int32), idx, pos, yaw)
    i = idx.numpy()
    assert (i[[1, 5]] == -1).all() and (i[ok] >= 0).all()
    np.testing.assert_array_equal(pos.numpy()[[1, 5]], inner.result.start_pos.numpy()[[1, 5]])
    np.testing.assert_array_equal(yaw.numpy()[[1, 5]], inner.result.start_yaw.numpy()[[1, 5]])


def test_gate_course_without_valid_envs():
    course = Course(gates(gate_width=0.0), [GateCheckpoints()])  # no opening: no course is valid
    got = np_set(course.checkpoints)
    assert (course.generator.result.valid.numpy() == 0).all()
    assert (got["count"] == 0).all() and (got["length"] == 0).all() and (got["pos"] == 0).all()


def test_nonfinite_track_length_gives_no_checkpoints_and_stays_local():
    g = track(seed=8)
    course = Course(g, [Checkpoints(1.0)])
    comp = course.components["checkpoints"]
    before = np_set(course.checkpoints)
    L = g.result.length.numpy()
    L[2] = np.nan
    L[6] = np.inf
    g.result.length.assign(L)
    xy = g.result.xy.numpy()
    xy[4, 10] = np.nan
    g.result.xy.assign(xy)
    comp.on_generate(course._ctx, course._all)  # the component alone, on the poked layout
    got = np_set(course.checkpoints)
    for e in (2, 6):
        assert got["count"][e] == 0 and (got["pos"][e] == 0).all()
    for e in (0, 1, 3, 5, 7):
        for f in FIELDS:
            np.testing.assert_array_equal(got[f][e], before[f][e])
    assert got["count"][4] == before["count"][4]  # a NaN point harms its own env only


# -- gate checkpoints ---------------------------------------------------------------------------------
def cumulative(p, closed):
    d = np.linalg.norm(np.diff(p, axis=0), axis=1)
    s = np.r_[0.0, np.cumsum(d)]
    return s, s[-1] + (np.linalg.norm(p[0] - p[-1]) if closed else 0.0)


def line_comps(order, S=5):
    """GateCheckpoints alone, or with a CenterlineFromGates listed before / after it."""
    if order is None:
        return [GateCheckpoints()]
    if order == "before":
        return [CenterlineFromGates(S), GateCheckpoints()]
    return [GateCheckpoints(), CenterlineFromGates(S)]


def assert_follows_line(course):
    """The checkpoints' s / length are the CenterlineFromGates' gate_s / length, byte for byte."""
    cp, line = course.checkpoints, course.components["centerline"]
    assert cp.s.numpy().tobytes() == line.gate_s.numpy().tobytes()
    assert cp.length.numpy().tobytes() == line.line.length.numpy().tobytes()


@pytest.mark.parametrize("closed", [True, False])
@pytest.mark.parametrize("line", [None, "before", "after"])
def test_gate_checkpoints_equal_gate_data(closed, line):
    g = gates(seed=9, closed=closed, gate_height=0.6)
    course = Course(g, line_comps(line))
    # the course keeps the listed order: the line runs after the checkpoints in "after"
    assert list(course.components) == [c.name for c in line_comps(line)]
    assert course.components["checkpoints"]._line_mode == (0 if line is None else 1)
    got = np_set(course.checkpoints)
    r = g.result
    pos, nrm, cnt, valid = r.pos.numpy(), r.normal.numpy(), r.count.numpy(), r.valid.numpy()
    assert got["pos"].shape == (E, g.layout.gates, 3)
    assert (got["closed"] == int(closed)).all()
    if line is not None:
        assert_follows_line(course)
    for e in range(E):
        n = cnt[e] if valid[e] else 0
        assert got["count"][e] == n
        np.testing.assert_array_equal(got["pos"][e, :n], pos[e, :n])
        np.testing.assert_array_equal(got["normal"][e, :n], nrm[e, :n])
        np.testing.assert_allclose(got["half_width"][e, :n], 0.5 * r.width.numpy()[e])
        np.testing.assert_allclose(got["half_height"][e, :n], 0.3, rtol=1e-6)
        assert (got["pos"][e, n:] == 0).all() and (got["s"][e, n:] == 0).all()
        if n == 0:
            continue
        if line is None:
            s, L = cumulative(pos[e, :n].astype(np.float64), closed)
            np.testing.assert_allclose(got["s"][e, :n], s, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(got["length"][e], L, rtol=1e-5)
        else:  # longer than the chords through the gates (a sprint adds the run-up)
            s, L = cumulative(pos[e, :n].astype(np.float64), closed)
            assert got["length"][e] >= L * (1 - 1e-6)
        assert (np.diff(got["s"][e, :n]) > 0).all() and got["s"][e, n - 1] <= got["length"][e]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**20), closed=st.booleans(), S=st.integers(2, 9),
       order=st.sampled_from(["before", "after"]))
def test_gate_checkpoints_follow_the_line_bit_for_bit_in_either_order(seed, closed, S, order):
    """Full and masked regenerations, either order: s == gate_s and length == line length, as bytes."""
    course = Course(gates(seed=seed, closed=closed), line_comps(order, S))
    assert_follows_line(course)
    m = np.zeros(E, np.int32)
    m[[1, 4, 5]] = 1
    course.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
    assert_follows_line(course)
    course.regenerate(advance=True)
    assert_follows_line(course)


def test_gates_preset_lists_checkpoints_first_and_follows_the_line():
    course = Course.gates(presets.gates(E, "cpu", gate_width=1.0), samples_per_gate=6, seeds=13)
    names = list(course.components)
    assert names.index("checkpoints") < names.index("centerline")  # the order this rule must survive
    assert course.components["checkpoints"]._line_mode == 1
    assert course.checkpoints.count.numpy().max() > 0
    assert_follows_line(course)


def test_gate_checkpoints_loop_of_one_gate_uses_chords():
    """A loop of < 2 gates has no line (count 0): its checkpoint keeps s = 0 and length 0."""
    g = gates(seed=14)
    course = Course(g, line_comps("after"))
    cnt = g.result.count.numpy()
    cnt[2] = 1
    g.result.count.assign(cnt)
    for c in course.components.values():
        c.on_generate(course._ctx, course._all)
    got = np_set(course.checkpoints)
    assert course.components["centerline"].line.count.numpy()[2] == 0
    assert got["count"][2] == 1 and got["s"][2, 0] == 0 and got["length"][2] == 0
    assert_follows_line(course)


class ForeignLine(CenterlineFromGates):
    """A course line that publishes no gate arc lengths: GateCheckpoints projects the gates."""

    gate_s = None


@pytest.mark.parametrize("closed", [True, False])
def test_gate_checkpoints_project_onto_a_foreign_line(closed):
    own = Course(gates(seed=10, closed=closed), [CenterlineFromGates(7), GateCheckpoints()])
    foreign = Course(gates(seed=10, closed=closed), [ForeignLine(7), GateCheckpoints()])
    # a foreign line listed later, ordered first with after=: the same result
    later = Course(gates(seed=10, closed=closed), [GateCheckpoints(after=("centerline",)), ForeignLine(7)])
    assert list(later.components) == ["centerline", "checkpoints"]
    assert foreign.components["checkpoints"]._line_mode == 2 and own.components["checkpoints"]._line_mode == 1
    a, b = np_set(own.checkpoints), np_set(foreign.checkpoints)
    np.testing.assert_allclose(b["s"], a["s"], atol=1e-4)
    np.testing.assert_array_equal(b["length"], a["length"])
    for f, v in np_set(later.checkpoints).items():
        np.testing.assert_array_equal(v, b[f], err_msg=f)


def test_a_foreign_line_listed_later_is_refused():
    with pytest.raises(ValueError, match=r"must run first.*after=\('centerline',\)"):
        Course(gates(seed=10), [GateCheckpoints(), ForeignLine(7)])


class NotALine(CenterlineFromGates):
    def attach(self, ctx):
        super().attach(ctx)
        self.result = object()


def test_a_centerline_without_a_course_line_is_refused():
    with pytest.raises(TypeError, match="CourseLine"):
        Course(gates(), [NotALine(), GateCheckpoints()])


@pytest.mark.parametrize("cls, args", [(Checkpoints, (1.0,)), (GateCheckpoints, ())])
def test_name_argument(cls, args):
    gen = track if cls is Checkpoints else gates
    comp = cls(*args, name="cp")
    assert comp.name == "cp" and cls(*args).name == "checkpoints"
    course = Course(gen(), [comp])
    assert list(course.components) == ["cp"] and comp.result.count.numpy().max() > 0
    for bad in ("", 3, None):
        with pytest.raises(TypeError, match="name"):
            cls(*args, name=bad)
    with pytest.raises(TypeError):
        cls(*args, None, None, "cp") if cls is Checkpoints else cls("cp")  # keyword only
    with pytest.raises(TypeError, match="after"):
        GateCheckpoints(after=("",))
    assert GateCheckpoints(after="centerline").after == ("centerline",)


# -- the sampler --------------------------------------------------------------------------------------
def outputs(fill=0):
    return (wp.full(E, fill, dtype=wp.int32), wp.full(E, wp.vec3f(fill, fill, fill), dtype=wp.vec3f),
            wp.full(E, float(fill), dtype=wp.float32))


def test_sampler_is_the_utility_and_exported_type():
    course = Course(track(), [Checkpoints(1.0)])
    assert isinstance(course.checkpoint_sampler, CheckpointSampler)
    assert course.components["checkpoints"].sampler is course.checkpoint_sampler
    assert course.checkpoint_sampler.seeds is course.generator.seeds.seeds


@pytest.mark.parametrize("family", ["track", "gates"])
def test_sampler_draws_uniformly_and_writes_the_checkpoint_pose(family):
    course = Course(track(seed=11), [Checkpoints(2.0)]) if family == "track" else \
        Course(gates(seed=11), [GateCheckpoints()])
    cp = np_set(course.checkpoints)
    sampler = course.checkpoint_sampler
    ones = wp.ones(E, dtype=wp.int32)
    idx, pos, yaw = outputs()
    draws = 600
    hits = np.zeros((E, cp["pos"].shape[1]), int)
    for _ in range(draws):
        sampler.sample(ones, idx, pos, yaw)
        i = idx.numpy()
        hits[np.arange(E), i] += 1
        np.testing.assert_array_equal(pos.numpy(), cp["pos"][np.arange(E), i])
        nrm = cp["normal"][np.arange(E), i]
        np.testing.assert_allclose(yaw.numpy(), np.arctan2(nrm[:, 1], nrm[:, 0]), atol=1e-6)
    assert (sampler.counter.numpy() == draws).all()
    for e in range(E):
        n = cp["count"][e]
        assert n >= 2 and hits[e, n:].sum() == 0
        expected = draws / n
        chi2 = ((hits[e, :n] - expected) ** 2 / expected).sum()
        assert chi2 < (n - 1) + 6 * math.sqrt(2 * (n - 1)), (e, hits[e, :n])  # ~4 sigma of chi2(n-1)
        assert (hits[e, :n] > 0).all()


def test_sampler_masks_jitter_and_independence():
    course = Course(track(seed=12), [Checkpoints(1.5)])
    other = Course(track(seed=12), [Checkpoints(1.5)])
    cp = np_set(course.checkpoints)
    s, s2 = course.checkpoint_sampler, other.checkpoint_sampler
    m = np.zeros(E, np.int32)
    m[[1, 2, 6]] = 1
    idx, pos, yaw = outputs(-5)
    s.sample(wp.array(m.astype(bool), dtype=wp.bool), idx, pos, yaw, jitter=(0.2, 0.1, 0.3))  # a bool mask
    assert (idx.numpy()[m == 0] == -5).all() and (pos.numpy()[m == 0] == -5).all() and (yaw.numpy()[m == 0] == -5).all()
    assert (s.counter.numpy() == m).all()
    # jitter: bounded offsets, lateral in the checkpoint plane
    i = idx.numpy()[m == 1]
    base, nrm = cp["pos"][m == 1, i], cp["normal"][m == 1, i]
    off = pos.numpy()[m == 1] - base
    lat = np.c_[-nrm[:, 1], nrm[:, 0]] / np.linalg.norm(nrm[:, :2], axis=1, keepdims=True)
    np.testing.assert_allclose(off[:, :2], lat * (off[:, :2] * lat).sum(1, keepdims=True), atol=1e-5)
    assert (np.linalg.norm(off[:, :2], axis=1) <= 0.2 + 1e-5).all() and (np.abs(off[:, 2]) <= 0.1 + 1e-6).all()
    dyaw = (yaw.numpy()[m == 1] - np.arctan2(nrm[:, 1], nrm[:, 0]) + np.pi) % (2 * np.pi) - np.pi
    y = yaw.numpy()[m == 1]
    assert (np.abs(dyaw) <= 0.3 + 1e-5).all() and (np.abs(y) <= np.pi + 1e-6).all()
    # an env's draw depends on its own counter, not on the mask or the other envs
    idx2, pos2, yaw2 = outputs()
    s2.sample(wp.ones(E, dtype=wp.int32), idx2, pos2, yaw2, jitter=(0.2, 0.1, 0.3))
    np.testing.assert_array_equal(idx2.numpy()[m == 1], idx.numpy()[m == 1])
    np.testing.assert_array_equal(pos2.numpy()[m == 1], pos.numpy()[m == 1])
    # successive calls advance: not the same draw again
    seq = []
    for _ in range(6):
        s2.sample(wp.ones(E, dtype=wp.int32), None, pos2, yaw2)
        seq.append(pos2.numpy().copy())
    assert len({a.tobytes() for a in seq}) == 6


def test_sampler_argument_checks():
    s = Course(track(), [Checkpoints(1.0)]).checkpoint_sampler
    idx, pos, yaw = outputs()
    ones = wp.ones(E, dtype=wp.int32)
    with pytest.raises(ValueError, match="out_pos"):
        s.sample(ones, idx, wp.zeros(E, dtype=wp.vec2f), yaw)
    with pytest.raises(ValueError, match="out_yaw"):
        s.sample(ones, idx, pos, wp.zeros(E + 1, dtype=wp.float32))
    with pytest.raises(TypeError, match="out_index"):
        s.sample(ones, np.zeros(E, np.int32), pos, yaw)
    with pytest.raises(ValueError, match="jitter"):
        s.sample(ones, idx, pos, yaw, jitter=(-1.0, 0.0, 0.0))
    with pytest.raises(TypeError, match="jitter"):
        s.sample(ones, idx, pos, yaw, jitter=0.1)
    with pytest.raises(ValueError, match="mask"):
        s.sample(wp.ones(E + 1, dtype=wp.int32), idx, pos, yaw)
    assert (s.counter.numpy() == 0).all()  # a refused call draws nothing
