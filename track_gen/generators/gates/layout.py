"""The ``gates.layout`` stage: gates along a smooth loop (or an open sprint), drawn per env on device.

One thread per env, up to ``max_attempts`` draws: the env's difficulty sets the limits (each a
blend of its value at difficulty 0 and its ``hard_`` value) and, once per generation from its own
stream, the shape (loop, figure-8, hairpin, split-S: :mod:`shapes`). A draw: control points, the
closed B-spline's length (a sprint uses its first ``SPRINT_FRACTION``: an open course whose ends
stay apart), a gate count in [min_gates, max_gates], gates at evenly spaced arc lengths with jitter
(the shared walk of :mod:`curve`), each at a height and heading, a split-S pair when drawn; then
:mod:`validity` (and the split-S column rule, :mod:`column`). Then the start pose, and, in its own
kernel, the share of courses that start on the ground.
"""

from __future__ import annotations

import warp as wp

from track_gen.generators import shapes as S
from track_gen.generators.curve import (closed_length, span_coeffs, span_point, vec8, walk_point, walk_start,
                                        walk_to)
from track_gen.generators.gates.bits import NONFINITE
from track_gen.generators.gates.column import column_status
from track_gen.generators.gates.validity import gates_status
from track_gen.math import TWO_PI, wrap_angle
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.rng import stream_state

