"""HeightFieldBake against float64 numpy brute force (every centreline segment, every gate)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen.capture import check_component, strict
from track_gen.course import Course
from track_gen.errors import ResolutionWarning
from track_gen.pipeline import presets
from track_gen.tools.heightfield import HeightField, HeightFieldBake

from .doubles import Killer as _Killer

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
E = 6
TOL = 1e-4


# ------------------------------------------------------------------------------------------------
# building blocks
# ------------------------------------------------------------------------------------------------
def track(E=E, seed=3, **kw):
    return tg.TrackGenerator(presets.track(E, "cpu", **kw), seeds=seed)


def gates(E=E, seed=3, **kw):
    return tg.GateGenerator(presets.gates(E, "cpu", gate_width=kw.pop("gate_width", 1.0), **kw), seeds=seed)


class Killer(_Killer):
    """:class:`~tests.core.doubles.Killer` that also exposes the inner generator's parameters."""

    def __init__(self, inner, kill):
        super().__init__(inner, kill)
        self.params, self.randomizers = inner.params, inner.randomizers


class Sizeless(Killer):
    """A generator without course-size parameters."""

    def __init__(self, inner):
        super().__init__(inner, np.zeros(inner.layout.num_envs, np.int32))
        self.params, self.randomizers = {}, {}


def nodes(hf: HeightField):
    """[R*R, 2] node positions, row-major (row i: y, column j: x), float64."""
    x = hf.origin + np.arange(hf.resolution) * hf.cell
    X, Y = np.meshgrid(x, x)
    return np.stack([X, Y], -1).reshape(-1, 2)


def grids(hf: HeightField):
    return hf.heights.numpy().copy(), hf.inside.numpy().copy()


def seg_point(p, a, b):
    d = b - a
    l2 = (d * d).sum(-1)
    t = np.where(l2 > 0, np.clip(((p - a) * d).sum(-1) / np.where(l2 > 0, l2, 1.0), 0.0, 1.0), 0.0)
    return np.linalg.norm(p - (a + t[..., None] * d), axis=-1), t


def check_track_env(course, hf, e, h, ins, outside, pick):
    """Every picked node agrees with one of its (near-)nearest centreline segments (float64)."""
    r = course.result
    xy, z, hw = (a.numpy()[e].astype(np.float64) for a in (r.xy, r.z, r.half_width))
    p = nodes(hf)[pick]
    a, b = xy, np.roll(xy, -1, 0)
    d, t = seg_point(p[:, None, :], a[None], b[None])  # [M, N]
    dmin = d.min(1, keepdims=True)
    cand = d <= dmin + TOL  # exact ties (and float32 near-ties) may pick either segment
    zc = z[None] + t * (np.roll(z, -1)[None] - z[None])
    hwc = hw[None] + t * (np.roll(hw, -1)[None] - hw[None])
    hk, ik = h.reshape(-1)[pick].astype(np.float64)[:, None], ins.reshape(-1)[pick][:, None]
    in_ok = (ik == (d <= hwc)) | (np.abs(d - hwc) < TOL)
    want = zc if outside == "nearest" else np.where(ik == 1, zc, outside)
    h_ok = np.abs(want - hk) < TOL
    good = (cand & in_ok & h_ok).any(1)
    assert good.all(), (e, np.flatnonzero(~good)[:5], p[~good][:3])
    return (ik[:, 0] == 1).sum()


def frame_rects(course, e):
    """Per gate: centre xy, unit lateral, unit normal, half extents (lateral, normal), top."""
    r = course.result
    n = int(r.count.numpy()[e]) if r.valid.numpy()[e] else 0
    c = r.pos.numpy()[e, :n].astype(np.float64)
    nrm = r.normal.numpy()[e, :n, :2].astype(np.float64)
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    lat = np.stack([-nrm[:, 1], nrm[:, 0]], 1)
    w, hh, t = (float(a.numpy()[e]) for a in (r.width, r.height, r.thickness))
    return c[:, :2], lat, nrm, 0.5 * w + t, 0.5 * t, c[:, 2] + 0.5 * hh + t


