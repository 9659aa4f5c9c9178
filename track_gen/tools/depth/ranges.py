"""The range rays of :class:`~track_gen.tools.depth.DepthCamera`: a ring (``ring=N``: N rays in
the body's xy plane from the camera mount) and a grid (``grid=(rows, cols)``: parallel rays from a
grid of points around the mount, a height scan when they point down), cast one thread per (env,
ray) against the same scene as the image (:func:`cast_ray`, every primitive behind a bounding test)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import warp as wp

from track_gen.math import finite_quat, unit_lateral_xy
from track_gen.tools._common import env_position, gates_in_use, real
from track_gen.tools.collision.edges import chunk_range, edge_pt
from track_gen.tools.collision.pose import POSE_LIMIT
from track_gen.tools.depth.rays import ray_aabb2, ray_cylinder, ray_gate_frame, ray_plane_z, ray_wall, sphere_misses

__all__ = ["cast_ray", "check_grid", "grid_rays", "range_kernel", "ring_rays"]


def ring_rays(n: int) -> np.ndarray:
    """``[n, 3]`` body-frame unit rays of the ring: ``(cos a_k, sin a_k, 0)``, ``a_k = 2 pi k / n``
    (ray 0 along body x, counter-clockwise seen from above, so ray n/4 points to body +y, left)."""
    a = 2.0 * math.pi * np.arange(n) / n
    return np.stack([np.cos(a), np.sin(a), np.zeros(n)], 1)


def grid_rays(rows: int, cols: int, spacing: float, direction) -> tuple[np.ndarray, np.ndarray]:
    """The grid's ray origins relative to the mount and its (shared) unit direction, body frame,
    ``[rows * cols, 3]`` each, row-major: ray ``(r, c)`` starts at ``(x_r, y_c, 0)`` with
    ``x_r = ((rows - 1) / 2 - r) spacing`` (row 0 the front-most) and ``y_c = ((cols - 1) / 2 - c)
    spacing`` (column 0 the left-most), so the grid seen from above with body x up reads like an image."""
    d = np.asarray(direction, np.float64)
    d = d / np.linalg.norm(d)
    rr, cc = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    x = (0.5 * (rows - 1) - rr.reshape(-1)) * spacing
    y = (0.5 * (cols - 1) - cc.reshape(-1)) * spacing
    origins = np.stack([x, y, np.zeros_like(x)], 1)
    return origins, np.broadcast_to(d, origins.shape).copy()


def check_grid(grid, spacing, direction) -> tuple[tuple[int, int], float, tuple[float, float, float]]:
    """``grid`` (None or (rows, cols), each 1 ... 4096), ``grid_spacing`` (> 0, finite) and
    ``grid_direction`` (3 finite numbers, not all 0), checked; errors name the field."""
    if grid is None:
        shape = (0, 0)
    else:
        try:
            g = tuple(grid)
        except TypeError:
            raise TypeError(f"grid: expected None or (rows, cols) of range rays, got {grid!r}") from None
        if len(g) != 2 or any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= int(v) <= 4096
                              for v in g):
            raise ValueError(f"grid: expected (rows, cols), two ints in 1 ... 4096, got {grid!r}")
        shape = (int(g[0]), int(g[1]))
    s = real("grid_spacing", spacing)
    if not s > 0.0:
        raise ValueError(f"grid_spacing: expected a distance > 0 [m], got {spacing!r}")
    try:
        dv = tuple(direction)
    except TypeError:
        raise TypeError(f"grid_direction: expected (x, y, z) in the body frame, got {direction!r}") from None
    if len(dv) != 3:
        raise ValueError(f"grid_direction: expected 3 numbers (x, y, z), got {direction!r}")
    dv = tuple(real(f"grid_direction[{i}]", v) for i, v in enumerate(dv))
    if not any(v != 0.0 for v in dv):
        raise ValueError(f"grid_direction: expected a non-zero direction, got {direction!r}")
    return shape, s, dv


@wp.func
def cast_ray(o: wp.vec3f, d: wp.vec3f, tmin: float, best: float, e: int, ground: int,
             valid: wp.array(dtype=wp.int32),
             has_gates: int, gpos: wp.array2d(dtype=wp.vec3f), gnormal: wp.array2d(dtype=wp.vec3f),
             gcount: wp.array(dtype=wp.int32), gwidth: wp.array(dtype=wp.float32),
             gheight: wp.array(dtype=wp.float32), gthick: wp.array(dtype=wp.float32), post_r: float,
             has_obs: int, opos: wp.array2d(dtype=wp.vec3f), orad: wp.array2d(dtype=wp.float32),
             oheight: wp.array2d(dtype=wp.float32), ocount: wp.array(dtype=wp.int32),
             wall_h: float, left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
             boxes: wp.array2d(dtype=wp.vec4f), tz: wp.array2d(dtype=wp.float32), K: int, C: int) -> float:
    """The nearest surface ``t`` in ``[tmin, best)`` of env e's scene along the unit ray
    ``o + t d`` (``best`` when none): the image kernel's primitives, for one ray."""
    if ground != 0:
        best = wp.min(best, ray_plane_z(o, d, 0.0, tmin))
    ok = valid[e] != 0
    G = int(0)
    if has_gates != 0:
        G = gates_in_use(valid[e], gcount[e], gpos.shape[1])
    for g in range(G):
        w = gwidth[e]
        h = gheight[e]
        t = gthick[e]
        gp = gpos[e, g]
        lat = unit_lateral_xy(gnormal[e, g])
        if lat[0] == 0.0 and lat[1] == 0.0:
            continue
        if post_r > 0.0:
            top = gp[2] + 0.5 * h + t
            for s in range(2):
                sg = 1.0 - 2.0 * float(s)
                pc = wp.vec2f(gp[0], gp[1]) + (sg * (0.5 * w + 0.5 * t)) * lat
                best = wp.min(best, ray_cylinder(o, d, pc, post_r, 0.0, top, tmin))
        rad = wp.sqrt((0.5 * w + t) * (0.5 * w + t) + (0.5 * h + t) * (0.5 * h + t) + 0.25 * t * t) * 1.001 + 1.0e-4
        if not sphere_misses(o, d, gp, rad, tmin, best):
            nh = wp.vec2f(lat[1], -lat[0])
            r = o - gp
            ol = wp.vec3f(r[0] * lat[0] + r[1] * lat[1], r[0] * nh[0] + r[1] * nh[1], r[2])
            dl = wp.vec3f(d[0] * lat[0] + d[1] * lat[1], d[0] * nh[0] + d[1] * nh[1], d[2])
            best = ray_gate_frame(ol, dl, 0.5 * w + t, 0.5 * t, 0.5 * h + t, 0.5 * w, 0.5 * h, tmin, best)
    n_obs = int(0)
    if has_obs != 0 and ok:
        n_obs = wp.clamp(ocount[e], 0, opos.shape[1])
    for m in range(n_obs):
        b = opos[e, m]
        best = wp.min(best, ray_cylinder(o, d, wp.vec2f(b[0], b[1]), orad[e, m], b[2], b[2] + oheight[e, m], tmin))
    if wall_h > 0.0 and ok:
        N = left.shape[1]
        for ch in range(2 * C):
            u0, u1 = ray_aabb2(o, d, boxes[e, ch])
            if u0 > u1 or u1 < tmin or u0 >= best:
                continue
            side, i0, i1 = chunk_range(ch, K, C, N)
            a = edge_pt(left, right, e, side, i0)
            for s in range(i0, i1):
                s1 = (s + 1) % N
                b2 = edge_pt(left, right, e, side, s1)
                best = wp.min(best, ray_wall(o, d, a, b2, tz[e, s], tz[e, s1], wall_h, tmin))
                a = b2
    return best


