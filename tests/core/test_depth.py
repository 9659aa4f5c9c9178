"""DepthCamera: each ray primitive against a float64 numpy reference, whole images against a
brute-force numpy scene and closed-form scenes (a gate head-on, the bare ground), the per-env
rules (non-finite poses, the render mask), capture and regeneration."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen import tools
from track_gen.capture import caller, check_component
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools.depth.rays import ray_box, ray_cylinder, ray_plane_z, ray_wall

from .depth_reference import (pixel_rays, quat_yaw, ref_box, ref_cylinder, ref_plane, ref_wall, scene_depth,
                              scene_ground_only)

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
HIT = 1.0e29  # "no hit" is BIG = 1e30 (1.00000002e30 in float32): anything above HIT
R = 512  # rays per hypothesis example


# ------------------------------------------------------------------------------------------------
# the device functions, one kernel each
# ------------------------------------------------------------------------------------------------
@wp.kernel
def _k_box(o: wp.array(dtype=wp.vec3f), d: wp.array(dtype=wp.vec3f), lo: wp.vec3f, hi: wp.vec3f, tmin: float,
           out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = ray_box(o[i], d[i], lo, hi, tmin)


@wp.kernel
def _k_cyl(o: wp.array(dtype=wp.vec3f), d: wp.array(dtype=wp.vec3f), c: wp.vec2f, r: float, z0: float, z1: float,
           tmin: float, out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = ray_cylinder(o[i], d[i], c, r, z0, z1, tmin)


@wp.kernel
def _k_plane(o: wp.array(dtype=wp.vec3f), d: wp.array(dtype=wp.vec3f), h: float, tmin: float,
             out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = ray_plane_z(o[i], d[i], h, tmin)


@wp.kernel
def _k_wall(o: wp.array(dtype=wp.vec3f), d: wp.array(dtype=wp.vec3f), a: wp.vec2f, b: wp.vec2f, za: float,
            zb: float, height: float, tmin: float, out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = ray_wall(o[i], d[i], a, b, za, zb, height, tmin)


def run(kernel, o, d, *args):
    out = wp.zeros(len(o), dtype=wp.float32, device="cpu")
    wp.launch(kernel, dim=len(o), device="cpu", outputs=[out],
              inputs=[wp.array(o.astype(np.float32), dtype=wp.vec3f, device="cpu"),
                      wp.array(d.astype(np.float32), dtype=wp.vec3f, device="cpu"), *args])
    return out.numpy().astype(np.float64)


def rays(seed, spread=3.0):
    rng = np.random.default_rng(seed)
    o = rng.uniform(-spread, spread, (R, 3))
    d = rng.normal(size=(R, 3))
    d[rng.random(R) < 0.1, 2] = 0.0  # horizontal rays (the slab's zero-direction branch)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return (o.astype(np.float32).astype(np.float64), d.astype(np.float32).astype(np.float64))


def agree(got, inner, outer, want, tol=2e-3):
    """float32 ``got`` against the float64 reference ``want``; where the primitive shrunk
    (``inner``) and grown (``outer``) by a hair disagree on hit / miss, the ray grazes a boundary
    and either answer is right. Those must be rare."""
    hit = lambda t: t < HIT  # noqa: E731
    sure = hit(inner) == hit(outer)
    assert sure.mean() > 0.9
    both = sure & hit(want)
    assert np.array_equal(hit(got[sure]), hit(want[sure])), np.flatnonzero(sure & (hit(got) != hit(want)))
    np.testing.assert_allclose(got[both], want[both], atol=tol, rtol=tol)
    amb = ~sure & hit(got)
    assert np.all(np.abs(got[amb] - np.minimum(inner, outer)[amb]) < 0.05)


EPS = 1e-4


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), h=st.tuples(*[st.floats(0.05, 2.0)] * 3), c=st.tuples(*[st.floats(-1, 1)] * 3),
       tmin=st.sampled_from([0.0, 0.3]))
def test_ray_box(seed, h, c, tmin):
    o, d = rays(seed)
    lo, hi = np.float32(np.subtract(c, h)).astype(float), np.float32(np.add(c, h)).astype(float)
    got = run(_k_box, o, d, wp.vec3f(*lo), wp.vec3f(*hi), tmin)
    want = ref_box(o, d, lo, hi, tmin)
    agree(got, ref_box(o, d, lo + EPS, hi - EPS, tmin + EPS), ref_box(o, d, lo - EPS, hi + EPS, tmin - EPS), want)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), c=st.tuples(st.floats(-1, 1), st.floats(-1, 1)), r=st.floats(0.05, 1.5),
       z=st.tuples(st.floats(-2, 0), st.floats(0.1, 3)), tmin=st.sampled_from([0.0, 0.3]))
def test_ray_cylinder(seed, c, r, z, tmin):
    o, d = rays(seed)
    c = np.float32(c).astype(float)
    r, z0, z1 = float(np.float32(r)), float(np.float32(z[0])), float(np.float32(z[0] + z[1]))
    got = run(_k_cyl, o, d, wp.vec2f(*c), r, z0, z1, tmin)
    want = ref_cylinder(o, d, c, r, z0, z1, tmin)
    agree(got, ref_cylinder(o, d, c, r - EPS, z0 + EPS, z1 - EPS, tmin + EPS),
          ref_cylinder(o, d, c, r + EPS, z0 - EPS, z1 + EPS, tmin - EPS), want)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), h=st.floats(-2, 2), tmin=st.sampled_from([0.0, 0.3]))
def test_ray_plane(seed, h, tmin):
    o, d = rays(seed)
    h = float(np.float32(h))
    got = run(_k_plane, o, d, h, tmin)
    want = ref_plane(o, d, h, tmin)
    agree(got, ref_plane(o, d, h, tmin + EPS), ref_plane(o, d, h, tmin - EPS), want, tol=5e-3)


def _wall_grown(o, d, a, b, za, zb, hh, tmin, eps):
    """The wall with its ends moved out by eps (in) and its height range widened by eps."""
    e = (b - a) / max(np.linalg.norm(b - a), 1e-12)
    return ref_wall(o, d, a - eps * e, b + eps * e, za - eps, zb - eps, hh + 2 * eps, tmin - eps)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), a=st.tuples(st.floats(-2, 2), st.floats(-2, 2)),
       b=st.tuples(st.floats(-2, 2), st.floats(-2, 2)), za=st.floats(-1, 1), zb=st.floats(-1, 1),
       hh=st.floats(0.05, 2), tmin=st.sampled_from([0.0, 0.3]))
def test_ray_wall(seed, a, b, za, zb, hh, tmin):
    o, d = rays(seed)
    a, b = np.float32(a).astype(float), np.float32(b).astype(float)
    if np.linalg.norm(b - a) < 0.05:
        b = a + np.array([0.5, 0.25])
    za, zb, hh = (float(np.float32(v)) for v in (za, zb, hh))
    got = run(_k_wall, o, d, wp.vec2f(*a), wp.vec2f(*b), za, zb, hh, tmin)
    want = ref_wall(o, d, a, b, za, zb, hh, tmin)
    agree(got, _wall_grown(o, d, a, b, za, zb, hh, tmin, -EPS), _wall_grown(o, d, a, b, za, zb, hh, tmin, EPS), want)


# ------------------------------------------------------------------------------------------------
# whole images
# ------------------------------------------------------------------------------------------------
class Bodies:
    def __init__(self, E):
        self.pos = wp.zeros(E, dtype=wp.vec3f, device="cpu")
        self.quat = wp.zeros(E, dtype=wp.quatf, device="cpu")
        self.render = wp.ones(E, dtype=wp.int32, device="cpu")

    def set(self, p, q):
        self.pos.assign(np.asarray(p, np.float32))
        self.quat.assign(np.asarray(q, np.float32))


def gate_course(E=4, seeds=5, cam=None, **kw):
    gen = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, **kw), seeds=seeds)
    cam = cam or tools.DepthCamera(24, 16, 90.0, 0.05, 30.0, offset=(0.1, 0.0, 0.05), pitch_deg=5.0,
                                   post_radius=0.05, ring=16, grid=(3, 4))
    c = Course(gen, [cam])
    b = Bodies(E)
    c.bind(position=b.pos, orientation=b.quat)
    return c, b


def track_course(cam, E=3, seeds=2, **kw):
    """A band-track course of ``E`` envs (``presets.track`` with ``kw``) seen by ``cam``, bodies bound."""
    c = Course(tg.TrackGenerator(presets.track(E, "cpu", **kw), seeds=seeds), [cam])
    b = Bodies(E)
    c.bind(position=b.pos, orientation=b.quat)
    return c, b


def start_poses(c, rng, jitter=0.5):
    r = c.result
    p = r.start_pos.numpy().astype(np.float64)
    p += rng.normal(scale=jitter, size=p.shape) * np.array([1, 1, 0.2])
    yaw = r.start_yaw.numpy() + rng.normal(scale=0.3, size=len(p))
    q = np.stack([quat_yaw(y, rng.normal(scale=0.2), rng.normal(scale=0.2)) for y in yaw])
    return p, q


def pole_poses(c, rng, near=2.0, far=6.0):
    """Poses ``near ... far`` m from a random pole of each env (pole 0 where there is none), 0.3 ... 1.5 m
    up, turned towards it give or take a little yaw, pitch and roll."""
    r = c.result
    E = r.obstacle_count.shape[0]
    k = rng.integers(0, np.maximum(r.obstacle_count.numpy(), 1))
    p = r.obstacle_pos.numpy().astype(np.float64)[np.arange(E), k]
    ang = rng.uniform(-np.pi, np.pi, E)
    p += rng.uniform(near, far, (E, 1)) * np.stack([np.cos(ang), np.sin(ang), np.zeros(E)], 1)
    p[:, 2] = rng.uniform(0.3, 1.5, E)
    yaw = ang + np.pi + rng.normal(scale=0.15, size=E)
    q = np.stack([quat_yaw(y, rng.normal(scale=0.1), rng.normal(scale=0.1)) for y in yaw])
    return p, q


def compare_images(got, want, far, tol=5e-3, frac=0.995):
    """Pixelwise within tol (relative), but for a few pixels whose ray grazes an edge."""
    close = np.abs(got - want) <= tol * np.maximum(1.0, want)
    assert close.mean() >= frac, (close.mean(), np.argwhere(~close)[:5])


@pytest.mark.parametrize("obstacles", [0, 4])
def test_gate_images_match_scene_reference(obstacles):
    extra = dict(obstacle_count_min=2, obstacle_count_max=4) if obstacles else {}
    c, b = gate_course(E=4, max_obstacles=obstacles, **extra)
    cam = c.components["depth_camera"]
    assert (c.result.obstacle_count.numpy().max() > 0) == bool(obstacles) and cam.post_radius == 0.05
    p, q = start_poses(c, np.random.default_rng(obstacles))
    b.set(p, q)
    got = c.step()["depth_camera"].depth.numpy()
    want = scene_depth(c, cam, p, q)
    assert (want < cam.far).mean() > 0.2 and (want < cam.far - 1e-3).any()
    compare_images(got, want, cam.far)


def ring_body(n):
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([np.cos(a), np.sin(a), np.zeros(n)], 1)


@pytest.mark.parametrize("family", ["gates", "track"])
def test_range_ring_matches_scene_reference(family):
    n = 72
    if family == "gates":
        cam = tools.DepthCamera(8, 6, 90.0, 0.05, 30.0, offset=(0.1, 0.0, 0.05), post_radius=0.05, ring=n)
        c, b = gate_course(E=4, cam=cam, max_obstacles=4, obstacle_count_min=2, obstacle_count_max=4)
    else:
        cam = tools.DepthCamera(8, 6, 90.0, 0.0, 25.0, offset=(0.0, 0.0, 0.1), wall_height=0.4, ring=n)
        c, b = track_course(cam)
    p, q = start_poses(c, np.random.default_rng(8), jitter=0.1)
    p[:, 2] = np.maximum(p[:, 2], 0.2)
    b.set(p, q)
    got = c.step()["depth_camera"].ranges.numpy()
    want = scene_depth(c, cam, p, q, body=ring_body(n))
    assert got.shape == (len(p), n) and (want < cam.far).mean() > 0.2
    compare_images(got, want, cam.far)


def grid_body(rows, cols, spacing, direction):
    """The grid written out from its definition: row 0 front-most, column 0 left-most."""
    starts = np.array([[((rows - 1) / 2 - r) * spacing, ((cols - 1) / 2 - c) * spacing, 0.0]
                       for r in range(rows) for c in range(cols)])
    d = np.asarray(direction, float) / np.linalg.norm(direction)
    return starts, np.tile(d, (rows * cols, 1))


@pytest.mark.parametrize("family, direction", [("gates", (0.0, 0.0, -1.0)), ("gates", (1.0, 0.2, -0.3)),
                                               ("track", (0.0, 0.0, -1.0)), ("track", (1.0, -0.5, 0.0))])
def test_range_grid_matches_scene_reference(family, direction):
    rows, cols, sp = 9, 7, 0.35
    kw = dict(grid=(rows, cols), grid_spacing=sp, grid_direction=direction)
    if family == "gates":
        cam = tools.DepthCamera(8, 6, 90.0, 0.05, 30.0, offset=(0.1, 0.0, 0.05), post_radius=0.05, **kw)
        c, b = gate_course(E=4, cam=cam, max_obstacles=4, obstacle_count_min=2, obstacle_count_max=4)
        p, q = start_poses(c, np.random.default_rng(5), jitter=0.3)
    else:
        cam = tools.DepthCamera(8, 6, 90.0, 0.0, 25.0, offset=(0.0, 0.0, 0.1), wall_height=0.4, **kw)
        c, b = track_course(cam)
        p, q = start_poses(c, np.random.default_rng(8), jitter=0.1)
        p[:, 2] = np.maximum(p[:, 2], 0.2)
    b.set(p, q)
    got = c.step()["depth_camera"].grid.numpy()
    starts, dirs = grid_body(rows, cols, sp, direction)
    want = scene_depth(c, cam, p, q, body=dirs, starts=starts).reshape(len(p), rows, cols)
    assert got.shape == (len(p), rows, cols) and cam.result.ranges is None
    assert (want < cam.far).mean() > 0.2 and np.ptp(want[want < cam.far]) > 0.1  # not one flat value
    compare_images(got, want, cam.far)
    if direction == (0.0, 0.0, -1.0) and family == "gates":  # a height scan: over open ground, the height
        assert np.isclose(np.median(got[0]), p[0, 2] + 0.05, rtol=0.2)


def test_track_walls_match_scene_reference():
    cam = tools.DepthCamera(20, 12, 100.0, 0.0, 25.0, offset=(0.0, 0.0, 0.1), pitch_deg=8.0, wall_height=0.4)
    c, b = track_course(cam)
    p, q = start_poses(c, np.random.default_rng(3), jitter=0.1)
    p[:, 2] = 0.25
    b.set(p, q)
    got = c.step().get("depth_camera").depth.numpy()
    want = scene_depth(c, cam, p, q)
    assert ((want < cam.far) & (np.abs(want - scene_ground_only(cam, p, q)) > 1e-3)).any()  # walls seen
    compare_images(got, want, cam.far)


@pytest.mark.parametrize("elevated", [False, True])
def test_track_poles_match_scene_reference(elevated):
    """A band track with poles: every pole is seen (whole images against the reference), and a
    camera looking straight at a pole's side sees it at the analytic distance."""
    E = 4
    kw = dict(E=E, seeds=5, elevated=elevated, max_obstacles=4, difficulty=1.0)
    cam = tools.DepthCamera(24, 16, 100.0, 0.0, 25.0, offset=(0.0, 0.0, 0.1), pitch_deg=5.0, wall_height=0.4)
    c, b = track_course(cam, **kw)
    r = c.result
    assert r.obstacle_count.numpy().min() >= 1
    p, q = start_poses(c, np.random.default_rng(7), jitter=0.1)
    p[:, 2] = np.maximum(p[:, 2], 0.3)
    b.set(p, q)
    got = c.step().get("depth_camera").depth.numpy()
    compare_images(got, scene_depth(c, cam, p, q), cam.far)
    p, q = pole_poses(c, np.random.default_rng(9))  # random poses facing a pole
    b.set(p, q)
    got = c.step().get("depth_camera").depth.numpy()
    compare_images(got, scene_depth(c, cam, p, q), cam.far)
    # head-on: 2 m from pole 0's axis, level with its middle, facing it: the centre column's middle
    # rows see its side at 2 m - radius (the camera's offset ahead of the body counted)
    base, rad, hgt = r.obstacle_pos.numpy()[:, 0], r.obstacle_radius.numpy()[:, 0], r.obstacle_height.numpy()[:, 0]
    yaw = np.random.default_rng(8).uniform(-np.pi, np.pi, E)
    look = np.stack([np.cos(yaw), np.sin(yaw), np.zeros(E)], 1)
    cam0 = base + np.stack([np.zeros(E), np.zeros(E), 0.5 * hgt], 1) - 2.0 * look
    b.set(cam0 - 0.1 * look - np.array([0.0, 0.0, 0.1]), np.stack([quat_yaw(y) for y in yaw]))
    level = tools.DepthCamera(25, 15, 60.0, 0.0, 25.0, offset=(0.1, 0.0, 0.1), pitch_deg=0.0, wall_height=0.0,
                              name="level")
    c2, _ = track_course(level, **kw)
    c2.bind(position=b.pos, orientation=b.quat)
    img = c2.step().get("level").depth.numpy()
    np.testing.assert_allclose(img[:, 7, 12], 2.0 - rad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("elevated", [False, True])
def test_poles_only_add_to_the_track_image(elevated):
    """The same track without poles draws as before (no pole pass; the reference); with poles every
    image pixel and range reads the plain track's value or nearer, byte-equal where no pole is met
    and nearer in every env; a pole stage that placed none (difficulty 0) changes nothing, byte for byte."""
    E = 4
    kw = dict(E=E, seeds=5, elevated=elevated)

    def camera():
        return tools.DepthCamera(24, 16, 100.0, 0.0, 25.0, offset=(0.0, 0.0, 0.1), pitch_deg=5.0, wall_height=0.4,
                                 ring=8, grid=(3, 4))

    def images(c, b, p, q):
        b.set(p, q)
        res = c.step()["depth_camera"]
        return [a.numpy().copy() for a in (res.depth, res.ranges, res.grid)]

    for d in (1.0, 0.0):
        plain, bp = track_course(camera(), difficulty=d, **kw)
        poled, bq = track_course(camera(), difficulty=d, max_obstacles=4, **kw)
        assert plain.result.obstacle_pos.shape == (E, 0) and plain.components["depth_camera"]._obs[0] == 0
        assert poled.components["depth_camera"]._obs[0] == 1
        both = (plain.result.valid.numpy() != 0) & (poled.result.valid.numpy() != 0)
        assert both.sum() >= 2
        p, q = pole_poses(poled, np.random.default_rng(11))
        base, seen = images(plain, bp, p, q), images(poled, bq, p, q)
        compare_images(base[0], scene_depth(plain, plain.components["depth_camera"], p, q), 25.0)
        if d == 0.0:
            assert (poled.result.obstacle_count.numpy() == 0).all()
            for a, b in zip(base, seen):
                assert a[both].tobytes() == b[both].tobytes()
            continue
        assert (poled.result.obstacle_count.numpy()[both] >= 1).all()
        for a, b in zip(base, seen):
            assert (b[both] <= a[both]).all()
        img, ref = seen[0][both], base[0][both]
        assert (img < ref - 1e-3).any(axis=(1, 2)).all()  # each env sees a pole
        met = scene_depth(poled, poled.components["depth_camera"], p, q)[both] < ref - 1e-3  # float64: a pole
        assert (img[~met] == ref[~met]).mean() > 0.995  # but for rays grazing a pole


def _one_gate(c, D, z=1.5, w=1.0, h=0.8, t=0.1):
    """Every env's course becomes one gate at (0, 0, z) facing +x; bodies at x = -D, facing +x."""
    r = c.result
    E = r.pos.shape[0]
    pos = np.zeros(r.pos.shape + (3,), np.float32)
    pos[:, 0] = (0.0, 0.0, z)
    nrm = np.zeros(r.normal.shape + (3,), np.float32)
    nrm[:, :, 0] = 1.0
    r.pos.assign(pos)
    r.normal.assign(nrm)
    r.count.assign(np.ones(E, np.int32))
    r.valid.assign(np.ones(E, np.int32))
    for k, v in (("width", w), ("height", h), ("thickness", t)):
        getattr(r, k).assign(np.full(E, v, np.float32))


@pytest.mark.parametrize("convention", ["distance", "z"])
def test_gate_head_on(convention):
    D, z, w, h, t = 2.5, 1.5, 1.0, 0.8, 0.15
    W, H, fov = 64, 48, 60.0
    cam = tools.DepthCamera(W, H, fov, 0.05, 50.0, convention=convention, post_radius=None)
    c, b = gate_course(E=2, cam=cam)
    _one_gate(c, D, z, w, h, t)
    b.set([[-D, 0, z]] * 2, [quat_yaw(0.0)] * 2)
    got = c.step()["depth_camera"].depth.numpy()[0]
    body = pixel_rays(W, H, fov, 0.0)
    front = D - t / 2
    s = front / body[..., 0]  # ray parameter at the frame's front plane x = -t/2
    ly, lz = s * body[..., 1], s * body[..., 2]  # where the ray crosses that plane (y left, z up from centre)
    ax, az = np.abs(ly), np.abs(lz)
    m = 0.02  # stay clear of edges
    in_frame = (ax < w / 2 + t - m) & (az < h / 2 + t - m)
    sb = (D + t / 2) / body[..., 0]  # and at its back plane x = +t/2
    in_opening = (ax < w / 2 - m) & (az < h / 2 - m) & (np.abs(sb * body[..., 1]) < w / 2 - m) & (
        np.abs(sb * body[..., 2]) < h / 2 - m)
    near_edge = ((ax > w / 2 - m) & (ax < w / 2 + m)) | ((az > h / 2 - m) & (az < h / 2 + m))
    bar = in_frame & ~((ax < w / 2) & (az < h / 2)) & ~near_edge
    want_bar = front / body[..., 0] if convention == "distance" else np.full((H, W), front)
    assert bar.sum() > 50 and in_opening.sum() > 200
    np.testing.assert_allclose(got[bar], want_bar[bar], rtol=1e-5)
    # through the opening: the ground (rays going down) or nothing (far)
    dz = body[..., 2]
    with np.errstate(divide="ignore"):
        tg_ = np.where(dz < 0, -z / dz, np.inf)
    want_open = np.where(tg_ < 50.0, tg_ if convention == "distance" else tg_ * body[..., 0], 50.0)
    np.testing.assert_allclose(got[in_opening], want_open[in_opening], rtol=1e-4)
    assert (got[in_opening] == 50.0).any() and (got[in_opening] < 50.0).any()


@pytest.mark.parametrize("convention", ["distance", "z"])
def test_ground_only_plane_formula(convention):
    E = 6
    rng = np.random.default_rng(9)
    cam = tools.DepthCamera(16, 12, 75.0, 0.1, 40.0, offset=(0.2, -0.1, 0.05), pitch_deg=35.0, convention=convention)
    c, b = gate_course(E=E, cam=cam)
    c.result.valid.assign(np.zeros(E, np.int32))  # no gates: the ground alone
    p = np.c_[rng.uniform(-3, 3, (E, 2)), rng.uniform(0.5, 3, E)]
    q = np.stack([quat_yaw(rng.uniform(-3, 3), rng.normal(scale=0.2), rng.normal(scale=0.2)) for _ in range(E)])
    q *= rng.uniform(0.5, 2.0, (E, 1))  # any scale: the camera normalizes it
    b.set(p, q)
    got = c.step()["depth_camera"].depth.numpy()
    want = scene_ground_only(cam, p, q)
    if convention == "z":
        k = pixel_rays(cam.width, cam.height, cam.fov_deg, 0.0)[..., 0]  # cosine to the optical axis
        want = np.where(want < cam.far, want * k, want)
        # in z, near / far are planes: recompute which pixels fall inside
        t = scene_ground_only(tools.DepthCamera(16, 12, 75.0, 0.0, 1e6, offset=cam.offset, pitch_deg=35.0), p, q)
        want = np.where((t * k >= cam.near) & (t * k < cam.far), t * k, cam.far)
    assert (want < cam.far).mean() > 0.3
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5)


