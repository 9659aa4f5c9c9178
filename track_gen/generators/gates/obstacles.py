"""Pole obstacles for gate courses: the ``gates.obstacles`` stage.

Vertical poles (cylinders standing on the ground) drawn per env after the layout, each clear of
every gate frame, of the course line and of the start by ``clearance`` (plan view), inside the
arena, and apart from each other (the exact rules below). The pole count
is drawn in ``[lerp(count_min, hard_count_min, d), lerp(count_max, hard_count_max, d)]`` (rounded,
at most ``max_obstacles``) for the env's difficulty ``d`` (``gates.difficulty_used``), so a
curriculum that raises the difficulty adds poles without rebuilding anything.

Outputs (committed like every stage output; :class:`GateResult` names them): ``obstacles.pos``
[E, K] vec3f base centres on the ground (z = 0), ``obstacles.radius`` [E, K], ``obstacles.height``
[E, K], ``obstacles.count`` [E] (rows >= count are zero), ``obstacles.status`` (the layout's
GateStatus bits plus OBSTACLE).

Clearances (plan view, so they hold whatever the pole's height; every test written so that a
NaN fails it), for a pole at ``p`` of radius ``r``:

* inside the arena: ``max(|p.x|, |p.y|) + r <= arena / 2``;
* every gate frame: the distance from ``p`` to the frame's footprint (a ``w + 2t`` by ``t``
  rectangle about the gate centre, long side along the gate's lateral axis) >= ``r + clearance``;
* the course line: ``CenterlineFromGates``' line (a cubic Hermite per leg, end tangents = unit
  gate normal times the leg's chord length ``L``; a sprint's first leg leaves the start pose)
  lies, in plan view, within ``L * sqrt(0.0093 + (1 - cos dyaw) / 32)`` of its leg's chord
  (``dyaw`` the turn between the leg's end directions), so a chord distance >= ``r + clearance``
  plus that bound keeps the pole ``clearance`` from the line;
* the start position: distance >= ``r + clearance``;
* other poles: centre distance >= the sum of the radii (poles never merge).

Each pole gets ``tries`` random spots (radius and height drawn with each); one that finds no
clear spot is left out. Fewer poles than the least count of the env's difficulty: OBSTACLE
(``valid = 0``). The layout's invalid courses get no poles.
"""

from __future__ import annotations

import warp as wp

from track_gen.generators.curve import point_seg_dist
from track_gen.generators.gates.bits import OBSTACLE
from track_gen.generators.poles import (clear_obstacles, clear_of_poles, draw_obstacle_count, draw_pole_size,
                                        finish_poles, put_pole)
from track_gen.math import BIG
from track_gen.pipeline.registry import ArraySpec, ParamSpec

