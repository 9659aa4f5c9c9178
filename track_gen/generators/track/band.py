"""The ``track.band`` stage: tangents, normals, arc length, curvature, loop length and start pose of
each env's centerline (one thread per env)."""

from __future__ import annotations

import warp as wp

from track_gen.math import left_normal
from track_gen.pipeline.registry import ArraySpec

__all__ = ["register_band_stage"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


@wp.kernel
def band_kernel(
    # parameters
    num_points: int,
    # inputs
    active: wp.array(dtype=wp.int32),
    xy: wp.array2d(dtype=wp.vec2f),
    # outputs
    tangent_out: wp.array2d(dtype=wp.vec2f),
    normal_out: wp.array2d(dtype=wp.vec2f),
    s_out: wp.array2d(dtype=wp.float32),
    curvature_out: wp.array2d(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
    start_pos_out: wp.array(dtype=wp.vec3f),
    start_yaw_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    # each segment's vector and length is carried to the next point (computed once; the same bits)
    n = num_points
    acc = float(0.0)
    prev = xy[e, n - 1]
    p = xy[e, 0]
    a = p - prev
    la = wp.length(a)
    for i in range(n):
        ip = i + 1
        if ip == n:
            ip = 0
        nxt = xy[e, ip]
        b = nxt - p
        lb = wp.length(b)
        t = wp.normalize(nxt - prev)
        tangent_out[e, i] = t
        normal_out[e, i] = left_normal(t)
        s_out[e, i] = acc
        mean = 0.5 * (la + lb)
        k = float(0.0)
        if mean > 0.0:
            k = wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b)) / mean
        curvature_out[e, i] = k
        acc += lb
        prev = p
        p = nxt
        a = b
        la = lb
    length_out[e] = acc
    p0 = xy[e, 0]
    t0 = tangent_out[e, 0]
    start_pos_out[e] = wp.vec3f(p0[0], p0[1], 0.0)
    start_yaw_out[e] = wp.atan2(t0[1], t0[0])


def _launch_band(ctx):
    wp.launch(
        band_kernel, dim=ctx.num_envs,
        inputs=[ctx.capacity("points"), ctx.active, ctx.input("xy")],
        outputs=[ctx.output(n) for n in ("tangent", "normal", "s", "curvature", "length", "start_pos", "start_yaw")],
        device=ctx.device,
    )


PTS = ("env", "points")


def register_band_stage(registry) -> None:
    registry.register(
        "track.band", _launch_band, _builtin=True,
        inputs={"xy": ArraySpec(wp.vec2f, PTS, source="centerline.xy")},
        outputs={
            "tangent": ArraySpec(wp.vec2f, PTS, doc="unit tangent (direction of travel)"),
            "normal": ArraySpec(wp.vec2f, PTS, doc="unit normal, to the left of travel"),
            "s": ArraySpec(wp.float32, PTS, doc="arc length from the start line [m]"),
            "curvature": ArraySpec(wp.float32, PTS, doc="signed curvature [1/m], > 0 turning left"),
            "length": ArraySpec(wp.float32, doc="loop length [m]"),
            "start_pos": ArraySpec(wp.vec3f, doc="start position (point 0) [m]"),
            "start_yaw": ArraySpec(wp.float32, doc="start heading [rad]"),
        },
    )
