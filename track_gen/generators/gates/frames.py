"""The ``gates.frames`` stage: the frame dimensions per env (dynamic, randomizable) and each gate's normal."""

from __future__ import annotations

import warp as wp

from track_gen.pipeline.registry import ArraySpec, ParamSpec

__all__ = ["FRAME_PARAMS", "register_frames_stage"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


FRAME_PARAMS = {
    "gate_width": ParamSpec(0.0, lo=0.0, doc="inner opening width [m] (a course needs > 0)"),
    "gate_height": ParamSpec(0.0, lo=0.0, doc="inner opening height [m]; 0 means equal to the width"),
    "frame_thickness": ParamSpec(0.05, lo=0.0, doc="frame bar thickness [m]"),
}



@wp.kernel
def frames_kernel(
    # parameters
    max_gates: int,
    gate_width: wp.array(dtype=wp.float32),
    gate_height: wp.array(dtype=wp.float32),
    thickness: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32),
    yaw: wp.array2d(dtype=wp.float32),
    # outputs
    width_out: wp.array(dtype=wp.float32),
    height_out: wp.array(dtype=wp.float32),
    thickness_out: wp.array(dtype=wp.float32),
    normal_out: wp.array2d(dtype=wp.vec3f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    gh = gate_height[e]
    if gh <= 0.0:
        gh = gate_width[e]
    width_out[e] = gate_width[e]
    height_out[e] = gh
    thickness_out[e] = thickness[e]
    for g in range(max_gates):
        normal_out[e, g] = wp.vec3f(wp.cos(yaw[e, g]), wp.sin(yaw[e, g]), 0.0)


def _launch_frames(ctx):
    p = ctx.param
    wp.launch(
        frames_kernel, dim=ctx.num_envs,
        inputs=[ctx.capacity("gates"), p("gate_width"), p("gate_height"), p("frame_thickness"), ctx.active,
                ctx.input("yaw")],
        outputs=[ctx.output("width"), ctx.output("height"), ctx.output("thickness"), ctx.output("normal")],
        device=ctx.device,
    )


GATES = ("env", "gates")


def register_frames_stage(registry) -> None:
    registry.register(
        "gates.frames", _launch_frames, params=FRAME_PARAMS, _builtin=True,
        inputs={"yaw": ArraySpec(wp.float32, GATES, source="gates.yaw")},
        outputs={
            "width": ArraySpec(wp.float32, doc="opening width of this env's gates [m]"),
            "height": ArraySpec(wp.float32, doc="opening height [m]"),
            "thickness": ArraySpec(wp.float32, doc="frame bar thickness [m]"),
            "normal": ArraySpec(wp.vec3f, GATES, doc="unit normal of each gate (direction of passage)"),
        },
    )
