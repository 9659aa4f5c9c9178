"""Warp kernels of the band-track stages (one thread per env; inactive envs return at once)."""

from __future__ import annotations

import warp as wp

from track_gen.generators.curve import (
    closed_length_and_tight,
    knot_curvature,
    span_coeffs,
    span_point,
)
from track_gen.generators import gate_shapes as SH
from track_gen.math import BIG, TWO_PI, left_normal
from track_gen.rng import stream_state
# the status bits and track_status are re-exported: other stages and the layout kernels import them from here
from track_gen.generators.track_validity import (  # noqa: F401
    LENGTH,
    BOUNDS,
    TURN,
    OVERLAP,
    DEGENERATE,
    GROUND,
    GRADE,
    NONFINITE,
    OBSTACLE,
    EARLY_REJECT,
    turn_is_tight,
    point_pass,
    finish_status,
    track_status,
)


@wp.func
def flattest_knot(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int) -> int:
    """The knot of least curvature of env ``e``'s closed spline (the first of equals)."""
    kbest = int(0)
    kmin = float(BIG)
    for k in range(count):
        kc = knot_curvature(ctrl, e, count, k)
        if kc < kmin:
            kmin = kc
            kbest = k
    return kbest


@wp.func
def fill_half_width(hw: wp.array2d(dtype=wp.float32), e: int, n: int, w0: float, var: float, phase1: float,
                    phase2: float) -> wp.vec2f:
    """Write env ``e``'s half-width profile (``w0``, or ``w0 (1 + var wave)`` with a two-harmonic
    wave) and return (1 if every value is finite else 0, largest value): the values
    :func:`finite_length_widest` would find, before any point is drawn."""
    if var == 0.0:
        for i in range(n):
            hw[e, i] = w0
        # what the loop below finds for a constant profile (max(max(0, w0), w0) = max(0, w0))
        return wp.vec2f(wp.where(wp.isfinite(w0), 1.0, 0.0), wp.max(0.0, w0))
    ok = float(1.0)
    wmax = float(0.0)
    for i in range(n):
        w = w0
        if var != 0.0:
            x = float(i) / float(n)
            wave = 0.6 * wp.sin(TWO_PI * 2.0 * x + phase1) + 0.4 * wp.sin(TWO_PI * 3.0 * x + phase2)
            w = w0 * (1.0 + var * wave)
        hw[e, i] = w
        if not wp.isfinite(w):
            ok = 0.0
        wmax = wp.max(wmax, w)
    return wp.vec2f(ok, wmax)