@wp.kernel
def range_kernel(render: wp.array(dtype=wp.int32), has_render: int,
                 pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
                 quat: wp.array(dtype=wp.quatf), starts: wp.array(dtype=wp.vec3f), dirs: wp.array(dtype=wp.vec3f),
                 offset: wp.vec3f, near: float, far: float, ground: int, valid: wp.array(dtype=wp.int32),
                 has_gates: int, gpos: wp.array2d(dtype=wp.vec3f), gnormal: wp.array2d(dtype=wp.vec3f),
                 gcount: wp.array(dtype=wp.int32), gwidth: wp.array(dtype=wp.float32),
                 gheight: wp.array(dtype=wp.float32), gthick: wp.array(dtype=wp.float32), post_r: float,
                 has_obs: int, opos: wp.array2d(dtype=wp.vec3f), orad: wp.array2d(dtype=wp.float32),
                 oheight: wp.array2d(dtype=wp.float32), ocount: wp.array(dtype=wp.int32),
                 wall_h: float, left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                 boxes: wp.array2d(dtype=wp.vec4f), tz: wp.array2d(dtype=wp.float32), K: int, C: int,
                 ranges_out: wp.array2d(dtype=wp.float32)):
    """One thread per (env, range ray): the distance to the first surface along ray k (from
    ``offset + starts[k]``, along ``dirs[k]``, both body frame, ``dirs`` unit), ``far`` when none
    (or for a non-finite pose); envs with ``render == 0`` (when bound) are left untouched."""
    e, k = wp.tid()
    if has_render != 0:
        if render[e] == 0:
            return
    p = env_position(pos, origin, has_origin, e)
    q = quat[e]
    n2 = wp.dot(q, q)
    lim = wp.max(wp.max(wp.abs(p[0]), wp.abs(p[1])), wp.abs(p[2]))
    if not (wp.isfinite(p) and finite_quat(q) and wp.isfinite(n2) and n2 > 0.0 and lim <= POSE_LIMIT):
        ranges_out[e, k] = far
        return
    q = q / wp.sqrt(n2)
    o = p + wp.quat_rotate(q, offset + starts[k])
    d = wp.quat_rotate(q, dirs[k])
    best = cast_ray(o, d, near, far, e, ground, valid, has_gates, gpos, gnormal, gcount, gwidth, gheight, gthick,
                    post_r, has_obs, opos, orad, oheight, ocount, wall_h, left, right, boxes, tz, K, C)
    ranges_out[e, k] = wp.where(best < far, best, far)
