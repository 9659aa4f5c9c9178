"""Warp kernels behind the course terms (one thread per env; strided pose views are indexed, never copied).

Positions: ``pos_w`` is the world-frame root position (a strided view of the sim state),
``origin`` the env origins; ``pos_w - origin`` is the env frame the course lives in. Quaternions
are Warp/Isaac Lab ``(x, y, z, w)``. Every output row is written for every env, so the kernels
are stateless: a replayed graph gives the eager result.
"""

from __future__ import annotations

import warp as wp

from track_gen.rng import stream_state
from track_gen.tools.checkpoints import jitter_position

wp.set_module_options({"enable_backward": False})


@wp.func
def _body(q: wp.quatf, p: wp.vec3f, c: wp.vec3f):
    """``c`` (env frame) in the body frame of pose (p, q)."""
    return wp.quat_rotate_inv(q, c - p)


@wp.func
def _put3(out: wp.array2d(dtype=wp.float32), e: int, j: int, v: wp.vec3f):
    out[e, j] = v[0]
    out[e, j + 1] = v[1]
    out[e, j + 2] = v[2]


@wp.kernel
def next_checkpoints_kernel(
    pos_w: wp.array(dtype=wp.vec3f),
    quat_w: wp.array(dtype=wp.quatf),
    origin: wp.array(dtype=wp.vec3f),
    valid: wp.array(dtype=wp.int32),
    cp_pos: wp.array2d(dtype=wp.vec3f),
    cp_normal: wp.array2d(dtype=wp.vec3f),
    cp_hw: wp.array2d(dtype=wp.float32),
    cp_hh: wp.array2d(dtype=wp.float32),
    cp_count: wp.array(dtype=wp.int32),
    cp_closed: wp.array(dtype=wp.int32),
    next_index: wp.array(dtype=wp.int32),
    num: int,
    corners: int,
    out: wp.array2d(dtype=wp.float32),
):
    """The next ``num`` checkpoints of each env in its body frame: per checkpoint the centre (3),
    then with ``corners`` the 4 opening corners (12): (+lat, +up), (-lat, +up), (-lat, -up), (+lat, -up).

    Checkpoint ``next + i``; on a loop modulo ``count``, on a sprint clamped to the last one. An env
    with an invalid course or no checkpoint gets zeros."""
    e = wp.tid()
    per = 3
    if corners != 0:
        per = 15
    n = wp.min(cp_count[e], cp_pos.shape[1])
    if valid[e] == 0 or n <= 0:
        for j in range(num * per):
            out[e, j] = 0.0
        return
    p = pos_w[e] - origin[e]
    q = quat_w[e]
    nx = next_index[e]
    for i in range(num):
        k = nx + i
        if cp_closed[e] != 0:
            k = k % n
        else:
            k = wp.min(k, n - 1)
        k = wp.max(k, 0)
        c = cp_pos[e, k]
        base = i * per
        _put3(out, e, base, _body(q, p, c))
        if corners != 0:
            nn = cp_normal[e, k]
            lat = wp.vec3f(-nn[1], nn[0], 0.0)
            ll = wp.length(lat)
            if ll > 0.0:
                lat = lat / ll
            up = wp.cross(nn, lat)
            hw = cp_hw[e, k]
            hh = cp_hh[e, k]
            _put3(out, e, base + 3, _body(q, p, c + lat * hw + up * hh))
            _put3(out, e, base + 6, _body(q, p, c - lat * hw + up * hh))
            _put3(out, e, base + 9, _body(q, p, c - lat * hw - up * hh))
            _put3(out, e, base + 12, _body(q, p, c + lat * hw - up * hh))


@wp.kernel
def track_frame_kernel(
    s: wp.array(dtype=wp.float32),
    lateral: wp.array(dtype=wp.float32),
    vertical: wp.array(dtype=wp.float32),
    heading: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    with_vertical: int,
    out: wp.array2d(dtype=wp.float32),
):
    """[s / length, lateral, sin(heading), cos(heading)] (+ vertical): the localizer's frame."""
    e = wp.tid()
    L = length[e]
    sn = float(0.0)
    if L > 0.0:
        sn = s[e] / L
    out[e, 0] = sn
    out[e, 1] = lateral[e]
    out[e, 2] = wp.sin(heading[e])
    out[e, 3] = wp.cos(heading[e])
    if with_vertical != 0:
        out[e, 4] = vertical[e]


