"""Warp kernels of the gate-course stages (one thread per env)."""

from __future__ import annotations

import warp as wp

from track_gen.generators import gate_shapes as S
from track_gen.generators.curve import closed_length, span_coeffs, span_point
from track_gen.generators.gate_column import COLUMN as COLUMN  # re-exported: the kernels' status bits
from track_gen.generators.gate_column import column_status
from track_gen.generators.status import GateStatus
from track_gen.math import PI, TWO_PI, wrap_angle
from track_gen.rng import stream_state

# Failure bits of ``gates.status``: the GateStatus flags (defined once, in status.py)
SPACING = wp.constant(int(GateStatus.SPACING))
CROWDED = wp.constant(int(GateStatus.CROWDED))
TURN = wp.constant(int(GateStatus.TURN))
BOUNDS = wp.constant(int(GateStatus.BOUNDS))
GROUND = wp.constant(int(GateStatus.GROUND))
OPENING = wp.constant(int(GateStatus.OPENING))
NONFINITE = wp.constant(int(GateStatus.NONFINITE))
CROSSING = wp.constant(int(GateStatus.CROSSING))
CLIMB = wp.constant(int(GateStatus.CLIMB))
STACK = wp.constant(int(GateStatus.STACK))
OBSTACLE = wp.constant(int(GateStatus.OBSTACLE))
# A sprint runs along this fraction of a loop: an open course whose ends stay apart.
SPRINT_FRACTION = wp.constant(0.8)


@wp.func
def leg_angle(yaw: float, d: wp.vec3f) -> float:
    """Horizontal angle between a gate's heading and the leg direction ``d``."""
    return wp.abs(wrap_angle(wp.atan2(d[1], d[0]) - yaw))


@wp.func
def gates_status(
    pos: wp.array2d(dtype=wp.vec3f),
    yaw: wp.array2d(dtype=wp.float32),
    e: int,
    count: int,
    closed: int,
    size: float,
    min_spacing: float,
    max_spacing: float,
    max_turn: float,
    outer_half: float,
    bottom: float,
    stacked: wp.array2d(dtype=wp.int32),
    max_climb: float,
    crossing_clearance: float,
) -> int:
    """Failure bits of env ``e``'s gates (0: valid). Same definitions as the tests' numpy checker:
    consecutive gate distances in [min_spacing, max_spacing] (the closing leg too when closed);
    every pair at least max(min_spacing, 2 * outer_half) apart; each leg leaves its gate and enters
    the next within max_turn of their headings; frames inside the square and above the ground.
    Legs flagged in ``stacked`` (split-S) skip the turn and climb tests and instead need their
    gates at the same xy (within STACK_XY), opposite headings (within STACK_YAW) and frames clear
    of each other vertically (|dz| >= 2 * bottom, the outer frame height) (STACK); every other leg
    climbs at most ``max_climb`` (CLIMB); two legs that are not neighbours and cross in plan view
    are at least ``crossing_clearance`` apart in height where they cross (CROSSING).
    A NaN or inf pose, yaw or frame size gives NONFINITE alone; every other test is written so
    that a NaN fails it."""
    if not (wp.isfinite(outer_half) and wp.isfinite(bottom)):
        return NONFINITE
    for k in range(count):
        p = pos[e, k]
        if not (wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(p[2]) and wp.isfinite(yaw[e, k])):
            return NONFINITE
    status = int(0)
    if not (outer_half > 0.0 and bottom > 0.0):
        status = status | OPENING
    half = size * 0.5
    legs = count - 1
    if closed != 0:
        legs = count
    for k in range(legs):
        k1 = (k + 1) % count
        d = pos[e, k1] - pos[e, k]
        dist = wp.length(d)
        if not (dist >= min_spacing and dist <= max_spacing):
            status = status | SPACING
        plan = wp.sqrt(d[0] * d[0] + d[1] * d[1])
        if stacked[e, k] != 0:
            if not (plan <= S.STACK_XY and wp.abs(wrap_angle(yaw[e, k1] - yaw[e, k] - PI)) <= S.STACK_YAW
                    and wp.abs(d[2]) >= 2.0 * bottom):
                status = status | STACK
            continue
        if not (leg_angle(yaw[e, k], d) <= max_turn and leg_angle(yaw[e, k1], d) <= max_turn):
            status = status | TURN
        if max_climb < 1.5707963 and not (wp.atan2(wp.abs(d[2]), plan) <= max_climb):
            status = status | CLIMB  # (atan2 <= pi/2 always: no test needed at 90 degrees or more)
    status = status | crossing_status(pos, e, count, legs, crossing_clearance)
    sep = wp.max(min_spacing, 2.0 * outer_half)
    for k in range(count):
        p = pos[e, k]
        if not (wp.max(wp.abs(p[0]), wp.abs(p[1])) + outer_half <= half):
            status = status | BOUNDS
        if not (p[2] - bottom >= 0.0):
            status = status | GROUND
        for m in range(k + 1, count):
            if not (wp.length(pos[e, m] - p) >= sep):
                status = status | CROWDED
    return status


