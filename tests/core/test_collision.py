"""Collision components against float64 numpy references (same definitions, all obstacles) and
against independent brute force (sampled boundaries, crossing-number inside tests, 3D SAT)."""

from __future__ import annotations

import dataclasses
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
from track_gen.tools.collision import FAR, BandCollision, DiscCollision, FrameCollision
from track_gen.tools.types import Contacts

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
E = 12
TOL = 2e-4


# ------------------------------------------------------------------------------------------------
# building blocks
# ------------------------------------------------------------------------------------------------
def track_gen(E=E, seeds=7, **kw):
    return tg.TrackGenerator(presets.track(E, "cpu", **kw), seeds=seeds)


def gate_gen(E=E, seeds=7, **kw):
    return tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, **kw), seeds=seeds)


class Pose:
    """Bound pose arrays, rewritten in place."""

    def __init__(self, n):
        self.pos = wp.zeros(n, dtype=wp.vec3f, device="cpu")
        self.quat = wp.zeros(n, dtype=wp.quatf, device="cpu")
        self.he = wp.zeros(n, dtype=wp.vec2f, device="cpu")

    def set(self, pos, yaw, he, quat=None):
        self.pos.assign(np.asarray(pos, np.float32))
        if quat is None:
            yaw = np.asarray(yaw, np.float64)
            quat = np.stack([np.zeros_like(yaw), np.zeros_like(yaw), np.sin(yaw / 2), np.cos(yaw / 2)], -1)
        self.quat.assign(np.asarray(quat, np.float32))
        self.he.assign(np.asarray(he, np.float32))

    def bind(self, course):
        course.bind(position=self.pos, orientation=self.quat, half_extents=self.he)

    def arrays(self):
        return self.pos.numpy().astype(np.float64), self.quat.numpy().astype(np.float64), \
            self.he.numpy().astype(np.float64)


def contacts(course):
    r = course.step().contacts
    return {f.name: getattr(r, f.name).numpy().copy() for f in dataclasses.fields(r)}


def as_bytes(d):
    return {k: np.ascontiguousarray(v).tobytes() for k, v in d.items()}


def yaw_axes(q):
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    yaw = np.arctan2(2 * (w * z + x * y), w * w + x * x - y * y - z * z)
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack([c, s], -1), np.stack([-s, c], -1)


def seg_point(p, a, b):
    """Distance from p [..., 2] to segments a->b [..., 2] (broadcast) and the clamped parameter."""
    d = b - a
    l2 = (d * d).sum(-1)
    t = np.where(l2 > 0, np.clip(((p - a) * d).sum(-1) / np.where(l2 > 0, l2, 1.0), 0.0, 1.0), 0.0)
    q = a + t[..., None] * d
    q = np.where((t <= 0)[..., None], a, np.where((t >= 1)[..., None], b, q))
    return np.linalg.norm(p - q, axis=-1), t


def point_rect(p, hx, hy):
    dx = np.maximum(np.abs(p[..., 0]) - hx, 0)
    dy = np.maximum(np.abs(p[..., 1]) - hy, 0)
    return np.hypot(dx, dy)


# ------------------------------------------------------------------------------------------------
# band reference (float64, every segment)
# ------------------------------------------------------------------------------------------------
def band_edges(course, e):
    r = course.result
    xy, hw, n = (r.xy.numpy()[e].astype(np.float64), r.half_width.numpy()[e].astype(np.float64),
                 r.normal.numpy()[e].astype(np.float64))
    return xy + hw[:, None] * n, xy - hw[:, None] * n


def inward(a, b, side):
    """Unit normals of edge segments a->b pointing into the band (side 0: left edge, 1: right)."""
    d = b - a
    sgn = (1 - 2 * np.asarray(side))[..., None]
    n = sgn * np.stack([d[..., 1], -d[..., 0]], -1)
    ln = np.linalg.norm(n, axis=-1, keepdims=True)
    return np.where(ln > 0, n / np.where(ln > 0, ln, 1), n)


def band_sign(p, left, right, g, t):
    """+1 inside the band, from the nearest segment g (parameter t) of each point p [M, 2]."""
    N = len(left)
    pts = np.stack([left, right])
    side, i = np.divmod(g, N)
    j = (i + 1) % N
    a, b = pts[side, i], pts[side, j]
    s_mid = ((p - a) * inward(a, b, side)).sum(-1)
    vv = np.where(t <= 0, i, j)  # at a vertex: the sum of both segments' normals
    pv = pts[side, vv]
    n = inward(pts[side, (vv - 1) % N], pv, side) + inward(pv, pts[side, (vv + 1) % N], side)
    s = np.where((t > 0) & (t < 1), s_mid, ((p - pv) * n).sum(-1))
    return np.where(s > 0, 1.0, -1.0)


def segments(left, right):
    a = np.concatenate([left, right])
    b = np.concatenate([np.roll(left, -1, 0), np.roll(right, -1, 0)])
    return a, b


def band_sd(p, left, right):
    """Signed distance of points p [M, 2] to the edges (> 0 inside), nearest segment, all distances."""
    a, b = segments(left, right)
    d, t = seg_point(p[:, None, :], a[None], b[None])
    g = d.argmin(1)
    m = np.arange(len(p))
    return band_sign(p, left, right, g, t[m, g]) * d[m, g], g, d


def seg_hits_rect(a, b, hx, hy):
    d = b - a
    t0, t1 = np.zeros(len(a)), np.ones(len(a))
    miss = np.zeros(len(a), bool)
    for k, h in ((0, hx), (1, hy)):
        nz = np.abs(d[:, k]) > 0
        dk = np.where(nz, d[:, k], 1.0)
        u1, u2 = (-h - a[:, k]) / dk, (h - a[:, k]) / dk
        t0 = np.where(nz, np.maximum(t0, np.minimum(u1, u2)), t0)
        t1 = np.where(nz, np.minimum(t1, np.maximum(u1, u2)), t1)
        miss |= ~nz & (np.abs(a[:, k]) > h)
    return (t0 <= t1) & ~miss