def gate_ref(course, hf, e):
    """The documented rule: the highest frame top whose footprint overlaps the node's cell square
    (separating axes in float64), else ground 0; plus each node's overlap margin (for ties)."""
    c, lat, nrm, a, b, top = frame_rects(course, e)
    p = nodes(hf)
    hc = 0.5 * hf.cell
    d = c[None] - p[:, None]  # [M, G, 2]
    sep = np.stack([
        np.abs(d[..., 0]) - (hc + a * np.abs(lat[:, 0]) + b * np.abs(nrm[:, 0])),
        np.abs(d[..., 1]) - (hc + a * np.abs(lat[:, 1]) + b * np.abs(nrm[:, 1])),
        np.abs((d * lat).sum(-1)) - (a + hc * np.abs(lat).sum(1)),
        np.abs((d * nrm).sum(-1)) - (b + hc * np.abs(nrm).sum(1)),
    ]).max(0)  # <= 0: overlap
    cover = sep <= 0
    h = np.where(cover, top[None], 0.0).max(1, initial=0.0)
    return h, cover.any(1), np.abs(sep).min(1, initial=np.inf)


# ------------------------------------------------------------------------------------------------
# tracks
# ------------------------------------------------------------------------------------------------
@SETTINGS
@given(seed=st.integers(0, 10_000), elevated=st.booleans(), variation=st.sampled_from([0.0, 0.5]),
       outside=st.sampled_from(["nearest", 0.0, -0.25]), res=st.integers(24, 48))
def test_track_bake_matches_brute_force(seed, elevated, variation, outside, res):
    g = track(E=3, seed=seed, elevated=elevated, half_width_variation=variation)
    course = Course(g, [HeightFieldBake(res, margin=0.3, outside=outside)])
    hf = course.heightfield.result
    assert course.heightfield is course.components["heightfield"]
    assert hf.heights.shape == (3, res, res) and hf.inside.dtype == wp.uint8
    assert hf.side == 10.0 and abs(hf.origin + 5.3) < 1e-12 and abs(hf.cell * (res - 1) - 10.6) < 1e-9
    h, ins = grids(hf)
    valid = g.result.valid.numpy()
    rng = np.random.default_rng(seed)
    on_band = 0
    for e in np.flatnonzero(valid):
        pick = rng.choice(res * res, min(res * res, 900), replace=False)
        on_band += check_track_env(course, hf, e, h[e], ins[e], outside, pick)
    assert on_band > 0
    if not elevated:  # a flat track is z = 0 on the band (and off it, nearest or your constant)
        assert (h[valid == 1][ins[valid == 1] == 1] == 0).all()
    assert np.isfinite(h).all() and set(np.unique(ins)) <= {0, 1}


def test_track_band_mask_is_the_band():
    """Independently of the bake's search: nodes well inside / outside the band's edge polygons."""
    g = track(E=2, seed=5, elevated=True)
    course = Course(g, [HeightFieldBake(96, outside=0.0)])
    hf = course.heightfield.result
    h, ins = grids(hf)
    r = g.result
    for e in np.flatnonzero(r.valid.numpy()):
        xy, hw, nrm = (a.numpy()[e].astype(np.float64) for a in (r.xy, r.half_width, r.normal))
        # points densely along the centreline are inside, well beyond the edges are outside
        k = np.arange(0, len(xy), 3)
        for lat, want in ((0.0, 1), (0.6, 1), (-0.6, 1), (1.6, 0), (-1.6, 0)):
            q = xy[k] + (lat * hw[k])[:, None] * nrm[k]
            j = np.rint((q - hf.origin) / hf.cell).astype(int)  # the nearest node
            near = np.linalg.norm(hf.origin + j * hf.cell - q, axis=1)
            sure = near < 0.3 * hw[k] * (1.0 - abs(abs(lat) - 1.0) / 2)  # node close to the sample
            assert (ins[e, j[sure, 1], j[sure, 0]] == want).all(), (e, lat)
        assert (h[e][ins[e] == 0] == 0.0).all() and (h[e][ins[e] == 1] > 0.0).all()  # elevated band, ground 0


