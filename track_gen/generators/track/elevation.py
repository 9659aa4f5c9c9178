"""The ``track.elevation`` stage: a smooth periodic height profile with a bounded grade (three
harmonics of the arc length), its GROUND / GRADE checks and the start pose's height."""

from __future__ import annotations

import warp as wp

from track_gen.generators.track.bits import GRADE, GROUND, NONFINITE
from track_gen.math import TWO_PI
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.rng import stream_state

__all__ = ["ELEVATION_FIELDS", "ELEVATION_PARAMS", "register_elevation_stage"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


ELEVATION_PARAMS = {
    "base_height": ParamSpec(1.0, lo=0.0, doc="mean height of the centerline [m]"),
    "amplitude": ParamSpec(0.6, lo=0.0, doc="peak-to-mean height variation [m] (split over three harmonics)"),
    "max_grade": ParamSpec(0.15, lo=0.0, lo_open=True, doc="largest |dz/ds| of the height profile"),
}
#: TrackGenConfig field -> elevation stage parameter. Every other config field (but num_envs, device,
#: elevated, randomize) is the centerline parameter of its name. The flat config says which height
#: it means (``height_amplitude``); in the stage, ``elevation.amplitude`` is unambiguous.
ELEVATION_FIELDS = {"base_height": "base_height", "height_amplitude": "amplitude", "max_grade": "max_grade"}


@wp.kernel
def elevation_kernel(
    # parameters
    key: int,
    num_points: int,
    base_height: wp.array(dtype=wp.float32),
    amplitude: wp.array(dtype=wp.float32),
    max_grade: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    xy: wp.array2d(dtype=wp.vec2f),
    s: wp.array2d(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    status_in: wp.array(dtype=wp.int32),
    # outputs
    z_out: wp.array2d(dtype=wp.float32),
    start_pos_out: wp.array(dtype=wp.vec3f),
    status_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    st = stream_state(seeds[e], generation[e], key, 0)
    total = length[e]
    grade = max_grade[e]
    a1 = wp.randf(st) * wp.min(amplitude[e] / 3.0, grade * total / (TWO_PI * 3.0))
    a2 = wp.randf(st) * wp.min(amplitude[e] / 3.0, grade * total / (TWO_PI * 6.0))
    a3 = wp.randf(st) * wp.min(amplitude[e] / 3.0, grade * total / (TWO_PI * 9.0))
    f1 = TWO_PI * wp.randf(st)
    f2 = TWO_PI * wp.randf(st)
    f3 = TWO_PI * wp.randf(st)
    n = num_points
    for i in range(n):
        x = TWO_PI * s[e, i] / wp.max(total, 1.0e-6)
        z_out[e, i] = base_height[e] + a1 * wp.sin(x + f1) + a2 * wp.sin(2.0 * x + f2) + a3 * wp.sin(3.0 * x + f3)
    status = status_in[e]
    for i in range(n):
        if not wp.isfinite(z_out[e, i]):
            status = status | NONFINITE
    if (status & NONFINITE) != 0:
        status = NONFINITE      # like the centerline: non-finite geometry carries no other bit
    else:
        for i in range(n):
            ip = (i + 1) % n
            if not (z_out[e, i] >= 0.0):
                status = status | GROUND
            run = wp.length(xy[e, ip] - xy[e, i])
            if not (wp.abs(z_out[e, ip] - z_out[e, i]) <= grade * run * 1.001 + 1.0e-6):
                status = status | GRADE
    p0 = xy[e, 0]
    start_pos_out[e] = wp.vec3f(p0[0], p0[1], z_out[e, 0])
    status_out[e] = status
    if status != 0:
        valid_out[e] = 0


def _launch_elevation(ctx):
    p = ctx.param
    wp.launch(
        elevation_kernel, dim=ctx.num_envs,
        inputs=[ctx.key, ctx.capacity("points"), p("base_height"), p("amplitude"), p("max_grade"),
                ctx.active, ctx.seeds, ctx.generation, ctx.input("xy"), ctx.input("s"), ctx.input("length"),
                ctx.input("status")],
        outputs=[ctx.output("z"), ctx.output("start_pos"), ctx.output("status"), ctx.valid],
        device=ctx.device,
    )


PTS = ("env", "points")


def register_elevation_stage(registry) -> None:
    registry.register(
        "track.elevation", _launch_elevation, params=ELEVATION_PARAMS, _builtin=True,
        inputs={
            "xy": ArraySpec(wp.vec2f, PTS, source="centerline.xy"),
            "s": ArraySpec(wp.float32, PTS, source="band.s"),
            "length": ArraySpec(wp.float32, source="band.length"),
            "status": ArraySpec(wp.int32, source="centerline.status"),
        },
        outputs={
            "z": ArraySpec(wp.float32, PTS, doc="centerline height [m]"),
            "start_pos": ArraySpec(wp.vec3f, doc="start position with its height [m]"),
            "status": ArraySpec(wp.int32, doc="TrackStatus bits: the centerline's plus GROUND, GRADE"),
        },
    )