def band_ref(left, right, c, u, v, ha, hb):
    """The documented segments-mode definition, over every segment. Returns (clearance, info)."""
    ha, hb = abs(ha), abs(hb)
    body = np.array([[0, 0], [ha, hb], [-ha, hb], [-ha, -hb], [ha, -hb]], float)
    world = c + body[:, :1] * u + body[:, 1:] * v
    sd, _, dpts = band_sd(world, left, right)
    a, b = segments(left, right)
    rot = np.stack([u, v])
    al, bl = (a - c) @ rot.T, (b - c) @ rot.T
    hits = seg_hits_rect(al, bl, ha, hb)
    dsep = np.where(hits, 0.0, np.minimum(dpts[1:].min(0), np.minimum(point_rect(al, ha, hb), point_rect(bl, ha, hb))))
    inside = (np.abs(al[:, 0]) < ha) & (np.abs(al[:, 1]) < hb)
    intr = np.where(inside, np.minimum(ha - np.abs(al[:, 0]), hb - np.abs(al[:, 1])), 0.0)
    info = dict(dsep=dsep, dpts=dpts, sd=sd, intr=intr)
    if dsep.min() > 0 and sd[0] > 0:
        return dsep.min(), info
    depth = max(0.0, (-sd).max(), intr.max())
    return -depth, info


def band_index_ok(idx, cl, info, N):
    """The kernel's index is a segment that produces the reported clearance."""
    if not 0 <= idx < 2 * N:
        return False
    if cl > TOL:
        return abs(info["dsep"][idx] - cl) < TOL
    depth = -cl
    if depth <= TOL:  # touching: a segment that meets the footprint
        return info["dsep"][idx] < TOL
    by_point = any(abs(info["dpts"][k, idx] - depth) < TOL and info["sd"][k] < 0 for k in range(5))
    return by_point or abs(info["intr"][idx] - depth) < TOL


def inside_band_crossing(p, left, right):
    """Independent inside test: inside exactly one of the two edge polygons (crossing number)."""
    def inside(poly):
        x, y = p[:, 0:1], p[:, 1:2]
        a, b = poly, np.roll(poly, -1, 0)
        cond = (a[:, 1] > y) != (b[:, 1] > y)
        xs = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / np.where(b[:, 1] != a[:, 1], b[:, 1] - a[:, 1], 1.0)
        return (cond & (x < xs)).sum(1) % 2 == 1
    return inside(left) ^ inside(right)


def band_poses(course, rng, n, far=0.15, env=None):
    """Random poses (one per env, or n for ``env``): near the band (laterally -1.4 .. 1.4 half
    widths), some anywhere in the square."""
    r = course.result
    xy, hw, nrm = r.xy.numpy(), r.half_width.numpy(), r.normal.numpy()
    N = xy.shape[1]
    i = rng.integers(0, N, n)
    rows = np.arange(n) if env is None else np.full(n, env)
    lat = rng.uniform(-1.4, 1.4, n) * hw[rows, i]
    p = xy[rows, i] + lat[:, None] * nrm[rows, i]
    anywhere = rng.random(n) < far
    p[anywhere] = rng.uniform(-5.5, 5.5, (anywhere.sum(), 2))
    pos = np.c_[p, rng.uniform(-1, 1, n)]
    yaw = rng.uniform(-np.pi, np.pi, n)
    he = np.c_[rng.uniform(0.0, 0.45, n), rng.uniform(0.0, 0.3, n)]
    he[rng.random(n) < 0.1] *= -1  # the absolute value is used
    return pos, yaw, he


@pytest.fixture(scope="module")
def band_course():
    comps = [BandCollision("segments"), BandCollision("sdf", resolution=100, name="sdf")]
    course = Course(track_gen(), comps)
    pose = Pose(E)
    pose.bind(course)
    return course, pose


# ------------------------------------------------------------------------------------------------
# band, segments mode
# ------------------------------------------------------------------------------------------------
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), gen_seed=st.integers(0, 1000))
def test_band_segments_match_reference(band_course, seed, gen_seed):
    course, pose = band_course
    course.generate(seeds=gen_seed)
    rng = np.random.default_rng(seed)
    pos, yaw, he = band_poses(course, rng, E)
    quat = None
    if seed % 2:  # a random full rotation: only its yaw counts (roll/pitch ignored), any scale
        quat = rng.normal(size=(E, 4)) * rng.uniform(0.5, 2.0, (E, 1))
    pose.set(pos, yaw, he, quat)
    got = contacts(course)
    P, Q, H = pose.arrays()
    U, V = yaw_axes(Q)
    nrm = course.result.normal.numpy()
    valid = course.result.valid.numpy()
    N = course.result.xy.shape[1]
    for e in range(E):
        if not valid[e]:
            continue
        left, right = band_edges(course, e)
        cl, info = band_ref(left, right, P[e, :2], U[e], V[e], H[e, 0], H[e, 1])
        assert abs(got["clearance"][e] - cl) < TOL, (e, got["clearance"][e], cl)
        if abs(cl) > TOL:
            assert got["hit"][e] == int(cl <= 0)
        assert got["depth"][e] == max(0.0, -got["clearance"][e])
        idx = got["index"][e]
        assert band_index_ok(idx, got["clearance"][e], info, N), (e, idx, cl)
        side, i = divmod(idx, N)
        want = nrm[e, i] * (1 if side else -1)
        np.testing.assert_array_equal(got["normal"][e], np.r_[want, 0.0].astype(np.float32))


def qmul(a, b):
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz], -1)


@pytest.mark.parametrize("which", ["collision", "sdf", "posts", "frame"])
def test_roll_and_pitch_are_ignored(band_course, gate_course, which):
    course, pose = band_course if which in ("collision", "sdf") else gate_course
    name = {"posts": "collision"}.get(which, which)
    rng = np.random.default_rng(12)
    pos, yaw, he = random_pose(course, rng, E)
    pose.set(pos, yaw, he)
    flat = {k: v.copy() for k, v in vars_of(course.step()[name]).items()}
    half = lambda a, axis: np.c_[np.sin(a / 2)[:, None] * axis, np.cos(a / 2)]  # noqa: E731
    qy = half(yaw, np.eye(3)[2])
    tilted = qmul(qmul(qy, half(rng.uniform(-1.2, 1.2, E), np.eye(3)[1])), half(rng.uniform(-3, 3, E), np.eye(3)[0]))
    pose.set(pos, yaw, he, tilted * rng.uniform(0.5, 2.0, (E, 1)))  # yaw-pitch-roll, any scale
    got = vars_of(course.step()[name])
    np.testing.assert_allclose(got["clearance"], flat["clearance"], atol=1e-4)
    assert (got["index"] == flat["index"]).mean() > 0.9


