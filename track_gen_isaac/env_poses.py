"""The kernels :class:`~track_gen_isaac.env_course.EnvCourse` launches to place robots and map env masks:
a jittered start pose per env (or race), the world root pose written from a course pose, and the
env mask of a race's agents folded into one course mask."""

from __future__ import annotations

import warp as wp

from track_gen.rng import stream_state
from track_gen.tools.checkpoints import jitter_position

__all__ = ["start_pose_kernel", "place_pose_kernel", "race_mask_kernel"]

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
def place_pose_kernel(
    z_offset: float,
    active: wp.array(dtype=wp.int32),
    pos_env: wp.array(dtype=wp.vec3f),
    yaw: wp.array(dtype=wp.float32),
    origin: wp.array(dtype=wp.vec3f),
    pose_out: wp.array(dtype=wp.transformf),
    velocity_out: wp.array(dtype=wp.spatial_vectorf),
):
    """Root pose (world) = course pose + origin + z_offset, facing yaw; zero velocity; masked envs only."""
    e = wp.tid()
    if active[e] == 0:
        return
    h = 0.5 * yaw[e]
    p = pos_env[e] + origin[e] + wp.vec3f(0.0, 0.0, z_offset)
    pose_out[e] = wp.transformf(p, wp.quatf(0.0, 0.0, wp.sin(h), wp.cos(h)))
    velocity_out[e] = wp.spatial_vectorf(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@wp.kernel
def race_mask_kernel(agents: int, env_mask: wp.array(dtype=wp.bool), mask_out: wp.array(dtype=wp.int32)):
    """Race ``r`` is masked (1) when any of its ``agents`` envs ``r*K .. r*K+K-1`` is."""
    r = wp.tid()
    m = int(0)
    for k in range(agents):
        if env_mask[r * agents + k]:
            m = 1
    mask_out[r] = m