def test_nearest_outside_is_continuous_and_constant_is_cheaper_but_same_on_band():
    g1, g2 = track(E=3, seed=8, elevated=True), track(E=3, seed=8, elevated=True)
    near = Course(g1, [HeightFieldBake(40)]).heightfield.result
    const = Course(g2, [HeightFieldBake(40, outside=7.5)]).heightfield.result
    hn, iN = grids(near)
    hc, ic = grids(const)
    assert (iN == ic).all()
    assert (hn[iN == 1] == hc[ic == 1]).all()
    v = g1.result.valid.numpy() == 1
    assert (hc[v][ic[v] == 0] == 7.5).all()
    z = g1.result.z.numpy()[v]
    assert hn[v].min() >= z.min() - 1e-6 and hn[v].max() <= z.max() + 1e-6  # nearest heights only


# ------------------------------------------------------------------------------------------------
# gates
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("closed", [True, False])
def test_gate_bake_matches_reference(closed):
    g = gates(seed=11, closed=closed, gate_height=0.7, frame_thickness=0.08)
    course = Course(g, [HeightFieldBake(64, margin=0.0)])
    hf = course.heightfield.result
    h, ins = grids(hf)
    valid = g.result.valid.numpy()
    assert valid.sum() >= 3
    for e in range(E):
        want_h, want_in, margin = gate_ref(course, hf, e)
        sure = margin > 1e-5
        assert (ins[e].reshape(-1)[sure] == want_in[sure]).all(), e
        np.testing.assert_allclose(h[e].reshape(-1)[sure], want_h[sure], atol=1e-5)
        if valid[e]:
            assert ins[e].sum() > 0 and h[e].max() > 1.0
        else:
            assert (h[e] == 0).all() and (ins[e] == 0).all()


def test_overlapping_frames_take_the_highest_top():
    g = gates(seed=13)
    course = Course(g, [HeightFieldBake(48)])
    e = int(np.flatnonzero(g.result.valid.numpy())[0])
    pos = g.result.pos.numpy()
    pos[e, 1] = pos[e, 0] + [0.05, 0.0, 0.5]  # gate 1 over gate 0, higher; gate 2 lower, visited last
    pos[e, 2] = pos[e, 0] + [0.0, 0.05, -0.3]
    g.result.pos.assign(pos)
    course.heightfield.on_generate(course._ctx, course._all)  # the component alone, on the poked layout
    h, ins = grids(course.heightfield.result)
    want_h, want_in, margin = gate_ref(course, course.heightfield.result, e)
    sure = margin > 1e-5
    np.testing.assert_allclose(h[e].reshape(-1)[sure], want_h[sure], atol=1e-5)
    assert (ins[e].reshape(-1)[sure] == want_in[sure]).all()
    top1 = pos[e, 1, 2] + 0.5 * g.result.height.numpy()[e] + g.result.thickness.numpy()[e]
    assert abs(h[e].max() - top1) < 1e-5


def test_gate_coverage_is_conservative():
    """Independent of the separating-axis test: every point of every frame footprint has its
    nearest node covered, at least as high as that frame's top; far nodes are ground."""
    g = gates(seed=12)
    course = Course(g, [HeightFieldBake(50)])
    hf = course.heightfield.result
    h, ins = grids(hf)
    u = np.linspace(-1, 1, 41)
    for e in np.flatnonzero(g.result.valid.numpy()):
        c, lat, nrm, a, b, top = frame_rects(course, e)
        for k in range(len(c)):
            pts = (c[k] + (u[:, None, None] * a * lat[k]) + (u[None, :, None] * b * nrm[k])).reshape(-1, 2)
            j = np.rint((pts - hf.origin) / hf.cell).astype(int)
            assert (ins[e, j[:, 1], j[:, 0]] == 1).all()
            assert (h[e, j[:, 1], j[:, 0]] >= top[k] - 1e-5).all()
        # a node farther than a cell diagonal plus the frame's half diagonal from every gate is ground
        p = nodes(hf)
        dist = np.linalg.norm(p[:, None] - c[None], axis=-1).min(1)
        far = dist > np.hypot(a, b) + hf.cell
        assert (ins[e].reshape(-1)[far] == 0).all() and (h[e].reshape(-1)[far] == 0).all()