def vars_of(r):
    return {f.name: getattr(r, f.name).numpy() for f in dataclasses.fields(r)}


def test_band_definition_against_brute_force(band_course):
    """The reference itself: its inside sign agrees with crossing numbers, and a clear footprint's
    clearance is the minimum over its densely sampled boundary of the exact edge distance."""
    course, _ = band_course
    course.generate(seeds=11)
    rng = np.random.default_rng(0)
    n_clear = n_hit = 0
    for e in np.flatnonzero(course.result.valid.numpy())[:3]:
        left, right = band_edges(course, e)
        p = rng.uniform(-5.5, 5.5, (400, 2))
        sd, _, _ = band_sd(p, left, right)
        far = np.abs(sd) > 1e-3
        assert far.sum() > 350 and ((sd > 0) == inside_band_crossing(p, left, right))[far].all()
        pos, yaw, he = band_poses(course, rng, 30, far=0.0, env=e)
        a, b = segments(left, right)
        for k in range(30):
            u, v = yaw_axes(np.array([0, 0, np.sin(yaw[k] / 2), np.cos(yaw[k] / 2)]))
            ha, hb = abs(he[k, 0]), abs(he[k, 1])
            cl, _ = band_ref(left, right, pos[k, :2], u, v, ha, hb)
            s = np.linspace(-1, 1, 101)
            loop = np.concatenate([np.c_[s * ha, 0 * s + hb], np.c_[s * ha, 0 * s - hb],
                                   np.c_[0 * s + ha, s * hb], np.c_[0 * s - ha, s * hb]])
            world = pos[k, :2] + loop[:, :1] * u + loop[:, 1:] * v
            d, _ = seg_point(world[:, None], a[None], b[None])
            inside = inside_band_crossing(world, left, right)
            if cl > 0:
                n_clear += 1
                assert inside.all()
                assert 0 <= d.min() - cl <= 0.02 * max(ha, hb) + 1e-9
            else:
                # penetrating: the boundary leaves the band or an edge vertex lies inside the footprint
                rot = np.stack([u, v])
                al = (a - pos[k, :2]) @ rot.T
                in_fp = (np.abs(al[:, 0]) < ha) & (np.abs(al[:, 1]) < hb)
                assert (not inside.all()) or in_fp.any() or d.min() < 1e-3
                # the depth re-derived with crossing numbers for the signs: how far the centre or a
                # corner lies outside the band, or an edge vertex inside the footprint
                pts = pos[k, :2] + np.array([[0, 0], [ha, hb], [-ha, hb], [-ha, -hb], [ha, -hb]]) @ rot
                dp, _ = seg_point(pts[:, None], a[None], b[None])
                dp = dp.min(1)
                out = ~inside_band_crossing(pts, left, right)
                intr = np.minimum(ha - np.abs(al[:, 0]), hb - np.abs(al[:, 1]))[in_fp]
                depth = max([0.0, *dp[out], *intr])
                if dp.min() > 1e-6:
                    n_hit += 1
                    assert abs(-cl - depth) < 1e-9
    assert n_clear > 10 and n_hit > 10


def test_band_far_from_course_and_point_footprint(band_course):
    course, pose = band_course
    course.generate(seeds=5)
    rng = np.random.default_rng(3)
    pos = np.c_[rng.uniform(-40, 40, (E, 2)), np.zeros(E)]
    pose.set(pos, rng.uniform(-3, 3, E), np.zeros((E, 2)))
    got = contacts(course)
    P, Q, _ = pose.arrays()
    U, V = yaw_axes(Q)
    for e in np.flatnonzero(course.result.valid.numpy()):
        left, right = band_edges(course, e)
        cl, _ = band_ref(left, right, P[e, :2], U[e], V[e], 0.0, 0.0)
        sd, _, _ = band_sd(P[e:e + 1, :2], left, right)
        assert abs(cl - sd[0]) < 1e-9  # a point footprint: the signed distance of the point
        assert abs(got["clearance"][e] - cl) < 1e-3 * max(1.0, abs(cl))


# ------------------------------------------------------------------------------------------------
# band, sdf mode
# ------------------------------------------------------------------------------------------------
def grid_nodes(comp):
    n = comp.grid.shape[1]
    x = comp.origin + np.arange(n) * comp.cell
    X, Y = np.meshgrid(x, x)  # rows: y, columns: x
    return np.stack([X, Y], -1).reshape(-1, 2)


def test_sdf_bake_is_the_signed_distance_at_the_nodes(band_course):
    course, _ = band_course
    course.generate(seeds=3)
    comp = course.components["sdf"]
    n = comp.grid.shape[1]
    assert n == 100 + 1 + 4 and abs(comp.cell * 100 - 10.0) < 1e-9  # size 10 m, 2-cell margin
    grid, gidx = comp.grid.numpy(), comp.grid_index.numpy()
    nodes = grid_nodes(comp)
    valid = course.result.valid.numpy()
    rng = np.random.default_rng(0)
    for e in range(3):
        if not valid[e]:
            continue
        pick = rng.choice(len(nodes), 2500, replace=False)  # a random third of the nodes
        left, right = band_edges(course, e)
        sd, _, d = band_sd(nodes[pick], left, right)
        np.testing.assert_allclose(grid[e].reshape(-1)[pick], sd, atol=TOL)
        k = gidx[e].reshape(-1)[pick].astype(int)
        assert np.abs(d[np.arange(len(k)), k] - np.abs(sd)).max() < TOL