def test_nonfinite_pose_is_far_in_that_env_only():
    c, b = gate_course(E=5)
    cam = c.components["depth_camera"]
    p, q = start_poses(c, np.random.default_rng(1))
    b.set(p, q)
    ref = c.step()["depth_camera"].depth.numpy().copy()
    ref_ring = cam.result.ranges.numpy().copy()
    ref_grid = cam.result.grid.numpy().copy()
    p2, q2 = p.copy(), q.copy()
    p2[1, 0] = np.nan
    q2[2] = np.inf
    q2[3] = 0.0
    p2[4, 1] = 2e6  # beyond POSE_LIMIT
    b.set(p2, q2)
    got = c.step()["depth_camera"].depth.numpy()
    assert np.all(got[1:] == cam.far) and np.all(cam.result.ranges.numpy()[1:] == cam.far)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(cam.result.ranges.numpy()[0], ref_ring[0])
    assert np.all(cam.result.grid.numpy()[1:] == cam.far) and np.array_equal(cam.result.grid.numpy()[0], ref_grid[0])


@pytest.mark.parametrize("family", ["gates", "track_poles"])
def test_render_mask_leaves_other_envs_untouched(family):
    if family == "gates":
        c, b = gate_course(E=6)
        poses = start_poses
    else:
        cam = tools.DepthCamera(24, 16, 90.0, 0.0, 25.0, offset=(0.1, 0.0, 0.05), pitch_deg=5.0, ring=16, grid=(3, 4))
        c, b = track_course(cam, E=6, seeds=5, max_obstacles=4, difficulty=1.0)
        assert (c.result.obstacle_count.numpy() >= 1).all()
        poses = pole_poses
    c.bind(position=b.pos, orientation=b.quat, render=b.render)
    rng = np.random.default_rng(2)
    b.set(*poses(c, rng))
    before = c.step()["depth_camera"].depth.numpy().copy()
    ring_before = c.components["depth_camera"].result.ranges.numpy().copy()
    grid_before = c.components["depth_camera"].result.grid.numpy().copy()
    p, q = poses(c, rng)
    b.set(p, q)
    flags = np.array([1, 0, 1, 0, 0, 1], np.int32)
    b.render.assign(flags)
    got = c.step()["depth_camera"].depth.numpy().copy()
    ring_got = c.components["depth_camera"].result.ranges.numpy().copy()
    grid_got = c.components["depth_camera"].result.grid.numpy().copy()
    b.render.assign(np.ones(6, np.int32))
    full = c.step()["depth_camera"].depth.numpy()
    on = flags != 0
    assert np.array_equal(got[~on], before[~on])
    assert np.array_equal(got[on], full[on])
    assert not np.array_equal(full[~on], before[~on])
    assert np.array_equal(ring_got[~on], ring_before[~on]) and not np.array_equal(ring_got[on], ring_before[on])
    assert np.array_equal(grid_got[~on], grid_before[~on]) and not np.array_equal(grid_got[on], grid_before[on])


