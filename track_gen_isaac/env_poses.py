"""The kernels :class:`~track_gen_isaac.env_course.EnvCourse` launches to place robots and map env masks:
a jittered start pose per env (or race), a checkpoint before a band track's tightest turn, the world
root pose written from a course pose, and the env mask of a race's agents folded into one course mask."""

from __future__ import annotations

import warp as wp

from track_gen.rng import stream_state
from track_gen.tools.checkpoints import checkpoint_pose, jitter_position

__all__ = ["start_pose_kernel", "corner_pose_kernel", "place_pose_kernel", "race_mask_kernel"]

wp.set_module_options({"enable_backward": False})


@wp.kernel
def start_pose_kernel(
    key: int,
    jitter_lateral: float,
    jitter_vertical: float,
    jitter_yaw: float,
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    counter_out: wp.array(dtype=wp.int32),
    pos_out: wp.array(dtype=wp.vec3f),
    yaw_out: wp.array(dtype=wp.float32),
):
    """The course start pose plus uniform jitter (lateral along the start's left axis, vertical,
    yaw), for masked envs; counter-based draws per env (independent of the other envs)."""
    e = wp.tid()
    if active[e] == 0:
        return
    c = counter_out[e] + 1
    counter_out[e] = c
    st = stream_state(seeds[e], c, key, 0)
    r1 = wp.randf(st)
    r2 = wp.randf(st)
    r3 = wp.randf(st)
    yaw = start_yaw[e]
    lat = wp.vec3f(-wp.sin(yaw), wp.cos(yaw), 0.0)
    pos_out[e] = jitter_position(start_pos[e], lat, r1, r2, jitter_lateral, jitter_vertical)
    yaw_out[e] = yaw + jitter_yaw * (2.0 * r3 - 1.0)


@wp.kernel
def corner_pose_kernel(
    key: int,
    power: float,
    lead_min: float,
    lead_max: float,
    brake: float,
    jitter_lateral: float,
    jitter_vertical: float,
    jitter_yaw: float,
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    curvature: wp.array2d(dtype=wp.float32),
    arc: wp.array2d(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    cp_pos: wp.array2d(dtype=wp.vec3f),
    cp_normal: wp.array2d(dtype=wp.vec3f),
    cp_s: wp.array2d(dtype=wp.float32),
    cp_count: wp.array(dtype=wp.int32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    counter_out: wp.array(dtype=wp.int32),
    index_out: wp.array(dtype=wp.int32),
    pos_out: wp.array(dtype=wp.vec3f),
    yaw_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
):
    """For masked envs of a band track: the checkpoint a uniform ``lead`` in ``[lead_min, lead_max]``
    metres of arc length before a turn point of the centre line, i.e. the last checkpoint at or before
    ``s_turn - lead`` (the loop wraps; before the first checkpoint: the last, on the start line), plus
    jitter as a checkpoint start. The turn point: with ``power < 0`` the tightest (the largest
    ``|curvature|``, the first of equals); with ``power >= 0`` a point drawn with probability
    proportional to ``|curvature|^power`` (every tight turn, the tighter the likelier; a straight track:
    the tightest). A course without checkpoints gets its start pose and index -1. Counter-based draws
    per env.

    ``speed_out``: 0, or with ``brake > 0`` a forward speed drawn uniformly up to ``sqrt(brake / |k| +
    2 brake d)`` -- the speed from which braking at ``brake`` [m/s^2] over the arc length ``d`` from
    the checkpoint to the turn point meets it at ``sqrt(brake / |k|)``, the speed a point mass turns
    its curvature ``k`` at with ``brake`` across the path."""
    e = wp.tid()
    if active[e] == 0:
        return
    c = counter_out[e] + 1
    counter_out[e] = c
    st = stream_state(seeds[e], c, key, 0)
    r0 = wp.randf(st)
    r1 = wp.randf(st)
    r2 = wp.randf(st)
    r3 = wp.randf(st)
    r4 = wp.randf(st)
    r5 = wp.randf(st)
    speed_out[e] = 0.0
    n = cp_count[e]
    if n <= 0:
        checkpoint_pose(e, -1, r1, r2, r3, jitter_lateral, jitter_vertical, jitter_yaw, cp_pos, cp_normal, start_pos,
                        start_yaw, index_out, pos_out, yaw_out)
        return
    peak = int(0)
    kmax = float(-1.0)
    total_w = float(0.0)
    for j in range(curvature.shape[1]):
        k = wp.abs(curvature[e, j])
        if k > kmax:
            kmax = k
            peak = j
        if power >= 0.0:
            total_w += wp.pow(k, power)
    if power >= 0.0 and total_w > 0.0:
        target = r4 * total_w
        acc = float(0.0)
        for j in range(curvature.shape[1]):
            acc += wp.pow(wp.abs(curvature[e, j]), power)
            if acc > target:
                peak = j
                break
    total = length[e]
    s0 = arc[e, peak] - (lead_min + r0 * (lead_max - lead_min))
    if total > 0.0:
        s0 = s0 - total * wp.floor(s0 / total)
    idx = n - 1
    for k in range(n):
        if cp_s[e, k] <= s0:
            idx = k
    checkpoint_pose(e, idx, r1, r2, r3, jitter_lateral, jitter_vertical, jitter_yaw, cp_pos, cp_normal, start_pos,
                    start_yaw, index_out, pos_out, yaw_out)
    if brake > 0.0:
        d = arc[e, peak] - cp_s[e, idx]
        if total > 0.0:
            d = d - total * wp.floor(d / total)
        kp = wp.max(wp.abs(curvature[e, peak]), 1.0e-6)
        speed_out[e] = r5 * wp.sqrt(brake / kp + 2.0 * brake * d)


@wp.kernel
def place_pose_kernel(
    z_offset: float,
    active: wp.array(dtype=wp.int32),
    pos_env: wp.array(dtype=wp.vec3f),
    yaw: wp.array(dtype=wp.float32),
    origin: wp.array(dtype=wp.vec3f),
    speed: wp.array(dtype=wp.float32),
    pose_out: wp.array(dtype=wp.transformf),
    velocity_out: wp.array(dtype=wp.spatial_vectorf),
):
    """Root pose (world) = course pose + origin + z_offset, facing yaw; the velocity ``speed`` along
    the heading (then ``speed`` is spent: set to 0, so a later placement starts at rest unless it
    sets one); masked envs only."""
    e = wp.tid()
    if active[e] == 0:
        return
    h = 0.5 * yaw[e]
    p = pos_env[e] + origin[e] + wp.vec3f(0.0, 0.0, z_offset)
    pose_out[e] = wp.transformf(p, wp.quatf(0.0, 0.0, wp.sin(h), wp.cos(h)))
    v = speed[e]
    velocity_out[e] = wp.spatial_vectorf(v * wp.cos(yaw[e]), v * wp.sin(yaw[e]), 0.0, 0.0, 0.0, 0.0)
    speed[e] = 0.0


@wp.kernel
def race_mask_kernel(agents: int, env_mask: wp.array(dtype=wp.bool), mask_out: wp.array(dtype=wp.int32)):
    """Race ``r`` is masked (1) when any of its ``agents`` envs ``r*K .. r*K+K-1`` is."""
    r = wp.tid()
    m = int(0)
    for k in range(agents):
        if env_mask[r * agents + k]:
            m = 1
    mask_out[r] = m