def test_sdf_lookup_is_bilinear_and_extrapolates_outside(band_course):
    """A point footprint reads the bilinear interpolation of the grid; outside the grid, the value
    at the clamped point minus the distance to it."""
    course, pose = band_course
    course.generate(seeds=4)
    comp = course.components["sdf"]
    rng = np.random.default_rng(8)
    lim = -comp.origin
    pos = np.c_[rng.uniform(-lim, lim, (E, 2)), np.zeros(E)]
    pos[:3, :2] = [[lim + 0.7, 0.3], [-lim - 0.2, -lim - 0.5], [0.1, lim + 2.0]]  # outside the grid
    pose.set(pos, rng.uniform(-3, 3, E), np.zeros((E, 2)))
    got = course.step()["sdf"].clearance.numpy()
    grid, n = comp.grid.numpy().astype(np.float64), comp.grid.shape[1]
    P = pose.arrays()[0]
    for e in np.flatnonzero(course.result.valid.numpy()):
        f = (P[e, :2] - comp.origin) / comp.cell
        cf = np.clip(f, 0, n - 1)
        i = np.minimum(np.floor(cf).astype(int), n - 2)
        tx, ty = cf - i
        g = grid[e]
        val = ((1 - ty) * ((1 - tx) * g[i[1], i[0]] + tx * g[i[1], i[0] + 1])
               + ty * ((1 - tx) * g[i[1] + 1, i[0]] + tx * g[i[1] + 1, i[0] + 1]))
        val -= np.linalg.norm(cf - f) * comp.cell
        assert abs(got[e] - val) < 1e-5, (e, got[e], val)


def footprint_min_sd(left, right, c, u, v, ha, hb, k=101):
    """Brute force: the minimum exact signed distance over the footprint's sampled boundary and centre."""
    s = np.linspace(-1, 1, k)
    loop = np.concatenate([np.c_[s * ha, 0 * s + hb], np.c_[s * ha, 0 * s - hb], np.c_[0 * s + ha, s * hb],
                           np.c_[0 * s - ha, s * hb], [[0.0, 0.0]]])
    sd, _, _ = band_sd(c + loop[:, :1] * u + loop[:, 1:] * v, left, right)
    return sd.min()


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), gen_seed=st.integers(0, 1000))
def test_sdf_within_a_cell_of_brute_force_and_segments(band_course, seed, gen_seed):
    course, pose = band_course
    course.generate(seeds=gen_seed)
    pos, yaw, he = band_poses(course, np.random.default_rng(seed), E, far=0.0)
    pose.set(pos, yaw, he)
    res = course.step()
    seg = res.contacts.clearance.numpy()
    sdf_r = res["sdf"]
    sdf = sdf_r.clearance.numpy()
    cell = course.components["sdf"].cell
    ok = course.result.valid.numpy() == 1
    P, Q, H = pose.arrays()
    U, V = yaw_axes(Q)
    for e in np.flatnonzero(ok):
        left, right = band_edges(course, e)
        want = footprint_min_sd(left, right, P[e, :2], U[e], V[e], abs(H[e, 0]), abs(H[e, 1]))
        assert abs(sdf[e] - want) <= 0.75 * cell, (e, sdf[e], want, cell)
    # against the exact mode: within a cell when clear; when penetrating, the grid also sees side
    # points that reach deeper than any corner, so it may only be deeper
    clear = ok & (seg > 0)
    assert np.abs(sdf - seg)[clear].max(initial=0) <= 0.75 * cell
    assert (sdf - seg)[ok & ~clear].max(initial=0) <= 0.75 * cell
    assert (sdf_r.depth.numpy() == np.maximum(0, -sdf)).all()
    assert (sdf_r.hit.numpy() == (sdf <= 0)).all()
    nz = np.linalg.norm(sdf_r.normal.numpy(), axis=1)
    assert np.allclose(nz[ok], 1.0, atol=1e-5)
    N = course.result.xy.shape[1]
    assert ((sdf_r.index.numpy()[ok] >= 0) & (sdf_r.index.numpy()[ok] < 2 * N)).all()


def test_sdf_masked_regeneration_touches_masked_envs_only():
    comps = lambda: [BandCollision("sdf", resolution=24)]  # noqa: E731
    a = Course(track_gen(E=8, seeds=5), comps())
    b = Course(track_gen(E=8, seeds=5), comps())
    ca, cb = a.components["collision"], b.components["collision"]
    names = ("left", "right", "boxes", "grid", "grid_index")
    m = np.array([1, 0, 0, 1, 0, 0, 0, 1], np.int32)
    for k in names:  # mark the rows of other envs: a masked regeneration must not even rewrite them
        arr = getattr(ca, k).numpy()
        arr[m == 0] += 3
        getattr(ca, k).assign(arr)
    before = {k: getattr(ca, k).numpy().copy() for k in names}
    a.regenerate(mask=wp.array(m, dtype=wp.int32, device="cpu"), advance=True)
    b.enqueue_generate(advance=True)  # every env to its next generation
    for k in names:
        now, full = getattr(ca, k).numpy(), getattr(cb, k).numpy()
        assert now[m == 0].tobytes() == before[k][m == 0].tobytes(), k
        assert now[m == 1].tobytes() == full[m == 1].tobytes(), k
        assert now[m == 1].tobytes() != before[k][m == 1].tobytes(), k


def test_resolution_warning_once_and_only_when_uncovered():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResolutionWarning)
        Course(track_gen(E=2), [BandCollision("sdf", resolution=8)])  # covers the size: silent
        Course(track_gen(E=2), [BandCollision("segments", size_hi=1.0)])  # no grid: silent
        g = tg.TrackGenerator(presets.track(2, "cpu", randomize={"centerline.size": (8.0, 14.0)}), seeds=1)
        course = Course(g, [BandCollision("sdf", resolution=8)])
        assert course.collision.side == 14.0  # the randomizer's hi
    with pytest.warns(ResolutionWarning, match=r"size_hi=5\b.*centerline.size=10") as rec:
        Course(track_gen(E=2), [BandCollision("sdf", resolution=8, size_hi=5.0)])
    assert len(rec) == 1
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        g.randomizers["centerline.size"] = (8.0, 20.0)  # a curriculum grows the size later
        course.regenerate(advance=True)
        course.regenerate(advance=True)
        course.enqueue_generate()
    res = [w for w in rec if issubclass(w.category, ResolutionWarning)]
    assert len(res) == 1 and "size_hi=14" in str(res[0].message) and "20" in str(res[0].message)