def test_cast_on_step_false_casts_only_on_cast():
    """``cast_on_step=False``: ``course.step()`` leaves the image alone; ``cast`` draws exactly what
    ``step`` draws with the default (image, ring and grid), and records like it."""
    kw = dict(offset=(0.1, 0.0, 0.05), pitch_deg=5.0, post_radius=0.05, ring=8, grid=(3, 4))
    c, b = gate_course(E=3, cam=tools.DepthCamera(12, 8, 90.0, 0.05, 30.0, **kw))
    lazy, bl = gate_course(E=3, cam=tools.DepthCamera(12, 8, 90.0, 0.05, 30.0, cast_on_step=False, **kw))
    p, q = start_poses(c, np.random.default_rng(4))
    b.set(p, q)
    bl.set(p, q)
    cam, lc = c.components["depth_camera"], lazy.components["depth_camera"]
    c.step()
    lazy.step()
    assert np.all(lc.result.depth.numpy() == 30.0) and np.all(lc.result.grid.numpy() == 30.0)  # untouched
    replay = caller(lambda: lc.cast(lazy.context), device="cpu")
    replay()
    for k in ("depth", "ranges", "grid"):
        assert np.array_equal(getattr(lc.result, k).numpy(), getattr(cam.result, k).numpy()), k