# ------------------------------------------------------------------------------------------------
# lookups
# ------------------------------------------------------------------------------------------------
def bilinear_ref(hf, e, p):
    n, g = hf.resolution, hf.heights.numpy()[e].astype(np.float64)
    if not np.isfinite(p).all():
        return 0.0
    cf = np.clip((np.asarray(p, np.float64) - hf.origin) / hf.cell, 0, n - 1)
    i = np.minimum(np.floor(cf).astype(int), n - 2)
    tx, ty = cf - i
    return ((1 - ty) * ((1 - tx) * g[i[1], i[0]] + tx * g[i[1], i[0] + 1])
            + ty * ((1 - tx) * g[i[1] + 1, i[0]] + tx * g[i[1] + 1, i[0] + 1]))


@pytest.mark.parametrize("dtype", [wp.vec2f, wp.vec3f])
def test_sample_is_bilinear_clamped_and_nan_safe(dtype):
    g = track(E=8, seed=2, elevated=True)
    course = Course(g, [HeightFieldBake(33)])
    comp = course.heightfield
    hf = comp.result
    rng = np.random.default_rng(4)
    lim = -hf.origin
    pts = rng.uniform(-lim, lim, (8, 3))
    pts[0, :2] = [lim + 3.0, 0.2]  # outside: clamped to the border
    pts[1, :2] = [-lim - 1.0, -lim - 9.0]
    pts[2, 0] = np.nan
    pts[3, 1] = np.inf
    pts[4, :2] = [hf.origin + 5 * hf.cell, hf.origin + 7 * hf.cell]  # exactly a node
    points = wp.array(pts[:, :2] if dtype == wp.vec2f else pts, dtype=dtype, device="cpu")
    out = wp.full(8, 99.0, dtype=wp.float32, device="cpu")
    comp.sample(points, out)
    got = out.numpy()
    P = points.numpy().astype(np.float64)
    for e in range(8):
        assert abs(got[e] - bilinear_ref(hf, e, P[e, :2])) < 1e-5, e
    assert got[2] == 0.0 and got[3] == 0.0
    assert got[4] == hf.heights.numpy()[4, 7, 5]
    assert abs(got[0] - bilinear_ref(hf, 0, [lim, 0.2])) < 1e-6


def test_sample_arguments():
    course = Course(track(E=2), [HeightFieldBake(8)])
    comp = course.heightfield
    p2, out = wp.zeros(2, dtype=wp.vec2f), wp.zeros(2, dtype=wp.float32)
    with pytest.raises(ValueError, match="shape"):
        comp.sample(wp.zeros(3, dtype=wp.vec2f), out)
    with pytest.raises(TypeError, match="points"):
        comp.sample(wp.zeros(2, dtype=wp.float32), out)
    with pytest.raises(TypeError, match="out"):
        comp.sample(p2, wp.zeros(2, dtype=wp.float64))
    with pytest.raises(TypeError, match="wp.array"):
        comp.sample(np.zeros((2, 2)), out)
    with pytest.raises(RuntimeError, match="attached"):
        HeightFieldBake(8).sample(p2, out)