@wp.kernel
def lookahead_kernel(
    pos_w: wp.array(dtype=wp.vec3f),
    quat_w: wp.array(dtype=wp.quatf),
    origin: wp.array(dtype=wp.vec3f),
    frame_s: wp.array(dtype=wp.float32),
    frame_segment: wp.array(dtype=wp.int32),
    points: wp.array2d(dtype=wp.vec3f),
    line_s: wp.array2d(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    length: wp.array(dtype=wp.float32),
    closed: wp.array(dtype=wp.int32),
    distances: wp.array(dtype=wp.float32),
    out: wp.array2d(dtype=wp.float32),
):
    """Points of the course line at arc length ``s + d`` for each distance ``d``, in the body frame.

    ``s`` and the starting segment are the localizer's; a loop wraps, an open line stops at its
    ends. An env whose frame is invalid (segment -1) gets zeros."""
    e = wp.tid()
    D = distances.shape[0]
    n = wp.min(count[e], points.shape[1])
    seg = frame_segment[e]
    closed_e = closed[e] != 0
    m = n - 1
    if closed_e:
        m = n
    if seg < 0 or n < 2 or seg >= m:
        for j in range(3 * D):
            out[e, j] = 0.0
        return
    p = pos_w[e] - origin[e]
    q = quat_w[e]
    L = length[e]
    for i in range(D):
        target = frame_s[e] + distances[i]
        j = seg
        t = float(0.0)
        if closed_e:
            if L > 0.0:
                target = target - L * wp.floor(target / L)
            # walk forwards (cyclically) to the segment holding target
            for _k in range(n + 1):
                s0 = line_s[e, j]
                s1 = L
                if j + 1 < n:
                    s1 = line_s[e, j + 1]
                if target >= s0 and target <= s1:
                    break
                j = (j + 1) % n
        else:
            end = line_s[e, n - 1]
            target = wp.clamp(target, 0.0, end)
            while j > 0 and target < line_s[e, j]:
                j = j - 1
            while j < n - 2 and target > line_s[e, j + 1]:
                j = j + 1
        s0 = line_s[e, j]
        s1 = L
        if j + 1 < n:
            s1 = line_s[e, j + 1]
        a = points[e, j]
        b = points[e, (j + 1) % n]
        if s1 > s0:
            t = wp.clamp((target - s0) / (s1 - s0), 0.0, 1.0)
        _put3(out, e, 3 * i, _body(q, p, a + (b - a) * t))


@wp.kernel
def lap_progress_kernel(
    progress: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    scale: float,
    out: wp.array2d(dtype=wp.float32),
):
    """progress / lap length * scale (laps since reset, continuous); 0 without a course."""
    e = wp.tid()
    L = length[e]
    v = float(0.0)
    if L > 0.0:
        v = progress[e] / L * scale
    out[e, 0] = v


@wp.kernel
def start_pose_kernel(
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    counter: wp.array(dtype=wp.int32),
    key: int,
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    jitter_lateral: float,
    jitter_vertical: float,
    jitter_yaw: float,
    out_pos: wp.array(dtype=wp.vec3f),
    out_yaw: wp.array(dtype=wp.float32),
):
    """The course start pose plus uniform jitter (lateral along the start's left axis, vertical,
    yaw), for masked envs; counter-based draws per env (independent of the other envs)."""
    e = wp.tid()
    if active[e] == 0:
        return
    c = counter[e] + 1
    counter[e] = c
    st = stream_state(seeds[e], c, key, 0)
    r1 = wp.randf(st)
    r2 = wp.randf(st)
    r3 = wp.randf(st)
    yaw = start_yaw[e]
    lat = wp.vec3f(-wp.sin(yaw), wp.cos(yaw), 0.0)
    out_pos[e] = jitter_position(start_pos[e], lat, r1, r2, jitter_lateral, jitter_vertical)
    out_yaw[e] = yaw + jitter_yaw * (2.0 * r3 - 1.0)


# -- per-step event -> term value (shared by both runtimes, so their values agree bit for bit) -----
@wp.kernel
def int_to_float_kernel(src: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.float32)):
    e = wp.tid()
    out[e] = float(src[e])