@wp.kernel
def centerline_kernel(
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    key: int,
    size: wp.array(dtype=wp.float32),
    radius_min: wp.array(dtype=wp.float32),
    radius_max: wp.array(dtype=wp.float32),
    angle_jitter: wp.array(dtype=wp.float32),
    half_width: wp.array(dtype=wp.float32),
    width_variation: wp.array(dtype=wp.float32),
    min_turn_radius: wp.array(dtype=wp.float32),
    clearance: wp.array(dtype=wp.float32),
    min_length: wp.array(dtype=wp.float32),
    max_length: float,
    num_ctrl: int,
    num_points: int,
    dense: int,
    max_attempts: int,
    points: wp.array2d(dtype=wp.vec2f),
    use_points: int,
    difficulty: wp.array(dtype=wp.float32),
    difficulty_offset: wp.array(dtype=wp.float32),
    hairpin_share: wp.array(dtype=wp.float32),
    # outputs
    ctrl: wp.array2d(dtype=wp.vec2f),
    xy: wp.array2d(dtype=wp.vec2f),
    hw: wp.array2d(dtype=wp.float32),
    attempts_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    shape_out: wp.array(dtype=wp.int32),
    difficulty_out: wp.array(dtype=wp.float32),
    valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    half = size[e] * 0.5
    w0 = half_width[e]
    var = width_variation[e]
    inner = half - w0 * (1.0 + var)
    # the difficulty: the share of hairpin tracks (drawn once per generation: retries keep the shape)
    d = float(0.0)
    level_ok = bool(True)
    shape = SH.LOOP
    if use_points == 0:
        level = difficulty[e] + difficulty_offset[e]
        level_ok = wp.isfinite(level)
        if level_ok:
            d = wp.clamp(level, 0.0, 1.0)
        if d > 0.0:
            sst = stream_state(seeds[e], generation[e], key, SH.SHAPE_STREAM)
            if wp.randf(sst) < d * hairpin_share[e]:
                shape = SH.HAIRPIN
    status = int(0)
    used = int(0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st = stream_state(seeds[e], generation[e], key, attempt)
        a0 = TWO_PI * wp.randf(st)
        reverse = wp.randf(st) < 0.5
        if shape == SH.HAIRPIN:
            st = SH.draw_bent_loop(ctrl, e, st, num_ctrl, angle_jitter[e], d, inner)
        for k in range(num_ctrl):
            if shape == SH.HAIRPIN:
                break
            if use_points != 0:
                ctrl[e, k] = points[e, k]
                continue
            theta = a0 + TWO_PI * (float(k) + angle_jitter[e] * (2.0 * wp.randf(st) - 1.0)) / float(num_ctrl)
            c = wp.cos(theta)
            s = wp.sin(theta)
            frac = radius_min[e] + (radius_max[e] - radius_min[e]) * wp.randf(st)
            r = frac * inner / wp.max(wp.abs(c), wp.abs(s))
            idx = k
            if reverse:
                idx = num_ctrl - 1 - k
            ctrl[e, idx] = wp.vec2f(r * c, r * s)
        phase1 = TWO_PI * wp.randf(st)
        phase2 = TWO_PI * wp.randf(st)
        # one pass over the dense curve: its length, and an early reject of draws whose spline
        # clearly turns tighter than allowed (the exact check on the resampled line still decides)
        per_span = dense / num_ctrl
        early = float(0.0)
        if attempt < max_attempts - 1 and use_points == 0:
            early = EARLY_REJECT * wp.max(min_turn_radius[e], w0 * (1.0 + var))
        total, tight, near = closed_length_and_tight(ctrl, e, num_ctrl, per_span, early)
        if tight:
            status = TURN
            continue
        # start at the flattest knot (drawn loops), so the start line sits on the straightest part
        kbest = int(0)
        if use_points == 0:
            kbest = flattest_knot(ctrl, e, num_ctrl)
        # the half-width profile first: its largest value sets the turn radius bound R of the checks
        flw_w = fill_half_width(hw, e, num_points, w0, var, phase1, phase2)
        big_r = wp.max(min_turn_radius[e], flw_w[1])
        # walk the dense polyline from the start knot, emitting evenly spaced points (the gate
        # layout's place_gates walks the same way; a shared struct-based walk measured 33% slower
        # here, so this kernel keeps its walk inlined: kept long for speed)
        inv = 1.0 / float(per_span)
        k = kbest
        q8 = span_coeffs(ctrl, e, num_ctrl, 1, k)
        sub = int(1)
        pa = span_point(q8, 0.0)
        pb = span_point(q8, inv)
        seg = wp.length(pb - pa)
        acc = float(0.0)
        m = int(0)
        # a draw that is not the last stops at its first failing point: any failure bit rejects it
        stop = attempt < max_attempts - 1 and use_points == 0
        failed = bool(False)
        prev = wp.vec2f()  # the two points before q
        p = wp.vec2f()
        for i in range(num_points):
            target = total * float(i) / float(num_points)
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
            q = pa + (pb - pa) * f
            xy[e, i] = q
            # in a near-tight span, a draw that is not the last stops at a turn sure to fail TURN
            if stop and i >= 2 and (near >> wp.int64(wp.min(k, 63))) & wp.int64(1) != wp.int64(0):
                a = p - prev
                b = q - p
                la = wp.length(a)
                lb = wp.length(b)
                if turn_is_tight(a, b, la, lb, 0.5 * (la + lb), big_r):
                    failed = True
                    break
            prev = p
            p = q
        if failed:
            status = TURN
            continue
        pts = point_pass(xy, hw, e, num_points, size[e] * 0.5, big_r, stop)
        if stop and pts[2] != 0.0:
            status = int(pts[2])
            continue
        status = finish_status(xy, hw, e, num_points, wp.vec3f(wp.min(pts[0], flw_w[0]), pts[1], flw_w[1]),
                               int(pts[2]), pts[3], min_turn_radius[e], clearance[e], min_length[e], max_length)
        if not wp.isfinite(total):
            # a NaN / inf control point (or a spline length beyond float32) stalls the resampling
            # walk on finite points: the resampled line would look merely degenerate
            status = NONFINITE
        if status == 0:
            break
    if not level_ok:
        status = NONFINITE  # a NaN / inf difficulty offset
    attempts_out[e] = used
    status_out[e] = status
    shape_out[e] = shape
    difficulty_out[e] = d
    if status != 0:
        valid[e] = 0


@wp.kernel
def band_kernel(
    active: wp.array(dtype=wp.int32),
    xy: wp.array2d(dtype=wp.vec2f),
    num_points: int,
    tangent: wp.array2d(dtype=wp.vec2f),
    normal: wp.array2d(dtype=wp.vec2f),
    s_out: wp.array2d(dtype=wp.float32),
    curvature: wp.array2d(dtype=wp.float32),
    length_out: wp.array(dtype=wp.float32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
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
        tangent[e, i] = t
        normal[e, i] = left_normal(t)
        s_out[e, i] = acc
        mean = 0.5 * (la + lb)
        k = float(0.0)
        if mean > 0.0:
            k = wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b)) / mean
        curvature[e, i] = k
        acc += lb
        prev = p
        p = nxt
        a = b
        la = lb
    length_out[e] = acc
    p0 = xy[e, 0]
    t0 = tangent[e, 0]
    start_pos[e] = wp.vec3f(p0[0], p0[1], 0.0)
    start_yaw[e] = wp.atan2(t0[1], t0[0])


@wp.kernel
def elevation_kernel(
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    key: int,
    xy: wp.array2d(dtype=wp.vec2f),
    s: wp.array2d(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    base_height: wp.array(dtype=wp.float32),
    amplitude: wp.array(dtype=wp.float32),
    max_grade: wp.array(dtype=wp.float32),
    num_points: int,
    status_in: wp.array(dtype=wp.int32),
    z: wp.array2d(dtype=wp.float32),
    start_pos: wp.array(dtype=wp.vec3f),
    status_out: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
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
        z[e, i] = base_height[e] + a1 * wp.sin(x + f1) + a2 * wp.sin(2.0 * x + f2) + a3 * wp.sin(3.0 * x + f3)
    status = status_in[e]
    for i in range(n):
        if not wp.isfinite(z[e, i]):
            status = status | NONFINITE
    if (status & NONFINITE) != 0:
        status = NONFINITE      # like the centerline: non-finite geometry carries no other bit
    else:
        for i in range(n):
            ip = (i + 1) % n
            if not (z[e, i] >= 0.0):
                status = status | GROUND
            run = wp.length(xy[e, ip] - xy[e, i])
            if not (wp.abs(z[e, ip] - z[e, i]) <= grade * run * 1.001 + 1.0e-6):
                status = status | GRADE
    p0 = xy[e, 0]
    start_pos[e] = wp.vec3f(p0[0], p0[1], z[e, 0])
    status_out[e] = status
    if status != 0:
        valid[e] = 0