__all__ = ["LAYOUT_PARAMS", "SPRINT_FRACTION", "register_layout_stage"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


LAYOUT_PARAMS = {
    "size": ParamSpec(10.0, lo=0.0, lo_open=True, doc="side of the square the gates fit in [m]"),
    "radius_min": ParamSpec(0.45, lo=0.0, hi=1.0, doc="smallest control-point radius, fraction of the largest"),
    "radius_max": ParamSpec(0.9, lo=0.0, hi=1.0, lo_open=True, doc="largest control-point radius, fraction"),
    "angle_jitter": ParamSpec(0.3, lo=0.0, hi=0.5, hi_open=True, doc="control-point angle jitter, fraction of a slot"),
    "spacing_jitter": ParamSpec(0.3, lo=0.0, hi=0.9, doc="gate arc-position jitter, fraction of the mean spacing"),
    "min_spacing": ParamSpec(1.5, lo=0.0, lo_open=True, doc="shortest distance between consecutive gates [m]"),
    "max_spacing": ParamSpec(6.0, lo=0.0, lo_open=True, doc="longest distance between consecutive gates [m]"),
    "height_min": ParamSpec(0.8, lo=0.0, doc="lowest gate centre [m]"),
    "height_max": ParamSpec(2.0, lo=0.0, doc="highest gate centre [m]"),
    "yaw_jitter": ParamSpec(0.3, lo=0.0, hi=3.1416, doc="gate heading jitter about the tangent [rad]"),
    "max_turn": ParamSpec(1.2, lo=0.0, lo_open=True, hi=3.1416, doc="largest angle between a gate and its legs [rad]"),
    "max_climb": ParamSpec(1.5708, lo=0.0, lo_open=True, hi=1.5708,
                           doc="steepest leg (atan2(|dz|, plan length)) [rad]; 1.5708 = no limit"),
    "crossing_clearance": ParamSpec(1.5, lo=0.0, doc="height gap between two legs crossing in plan view [m]"),
    "ground_start": ParamSpec(0.0, lo=0.0, hi=1.0, doc="share of courses whose start is on the ground (z = 0): "
                                                         "a take-off; the others start at gate 0's height"),
    # one difficulty knob: each field below is the value at difficulty 1; the field above of the same
    # name (size, min_spacing, ...) is the value at difficulty 0; in between: linear
    "difficulty": ParamSpec(0.0, lo=0.0, hi=1.0, doc="course difficulty in [0, 1] (0: the fields above)"),
    "hard_size": ParamSpec(12.0, lo=0.0, lo_open=True, doc="size at difficulty 1 [m]"),
    "hard_min_spacing": ParamSpec(1.2, lo=0.0, lo_open=True, doc="min_spacing at difficulty 1 [m]"),
    "hard_max_spacing": ParamSpec(8.0, lo=0.0, lo_open=True, doc="max_spacing at difficulty 1 [m]"),
    "hard_height_max": ParamSpec(5.5, lo=0.0, doc="height_max at difficulty 1 [m]"),
    "hard_max_turn": ParamSpec(1.75, lo=0.0, lo_open=True, hi=3.1416, doc="max_turn at difficulty 1 [rad]"),
    "hard_max_climb": ParamSpec(0.9, lo=0.0, lo_open=True, hi=1.5708, doc="max_climb at difficulty 1 [rad]"),
    "figure8_share": ParamSpec(0.35, lo=0.0, hi=1.0, doc="share of figure-8 courses at difficulty 1"),
    "hairpin_share": ParamSpec(0.2, lo=0.0, hi=1.0, doc="share of hairpin (thin-loop) courses at difficulty 1"),
    "split_s_share": ParamSpec(0.35, lo=0.0, hi=1.0, doc="share of split-S courses at difficulty 1"),
    "shuttle_share": ParamSpec(0.0, lo=0.0, hi=1.0, doc="share of shuttle courses (a meander of U-turns: "
                                                        "consecutive gates side by side) at difficulty 1"),
    "uturn_gates": ParamSpec(0.0, lo=0.0, hi=1.0, doc="share of shuttle courses whose gates stand at the U-turns "
                                                      "(one at each end of each lane) instead of evenly along the path"),
    "min_gates": ParamSpec(6, lo=2, hi=256, static=True, integer=True, doc="fewest gates"),
    "max_gates": ParamSpec(10, lo=2, hi=256, static=True, integer=True, doc="most gates (capacity)"),
    "control_points": ParamSpec(8, lo=4, hi=64, static=True, integer=True, doc="control points of the path"),
    "dense_per_span": ParamSpec(32, lo=4, hi=1024, static=True, integer=True, doc="samples per spline span"),
    "closed": ParamSpec(1, lo=0, hi=1, static=True, integer=True, doc="1: a loop; 0: an open sprint"),
    "max_attempts": ParamSpec(16, lo=1, hi=1024, static=True, integer=True, doc="draws per env before valid=0"),
}

# A sprint runs along this fraction of a loop: an open course whose ends stay apart.
SPRINT_FRACTION = wp.constant(0.8)
# The stream of the U-turn-gate draw (per generation): apart from the layout's and the shape's.
UTURN_STREAM = wp.constant((1 << 20) + 2)


@wp.func
def start_pose(ctrl: wp.array2d(dtype=wp.vec2f), e: int, num_ctrl: int, dense: int, z: float):
    """The start pose of env ``e``'s path: its first point (at height ``z``) and heading there."""
    q0 = span_coeffs(ctrl, e, num_ctrl, 1, 0)
    p0 = span_point(q0, 0.0)
    p1 = span_point(q0, float(num_ctrl) / float(dense))
    d0 = p1 - p0
    return wp.vec3f(p0[0], p0[1], z), wp.atan2(d0[1], d0[0])


@wp.func
def place_gates(
    ctrl: wp.array2d(dtype=wp.vec2f),
    e: int,
    st: wp.uint32,
    num_ctrl: int,
    dense: int,
    count: int,
    step: float,
    offset: float,
    spacing_jitter: float,
    height_min: float,
    height_max: float,
    yaw_jitter: float,
    lam: float,
    inv_loop: float,
    phase: float,
    pos: wp.array2d(dtype=wp.vec3f),
    yaw: wp.array2d(dtype=wp.float32),
) -> wp.uint32:
    """Gates 0..count-1 of env ``e`` at arc lengths ``step * (g + offset + jitter)`` along the
    spline, walking its dense polyline once (the band track's resampling walk): a height each
    (:func:`shapes.height_of`: uniform when ``lam`` is 0, else blended with a cosine profile over
    the loop fraction ``target * inv_loop``), the heading of the curve plus jitter. Returns the
    advanced random state."""
    per_span = dense / num_ctrl
    inv = 1.0 / float(per_span)
    k = int(0)
    sub = int(1)
    q8, pa, pb, seg = walk_start(ctrl, e, num_ctrl, k, inv)
    acc = float(0.0)
    m = int(0)
    for g in range(count):
        target = step * (float(g) + offset + spacing_jitter * (wp.randf(st) - 0.5))
        k, sub, q8, pa, pb, seg, acc, m = walk_to(ctrl, e, num_ctrl, per_span, inv, dense, target, k, sub, q8, pa,
                                                  pb, seg, acc, m)
        p = walk_point(pa, pb, seg, acc, target)
        d = pb - pa
        height = height_min + (height_max - height_min) * S.height_of(wp.randf(st), lam, target * inv_loop, phase)
        pos[e, g] = wp.vec3f(p[0], p[1], height)
        yaw[e, g] = wrap_angle(wp.atan2(d[1], d[0]) + yaw_jitter * (2.0 * wp.randf(st) - 1.0))
    return st


@wp.func
def span_tangent(q: vec8, t: float) -> wp.vec2f:
    """The derivative dp/dt of a span's power-basis polynomial (:func:`span_coeffs`) at ``t``."""
    return wp.vec2f((3.0 * q[3] * t + 2.0 * q[2]) * t + q[1], (3.0 * q[7] * t + 2.0 * q[6]) * t + q[5])


@wp.func
def place_uturn_gates(ctrl: wp.array2d(dtype=wp.vec2f), e: int, st: wp.uint32, num_ctrl: int, lanes: int,
                      reverse: int, count: int, height_min: float, height_max: float, yaw_jitter: float, lam: float,
                      phase: float, pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32)) -> wp.uint32:
    """Gates 0..count-1 of a shuttle course (``count`` even, at most ``2 lanes``) at its U-turns: lane by
    lane in the order of travel, one gate near each end of the lane's spline span (at ``t`` and ``1 -
    t``, ``t`` in [0.15, 0.35]), heading along the path (plus jitter), so that the gates on either
    side of a turn-back stand side by side facing opposite ways. Heights as :func:`place_gates`
    (the loop fraction is the spline parameter over the point count). Returns the random state."""
    for j in range(count / 2):
        a = 2 * j
        if reverse != 0:
            a = num_ctrl - 2 - 2 * (lanes - 1 - j)
        q8 = span_coeffs(ctrl, e, num_ctrl, 1, a)
        for side in range(2):
            t = 0.1 + 0.4 * wp.randf(st) + 0.4 * float(side)
            g = 2 * j + side
            p = span_point(q8, t)
            d = span_tangent(q8, t)
            frac = (float(a) + t) / float(num_ctrl)
            height = height_min + (height_max - height_min) * S.height_of(wp.randf(st), lam, frac, phase)
            pos[e, g] = wp.vec3f(p[0], p[1], height)
            yaw[e, g] = wrap_angle(wp.atan2(d[1], d[0]) + yaw_jitter * (2.0 * wp.randf(st) - 1.0))
    return st