__all__ = ["OBSTACLE_FIELDS", "OBSTACLE_ORDERED", "OBSTACLE_PARAMS", "register_obstacle_stage"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


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


@wp.func
def hermite_bound(length: float, dir_a: wp.vec2f, dir_b: wp.vec2f) -> float:
    """How far (plan view) a course-line leg of chord length ``length`` strays from its chord."""
    c = wp.dot(dir_a, dir_b)
    return length * wp.sqrt(0.0093 + (1.0 - c) / 32.0)


@wp.func
def gate_dir(yaw: float) -> wp.vec2f:
    return wp.vec2f(wp.cos(yaw), wp.sin(yaw))


@wp.func
def course_gap(p: wp.vec2f, e: int, n: int, closed: int, gpos: wp.array2d(dtype=wp.vec3f),
               gyaw: wp.array2d(dtype=wp.float32), start: wp.vec3f, start_yaw: float, half_w: float,
               half_t: float) -> float:
    """The smallest clearance (plan view) between a point and env ``e``'s course: gate frame
    footprints, course-line legs (chord distance minus the Hermite bound) and the start point."""
    gap = float(BIG)
    for g in range(n):
        gp = gpos[e, g]
        nd = gate_dir(gyaw[e, g])
        rel = p - wp.vec2f(gp[0], gp[1])
        along = wp.abs(rel[0] * nd[0] + rel[1] * nd[1]) - half_t
        lat = wp.abs(-rel[0] * nd[1] + rel[1] * nd[0]) - half_w
        out = wp.sqrt(wp.max(along, 0.0) * wp.max(along, 0.0) + wp.max(lat, 0.0) * wp.max(lat, 0.0))
        gap = wp.min(gap, out + wp.min(wp.max(along, lat), 0.0))
    for k in range(n):  # a loop: n legs; a sprint: the run-up from the start pose, then n - 1 legs
        a = wp.vec3f()
        da = wp.vec2f()
        b = wp.vec3f()
        db = wp.vec2f()
        if closed != 0:
            a = gpos[e, k]
            da = gate_dir(gyaw[e, k])
            b = gpos[e, (k + 1) % n]
            db = gate_dir(gyaw[e, (k + 1) % n])
        elif k == 0:
            a = start
            da = gate_dir(start_yaw)
            b = gpos[e, 0]
            db = gate_dir(gyaw[e, 0])
        else:
            a = gpos[e, k - 1]
            da = gate_dir(gyaw[e, k - 1])
            b = gpos[e, k]
            db = gate_dir(gyaw[e, k])
        dist = point_seg_dist(p, wp.vec2f(a[0], a[1]), wp.vec2f(b[0], b[1]))
        gap = wp.min(gap, dist - hermite_bound(wp.length(b - a), da, db))
    return wp.min(gap, wp.length(p - wp.vec2f(start[0], start[1])))


@wp.func
def pole_spot_clear(p: wp.vec2f, r: float, half: float, c: float, e: int, n: int, closed: int,
                    gpos: wp.array2d(dtype=wp.vec3f), gyaw: wp.array2d(dtype=wp.float32), start: wp.vec3f,
                    start_yaw: float, half_w: float, half_t: float, opos: wp.array2d(dtype=wp.vec3f),
                    orad: wp.array2d(dtype=wp.float32), placed: int) -> bool:
    """Whether a pole of radius ``r`` at ``p`` keeps every rule: inside the arena (half side ``half``),
    ``r + c`` clear of env ``e``'s course (:func:`course_gap`) and clear of the poles placed."""
    ok = (wp.max(wp.abs(p[0]), wp.abs(p[1])) + r <= half
          and course_gap(p, e, n, closed, gpos, gyaw, start, start_yaw, half_w, half_t) >= r + c)
    return ok and clear_of_poles(p, r, 0.0, opos, orad, e, placed)


@wp.kernel
def obstacles_kernel(
    # parameters
    key: int,
    closed: int,
    tries: int,
    count_min: wp.array(dtype=wp.float32),
    count_max: wp.array(dtype=wp.float32),
    hard_count_min: wp.array(dtype=wp.float32),
    hard_count_max: wp.array(dtype=wp.float32),
    radius_min: wp.array(dtype=wp.float32),
    radius_max: wp.array(dtype=wp.float32),
    height_min: wp.array(dtype=wp.float32),
    height_max: wp.array(dtype=wp.float32),
    clearance: wp.array(dtype=wp.float32),
    gate_width: wp.array(dtype=wp.float32),
    thickness: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    gpos: wp.array2d(dtype=wp.vec3f),
    gyaw: wp.array2d(dtype=wp.float32),
    gcount: wp.array(dtype=wp.int32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    arena: wp.array(dtype=wp.float32),
    difficulty: wp.array(dtype=wp.float32),
    status_in: wp.array(dtype=wp.int32),
    # outputs
    opos_out: wp.array2d(dtype=wp.vec3f),
    orad_out: wp.array2d(dtype=wp.float32),
    oheight_out: wp.array2d(dtype=wp.float32),
    ocount_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    cap = opos_out.shape[1]
    clear_obstacles(opos_out, orad_out, oheight_out, e)
    status = status_in[e]
    n = wp.clamp(gcount[e], 0, gpos.shape[1])
    placed = int(0)
    lo = int(0)
    if status == 0 and n >= 2:
        lo, want, st = draw_obstacle_count(seeds[e], generation[e], key, difficulty[e], count_min[e], count_max[e],
                                           hard_count_min[e], hard_count_max[e], cap)
        half = 0.5 * arena[e]
        half_w = 0.5 * gate_width[e] + thickness[e]
        half_t = 0.5 * thickness[e]
        c = clearance[e]
        sp = start_pos[e]
        for k in range(want):
            for t in range(tries):
                r, h, st = draw_pole_size(st, radius_min[e], radius_max[e], height_min[e], height_max[e])
                lim = half - r
                p = wp.vec2f(lim * (2.0 * wp.randf(st) - 1.0), lim * (2.0 * wp.randf(st) - 1.0))
                if pole_spot_clear(p, r, half, c, e, n, closed, gpos, gyaw, sp, start_yaw[e], half_w, half_t,
                                   opos_out, orad_out, placed):
                    placed = put_pole(opos_out, orad_out, oheight_out, e, placed, p, r, h)
                    break
    # a pole that finds no clear spot in ``tries`` draws is left out; fewer than the least count of
    # this difficulty makes the course invalid
    finish_poles(e, placed, lo, cap, status, OBSTACLE, ocount_out, status_out, valid_out)


def _launch(ctx):
    p = ctx.param
    wp.launch(
        obstacles_kernel, dim=ctx.num_envs,
        inputs=[
            ctx.key, int(ctx.static["closed"]), ctx.static["tries"],
            *(p(n) for n in ("count_min", "count_max", "hard_count_min", "hard_count_max", "radius_min",
                             "radius_max", "height_min", "height_max", "clearance")),
            p("gate_frames.gate_width"), p("gate_frames.frame_thickness"),
            ctx.active, ctx.seeds, ctx.generation,
            *(ctx.input(n) for n in ("pos", "yaw", "count", "start_pos", "start_yaw", "arena", "difficulty",
                                     "status")),
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