# ------------------------------------------------------------------------------------------------
# resolution warning
# ------------------------------------------------------------------------------------------------
def test_resolution_warning_once_and_only_when_uncovered():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResolutionWarning)
        Course(track(E=2), [HeightFieldBake(8)])  # covers the size: silent
        Course(gates(E=2), [HeightFieldBake(8, size_hi=12.0)])  # larger than needed: silent
        gr = tg.TrackGenerator(presets.track(2, "cpu", randomize={"centerline.size": (8.0, 14.0)}), seeds=1)
        course = Course(gr, [HeightFieldBake(8, margin=0.0)])
        assert course.heightfield.side == 14.0 and course.heightfield.cell == 14.0 / 7  # the randomizer's hi
    with pytest.warns(ResolutionWarning, match=r"size_hi=5\b.*centerline\.size=10\b.*Pass size_hi=10") as rec:
        Course(track(E=2), [HeightFieldBake(8, size_hi=5.0)])
    assert len([w for w in rec if issubclass(w.category, ResolutionWarning)]) == 1
    with pytest.warns(ResolutionWarning, match=r"size_hi=6\b.*gates\.size=10\b") as rec:
        Course(gates(E=2), [HeightFieldBake(8, size_hi=6.0)])
    assert len([w for w in rec if issubclass(w.category, ResolutionWarning)]) == 1
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        gr.randomizers["centerline.size"] = (8.0, 20.0)  # a curriculum grows the size later
        course.regenerate(advance=True)
        course.regenerate(advance=True)
        course.enqueue_generate()
    res = [w for w in rec if issubclass(w.category, ResolutionWarning)]
    assert len(res) == 1 and "size_hi=14" in str(res[0].message) and "=20" in str(res[0].message)


# ------------------------------------------------------------------------------------------------
# masks, capture, invalid courses
# ------------------------------------------------------------------------------------------------
MAKERS = {
    "flat": (lambda: track(seed=21), lambda: [HeightFieldBake(20, outside=0.0)]),
    "elevated": (lambda: track(seed=21, elevated=True), lambda: [HeightFieldBake(20)]),
    "gates": (lambda: gates(seed=21), lambda: [HeightFieldBake(20)]),
}


def state(course) -> dict:
    hf = course.heightfield.result
    return {"heights": hf.heights.numpy().copy(), "inside": hf.inside.numpy().copy()}


@pytest.mark.parametrize("kind", list(MAKERS))
def test_masked_regeneration_equals_full_for_masked_envs_only(kind):
    make, comps = MAKERS[kind]
    masked, full = Course(make(), comps()), Course(make(), comps())
    m = np.zeros(E, np.int32)
    m[[0, 3, 4]] = 1
    hf = masked.heightfield.result
    for arr in (hf.heights, hf.inside):  # mark the other rows: an ignored mask would rewrite them
        a = arr.numpy()
        a[m == 0] = 7
        arr.assign(a)
    before = state(masked)
    masked.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
    full.regenerate(advance=True)
    after, ref = state(masked), state(full)
    for k in before:
        assert after[k][m == 0].tobytes() == before[k][m == 0].tobytes(), k
        assert after[k][m == 1].tobytes() == ref[k][m == 1].tobytes(), k
    assert after["heights"][m == 1].tobytes() != before["heights"][m == 1].tobytes() or \
        after["inside"][m == 1].tobytes() != before["inside"][m == 1].tobytes()


@pytest.mark.parametrize("kind", list(MAKERS))
def test_capture_replay_equals_eager(kind):
    """regenerate(mask) + sample, recorded strictly into a CPU graph == eager, byte for byte."""
    make, comps = MAKERS[kind]
    eager, graph = Course(make(), comps()), Course(make(), comps())
    check_component(graph)  # every hook, recorded alone, strictly
    io = {id(c): (wp.zeros(E, dtype=wp.int32), wp.zeros(E, dtype=wp.vec3f), wp.zeros(E, dtype=wp.float32))
          for c in (eager, graph)}

    def body(c):
        mask, pts, out = io[id(c)]
        c.regenerate(mask=mask, advance=True)
        c.heightfield.sample(pts, out)

    with wp.ScopedCapture(device="cpu") as cap, strict():
        body(graph)
    rng = np.random.default_rng(2)
    seen = set()
    for it in range(3):
        m = (rng.random(E) < 0.5).astype(np.int32)
        m[it] = 1
        p = rng.uniform(-5, 5, (E, 3)).astype(np.float32)
        for c in (eager, graph):  # in place: the graph reads the new values
            io[id(c)][0].assign(m)
            io[id(c)][1].assign(p)
        body(eager)
        wp.capture_launch(cap.graph)
        se, sg = state(eager), state(graph)
        for k in se:
            assert se[k].tobytes() == sg[k].tobytes(), (it, k)
        out = io[id(graph)][2].numpy()
        assert out.tobytes() == io[id(eager)][2].numpy().tobytes()
        seen.add(out.tobytes() + sg["inside"].tobytes())  # flat tracks sample 0: the mask still moves
    assert len(seen) == 3


