"""Pole obstacles on band tracks: the ``track.obstacles`` stage (``track.obstacles_elevated`` after an
elevation stage).

Poles stand *in* the band, each leaving a passage at least ``gap`` wide to one band edge and to
every other pole, clear of the start line by ``clearance`` (:mod:`track_obstacle_kernels` has the
exact rules): something to drive or fly around, never a wall. The count follows the gate family's
rule: drawn in ``[lerp(count_min, hard_count_min, d), lerp(count_max, hard_count_max, d)]`` (rounded,
at most ``max_obstacles``) for the track's difficulty ``d`` (``centerline.difficulty_used``), so a
curriculum that raises the difficulty adds poles without rebuilding anything; at difficulty 0 the
defaults place none.

Outputs, as the gate family's: ``obstacles.pos`` [E, K] vec3f base centres on the ground (z = 0),
``obstacles.radius`` [E, K], ``obstacles.height`` [E, K], ``obstacles.count`` [E] (rows >= count
zero), ``obstacles.status`` (the track's TrackStatus bits plus OBSTACLE).
"""

from __future__ import annotations

from typing import Any, Mapping

import warp as wp

from track_gen.generators import track_obstacle_kernels as K
from track_gen.generators.obstacles import OBSTACLE_FIELDS, OBSTACLE_ORDERED, OBSTACLE_PARAMS
from track_gen.pipeline.registry import ArraySpec, ParamSpec

__all__ = ["TRACK_OBSTACLE_PARAMS", "TRACK_OBSTACLE_FIELDS", "OBSTACLE_ORDERED", "check_track_obstacle_ranges",
           "register_track_obstacle_stages"]

#: the gate family's parameters; ``clearance`` is kept from the start line, heights count from the course,
#: ``gap`` is the passage kept beside every pole
TRACK_OBSTACLE_PARAMS = {
    **OBSTACLE_PARAMS,
    "clearance": ParamSpec(1.0, lo=0.0, doc="gap kept between a pole and the start line [m]"),
    "height_min": ParamSpec(1.5, lo=0.0, lo_open=True, doc="shortest pole above the course at its foot [m]"),
    "height_max": ParamSpec(4.0, lo=0.0, lo_open=True, doc="tallest pole above the course at its foot [m]"),
    "gap": ParamSpec(0.3, lo=0.0, lo_open=True,
                     doc="passage kept between a pole and one band edge, and between two poles [m]"),
}
#: TrackGenConfig field -> obstacle stage parameter
TRACK_OBSTACLE_FIELDS = {**OBSTACLE_FIELDS, "obstacle_gap": "gap"}


def _launch(ctx, elevated: bool = False):
    p = ctx.param
    hw = ctx.input("half_width")
    wp.launch(
        K.track_obstacles_kernel, dim=ctx.num_envs,
        inputs=[
            ctx.active, ctx.seeds, ctx.generation, ctx.key, ctx.input("xy"), hw, ctx.input("normal"),
            ctx.input("z") if elevated else hw, int(elevated), ctx.input("difficulty"), ctx.input("status"),
            *(p(n) for n in ("count_min", "count_max", "hard_count_min", "hard_count_max", "radius_min",
                             "radius_max", "height_min", "height_max", "clearance", "gap")),
            ctx.static["tries"],
        ],
        outputs=[ctx.output(n) for n in ("pos", "radius", "height", "count", "status")] + [ctx.valid],
        device=ctx.device,
    )


PTS = ("env", "points")
OBS = ("env", "obstacles")
_INPUTS = {
    "xy": ArraySpec(wp.vec2f, PTS, source="centerline.xy"),
    "half_width": ArraySpec(wp.float32, PTS, source="centerline.half_width"),
    "normal": ArraySpec(wp.vec2f, PTS, source="band.normal"),
    "difficulty": ArraySpec(wp.float32, source="centerline.difficulty_used"),
    "status": ArraySpec(wp.int32, source="centerline.status"),
}
_OUTPUTS = {
    "pos": ArraySpec(wp.vec3f, OBS, doc="pole base centres, on the ground (z = 0) [m]; rows >= count zero"),
    "radius": ArraySpec(wp.float32, OBS, doc="pole radii [m]"),
    "height": ArraySpec(wp.float32, OBS, doc="pole heights above the ground [m]"),
    "count": ArraySpec(wp.int32, doc="poles on this track"),
    "status": ArraySpec(wp.int32, doc="TrackStatus bits: the track's plus OBSTACLE"),
}


def register_track_obstacle_stages(registry) -> None:
    common = dict(params=TRACK_OBSTACLE_PARAMS, _builtin=True, outputs=_OUTPUTS,
                  capacities=lambda s: {"obstacles": s["max_obstacles"]})
    registry.register("track.obstacles", _launch, inputs=_INPUTS, **common)
    registry.register(
        "track.obstacles_elevated", lambda ctx: _launch(ctx, elevated=True), **common,
        inputs={**_INPUTS, "z": ArraySpec(wp.float32, PTS, source="elevation.z"),
                "status": ArraySpec(wp.int32, source="elevation.status")},
    )


def check_track_obstacle_ranges(v: Mapping[str, Any]) -> None:
    """Raise ValueError when the track's obstacle parameters ``v`` (global names) contradict each
    other: a count above the capacity, or a pole of ``radius_max`` with its ``gap`` that cannot fit
    in the narrowest band (``2 (half_width (1 - half_width_variation) - radius_max) >= gap``)."""
    if "obstacles.gap" not in v:
        return
    cap = v["obstacles.max_obstacles"]
    for n in ("count_max", "hard_count_max"):
        if v[f"obstacles.{n}"] > cap:
            raise ValueError(f"obstacles.{n}={v[f'obstacles.{n}']:g} exceeds obstacles.max_obstacles={cap}; "
                             f"keep it <= the capacity")
    narrow = v["centerline.half_width"] * (1.0 - v["centerline.half_width_variation"])
    room = 2.0 * (narrow - v["obstacles.radius_max"])
    if not room >= v["obstacles.gap"]:
        raise ValueError(
            f"obstacles.gap={v['obstacles.gap']:g} beside a pole of obstacles.radius_max={v['obstacles.radius_max']:g} "
            f"needs a band at least {v['obstacles.gap'] + 2.0 * v['obstacles.radius_max']:g} m wide, but "
            f"centerline.half_width={v['centerline.half_width']:g} with centerline.half_width_variation="
            f"{v['centerline.half_width_variation']:g} narrows it to {2.0 * narrow:g} m; lower the gap or the radius, "
            f"or widen the band"
        )