@wp.func
def frame_extent(gate_width: float, gate_height: float, thickness: float):
    """(outer half width, bottom) of a gate frame: half its outer width (0 for a gate with no opening,
    which flags OPENING: it can never be passed) and half its outer height (the opening height is the
    width when ``gate_height`` is 0)."""
    gh = gate_height
    if gh <= 0.0:
        gh = gate_width
    outer_half = 0.5 * gate_width + thickness
    if gate_width <= 0.0:
        outer_half = 0.0
    return outer_half, 0.5 * gh + thickness


@wp.func
def course_shape(seed: int, generation: int, key: int, d: float, figure8_share: float, hairpin_share: float,
                 split_s_share: float, shuttle_share: float, h_max: float, height_min: float,
                 crossing_clearance: float):
    """(shape, lam, top height) of env's course at difficulty ``d``, drawn once per generation from its
    own stream (retries keep the shape): ``lam`` is how much of a gate's height is the climb-and-dive
    profile; a figure-8 takes all of it, its crossings at the top and bottom, its top raised to clear
    ``crossing_clearance``."""
    shape = S.LOOP
    lam = float(0.0)
    h_top = h_max
    if d > 0.0:
        sst = stream_state(seed, generation, key, S.SHAPE_STREAM)
        shape = S.draw_shape(wp.randf(sst), d, figure8_share, hairpin_share, split_s_share, shuttle_share, 1)
        lam = d * (0.6 + 0.4 * wp.randf(sst))
        if shape == S.FIGURE8:
            lam = 1.0
            h_top = wp.max(h_max, height_min + 1.6 * crossing_clearance)
    return shape, lam, h_top