@wp.func
def crossing_status(pos: wp.array2d(dtype=wp.vec3f), e: int, count: int, legs: int, clearance: float) -> int:
    """CROSSING when two legs that share no gate cross in plan view (a proper intersection of
    the plan segments: a non-zero cross product, both parameters in [0, 1]) with heights there
    (linear along each leg) less than ``clearance`` apart."""
    for i in range(legs):
        a0 = pos[e, i]
        a1 = pos[e, (i + 1) % count]
        dax = a1[0] - a0[0]
        day = a1[1] - a0[1]
        for j in range(i + 2, legs):
            if (j + 1) % count == i:
                continue  # the closing leg shares gate 0 with leg 0
            b0 = pos[e, j]
            b1 = pos[e, (j + 1) % count]
            dbx = b1[0] - b0[0]
            dby = b1[1] - b0[1]
            den = dax * dby - day * dbx
            if den == 0.0:
                continue
            wx = b0[0] - a0[0]
            wy = b0[1] - a0[1]
            tn = wx * dby - wy * dbx
            un = wx * day - wy * dax
            if den < 0.0:
                den = -den
                tn = -tn
                un = -un
            # t = tn / den and u = un / den in [0, 1], tested without dividing first
            if tn >= 0.0 and tn <= den and un >= 0.0 and un <= den:
                t = tn / den
                u = un / den
                za = a0[2] + (a1[2] - a0[2]) * t
                zb = b0[2] + (b1[2] - b0[2]) * u
                if not (wp.abs(za - zb) >= clearance):
                    return CROSSING
    return 0


@wp.func
def start_pose(ctrl: wp.array2d(dtype=wp.vec2f), e: int, num_ctrl: int, dense: int, z: float):
    """The start pose of env ``e``'s path: its first point (at height ``z``) and heading there."""
    q0 = span_coeffs(ctrl, e, num_ctrl, 1, 0)
    p0 = span_point(q0, 0.0)
    p1 = span_point(q0, float(num_ctrl) / float(dense))
    d0 = p1 - p0
    return wp.vec3f(p0[0], p0[1], z), wp.atan2(d0[1], d0[0])


# Warp passes a random state to a wp.func by value: the draws below return the advanced state,
# which the kernel carries on with, so the stream is the same as with the code inlined.