# ------------------------------------------------------------------------------------------------
# gates: discs
# ------------------------------------------------------------------------------------------------
def lateral(n):
    lat = np.stack([-n[..., 1], n[..., 0]], -1)
    return lat / np.linalg.norm(lat, axis=-1, keepdims=True)


def sd_rect(p, hx, hy):
    q = np.abs(p) - [hx, hy]
    return np.linalg.norm(np.maximum(q, 0), axis=-1) + np.minimum(q.max(-1), 0)


def disc_ref(course, e, c, u, v, ha, hb, radius):
    r = course.result
    G = min(int(r.count.numpy()[e]), r.pos.shape[1])
    gp = r.pos.numpy()[e, :G, :2].astype(np.float64)
    lat = lateral(r.normal.numpy()[e, :G].astype(np.float64))
    off = 0.5 * r.width.numpy()[e] + 0.5 * r.thickness.numpy()[e]
    posts = np.stack([gp + off * lat, gp - off * lat], 1).reshape(-1, 2)  # index 2g: +lateral
    pl = (posts - c) @ np.stack([u, v]).T
    return sd_rect(pl, abs(ha), abs(hb)) - radius, posts


def gate_poses(course, rng, n, spread=0.9):
    r = course.result
    count = r.count.numpy()
    g = (rng.random(n) * count).astype(int)
    gp = r.pos.numpy()[np.arange(n), g].astype(np.float64)
    lat = lateral(r.normal.numpy()[np.arange(n), g])
    w = r.width.numpy()
    pos = gp.copy()
    pos[:, :2] += lat * (rng.uniform(-spread, spread, n) * w)[:, None] + rng.normal(0, 0.15, (n, 2))
    pos[:, 2] += rng.uniform(-0.8, 0.8, n) * r.height.numpy()
    yaw = rng.uniform(-np.pi, np.pi, n)
    he = np.c_[rng.uniform(0.0, 0.4, n), rng.uniform(0.0, 0.3, n)]
    return pos, yaw, he


@pytest.fixture(scope="module")
def gate_course():
    course = Course(gate_gen(), [DiscCollision(0.06), FrameCollision(0.08, name="frame")])
    pose = Pose(E)
    pose.bind(course)
    return course, pose


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), gen_seed=st.integers(0, 1000))
def test_disc_match_reference(gate_course, seed, gen_seed):
    course, pose = gate_course
    course.generate(seeds=gen_seed)
    pose.set(*gate_poses(course, np.random.default_rng(seed), E))
    got = contacts(course)
    P, Q, H = pose.arrays()
    U, V = yaw_axes(Q)
    for e in np.flatnonzero(course.result.valid.numpy()):
        sd, _ = disc_ref(course, e, P[e, :2], U[e], V[e], H[e, 0], H[e, 1], 0.06)
        k = got["index"][e]
        assert abs(got["clearance"][e] - sd.min()) < TOL and abs(sd[k] - sd.min()) < TOL
        assert got["hit"][e] == (got["clearance"][e] <= 0)
        # the normal moves the footprint away: a small step along it increases this post's distance
        n = got["normal"][e].astype(np.float64)
        assert abs(np.linalg.norm(n) - 1) < 1e-5 and n[2] == 0
        eps = 1e-3
        moved, _ = disc_ref(course, e, P[e, :2] + eps * n[:2], U[e], V[e], H[e, 0], H[e, 1], 0.06)
        assert moved[k] - sd[k] > 0.9 * eps


def test_disc_definition_against_sampled_boundary():
    rng = np.random.default_rng(1)
    for _ in range(200):
        ha, hb = rng.uniform(0.01, 0.5, 2)
        p = rng.uniform(-0.8, 0.8, 2)
        s = np.linspace(-1, 1, 2001)
        loop = np.concatenate([np.c_[s * ha, 0 * s + hb], np.c_[s * ha, 0 * s - hb], np.c_[0 * s + ha, s * hb],
                               np.c_[0 * s - ha, s * hb]])
        d = np.linalg.norm(loop - p, axis=1).min()
        inside = abs(p[0]) < ha and abs(p[1]) < hb
        assert abs(sd_rect(p, ha, hb) - (-d if inside else d)) < 1e-3


def test_disc_posts_buffer_and_pruning_against_brute_force():
    """The stored post centres match the float64 reference (zero beyond count); with big boxes
    sat on or between posts (many posts inside the pruning bound) the nearest post, its index and
    clearance still match the brute force over every post."""
    course = Course(gate_gen(seeds=3), [DiscCollision(0.06)])
    pose = Pose(E)
    pose.bind(course)
    rng = np.random.default_rng(21)
    comp = course.components["collision"]
    for gen in range(3):
        course.generate(seeds=gen + 3)
        posts = comp.posts.numpy()
        count = course.result.count.numpy()
        valid = course.result.valid.numpy()
        for e in range(E):
            n = 2 * min(int(count[e]), course.result.pos.shape[1]) if valid[e] else 0
            _, ref = disc_ref(course, e, np.zeros(2), np.r_[1.0, 0], np.r_[0, 1.0], 0, 0, 0.06)
            np.testing.assert_allclose(posts[e, :n], ref[:n], atol=1e-5)
            assert not posts[e, n:].any()
        for trial in range(4):
            k = (rng.random(E) * 2 * np.maximum(count, 1)).astype(int)
            pc = np.array([posts[e, k[e]] for e in range(E)], np.float64)
            pos = np.c_[pc + rng.normal(0, 0.3 * trial, (E, 2)), rng.uniform(-1, 1, E)]
            he = rng.uniform(0.0, 1.5, (E, 2)) * (rng.random((E, 1)) < 0.8)
            pose.set(pos, rng.uniform(-np.pi, np.pi, E), he)
            got = contacts(course)
            P, Q, H = pose.arrays()
            U, V = yaw_axes(Q)
            for e in np.flatnonzero(valid):
                sd, _ = disc_ref(course, e, P[e, :2], U[e], V[e], H[e, 0], H[e, 1], 0.06)
                assert abs(got["clearance"][e] - sd.min()) < TOL
                assert abs(sd[got["index"][e]] - sd.min()) < TOL


