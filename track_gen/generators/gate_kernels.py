"""Warp kernels of the gate-course stages (one thread per env)."""

from __future__ import annotations

import warp as wp

from track_gen.generators.curve import closed_length_and_tight, span_coeffs, span_point
from track_gen.generators.status import GateStatus
from track_gen.math import TWO_PI, wrap_angle
from track_gen.rng import stream_state

# Failure bits of ``gates.status``: the GateStatus flags (defined once, in status.py)
SPACING = wp.constant(int(GateStatus.SPACING))
CROWDED = wp.constant(int(GateStatus.CROWDED))
TURN = wp.constant(int(GateStatus.TURN))
BOUNDS = wp.constant(int(GateStatus.BOUNDS))
GROUND = wp.constant(int(GateStatus.GROUND))
OPENING = wp.constant(int(GateStatus.OPENING))
NONFINITE = wp.constant(int(GateStatus.NONFINITE))
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
) -> int:
    """Failure bits of env ``e``'s gates (0: valid). Same definitions as the tests' numpy checker:
    consecutive gate distances in [min_spacing, max_spacing] (the closing leg too when closed);
    every pair at least max(min_spacing, 2 * outer_half) apart; each leg leaves its gate and enters
    the next within max_turn of their headings; frames inside the square and above the ground.
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
        if not (leg_angle(yaw[e, k], d) <= max_turn and leg_angle(yaw[e, k1], d) <= max_turn):
            status = status | TURN
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
    pos: wp.array2d(dtype=wp.vec3f),
    yaw: wp.array2d(dtype=wp.float32),
) -> wp.uint32:
    """Gates 0..count-1 of env ``e`` at arc lengths ``step * (g + offset + jitter)`` along the
    spline, walking its dense polyline once (the band track's resampling walks the same way):
    a random height each, the heading of the curve plus jitter. Returns the advanced random state."""
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
        height = height_min + (height_max - height_min) * wp.randf(st)
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
    count_out: wp.array(dtype=wp.int32),
    length_out: wp.array(dtype=wp.float32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    attempts_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    half = size[e] * 0.5
    gh = gate_height[e]
    if gh <= 0.0:
        gh = gate_width[e]
    outer_half = 0.5 * gate_width[e] + thickness[e]
    if gate_width[e] <= 0.0:
        outer_half = 0.0  # flags OPENING: a gate with no opening can never be passed
    inner = half - wp.max(outer_half, 0.5 * gate_width[e] + thickness[e])
    bottom = 0.5 * gh + thickness[e]
    status = int(0)
    used = int(0)
    count = int(0)
    total = float(0.0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st = stream_state(seeds[e], generation[e], key, attempt)
        st = draw_controls(ctrl, e, st, num_ctrl, angle_jitter[e], radius_min[e], radius_max[e], inner)
        per_span = dense / num_ctrl
        total = closed_length_and_tight(ctrl, e, num_ctrl, per_span, 0.0)[0]
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
        st = place_gates(ctrl, e, st, num_ctrl, dense, count, step, offset, spacing_jitter[e], height_min[e],
                         height_max[e], yaw_jitter[e], pos, yaw)
        for g in range(count, max_gates):
            pos[e, g] = wp.vec3f(0.0, 0.0, 0.0)
            yaw[e, g] = 0.0
        status = gates_status(
            pos, yaw, e, count, closed, size[e], min_spacing[e], max_spacing[e], max_turn[e], outer_half, bottom
        )
        if not wp.isfinite(total):
            status = NONFINITE      # a path length that overflows float32
        if status == 0:
            break
    q0 = span_coeffs(ctrl, e, num_ctrl, 1, 0)
    p0 = span_point(q0, 0.0)
    p1 = span_point(q0, float(num_ctrl) / float(dense))
    d0 = p1 - p0
    start_pos[e] = wp.vec3f(p0[0], p0[1], pos[e, 0][2])
    start_yaw[e] = wp.atan2(d0[1], d0[0])
    if not (wp.isfinite(p0[0]) and wp.isfinite(p0[1]) and wp.isfinite(start_yaw[e])):
        status = NONFINITE
    count_out[e] = count
    length_out[e] = total
    attempts_out[e] = used
    status_out[e] = status
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
