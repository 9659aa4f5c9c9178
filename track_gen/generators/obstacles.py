"""Pole obstacles for gate courses: the ``gates.obstacles`` stage.

Vertical poles (cylinders standing on the ground) drawn per env after the layout, each clear of
every gate frame, of the course line and of the start by ``clearance`` (plan view), inside the
arena, and apart from each other (:mod:`obstacle_kernels` has the exact rules). The pole count
is drawn in ``[lerp(count_min, hard_count_min, d), lerp(count_max, hard_count_max, d)]`` (rounded,
at most ``max_obstacles``) for the env's difficulty ``d`` (``gates.difficulty_used``), so a
curriculum that raises the difficulty adds poles without rebuilding anything.

Outputs (committed like every stage output; :class:`GateResult` names them): ``obstacles.pos``
[E, K] vec3f base centres on the ground (z = 0), ``obstacles.radius`` [E, K], ``obstacles.height``
[E, K], ``obstacles.count`` [E] (rows >= count are zero), ``obstacles.status`` (the layout's
GateStatus bits plus OBSTACLE).
"""

from __future__ import annotations

import warp as wp

from track_gen.generators import obstacle_kernels as K
from track_gen.pipeline.registry import ArraySpec, ParamSpec

__all__ = ["OBSTACLE_PARAMS", "OBSTACLE_FIELDS", "register_obstacle_stage"]

_CNT = dict(lo=0.0, hi=1024.0, integer=True)
OBSTACLE_PARAMS = {
    "max_obstacles": ParamSpec(4, lo=1, hi=256, static=True, integer=True, doc="poles per course (capacity K)"),
    "count_min": ParamSpec(0, doc="fewest poles at difficulty 0", **_CNT),
    "count_max": ParamSpec(0, doc="most poles at difficulty 0", **_CNT),
    "hard_count_min": ParamSpec(1, doc="fewest poles at difficulty 1", **_CNT),
    "hard_count_max": ParamSpec(4, doc="most poles at difficulty 1", **_CNT),
    "radius_min": ParamSpec(0.05, lo=0.0, lo_open=True, doc="thinnest pole radius [m]"),
    "radius_max": ParamSpec(0.15, lo=0.0, lo_open=True, doc="thickest pole radius [m]"),
    "height_min": ParamSpec(1.5, lo=0.0, lo_open=True, doc="shortest pole [m]"),
    "height_max": ParamSpec(4.0, lo=0.0, lo_open=True, doc="tallest pole [m]"),
    "clearance": ParamSpec(0.4, lo=0.0, doc="gap kept from gate frames, the course line and the start [m]"),
    "tries": ParamSpec(12, lo=1, hi=1024, static=True, integer=True, doc="spots tried per pole"),
}
#: GateGenConfig field -> obstacle stage parameter
OBSTACLE_FIELDS = {
    "max_obstacles": "max_obstacles", "obstacle_count_min": "count_min", "obstacle_count_max": "count_max",
    "hard_obstacle_count_min": "hard_count_min", "hard_obstacle_count_max": "hard_count_max",
    "obstacle_radius_min": "radius_min", "obstacle_radius_max": "radius_max",
    "obstacle_height_min": "height_min", "obstacle_height_max": "height_max",
    "obstacle_clearance": "clearance", "obstacle_tries": "tries",
}
OBSTACLE_ORDERED = (
    ("obstacles.count_min", "obstacles.count_max"),
    ("obstacles.hard_count_min", "obstacles.hard_count_max"),
    ("obstacles.radius_min", "obstacles.radius_max"),
    ("obstacles.height_min", "obstacles.height_max"),
)


def _launch(ctx):
    p = ctx.param
    wp.launch(
        K.obstacles_kernel, dim=ctx.num_envs,
        inputs=[
            ctx.active, ctx.seeds, ctx.generation, ctx.key,
            *(ctx.input(n) for n in ("pos", "yaw", "count", "start_pos", "start_yaw", "arena", "difficulty",
                                     "status")),
            *(p(n) for n in ("count_min", "count_max", "hard_count_min", "hard_count_max", "radius_min",
                             "radius_max", "height_min", "height_max", "clearance")),
            p("gate_frames.gate_width"), p("gate_frames.frame_thickness"),
            int(ctx.static["closed"]), ctx.static["tries"],
        ],
        outputs=[ctx.output(n) for n in ("pos", "radius", "height", "count", "status")] + [ctx.valid],
        device=ctx.device,
    )


OBS = ("env", "obstacles")


def register_obstacle_stage(registry) -> None:
    params = dict(OBSTACLE_PARAMS)
    # whether the course is a loop: the layout's static value, repeated here (checked to agree)
    params["closed"] = ParamSpec(1, lo=0, hi=1, static=True, integer=True, doc="1: the layout is a loop")
    registry.register(
        "gates.obstacles", _launch, params=params, _builtin=True,
        reads=("gate_frames.gate_width", "gate_frames.frame_thickness"),
        capacities=lambda s: {"obstacles": s["max_obstacles"]},
        inputs={
            "pos": ArraySpec(wp.vec3f, ("env", "gates"), source="gates.pos"),
            "yaw": ArraySpec(wp.float32, ("env", "gates"), source="gates.yaw"),
            "count": ArraySpec(wp.int32, source="gates.count"),
            "start_pos": ArraySpec(wp.vec3f, source="gates.start_pos"),
            "start_yaw": ArraySpec(wp.float32, source="gates.start_yaw"),
            "arena": ArraySpec(wp.float32, source="gates.arena"),
            "difficulty": ArraySpec(wp.float32, source="gates.difficulty_used"),
            "status": ArraySpec(wp.int32, source="gates.status"),
        },
        outputs={
            "pos": ArraySpec(wp.vec3f, OBS, doc="pole base centres, on the ground (z = 0) [m]; rows >= count zero"),
            "radius": ArraySpec(wp.float32, OBS, doc="pole radii [m]"),
            "height": ArraySpec(wp.float32, OBS, doc="pole heights above the ground [m]"),
            "count": ArraySpec(wp.int32, doc="poles in this course"),
            "status": ArraySpec(wp.int32, doc="GateStatus bits: the layout's plus OBSTACLE"),
        },
    )
