"""The image of :class:`~track_gen.tools.depth.DepthCamera`: the pinhole rays
(:func:`camera_rays`), the row planes used to cull (:func:`row_planes`), and the kernel that casts
one image row per thread (:data:`depth_kernel`)."""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from track_gen.tools.depth.rays import ray_cylinder, ray_plane_z
from track_gen.tools.depth.scene import (CameraPose, GateShape, Scene, camera_origin, gate_shape, post_centre, post_top,
                                         ray_frame, ray_pole, ray_walls, scene_counts)

__all__ = ["ImageRays", "camera_rays", "depth_kernel", "row_planes"]


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


@wp.struct
class ImageRays:
    """The camera's pixel rays (body frame, row-major), their cosines to the optical axis, the
    row planes that cull (:func:`row_planes`), the focal length [pixels], the mount ``offset``
    (body frame), the clipping distances and the depth convention (``zdepth``: 1 for z-depth)."""

    rays: wp.array(dtype=wp.vec3f)
    cosines: wp.array(dtype=wp.float32)
    row_normals: wp.array(dtype=wp.vec3f)
    row_axes: wp.array(dtype=wp.vec3f)
    row_len: wp.array(dtype=wp.float32)
    focal: float
    offset: wp.vec3f
    near: float
    far: float
    zdepth: int


@wp.struct
class RowPlane:
    """One image row turned by the body's orientation: the unit normal of the plane that holds
    its rays, the unit axis of its centre ray, the unit right axis and the axis's length."""

    normal: wp.vec3f
    axis: wp.vec3f
    right: wp.vec3f
    axis_len: float


@wp.func
def _row_plane(row_normals: wp.array(dtype=wp.vec3f), row_axes: wp.array(dtype=wp.vec3f),
               row_len: wp.array(dtype=wp.float32), q: wp.quatf, i: int) -> RowPlane:
    row = RowPlane()
    row.normal = wp.quat_rotate(q, row_normals[i])
    row.axis = wp.quat_rotate(q, row_axes[i])
    row.right = wp.quat_rotate(q, wp.vec3f(0.0, -1.0, 0.0))
    row.axis_len = row_len[i]
    return row


@wp.func
def _row_span(c: wp.vec3f, rad: float, row: RowPlane, focal: float, W: int):
    """:func:`_pixel_span` in the row ``row``."""
    return _pixel_span(c, rad, row.normal, row.axis, row.right, row.axis_len, focal, W)


@wp.func
def _row_upright_span(base: wp.vec3f, top: float, r: float, row: RowPlane, focal: float, W: int):
    """:func:`_upright_span` in the row ``row``."""
    return _upright_span(base, top, r, row.normal, row.axis, row.right, row.axis_len, focal, W)


@wp.func
def _limits(cs: float, near: float, far: float, zdepth: int):
    """The ray parameter range ``(tmin, tfar)`` of a pixel whose ray has cosine ``cs`` to the axis."""
    if zdepth != 0:
        return near / cs, far / cs
    return near, far


@wp.func
def _gate_row(rays: wp.array(dtype=wp.vec3f), cosines: wp.array(dtype=wp.float32), near: float, far: float,
              zdepth: int, focal: float, row: RowPlane, gate: GateShape, post_r: float, o: wp.vec3f, q: wp.quatf,
              a: int, i: int, depth_out: wp.array3d(dtype=wp.float32)):
    """Gate ``gate`` in row i of agent a's image: the frame over the pixels of the row whose rays may
    meet its bounding sphere, then each post (when ``post_r > 0``) over those that may meet it."""
    W = depth_out.shape[2]
    k0 = i * W
    j0, j1 = _row_span(gate.pos - o, gate.radius, row, focal, W)
    for j in range(j0, j1 + 1):
        tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
        d = wp.quat_rotate(q, rays[k0 + j])
        depth_out[a, i, j] = ray_frame(o, d, gate, tmin, depth_out[a, i, j])
    if post_r > 0.0:
        top = post_top(gate)
        for s in range(2):
            pc = post_centre(gate, s)
            j0, j1 = _row_upright_span(wp.vec3f(pc[0], pc[1], 0.0) - o, top, post_r * 1.001 + 1.0e-4, row, focal, W)
            for j in range(j0, j1 + 1):
                tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
                d = wp.quat_rotate(q, rays[k0 + j])
                depth_out[a, i, j] = wp.min(depth_out[a, i, j], ray_cylinder(o, d, pc, post_r, 0.0, top, tmin))