def test_disc_masked_regeneration_touches_masked_envs_only():
    a = Course(gate_gen(E=8, seeds=5), [DiscCollision(0.05)])
    b = Course(gate_gen(E=8, seeds=5), [DiscCollision(0.05)])
    ca, cb = a.components["collision"], b.components["collision"]
    m = np.array([1, 0, 0, 1, 0, 0, 0, 1], np.int32)
    arr = ca.posts.numpy()
    arr[m == 0] += 3  # mark the rows of other envs: a masked regeneration must not even rewrite them
    ca.posts.assign(arr)
    before = ca.posts.numpy().copy()
    a.regenerate(mask=wp.array(m, dtype=wp.int32, device="cpu"), advance=True)
    b.enqueue_generate(advance=True)  # every env to its next generation
    now, full = ca.posts.numpy(), cb.posts.numpy()
    assert now[m == 0].tobytes() == before[m == 0].tobytes()
    assert now[m == 1].tobytes() == full[m == 1].tobytes()
    assert now[m == 1].tobytes() != before[m == 1].tobytes()


@pytest.mark.parametrize("scale", [1e-15, 1e-6, 1e6, 1e15])
def test_quaternion_scale_and_vertical_x_axis(gate_course, scale):
    """Only the yaw counts at any quaternion scale; an x axis pointing straight up or down (no
    horizontal part) gives the yaw of atan2 of exact zeros, i.e. body x along +x (or -x for -0)."""
    course, pose = gate_course
    course.generate(seeds=4)
    rng = np.random.default_rng(13)
    pos, yaw, he = gate_poses(course, rng, E)
    pose.set(pos, yaw, he)
    ref = contacts(course)
    q = np.stack([np.zeros(E), np.zeros(E), np.sin(yaw / 2), np.cos(yaw / 2)], -1)
    pose.set(pos, yaw, he, q * scale)
    got = contacts(course)
    np.testing.assert_allclose(got["clearance"], ref["clearance"], atol=1e-5)
    np.testing.assert_allclose(got["normal"], ref["normal"], atol=1e-4)
    assert (got["index"] == ref["index"]).all()
    # pitch of exactly +-90 degrees about y: the rotated x axis is vertical, its horizontal part 0
    pitch = np.tile([0.0, np.sqrt(0.5), 0.0, np.sqrt(0.5)], (E, 1))
    pitch[1::2] = [0.0, -np.sqrt(0.5), 0.0, np.sqrt(0.5)]
    pose.set(pos, yaw, he, np.float32(pitch) * np.float32(scale))
    P, Q, H = pose.arrays()
    U, V = yaw_axes(Q)
    got = contacts(course)
    for e in np.flatnonzero(course.result.valid.numpy()):
        sd, _ = disc_ref(course, e, P[e, :2], U[e], V[e], H[e, 0], H[e, 1], 0.06)
        assert abs(got["clearance"][e] - sd.min()) < TOL


# ------------------------------------------------------------------------------------------------
# gates: frames
# ------------------------------------------------------------------------------------------------
def bars(course, e):
    """Every bar of env e: (centre xyz, horizontal axes l, n, half extents along l, n, z)."""
    r = course.result
    G = min(int(r.count.numpy()[e]), r.pos.shape[1])
    w, h, t = (float(getattr(r, k).numpy()[e]) for k in ("width", "height", "thickness"))
    out = []
    for g in range(G):
        p = r.pos.numpy()[e, g].astype(np.float64)
        n = r.normal.numpy()[e, g, :2].astype(np.float64)
        n /= np.linalg.norm(n)
        lat = lateral(n)
        z = np.array([0, 0, 1.0])
        for k, (centre, el, ez) in enumerate([
            (p + (h / 2 + t / 2) * z, w / 2 + t, t / 2), (p - (h / 2 + t / 2) * z, w / 2 + t, t / 2),
            (p + np.r_[(w / 2 + t / 2) * lat, 0], t / 2, h / 2), (p - np.r_[(w / 2 + t / 2) * lat, 0], t / 2, h / 2),
        ]):
            out.append((4 * g + k, centre, lat, n, el, t / 2, ez))
    return out


def rect_rect_ref(ca, ua, va, ha, hb, cb, ub, vb, ea, eb):
    d = ca - cb
    ovs = []
    for ax in (ua, va, ub, vb):
        s = d @ ax
        ra = ha * abs(ua @ ax) + hb * abs(va @ ax)
        rb = ea * abs(ub @ ax) + eb * abs(vb @ ax)
        ovs.append(ra + rb - abs(s))
    if min(ovs) >= 0:
        return -min(ovs)

    def vdist(p, c, ax, ay, hx, hy):
        loc = np.array([(p - c) @ ax, (p - c) @ ay])
        return np.linalg.norm(loc - np.clip(loc, [-hx, -hy], [hx, hy]))

    sg = [(1, 1), (-1, 1), (-1, -1), (1, -1)]
    return min([vdist(ca + sx * ha * ua + sy * hb * va, cb, ub, vb, ea, eb) for sx, sy in sg]
               + [vdist(cb + sx * ea * ub + sy * eb * vb, ca, ua, va, ha, hb) for sx, sy in sg])


def frame_ref(course, e, c3, u, v, ha, hb, hh):
    """The documented prism signed distance, per bar (float64)."""
    out = {}
    for idx, centre, lat, n, el, en, ez in bars(course, e):
        dxy = rect_rect_ref(c3[:2], u, v, abs(ha), abs(hb), centre[:2], lat, n, el, en)
        dz = abs(c3[2] - centre[2]) - (hh + ez)
        out[idx] = np.hypot(max(dxy, 0), max(dz, 0)) if (dxy > 0 or dz > 0) else max(dxy, dz)
    return out


def box_vertices(c, axes, half):
    s = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    return c + (s * half) @ np.stack(axes)