@pytest.mark.parametrize("family", ["gates", "track", "track_poles"])
def test_replay_equals_eager_and_regeneration_needs_no_rerecording(family):
    E = 4
    if family == "gates":
        c, b = gate_course(E=E, max_obstacles=4, obstacle_count_min=2, obstacle_count_max=4)
    else:
        poles = dict(max_obstacles=4, difficulty=1.0) if family == "track_poles" else {}
        cam = tools.DepthCamera(16, 12, 90.0, 0.0, 25.0, pitch_deg=10.0, ring=8 if poles else 0)
        c, b = track_course(cam, E=E, seeds=4, **poles)
        assert (c.result.obstacle_count.numpy() >= 1).all() if poles else c.result.obstacle_pos.shape[1] == 0
    rng = np.random.default_rng(6)
    if family == "track_poles":  # facing a pole
        p, q = pole_poses(c, rng)
    else:
        p, q = start_poses(c, rng, jitter=0.1)
        p[:, 2] = np.maximum(p[:, 2], 0.3)
    b.set(p, q)
    res = c.components["depth_camera"].result
    depth = res.depth

    def snap():  # the image (and the ring's ranges) as bytes
        return [a.numpy().tobytes() for a in (res.depth, res.ranges) if a is not None]

    check_component(c, names=["depth_camera"])
    replay = caller(lambda: c.step(), device="cpu")
    seen = []
    for it in range(3):
        if it == 2:
            c.regenerate(advance=True)  # new courses, same recorded step
        replay()
        replayed = snap()
        c.step()
        assert snap() == replayed, it
        seen.append(replayed[0])
    assert seen[0] == seen[1] and seen[2] != seen[1]
    mask = wp.array([0, 1, 0, 1], dtype=wp.int32, device="cpu")
    c.regenerate(mask=mask, advance=True)
    replay()
    new = depth.numpy()
    old = np.frombuffer(seen[2], np.float32).reshape(new.shape)
    assert np.array_equal(new[[0, 2]], old[[0, 2]]) and not np.array_equal(new[[1, 3]], old[[1, 3]])