@pytest.mark.parametrize("kind", ["elevated", "gates"])
def test_invalid_courses_bake_zero(kind):
    make, comps = MAKERS[kind]
    inner = make()
    killer = Killer(inner, np.zeros(E, np.int32))
    course = Course(killer, comps())
    h0, i0 = state(course).values()
    assert (i0[[1, 5]].reshape(2, -1).sum(1) > 0).all()
    kill = np.zeros(E, np.int32)
    kill[[1, 5]] = 1
    killer.kill.assign(kill)  # the same courses, now invalid: the rows written before must go
    course.regenerate()
    h, ins = state(course).values()
    assert (h[[1, 5]] == 0).all() and (ins[[1, 5]] == 0).all()
    ok = kill == 0
    assert (h[ok] == h0[ok]).all() and (ins[ok] == i0[ok]).all()


def test_nonfinite_layout_stays_local_and_finite():
    g = track(seed=8, elevated=True)
    course = Course(g, [HeightFieldBake(24)])
    before = state(course)
    z = g.result.z.numpy()
    z[2, :] = np.nan  # every height of env 2
    g.result.z.assign(z)
    xy = g.result.xy.numpy()
    xy[4, 10] = np.nan  # one point of env 4
    g.result.xy.assign(xy)
    course.heightfield.on_generate(course._ctx, course._all)  # the component alone, on the poked layout
    after = state(course)
    for k in after:
        assert np.isfinite(after[k].astype(np.float64)).all(), k
        for e in (0, 1, 3, 5):
            assert after[k][e].tobytes() == before[k][e].tobytes(), (k, e)
    assert (after["heights"][2] == 0).all() and (after["inside"][2] == 0).all()
    assert after["inside"][4].sum() > 0  # the other segments of env 4 still bake


def test_gate_course_without_valid_envs():
    course = Course(gates(gate_width=0.0), [HeightFieldBake(16)])
    assert (course.generator.result.valid.numpy() == 0).all()
    h, ins = state(course).values()
    assert (h == 0).all() and (ins == 0).all()


# ------------------------------------------------------------------------------------------------
# arguments
# ------------------------------------------------------------------------------------------------
def test_arguments():
    for bad, exc in ((True, TypeError), (1.5, TypeError), (1, ValueError), (10**6, ValueError)):
        with pytest.raises(exc, match="resolution"):
            HeightFieldBake(bad)
    for bad, exc in ((0.0, ValueError), (-1, ValueError), (float("nan"), ValueError), (True, TypeError),
                     ("1", TypeError)):
        with pytest.raises(exc, match="size_hi"):
            HeightFieldBake(8, size_hi=bad)
    for bad, exc in ((-0.1, ValueError), (float("inf"), ValueError), (False, TypeError)):
        with pytest.raises(exc, match="margin"):
            HeightFieldBake(8, margin=bad)
    for bad, exc in (("ground", ValueError), (float("nan"), ValueError), (None, TypeError)):
        with pytest.raises(exc, match="outside"):
            HeightFieldBake(8, outside=bad)
    with pytest.raises(TypeError, match="name"):
        HeightFieldBake(8, name="")
    with pytest.raises(ValueError, match="size_hi="):  # a generator without a course size needs size_hi
        Course(Sizeless(track(E=2)), [HeightFieldBake(8)])
    assert Course(Sizeless(track(E=2)), [HeightFieldBake(8, size_hi=4.0)]).heightfield.side == 4.0
    course = Course(gates(E=2), [HeightFieldBake(8, name="terrain")])
    assert course.heightfield is None and "terrain" in course.components
    assert repr(course.components["terrain"]) == "HeightFieldBake(resolution=8, name='terrain')"