def sat3d_penetration(c1, ax1, h1, c2, ax2, h2):
    """Generic 3D SAT over the 15 box axes: the smallest overlap (< 0 when separated)."""
    cands = list(ax1) + list(ax2) + [np.cross(a, b) for a in ax1 for b in ax2]
    v1, v2 = box_vertices(c1, ax1, h1), box_vertices(c2, ax2, h2)
    best = np.inf
    for a in cands:
        ln = np.linalg.norm(a)
        if ln < 1e-9:
            continue
        a = a / ln
        p1, p2 = v1 @ a, v2 @ a
        best = min(best, p1.max() - p2.min(), p2.max() - p1.min())  # the shorter push along a
    return best


def point_box_dist(p, c, axes, half):
    loc = (p - c) @ np.stack(axes).T
    return np.linalg.norm(loc - np.clip(loc, -half, half), axis=-1)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), gen_seed=st.integers(0, 1000))
def test_frame_match_reference(gate_course, seed, gen_seed):
    course, pose = gate_course
    course.generate(seeds=gen_seed)
    rng = np.random.default_rng(seed)
    pose.set(*gate_poses(course, rng, E, spread=0.75))
    got = course.step()["frame"]
    cl, idx, nrm = got.clearance.numpy(), got.index.numpy(), got.normal.numpy()
    P, Q, H = pose.arrays()
    U, V = yaw_axes(Q)
    for e in np.flatnonzero(course.result.valid.numpy()):
        ref = frame_ref(course, e, P[e], U[e], V[e], H[e, 0], H[e, 1], 0.08)
        want = min(ref.values())
        assert abs(cl[e] - want) < TOL and abs(ref[idx[e]] - want) < TOL, (e, cl[e], want)
        assert got.hit.numpy()[e] == (cl[e] <= 0)
        n = nrm[e].astype(np.float64)
        assert abs(np.linalg.norm(n) - 1) < 1e-4
        eps = 1e-3  # moving the box along the normal moves it away from that bar
        moved = frame_ref(course, e, P[e] + eps * n, U[e], V[e], H[e, 0], H[e, 1], 0.08)
        assert moved[idx[e]] - ref[idx[e]] > 0.5 * eps


def test_frame_definition_against_brute_force():
    """The prism formula against a generic 3D SAT (overlap) and a sampled box surface (apart)."""
    rng = np.random.default_rng(2)
    z = np.array([0, 0, 1.0])
    n_in = n_out = 0
    for _ in range(150):
        ya, yb = rng.uniform(-np.pi, np.pi, 2)
        ua, va = np.array([np.cos(ya), np.sin(ya)]), np.array([-np.sin(ya), np.cos(ya)])
        ub, vb = np.array([np.cos(yb), np.sin(yb)]), np.array([-np.sin(yb), np.cos(yb)])
        ha, hb, hz = rng.uniform(0.02, 0.4, 3)
        ea, eb, ez = rng.uniform(0.01, 0.6, 3)
        ca, cb = rng.uniform(-0.6, 0.6, 3), np.zeros(3)
        dxy = rect_rect_ref(ca[:2], ua, va, ha, hb, cb[:2], ub, vb, ea, eb)
        dz = abs(ca[2]) - (hz + ez)
        sd = np.hypot(max(dxy, 0), max(dz, 0)) if (dxy > 0 or dz > 0) else max(dxy, dz)
        ax_a = [np.r_[ua, 0], np.r_[va, 0], z]
        ax_b = [np.r_[ub, 0], np.r_[vb, 0], z]
        if sd < 0:
            n_in += 1
            assert abs(-sd - sat3d_penetration(ca, ax_a, np.r_[ha, hb, hz], cb, ax_b, np.r_[ea, eb, ez])) < 1e-9
        else:
            n_out += 1
            s = np.linspace(-1, 1, 41)
            A, B = np.meshgrid(s, s)
            A, B = A.ravel(), B.ravel()
            one = np.ones_like(A)
            faces = np.concatenate([np.c_[one * f, A, B] for f in (-1, 1)] + [np.c_[A, one * f, B] for f in (-1, 1)]
                                   + [np.c_[A, B, one * f] for f in (-1, 1)])
            pts = ca + (faces * [ha, hb, hz]) @ np.stack(ax_a)
            d = point_box_dist(pts, cb, ax_b, np.r_[ea, eb, ez]).min()
            assert -1e-9 <= d - sd <= 0.05 * max(ha, hb, hz)
    assert n_in > 20 and n_out > 20


# ------------------------------------------------------------------------------------------------
# contract: capture, reset, invalid courses, non-finite poses, arguments
# ------------------------------------------------------------------------------------------------
MAKERS = {
    "segments": (lambda E: track_gen(E=E), lambda: BandCollision("segments")),
    "sdf": (lambda E: track_gen(E=E), lambda: BandCollision("sdf", resolution=24)),
    "disc": (lambda E: gate_gen(E=E), lambda: DiscCollision(0.05)),
    "frame": (lambda E: gate_gen(E=E), lambda: FrameCollision(0.1)),
}


def random_pose(course, rng, n):
    return band_poses(course, rng, n) if course.generator.family == "track" else gate_poses(course, rng, n)


@pytest.mark.parametrize("kind", list(MAKERS))
def test_step_replay_equals_eager_byte_for_byte(kind):
    make_gen, make_comp = MAKERS[kind]
    course = Course(make_gen(8), [make_comp()])
    assert course.collision is course.components["collision"]
    pose = Pose(8)
    pose.bind(course)
    rng = np.random.default_rng(4)
    pose.set(*random_pose(course, rng, 8))
    course.step()
    check_component(course)  # every hook, recorded alone, strictly
    with wp.ScopedCapture(device="cpu") as cap, strict():
        res = course.step()
    assert isinstance(res.contacts, Contacts)
    seen = set()
    for _ in range(4):
        pose.set(*random_pose(course, rng, 8))  # in place: the graph reads the new values
        wp.capture_launch(cap.graph)
        replayed = as_bytes({f.name: getattr(res.contacts, f.name).numpy().copy()
                             for f in dataclasses.fields(res.contacts)})
        eager = as_bytes(contacts(course))  # the same arrays, rewritten eagerly
        assert replayed == eager
        seen.add(replayed["clearance"])
    assert len(seen) == 4