def test_result_and_registration():
    c, b = gate_course(E=2)
    cam = c.components["depth_camera"]
    assert isinstance(cam, tools.DepthCamera) and cam.name == "depth_camera"
    assert getattr(c, "depth_camera", cam) is cam  # course.depth_camera once the course exposes it
    res = c.step()
    assert res["depth_camera"] is cam.result and cam.result.depth.shape == (2, 16, 24)
    assert cam.result.depth.dtype == wp.float32
    assert cam.post_radius == 0.05
    clone = res.clone()
    assert clone["depth_camera"].depth is not cam.result.depth
    # post radius "auto": the DiscCollision's
    c2 = Course.gates(tg.GateGenerator(presets.gates(2, "cpu", gate_width=1.0), seeds=1), collision=0.07,
                      extra=[tools.DepthCamera(8, 6, 90.0, 0.0, 10.0)])
    assert c2.components["depth_camera"].post_radius == pytest.approx(0.07)


@pytest.mark.parametrize("kwargs, field", [
    (dict(width=0), "width"), (dict(width=5000), "width"), (dict(height=0), "height"), (dict(height=2.5), "height"),
    (dict(fov_deg=0.0), "fov_deg"), (dict(fov_deg=180.0), "fov_deg"), (dict(fov_deg=float("nan")), "fov_deg"),
    (dict(near=-1.0), "near"), (dict(far=0.05), "far"), (dict(near=2.0, far=1.0), "far"),
    (dict(far=float("inf")), "far"), (dict(offset=(0.0, float("nan"), 0.0)), "offset[1]"),
    (dict(offset=(0.0, 0.0)), "offset"), (dict(pitch_deg=float("nan")), "pitch_deg"),
    (dict(pitch_deg=95.0), "pitch_deg"),
    (dict(convention="euclid"), "convention"), (dict(wall_height=-0.1), "wall_height"),
    (dict(post_radius=-1.0), "post_radius"), (dict(post_radius="big"), "post_radius"),
    (dict(ring=-1), "ring"), (dict(ring=2.5), "ring"),
    (dict(grid=(0, 3)), "grid"), (dict(grid=(2,)), "grid"), (dict(grid=(2.0, 3)), "grid"), (dict(grid=5), "grid"),
    (dict(grid=(2, 2), grid_spacing=0.0), "grid_spacing"), (dict(grid=(2, 2), grid_spacing=float("nan")), "grid_spacing"),
    (dict(grid=(2, 2), grid_direction=(0, 0, 0)), "grid_direction"),
    (dict(grid=(2, 2), grid_direction=(0, float("inf"), 0)), "grid_direction[1]"),
    (dict(cast_on_step=1), "cast_on_step"),
])
def test_bad_input_refused_naming_the_field(kwargs, field):
    args = dict(width=8, height=6, fov_deg=90.0, near=0.1, far=10.0)
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=field.replace("[", r"\[").replace("]", r"\]")):
        tools.DepthCamera(**args)