@wp.func
def _pole_row(rays: wp.array(dtype=wp.vec3f), cosines: wp.array(dtype=wp.float32), near: float, far: float,
              zdepth: int, focal: float, row: RowPlane, base: wp.vec3f, radius: float, height: float, o: wp.vec3f,
              q: wp.quatf, a: int, i: int, depth_out: wp.array3d(dtype=wp.float32)):
    """A pole obstacle in row i of agent a's image: the pixels whose rays may meet it."""
    W = depth_out.shape[2]
    j0, j1 = _row_upright_span(base - o, height, radius * 1.001 + 1.0e-4, row, focal, W)
    k0 = i * W
    for j in range(j0, j1 + 1):
        tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
        d = wp.quat_rotate(q, rays[k0 + j])
        depth_out[a, i, j] = wp.min(depth_out[a, i, j], ray_pole(o, d, base, radius, height, tmin))


@wp.kernel
def depth_kernel(lens: ImageRays, scene: Scene, pose: CameraPose, depth_out: wp.array3d(dtype=wp.float32)):
    """One thread per image row (agent ``agent`` of env e, row i): the pose once, then primitive by primitive over
    the row's W rays, keeping each pixel's best ray parameter in its own ``depth_out`` element.
    The row's rays all lie in one plane through the camera centre (normal ``row_normals[i]``,
    body frame), so a primitive whose bounding sphere misses that plane is skipped for the row.
    Envs with ``render == 0`` (when bound) are left untouched; a non-finite pose reads ``far``.
    The structs' fields are read here and passed on as arrays and numbers (a struct argument of
    a function is a copy)."""
    agent, i = wp.tid()  # agent ``agent``'s image, against the course of its env e
    e = agent // pose.agents
    W = depth_out.shape[2]
    rays = lens.rays
    cosines = lens.cosines
    near = lens.near
    far = lens.far
    zdepth = lens.zdepth
    focal = lens.focal
    cast, ok, q, o = camera_origin(pose, agent, e, lens.offset)
    if not cast:
        return
    if not ok:
        for j in range(W):
            depth_out[agent, i, j] = far
        return
    row = _row_plane(lens.row_normals, lens.row_axes, lens.row_len, q, i)
    k0 = i * W
    # the ground (or nothing): every pixel's start value
    for j in range(W):
        tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
        best = tfar
        if scene.ground != 0:
            best = wp.min(best, ray_plane_z(o, wp.quat_rotate(q, rays[k0 + j]), 0.0, tmin))
        depth_out[agent, i, j] = best
    G, n_obs, walls = scene_counts(scene.valid[e], scene.has_gates, scene.gate_count[e], scene.gate_pos.shape[1],
                                   scene.has_obstacles, scene.obstacle_count[e], scene.obstacle_pos.shape[1],
                                   scene.wall_height)
    # gates: frames (and posts)
    for g in range(G):
        gate = gate_shape(scene.gate_pos, scene.gate_normal, scene.gate_width, scene.gate_height, scene.gate_thickness,
                          e, g)
        if gate.lat[0] != 0.0 or gate.lat[1] != 0.0:
            _gate_row(rays, cosines, near, far, zdepth, focal, row, gate, scene.post_radius, o, q, agent, i, depth_out)
    # pole obstacles
    for m in range(n_obs):
        _pole_row(rays, cosines, near, far, zdepth, focal, row, scene.obstacle_pos[e, m],
                  scene.obstacle_radius[e, m], scene.obstacle_height[e, m], o, q, agent, i, depth_out)
    # band walls: chunk boxes, then their segments
    if walls:
        for j in range(W):
            tmin, tfar = _limits(cosines[k0 + j], near, far, zdepth)
            d = wp.quat_rotate(q, rays[k0 + j])
            depth_out[agent, i, j] = ray_walls(o, d, scene.left, scene.right, scene.boxes, scene.ground_z,
                                           scene.wall_height, scene.chunk_len, scene.chunks, e, tmin,
                                           depth_out[agent, i, j])
    # ray parameter -> depth
    for j in range(W):
        cs = cosines[k0 + j]
        tmin, tfar = _limits(cs, near, far, zdepth)
        best = depth_out[agent, i, j]
        out = far
        if best < tfar:
            out = best
            if zdepth != 0:
                out = best * cs
        depth_out[agent, i, j] = out