@wp.func
def draw_course(ctrl: wp.array2d(dtype=wp.vec2f), pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32),
                stacked: wp.array2d(dtype=wp.int32), e: int, st: wp.uint32, attempt: int, shape: int, d: float,
                lam: float, num_ctrl: int, dense: int, closed: int, min_gates: int, max_gates: int, inner: float,
                angle_jitter: float, radius_min: float, radius_max: float, spacing_jitter: float, height_min: float,
                h_top: float, h_max: float, yaw_jitter: float, gap_min: float, uturn: int):
    """One draw of env ``e``'s course (control points, path length, gate count and gates; a split-S pair
    stacked at least ``gap_min`` apart; with ``uturn`` a shuttle's gates at its U-turns,
    :func:`place_uturn_gates`, when its lanes hold at least ``min_gates``); rows past the count zeroed.
    Returns (count, path length, the advanced random state)."""
    reverse = int(0)
    if shape == S.LOOP:
        st = S.draw_loop(ctrl, e, st, num_ctrl, angle_jitter, radius_min, radius_max, inner)
    elif shape == S.FIGURE8:
        st = S.draw_figure8(ctrl, e, st, num_ctrl, angle_jitter, inner, closed)
    elif shape == S.SHUTTLE:
        st, reverse = S.draw_shuttle(ctrl, e, st, num_ctrl, angle_jitter, d, inner)
    else:
        st = S.draw_thin_loop(ctrl, e, st, num_ctrl, angle_jitter, d, inner)
    loop = closed_length(ctrl, e, num_ctrl, dense / num_ctrl)
    total = loop
    if closed == 0:
        total = SPRINT_FRACTION * total
    count = min_gates + int(wp.randf(st) * float(max_gates - min_gates + 1))
    count = wp.min(count, max_gates)
    slots = float(count)
    offset = 0.5
    if closed == 0:
        slots = float(count + 1)
        offset = 1.0
    phase = float(0.0)
    if d > 0.0:
        phase = TWO_PI * wp.randf(st)
        if shape == S.FIGURE8:
            phase = S.figure8_phase(num_ctrl, closed)  # top on one pass of the crossing, bottom on the other
    lanes = S.shuttle_lanes(num_ctrl)
    at_lanes = wp.min(2 * lanes, max_gates - max_gates % 2)
    if uturn != 0 and shape == S.SHUTTLE and lanes > 0 and at_lanes >= min_gates:
        count = at_lanes
        st = place_uturn_gates(ctrl, e, st, num_ctrl, lanes, reverse, count, height_min, h_top, yaw_jitter, lam,
                               phase, pos, yaw)
    else:
        st = place_gates(ctrl, e, st, num_ctrl, dense, count, total / slots, offset, spacing_jitter, height_min,
                         h_top, yaw_jitter, lam, 1.0 / wp.max(loop, 1.0e-30), phase, pos, yaw)
    if shape == S.SPLIT_S or attempt == 0:
        for g in range(max_gates):
            stacked[e, g] = 0
    for g in range(count, max_gates):
        pos[e, g] = wp.vec3f(0.0, 0.0, 0.0)
        yaw[e, g] = 0.0
    if shape == S.SPLIT_S:
        gap = gap_min + 0.4 * wp.randf(st)
        st = S.make_split_s(pos, yaw, stacked, e, st, count, closed, gap, height_min, h_max)
    return count, total, st