@pytest.mark.parametrize("kind", ["segments", "sdf", "disc"])
def test_regenerate_replay_equals_eager(kind):
    make_gen, make_comp = MAKERS[kind]
    a, b = Course(make_gen(8), [make_comp()]), Course(make_gen(8), [make_comp()])
    pa, pb = Pose(8), Pose(8)
    pa.bind(a)
    pb.bind(b)
    rng = np.random.default_rng(5)
    pose = random_pose(a, rng, 8)
    pa.set(*pose)
    pb.set(*pose)
    mask = wp.array([0, 1, 1, 0, 0, 0, 1, 0], dtype=wp.int32, device="cpu")
    a.step()
    b.step()
    with wp.ScopedCapture(device="cpu") as cap, strict():
        a.regenerate(mask=mask, advance=True)
        a.step()
    for _ in range(2):
        wp.capture_launch(cap.graph)
        b.enqueue_generate(advance=True, mask=mask)
        b.step()
        ca, cb = a.components["collision"], b.components["collision"]
        for k in ("left", "right", "boxes", "grid", "grid_index", "posts"):
            if getattr(ca, k, None) is not None:
                assert getattr(ca, k).numpy().tobytes() == getattr(cb, k).numpy().tobytes(), k
        assert as_bytes(contacts(a)) == as_bytes(contacts(b))


def test_reset_writes_no_contact_for_masked_envs_only(band_course):
    course, pose = band_course
    course.generate(seeds=2)
    pose.set(*band_poses(course, np.random.default_rng(9), E))
    before = contacts(course)
    m = np.zeros(E, np.int32)
    m[[1, 4]] = 1
    course.reset(mask=wp.array(m, dtype=wp.int32, device="cpu"))
    r = course.components["collision"].result
    after = {f.name: getattr(r, f.name).numpy() for f in dataclasses.fields(r)}
    for k, v in after.items():
        assert v[m == 0].tobytes() == before[k][m == 0].tobytes()
    assert (after["clearance"][m == 1] == FAR).all() and (after["index"][m == 1] == -1).all()
    assert (after["hit"][m == 1] == 0).all() and (after["normal"][m == 1] == 0).all()


@pytest.mark.parametrize("kind", list(MAKERS))
def test_invalid_courses_and_nonfinite_poses_are_isolated(kind):
    _, make_comp = MAKERS[kind]
    n = 16
    if kind in ("segments", "sdf"):
        g = track_gen(E=n, seeds=3, max_attempts=1, min_turn_radius=0.9, num_points=64)
    else:
        g = gate_gen(E=n, seeds=3, max_attempts=1, min_spacing=2.5)
    course = Course(g, [make_comp()])
    valid = course.result.valid.numpy()
    assert 0 < valid.sum() < n
    pose = Pose(n)
    pose.bind(course)
    rng = np.random.default_rng(6)
    pos, yaw, he = random_pose(course, rng, n)
    pose.set(pos, yaw, he)
    clean = contacts(course)
    bad = [2, 5, 11]
    pos2, he2 = pos.copy(), he.copy()
    quat = np.stack([np.zeros(n), np.zeros(n), np.sin(yaw / 2), np.cos(yaw / 2)], -1)
    pos2[2, 0], he2[5, 1], quat[11, 3] = np.nan, np.inf, -np.inf
    pose.set(pos2, yaw, he2, quat)
    got = contacts(course)
    good = np.setdiff1d(np.arange(n), bad)
    for k in got:
        assert got[k][good].tobytes() == clean[k][good].tobytes(), k  # other envs unaffected
        assert np.isfinite(got[k]).all(), k
    for e in range(n):
        if not valid[e]:  # no obstacle, whatever the pose
            assert (got["hit"][e], got["depth"][e], got["clearance"][e], got["index"][e]) == (0, 0, FAR, -1)
            assert (got["normal"][e] == 0).all()
        elif e in bad:  # a crash of depth 0
            assert (got["hit"][e], got["depth"][e], got["clearance"][e], got["index"][e]) == (1, 0, 0, -1)
        else:
            assert got["index"][e] >= 0 and abs(got["clearance"][e]) < 100


def test_arguments_and_topology():
    with pytest.raises(TypeError, match="bool"):
        BandCollision(True)
    with pytest.raises(ValueError, match="'grid'"):
        BandCollision("grid")
    with pytest.raises(ValueError, match="None"):
        BandCollision(None)
    for bad, exc in ((True, TypeError), (1.5, TypeError), (1, ValueError), (10**6, ValueError)):
        with pytest.raises(exc, match="resolution"):
            BandCollision("sdf", resolution=bad)
    for bad, exc in ((0.0, ValueError), (-1, ValueError), (float("nan"), ValueError), (True, TypeError),
                     ("1", TypeError)):
        with pytest.raises(exc, match="size_hi"):
            BandCollision("sdf", size_hi=bad)
        with pytest.raises(exc, match="radius"):
            DiscCollision(bad)
    for bad, exc in ((-0.1, ValueError), (float("inf"), ValueError), (False, TypeError)):
        with pytest.raises(exc, match="half_height"):
            FrameCollision(bad)
    FrameCollision(0.0)
    with pytest.raises(TypeError, match="families"):
        Course(gate_gen(E=2), [BandCollision()])
    with pytest.raises(TypeError, match="families"):
        Course(track_gen(E=2), [DiscCollision(0.1)])
    with pytest.raises(TypeError, match="name"):
        DiscCollision(0.1, name="")
    course = Course(gate_gen(E=2), [DiscCollision(0.1, name="posts"), FrameCollision(0.1)])
    assert course.collision is course.components["collision"] and "posts" in course.components
    pose = Pose(2)
    with pytest.raises(RuntimeError, match="bind"):
        course.step()
    course.bind(position=pose.pos, orientation=pose.quat, half_extents=pose.he)
    assert course.components["posts"].bound["box_position"] is pose.pos  # routed from position
    box = wp.zeros(2, dtype=wp.vec3f, device="cpu")
    course.bind(position=pose.pos, box_position=box, orientation=pose.quat, half_extents=pose.he)
    assert course.components["posts"].bound["box_position"] is box