@wp.kernel
def copy_float_kernel(src: wp.array(dtype=wp.float32), clip: float, use_clip: int, out: wp.array(dtype=wp.float32)):
    e = wp.tid()
    v = src[e]
    if use_clip != 0:
        v = wp.clamp(v, -clip, clip)
    out[e] = v


@wp.kernel
def int_at_least_kernel(src: wp.array(dtype=wp.int32), k: int, out: wp.array(dtype=wp.bool)):
    """out = src >= k (k = 1: nonzero flags)."""
    e = wp.tid()
    out[e] = src[e] >= k


@wp.kernel
def int_is_zero_kernel(src: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.bool)):
    e = wp.tid()
    out[e] = src[e] == 0


@wp.func
def _off_track(e: int, gates: int, s: wp.array(dtype=wp.float32), lateral: wp.array(dtype=wp.float32),
               distance: wp.array(dtype=wp.float32), segment: wp.array(dtype=wp.int32),
               line_s: wp.array2d(dtype=wp.float32), line_length: wp.array(dtype=wp.float32),
               half_width: wp.array2d(dtype=wp.float32), margin: float, max_distance: float):
    seg = segment[e]
    if seg < 0:
        return False
    if gates != 0:
        return distance[e] > max_distance
    N = half_width.shape[1]
    j = wp.clamp(seg, 0, N - 1)
    j1 = (j + 1) % N
    s0 = line_s[e, j]
    s1 = line_length[e]
    if j + 1 < N:
        s1 = line_s[e, j1]
    span = s1 - s0
    t = float(0.0)
    if span > 0.0:
        t = wp.clamp((s[e] - s0) / span, 0.0, 1.0)
    half = half_width[e, j] * (1.0 - t) + half_width[e, j1] * t
    return wp.abs(lateral[e]) > half + margin


@wp.kernel
def off_track_kernel(gates: int, s: wp.array(dtype=wp.float32), lateral: wp.array(dtype=wp.float32),
                     distance: wp.array(dtype=wp.float32), segment: wp.array(dtype=wp.int32),
                     line_s: wp.array2d(dtype=wp.float32), line_length: wp.array(dtype=wp.float32),
                     half_width: wp.array2d(dtype=wp.float32), margin: float, max_distance: float,
                     out: wp.array(dtype=wp.bool)):
    """Off the course: a band track: ``|lateral|`` beyond the band half width (interpolated at ``s``
    between the segment's two points) plus ``margin``; gates: ``distance > max_distance``. False
    without a frame (segment -1)."""
    e = wp.tid()
    out[e] = _off_track(e, gates, s, lateral, distance, segment, line_s, line_length, half_width, margin,
                        max_distance)


@wp.kernel
def off_track_float_kernel(gates: int, s: wp.array(dtype=wp.float32), lateral: wp.array(dtype=wp.float32),
                           distance: wp.array(dtype=wp.float32), segment: wp.array(dtype=wp.int32),
                           line_s: wp.array2d(dtype=wp.float32), line_length: wp.array(dtype=wp.float32),
                           half_width: wp.array2d(dtype=wp.float32), margin: float, max_distance: float,
                           out: wp.array(dtype=wp.float32)):
    """:func:`off_track_kernel` as 1.0 / 0.0."""
    e = wp.tid()
    out[e] = wp.where(_off_track(e, gates, s, lateral, distance, segment, line_s, line_length, half_width, margin,
                                 max_distance), 1.0, 0.0)


@wp.kernel
def place_pose_kernel(
    active: wp.array(dtype=wp.int32),
    pos_env: wp.array(dtype=wp.vec3f),
    yaw: wp.array(dtype=wp.float32),
    origin: wp.array(dtype=wp.vec3f),
    z_offset: float,
    pose: wp.array(dtype=wp.transformf),
    velocity: wp.array(dtype=wp.spatial_vectorf),
):
    """Root pose (world) = course pose + origin + z_offset, facing yaw; zero velocity; masked envs only."""
    e = wp.tid()
    if active[e] == 0:
        return
    h = 0.5 * yaw[e]
    p = pos_env[e] + origin[e] + wp.vec3f(0.0, 0.0, z_offset)
    pose[e] = wp.transformf(p, wp.quatf(0.0, 0.0, wp.sin(h), wp.cos(h)))
    velocity[e] = wp.spatial_vectorf(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