@wp.func
def draw_status(ctrl: wp.array2d(dtype=wp.vec2f), pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32),
                stacked: wp.array2d(dtype=wp.int32), e: int, count: int, closed: int, shape: int, num_ctrl: int,
                dense: int, arena: float, min_sp: float, max_sp: float, turn: float, outer_half: float, bottom: float,
                climb: float, crossing_clearance: float, thickness: float, total: float) -> int:
    """The status of a draw: :func:`validity.gates_status`, the column rule of a split-S course, and
    NONFINITE for a path length that overflows float32."""
    status = gates_status(pos, yaw, e, count, closed, arena, min_sp, max_sp, turn, outer_half, bottom, stacked, climb,
                          crossing_clearance)
    if shape == S.SPLIT_S and status != NONFINITE:
        sp, sy = start_pose(ctrl, e, num_ctrl, dense, pos[e, 0][2])
        status = status | column_status(pos, yaw, stacked, e, count, closed, sp, sy, outer_half, 0.5 * thickness,
                                        bottom)
    if not wp.isfinite(total):
        status = NONFINITE
    return status


@wp.kernel
def layout_kernel(
    # parameters
    key: int,
    min_gates: int,
    max_gates: int,
    num_ctrl: int,
    dense: int,
    closed: int,
    max_attempts: int,
    size: wp.array(dtype=wp.float32),
    radius_min: wp.array(dtype=wp.float32),
    radius_max: wp.array(dtype=wp.float32),
    angle_jitter: wp.array(dtype=wp.float32),
    spacing_jitter: wp.array(dtype=wp.float32),
    min_spacing: wp.array(dtype=wp.float32),
    max_spacing: wp.array(dtype=wp.float32),
    height_min: wp.array(dtype=wp.float32),
    height_max: wp.array(dtype=wp.float32),
    yaw_jitter: wp.array(dtype=wp.float32),
    max_turn: wp.array(dtype=wp.float32),
    max_climb: wp.array(dtype=wp.float32),
    crossing_clearance: wp.array(dtype=wp.float32),
    difficulty: wp.array(dtype=wp.float32),
    hard_size: wp.array(dtype=wp.float32),
    hard_min_spacing: wp.array(dtype=wp.float32),
    hard_max_spacing: wp.array(dtype=wp.float32),
    hard_height_max: wp.array(dtype=wp.float32),
    hard_max_turn: wp.array(dtype=wp.float32),
    hard_max_climb: wp.array(dtype=wp.float32),
    figure8_share: wp.array(dtype=wp.float32),
    hairpin_share: wp.array(dtype=wp.float32),
    split_s_share: wp.array(dtype=wp.float32),
    shuttle_share: wp.array(dtype=wp.float32),
    uturn_gates: wp.array(dtype=wp.float32),
    gate_width: wp.array(dtype=wp.float32),
    gate_height: wp.array(dtype=wp.float32),
    thickness: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    difficulty_offset: wp.array(dtype=wp.float32),
    # outputs
    ctrl_out: wp.array2d(dtype=wp.vec2f),
    pos_out: wp.array2d(dtype=wp.vec3f),
    yaw_out: wp.array2d(dtype=wp.float32),
    stacked_out: wp.array2d(dtype=wp.int32),
    count_out: wp.array(dtype=wp.int32),
    length_out: wp.array(dtype=wp.float32),
    start_pos_out: wp.array(dtype=wp.vec3f),
    start_yaw_out: wp.array(dtype=wp.float32),
    attempts_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    shape_out: wp.array(dtype=wp.int32),
    difficulty_out: wp.array(dtype=wp.float32),
    arena_out: wp.array(dtype=wp.float32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    # the difficulty of this env (param + per-env offset, clamped to [0, 1]; NaN: NONFINITE below)
    draw = difficulty[e] + difficulty_offset[e]
    d = wp.clamp(draw, 0.0, 1.0)
    if not wp.isfinite(draw):
        d = 0.0
    arena = S.lerp(size[e], hard_size[e], d)
    min_sp = S.lerp(min_spacing[e], hard_min_spacing[e], d)
    max_sp = S.lerp(max_spacing[e], hard_max_spacing[e], d)
    h_max = S.lerp(height_max[e], hard_height_max[e], d)
    turn = S.lerp(max_turn[e], hard_max_turn[e], d)
    climb = S.lerp(max_climb[e], hard_max_climb[e], d)
    outer_half, bottom = frame_extent(gate_width[e], gate_height[e], thickness[e])
    inner = arena * 0.5 - wp.max(outer_half, 0.5 * gate_width[e] + thickness[e])
    shape, lam, h_top = course_shape(seeds[e], generation[e], key, d, figure8_share[e], hairpin_share[e],
                                     split_s_share[e], shuttle_share[e], h_max, height_min[e],
                                     crossing_clearance[e])
    uturn = int(0)
    if shape == S.SHUTTLE and uturn_gates[e] > 0.0:
        # drawn once per generation from its own stream: a share of 0 changes no course
        if wp.randf(stream_state(seeds[e], generation[e], key, UTURN_STREAM)) < uturn_gates[e]:
            uturn = 1
    status = int(0)
    used = int(0)
    count = int(0)
    total = float(0.0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st = stream_state(seeds[e], generation[e], key, attempt)
        count, total, st = draw_course(ctrl_out, pos_out, yaw_out, stacked_out, e, st, attempt, shape, d, lam,
                                       num_ctrl, dense, closed, min_gates, max_gates, inner, angle_jitter[e],
                                       radius_min[e], radius_max[e], spacing_jitter[e], height_min[e], h_top, h_max,
                                       yaw_jitter[e], 1.1 * wp.max(min_sp, 2.0 * bottom), uturn)
        status = draw_status(ctrl_out, pos_out, yaw_out, stacked_out, e, count, closed, shape, num_ctrl, dense, arena,
                             min_sp, max_sp, turn, outer_half, bottom, climb, crossing_clearance[e], thickness[e],
                             total)
        if status == 0:
            break
    sp, sy = start_pose(ctrl_out, e, num_ctrl, dense, pos_out[e, 0][2])
    start_pos_out[e] = sp
    start_yaw_out[e] = sy
    if not (wp.isfinite(sp[0]) and wp.isfinite(sp[1]) and wp.isfinite(sy) and wp.isfinite(draw)):
        status = NONFINITE
    count_out[e] = count
    length_out[e] = total
    attempts_out[e] = used
    status_out[e] = status
    shape_out[e] = shape
    difficulty_out[e] = d
    arena_out[e] = arena
    if status != 0:
        valid_out[e] = 0


# The stream of the ground-start draw: apart from the layout's, so a share of 0 changes no course.
GROUND_START_STREAM = wp.constant((1 << 20) + 1)


@wp.kernel
def ground_start_kernel(
    # parameters
    key: int,
    ground_start: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    # outputs
    start_pos_out: wp.array(dtype=wp.vec3f),
):
    """Put env ``e``'s start on the ground (z = 0) with probability ``ground_start[e]`` (a take-off
    start); its xy and heading stay. One draw per generation, from its own stream."""
    e = wp.tid()
    if active[e] == 0:
        return
    share = ground_start[e]
    if share > 0.0:
        st = stream_state(seeds[e], generation[e], key, GROUND_START_STREAM)
        if wp.randf(st) < share:
            p = start_pos_out[e]
            start_pos_out[e] = wp.vec3f(p[0], p[1], 0.0)


def _launch_layout(ctx):
    st = ctx.static
    p = ctx.param
    wp.launch(
        layout_kernel, dim=ctx.num_envs,
        inputs=[
            ctx.key, st["min_gates"], st["max_gates"], st["control_points"], st["control_points"] * st["dense_per_span"],
            st["closed"], st["max_attempts"],
            *(p(n) for n in ("size", "radius_min", "radius_max", "angle_jitter", "spacing_jitter", "min_spacing",
                             "max_spacing", "height_min", "height_max", "yaw_jitter", "max_turn", "max_climb",
                             "crossing_clearance", "difficulty", "hard_size", "hard_min_spacing", "hard_max_spacing",
                             "hard_height_max", "hard_max_turn", "hard_max_climb", "figure8_share", "hairpin_share",
                             "split_s_share", "shuttle_share", "uturn_gates", "gate_frames.gate_width", "gate_frames.gate_height",
                             "gate_frames.frame_thickness")),
            ctx.active, ctx.seeds, ctx.generation, ctx.input("difficulty_offset"),
        ],
        outputs=[ctx.output(n) for n in ("control", "pos", "yaw", "stacked", "count", "length", "start_pos",
                                         "start_yaw", "attempts", "status", "shape", "difficulty_used", "arena")]
        + [ctx.valid],
        device=ctx.device,
    )
    wp.launch(ground_start_kernel, dim=ctx.num_envs, inputs=[ctx.key, p("ground_start"), ctx.active, ctx.seeds,
                                                             ctx.generation],
              outputs=[ctx.output("start_pos")], device=ctx.device)


GATES = ("env", "gates")


def register_layout_stage(registry) -> None:
    registry.register(
        "gates.layout", _launch_layout, params=LAYOUT_PARAMS, _builtin=True,
        reads=("gate_frames.gate_width", "gate_frames.gate_height", "gate_frames.frame_thickness"),
        capacities=lambda s: {"gates": s["max_gates"], "control_points": s["control_points"]},
        inputs={"difficulty_offset": ArraySpec(
            wp.float32, doc="[E] per-env difficulty offset you write in place (a curriculum's level); the env's "
                            "difficulty is clamp(gates.difficulty + offset, 0, 1)")},
        outputs={
            "control": ArraySpec(wp.vec2f, ("env", "control_points"), doc="control points of the path [m]"),
            "pos": ArraySpec(wp.vec3f, GATES, doc="gate centres [m]; rows >= count are zero"),
            "yaw": ArraySpec(wp.float32, GATES, doc="gate headings (direction of passage) [rad]"),
            "count": ArraySpec(wp.int32, doc="gates in this course"),
            "length": ArraySpec(wp.float32, doc="length of the path through the gates [m]"),
            "start_pos": ArraySpec(wp.vec3f, doc="start position, before gate 0 [m]"),
            "start_yaw": ArraySpec(wp.float32, doc="start heading [rad]"),
            "attempts": ArraySpec(wp.int32, doc="draws used"),
            "status": ArraySpec(wp.int32, doc="GateStatus bits of the last draw (0: valid)"),
            "stacked": ArraySpec(wp.int32, GATES, doc="1 where leg g -> g+1 is a split-S (a stacked pair)"),
            "shape": ArraySpec(wp.int32, doc="shape drawn: 0 loop, 1 figure-8, 2 hairpin, 3 split-S, 4 shuttle"),
            "difficulty_used": ArraySpec(wp.float32, doc="the difficulty this course was drawn at, in [0, 1]"),
            "arena": ArraySpec(wp.float32, doc="side of the square at that difficulty [m]"),
        },
    )