@pytest.mark.cuda
def test_cuda_replay_equals_eager_and_matches_the_cpu():
    """On a GPU: the recorded step replays the eager image byte for byte (also after a masked
    regeneration, without re-recording), and the image matches the CPU's."""
    E, cuda = 8, "cuda:0"
    kw = dict(gate_width=1.0, max_obstacles=4, obstacle_count_min=2, obstacle_count_max=4)

    def build(device):
        cam = tools.DepthCamera(32, 24, 90.0, 0.05, 30.0, offset=(0.1, 0.0, 0.05), post_radius=0.05, ring=16)
        c = Course(tg.GateGenerator(presets.gates(E, device, **kw), seeds=5), [cam])
        pos, quat = wp.zeros(E, dtype=wp.vec3f, device=device), wp.zeros(E, dtype=wp.quatf, device=device)
        c.bind(position=pos, orientation=quat)
        return c, cam, pos, quat

    host, hcam, hpos, hquat = build("cpu")
    dev, dcam, dpos, dquat = build(cuda)
    p, q = start_poses(host, np.random.default_rng(12), jitter=0.1)
    for a, v in ((hpos, p), (hquat, q), (dpos, p), (dquat, q)):
        a.assign(np.asarray(v, np.float32))
    host.step()
    dev.step()
    same_course = np.array_equal(host.result.pos.numpy(), dev.result.pos.numpy())
    if same_course:
        compare_images(dcam.result.depth.numpy(), hcam.result.depth.numpy(), 30.0, tol=1e-3, frac=0.99)
    eager = dcam.result.depth.numpy().tobytes()
    replay = caller(lambda: dev.step(), device=cuda)
    replay()
    wp.synchronize_device(cuda)
    assert dcam.result.depth.numpy().tobytes() == eager
    dev.regenerate(mask=wp.array([0, 1, 0, 1, 0, 0, 1, 0], dtype=wp.int32, device=cuda), advance=True)
    replay()
    replayed = (dcam.result.depth.numpy().tobytes(), dcam.result.ranges.numpy().tobytes())
    dev.step()
    assert (dcam.result.depth.numpy().tobytes(), dcam.result.ranges.numpy().tobytes()) == replayed
    assert replayed[0] != eager
