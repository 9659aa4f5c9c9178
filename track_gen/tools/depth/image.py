"""The image of :class:`~track_gen.tools.depth.DepthCamera`: the pinhole rays
(:func:`camera_rays`), the row planes used to cull (:func:`row_planes`), and the kernel that casts
one image row per thread (:data:`depth_kernel`)."""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from track_gen.math import finite_quat, unit_lateral_xy
from track_gen.tools._common import env_position, gates_in_use
from track_gen.tools.collision.edges import chunk_range, edge_pt
from track_gen.tools.collision.pose import POSE_LIMIT
from track_gen.tools.depth.rays import ray_aabb2, ray_cylinder, ray_gate_frame, ray_plane_z, ray_wall, sphere_misses

__all__ = ["camera_rays", "depth_kernel", "row_planes"]


def camera_rays(width: int, height: int, fov_deg: float, pitch_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """The body-frame unit ray of every pixel, ``[H * W, 3]`` float64 (row-major, row 0 on top),
    and its cosine to the optical axis ``[H * W]`` (z-depth = distance * cosine).

    Pinhole, square pixels, rays through pixel centres: focal length ``f = (W / 2) / tan(fov / 2)``
    pixels; pixel (i, j) looks along ``forward + x right - y up`` with ``x = (j + 0.5 - W / 2) / f``,
    ``y = (i + 0.5 - H / 2) / f``. The mount looks along body x pitched down by ``pitch_deg``:
    ``forward = (cos p, 0, -sin p)``, ``right = (0, -1, 0)``, ``up = (sin p, 0, cos p)``."""
    f = 0.5 * width / math.tan(0.5 * math.radians(fov_deg))
    p = math.radians(pitch_deg)
    fwd = np.array([math.cos(p), 0.0, -math.sin(p)])
    right = np.array([0.0, -1.0, 0.0])
    up = np.array([math.sin(p), 0.0, math.cos(p)])
    jj, ii = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    x = ((jj - 0.5 * width) / f).reshape(-1, 1)
    y = ((ii - 0.5 * height) / f).reshape(-1, 1)
    d = fwd + x * right - y * up
    n = np.linalg.norm(d, axis=1, keepdims=True)
    return d / n, 1.0 / n[:, 0]


def row_planes(width: int, height: int, fov_deg: float, pitch_deg: float):
    """Per image row, body frame: the unit normal ``[H, 3]`` of the plane through the camera centre
    that holds the row's rays, the unit axis ``[H, 3]`` of its centre ray (x = 0) and that axis's
    unnormalized length ``[H]``: row i's rays are ``a_i + x right`` with ``a_i = forward - y_i up``."""
    f = 0.5 * width / math.tan(0.5 * math.radians(fov_deg))
    p = math.radians(pitch_deg)
    fwd = np.array([math.cos(p), 0.0, -math.sin(p)])
    right = np.array([0.0, -1.0, 0.0])
    up = np.array([math.sin(p), 0.0, math.cos(p)])
    y = (np.arange(height) + 0.5 - 0.5 * height) / f
    a = fwd[None] - y[:, None] * up[None]
    la = np.linalg.norm(a, axis=1)
    n = np.cross(right, a)
    return n / np.linalg.norm(n, axis=1, keepdims=True), a / la[:, None], la


# ------------------------------------------------------------------------------------------------
# the kernel
# ------------------------------------------------------------------------------------------------
@wp.func
def _pixel_span(c: wp.vec3f, rad: float, plane: wp.vec3f, au: wp.vec3f, rw: wp.vec3f, alen: float, focal: float,
                W: int):
    """The pixels ``j0 .. j1`` (inclusive; empty when j0 > j1) of an image row whose rays may meet
    the sphere of radius ``rad`` at ``c`` (relative to the camera centre). The row's rays lie in
    the plane of unit normal ``plane``, spanned by the unit axis ``au`` (x = 0) and the unit right
    axis ``rw``; pixel j's ray is ``alen * au + x_j * rw``, ``x_j = (j + 0.5 - W / 2) / focal``.
    Conservative: one pixel of margin each side."""
    cp = wp.dot(c, plane)
    if wp.abs(cp) > rad:
        return 1, 0
    rho2 = rad * rad - cp * cp
    cu = wp.dot(c, au)
    cv = wp.dot(c, rw)
    den = cu * cu - rho2
    if cu < 0.0 and den > 0.0:
        return 1, 0  # the circle lies wholly behind the camera
    if den <= 0.0:
        return 0, W - 1  # it straddles the camera's side plane: any column may see it
    # the rays (alen, x) within rho of (cu, cv): x between the roots of
    # (cu^2 - rho^2) x^2 - 2 cu cv alen x + (cv^2 - rho^2) alen^2 = 0
    sq = wp.sqrt(wp.max(rho2 * (cu * cu + cv * cv - rho2), 0.0))
    x_lo = alen * (cu * cv - sq) / den
    x_hi = alen * (cu * cv + sq) / den
    half_w = 0.5 * float(W)
    j0 = int(wp.floor(wp.max(x_lo * focal + half_w - 0.5, -2.0))) - 1
    j1 = int(wp.ceil(wp.min(x_hi * focal + half_w - 0.5, float(W) + 1.0))) + 1
    return wp.max(j0, 0), wp.min(j1, W - 1)


@wp.func
def _upright_span(base: wp.vec3f, top: float, r: float, plane: wp.vec3f, au: wp.vec3f, rw: wp.vec3f, alen: float,
                  focal: float, W: int):
    """:func:`_pixel_span` of an upright cylinder (axis from ``base`` (relative to the camera) up
    ``top`` metres, radius ``r``): a ray in the row's plane meets it only within ``r`` of the part
    of its axis that lies within ``r`` of the plane, so that part, grown by ``r``, bounds it."""
    ax = wp.vec3f(0.0, 0.0, top)
    da = wp.dot(base, plane)
    db = da + top * plane[2]
    s0 = float(0.0)
    s1 = float(1.0)
    if db != da:
        u = (-r - da) / (db - da)
        v = (r - da) / (db - da)
        s0 = wp.max(wp.min(u, v), 0.0)
        s1 = wp.min(wp.max(u, v), 1.0)
    elif wp.abs(da) > r:
        return 1, 0
    if s0 > s1:
        return 1, 0
    mid = base + (0.5 * (s0 + s1)) * ax
    rad = (0.5 * (s1 - s0) * top + r) * 1.001 + 1.0e-4
    return _pixel_span(mid, rad, plane, au, rw, alen, focal, W)


@wp.func
def _limits(cs: float, near: float, far: float, zdepth: int):
    """The ray parameter range ``(tmin, tfar)`` of a pixel whose ray has cosine ``cs`` to the axis."""
    if zdepth != 0:
        return near / cs, far / cs
    return near, far


@wp.kernel
def depth_kernel(render: wp.array(dtype=wp.int32), has_render: int,
                  pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
                  quat: wp.array(dtype=wp.quatf),
                  rays: wp.array(dtype=wp.vec3f), cosines: wp.array(dtype=wp.float32),
                  row_normals: wp.array(dtype=wp.vec3f), row_axes: wp.array(dtype=wp.vec3f),
                  row_len: wp.array(dtype=wp.float32), focal: float, offset: wp.vec3f,
                  near: float, far: float, zdepth: int, ground: int,
                  valid: wp.array(dtype=wp.int32),
                  has_gates: int, gpos: wp.array2d(dtype=wp.vec3f), gnormal: wp.array2d(dtype=wp.vec3f),
                  gcount: wp.array(dtype=wp.int32), gwidth: wp.array(dtype=wp.float32),
                  gheight: wp.array(dtype=wp.float32), gthick: wp.array(dtype=wp.float32), post_r: float,
                  has_obs: int, opos: wp.array2d(dtype=wp.vec3f), orad: wp.array2d(dtype=wp.float32),
                  oheight: wp.array2d(dtype=wp.float32), ocount: wp.array(dtype=wp.int32),
                  wall_h: float, left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                  boxes: wp.array2d(dtype=wp.vec4f), tz: wp.array2d(dtype=wp.float32), K: int, C: int,
                  depth_out: wp.array3d(dtype=wp.float32)):
    """One thread per image row (env e, row i): the pose once, then primitive by primitive over
    the row's W rays, keeping each pixel's best ray parameter in its own ``depth_out`` element.
    The row's rays all lie in one plane through the camera centre (normal ``row_normals[i]``,
    body frame), so a primitive whose bounding sphere misses that plane is skipped for the row."""
    e, i = wp.tid()
    if has_render != 0:
        if render[e] == 0:
            return
    W = depth_out.shape[2]
    p = env_position(pos, origin, has_origin, e)
    q = quat[e]
    n2 = wp.dot(q, q)
    lim = wp.max(wp.max(wp.abs(p[0]), wp.abs(p[1])), wp.abs(p[2]))
    if not (wp.isfinite(p) and finite_quat(q) and wp.isfinite(n2) and n2 > 0.0 and lim <= POSE_LIMIT):
        for j in range(W):
            depth_out[e, i, j] = far
        return
    q = q / wp.sqrt(n2)
    o = p + wp.quat_rotate(q, offset)
    plane = wp.quat_rotate(q, row_normals[i])
    au = wp.quat_rotate(q, row_axes[i])
    rw = wp.quat_rotate(q, wp.vec3f(0.0, -1.0, 0.0))
    alen = row_len[i]
    ok = valid[e] != 0
    k0 = i * W
    # the ground (or nothing): every pixel's start value
    for j in range(W):
        tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
        best = tfar
        if ground != 0:
            best = wp.min(best, ray_plane_z(o, wp.quat_rotate(q, rays[k0 + j]), 0.0, tmin))
        depth_out[e, i, j] = best
    # gates: frames (and posts)
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
        rad = wp.sqrt((0.5 * w + t) * (0.5 * w + t) + (0.5 * h + t) * (0.5 * h + t) + 0.25 * t * t)
        rad = rad * 1.001 + 1.0e-4  # slack: rounding (and |d| = 1 +- ulp) never culls a hit
        j0, j1 = _pixel_span(gp - o, rad, plane, au, rw, alen, focal, W)
        if j0 <= j1:
            nh = wp.vec2f(lat[1], -lat[0])  # the unit horizontal normal
            r = o - gp
            ol = wp.vec3f(r[0] * lat[0] + r[1] * lat[1], r[0] * nh[0] + r[1] * nh[1], r[2])
            for j in range(j0, j1 + 1):
                best = depth_out[e, i, j]
                d = wp.quat_rotate(q, rays[k0 + j])
                tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
                if not sphere_misses(o, d, gp, rad, tmin, best):
                    dl = wp.vec3f(d[0] * lat[0] + d[1] * lat[1], d[0] * nh[0] + d[1] * nh[1], d[2])
                    best = ray_gate_frame(ol, dl, 0.5 * w + t, 0.5 * t, 0.5 * h + t, 0.5 * w, 0.5 * h, tmin, best)
                    depth_out[e, i, j] = best
        if post_r > 0.0:
            top = gp[2] + 0.5 * h + t
            for s in range(2):
                sg = 1.0 - 2.0 * float(s)
                pc = wp.vec2f(gp[0], gp[1]) + (sg * (0.5 * w + 0.5 * t)) * lat
                j0, j1 = _upright_span(wp.vec3f(pc[0], pc[1], 0.0) - o, top, post_r * 1.001 + 1.0e-4, plane, au, rw,
                                       alen, focal, W)
                for j in range(j0, j1 + 1):
                    tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
                    d = wp.quat_rotate(q, rays[k0 + j])
                    depth_out[e, i, j] = wp.min(depth_out[e, i, j], ray_cylinder(o, d, pc, post_r, 0.0, top, tmin))
    # pole obstacles
    n_obs = int(0)
    if has_obs != 0 and ok:
        n_obs = wp.clamp(ocount[e], 0, opos.shape[1])
    for m in range(n_obs):
        b = opos[e, m]
        rr = orad[e, m]
        hh = oheight[e, m]
        j0, j1 = _upright_span(b - o, hh, rr * 1.001 + 1.0e-4, plane, au, rw, alen, focal, W)
        for j in range(j0, j1 + 1):
            tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
            d = wp.quat_rotate(q, rays[k0 + j])
            depth_out[e, i, j] = wp.min(depth_out[e, i, j],
                                        ray_cylinder(o, d, wp.vec2f(b[0], b[1]), rr, b[2], b[2] + hh, tmin))
    # band walls: chunk boxes, then their segments
    if wall_h > 0.0 and ok:
        N = left.shape[1]
        for j in range(W):
            best = depth_out[e, i, j]
            tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
            d = wp.quat_rotate(q, rays[k0 + j])
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
            depth_out[e, i, j] = best
    # ray parameter -> depth
    for j in range(W):
        cs = cosines[k0 + j]
        tmin, tfar = _limits(cs, near, far, zdepth)
        best = depth_out[e, i, j]
        out = far
        if best < tfar:
            out = best
            if zdepth != 0:
                out = best * cs
        depth_out[e, i, j] = out