@wp.func
def draw_controls(
    ctrl: wp.array2d(dtype=wp.vec2f),
    e: int,
    st: wp.uint32,
    num_ctrl: int,
    angle_jitter: float,
    radius_min: float,
    radius_max: float,
    inner: float,
) -> wp.uint32:
    """Env ``e``'s control points: jittered, evenly spaced angles from a random start, each at a random
    fraction of the largest radius that keeps it in the square of half side ``inner``; a random
    direction. Returns the advanced random state."""
    a0 = TWO_PI * wp.randf(st)
    reverse = wp.randf(st) < 0.5
    for k in range(num_ctrl):
        theta = a0 + TWO_PI * (float(k) + angle_jitter * (2.0 * wp.randf(st) - 1.0)) / float(num_ctrl)
        c = wp.cos(theta)
        s = wp.sin(theta)
        frac = radius_min + (radius_max - radius_min) * wp.randf(st)
        q = wp.vec2f(c, s) * (frac * inner / wp.max(wp.abs(c), wp.abs(s)))
        idx = k
        if reverse:
            idx = num_ctrl - 1 - k
        ctrl[e, idx] = q
    return st


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
    spline, walking its dense polyline once (the band track's resampling walks the same way):
    a height each (:func:`gate_shapes.height_of`: uniform when ``lam`` is 0, else blended with a
    cosine profile over the loop fraction ``target * inv_loop``), the heading of the curve plus
    jitter. Returns the advanced random state."""
    per_span = dense / num_ctrl
    inv = 1.0 / float(per_span)
    k = int(0)
    sub = int(1)
    q8 = span_coeffs(ctrl, e, num_ctrl, 1, 0)
    pa = span_point(q8, 0.0)
    pb = span_point(q8, inv)
    seg = wp.length(pb - pa)
    acc = float(0.0)
    m = int(0)
    for g in range(count):
        target = step * (float(g) + offset + spacing_jitter * (wp.randf(st) - 0.5))
        while acc + seg < target and m < dense - 1:
            acc += seg
            m += 1
            pa = pb
            sub += 1
            if sub > per_span:
                sub = 1
                k = (k + 1) % num_ctrl
                q8 = span_coeffs(ctrl, e, num_ctrl, 1, k)
            pb = span_point(q8, float(sub) * inv)
            seg = wp.length(pb - pa)
        f = float(0.0)
        if seg > 0.0:
            f = wp.clamp((target - acc) / seg, 0.0, 1.0)
        p = pa + (pb - pa) * f
        d = pb - pa
        height = height_min + (height_max - height_min) * S.height_of(wp.randf(st), lam, target * inv_loop, phase)
        pos[e, g] = wp.vec3f(p[0], p[1], height)
        yaw[e, g] = wrap_angle(wp.atan2(d[1], d[0]) + yaw_jitter * (2.0 * wp.randf(st) - 1.0))
    return st


@wp.kernel
def layout_kernel(
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    key: int,
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
    difficulty_offset: wp.array(dtype=wp.float32),
    hard_size: wp.array(dtype=wp.float32),
    hard_min_spacing: wp.array(dtype=wp.float32),
    hard_max_spacing: wp.array(dtype=wp.float32),
    hard_height_max: wp.array(dtype=wp.float32),
    hard_max_turn: wp.array(dtype=wp.float32),
    hard_max_climb: wp.array(dtype=wp.float32),
    figure8_share: wp.array(dtype=wp.float32),
    hairpin_share: wp.array(dtype=wp.float32),
    split_s_share: wp.array(dtype=wp.float32),
    gate_width: wp.array(dtype=wp.float32),
    gate_height: wp.array(dtype=wp.float32),
    thickness: wp.array(dtype=wp.float32),
    min_gates: int,
    max_gates: int,
    num_ctrl: int,
    dense: int,
    closed: int,
    max_attempts: int,
    # outputs
    ctrl: wp.array2d(dtype=wp.vec2f),
    pos: wp.array2d(dtype=wp.vec3f),
    yaw: wp.array2d(dtype=wp.float32),
    stacked: wp.array2d(dtype=wp.int32),
    count_out: wp.array(dtype=wp.int32),
    length_out: wp.array(dtype=wp.float32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    attempts_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    shape_out: wp.array(dtype=wp.int32),
    difficulty_out: wp.array(dtype=wp.float32),
    arena_out: wp.array(dtype=wp.float32),
    valid: wp.array(dtype=wp.int32),
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
    half = arena * 0.5
    gh = gate_height[e]
    if gh <= 0.0:
        gh = gate_width[e]
    outer_half = 0.5 * gate_width[e] + thickness[e]
    if gate_width[e] <= 0.0:
        outer_half = 0.0  # flags OPENING: a gate with no opening can never be passed
    inner = half - wp.max(outer_half, 0.5 * gate_width[e] + thickness[e])
    bottom = 0.5 * gh + thickness[e]
    shape = S.LOOP
    lam = float(0.0)
    h_top = h_max
    if d > 0.0:
        # drawn once per generation (its own stream): retries keep the shape
        sst = stream_state(seeds[e], generation[e], key, S.SHAPE_STREAM)
        shape = S.draw_shape(wp.randf(sst), d, figure8_share[e], hairpin_share[e], split_s_share[e], 1)
        lam = d * (0.6 + 0.4 * wp.randf(sst))  # how much of the height is the climb-and-dive profile
        if shape == S.FIGURE8:
            lam = 1.0  # the crossings sit at the top and bottom of the height profile
            h_top = wp.max(h_max, height_min[e] + 1.6 * crossing_clearance[e])
    status = int(0)
    used = int(0)
    count = int(0)
    total = float(0.0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st = stream_state(seeds[e], generation[e], key, attempt)
        if shape == S.LOOP:
            st = draw_controls(ctrl, e, st, num_ctrl, angle_jitter[e], radius_min[e], radius_max[e], inner)
        elif shape == S.FIGURE8:
            st = S.draw_figure8(ctrl, e, st, num_ctrl, angle_jitter[e], inner, closed)
        else:
            st = S.draw_thin_loop(ctrl, e, st, num_ctrl, angle_jitter[e], d, inner)
        per_span = dense / num_ctrl
        loop = closed_length(ctrl, e, num_ctrl, per_span)
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
        step = total / slots
        phase = float(0.0)
        if d > 0.0:
            phase = TWO_PI * wp.randf(st)
            if shape == S.FIGURE8:
                phase = S.figure8_phase(num_ctrl, closed)  # top on one pass of the crossing, bottom on the other
        st = place_gates(ctrl, e, st, num_ctrl, dense, count, step, offset, spacing_jitter[e], height_min[e],
                         h_top, yaw_jitter[e], lam, 1.0 / wp.max(loop, 1.0e-30), phase, pos, yaw)
        if shape == S.SPLIT_S or attempt == 0:
            for g in range(max_gates):
                stacked[e, g] = 0
        for g in range(count, max_gates):
            pos[e, g] = wp.vec3f(0.0, 0.0, 0.0)
            yaw[e, g] = 0.0
        if shape == S.SPLIT_S:
            gap = 1.1 * wp.max(min_sp, 2.0 * bottom) + 0.4 * wp.randf(st)
            st = S.make_split_s(pos, yaw, stacked, e, st, count, closed, gap, height_min[e], h_max)
        status = gates_status(
            pos, yaw, e, count, closed, arena, min_sp, max_sp, turn, outer_half, bottom, stacked, climb,
            crossing_clearance[e],
        )
        if shape == S.SPLIT_S and status != NONFINITE:
            sp, sy = start_pose(ctrl, e, num_ctrl, dense, pos[e, 0][2])
            status = status | column_status(pos, yaw, stacked, e, count, closed, sp, sy, outer_half,
                                            0.5 * thickness[e], bottom)
        if not wp.isfinite(total):
            status = NONFINITE      # a path length that overflows float32
        if status == 0:
            break
    sp, sy = start_pose(ctrl, e, num_ctrl, dense, pos[e, 0][2])
    start_pos[e] = sp
    start_yaw[e] = sy
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
        valid[e] = 0


@wp.kernel
def frames_kernel(
    active: wp.array(dtype=wp.int32),
    yaw: wp.array2d(dtype=wp.float32),
    gate_width: wp.array(dtype=wp.float32),
    gate_height: wp.array(dtype=wp.float32),
    thickness: wp.array(dtype=wp.float32),
    max_gates: int,
    width_out: wp.array(dtype=wp.float32),
    height_out: wp.array(dtype=wp.float32),
    thickness_out: wp.array(dtype=wp.float32),
    normal: wp.array2d(dtype=wp.vec3f),
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
        normal[e, g] = wp.vec3f(wp.cos(yaw[e, g]), wp.sin(yaw[e, g]), 0.0)


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

