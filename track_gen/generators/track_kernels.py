"""Warp kernels of the band-track stages (one thread per env; inactive envs return at once)."""

from __future__ import annotations

import warp as wp

from track_gen.generators.curve import (
    closed_length_and_tight,
    knot_curvature,
    seg_seg_dist,
    span_coeffs,
    span_point,
)
from track_gen.generators import gate_shapes as SH
from track_gen.generators.status import TrackStatus
from track_gen.math import BIG, PI, TWO_PI, left_normal
from track_gen.rng import stream_state

# Failure bits of ``centerline.status``: the TrackStatus flags (defined once, in status.py)
LENGTH = wp.constant(int(TrackStatus.LENGTH))
BOUNDS = wp.constant(int(TrackStatus.BOUNDS))
TURN = wp.constant(int(TrackStatus.TURN))
OVERLAP = wp.constant(int(TrackStatus.OVERLAP))
DEGENERATE = wp.constant(int(TrackStatus.DEGENERATE))
GROUND = wp.constant(int(TrackStatus.GROUND))
GRADE = wp.constant(int(TrackStatus.GRADE))
NONFINITE = wp.constant(int(TrackStatus.NONFINITE))
OBSTACLE = wp.constant(int(TrackStatus.OBSTACLE))  # set by the obstacles stage (track_obstacle_kernels)
MAX_CHUNKS = wp.constant(64)
chunk_vec = wp.types.vector(length=MAX_CHUNKS, dtype=wp.float32)
TWO_OVER_PI = wp.constant(0.6366197723675814)
# the smallest cyclic segment gap whose turn-back bound 2 / pi * g h - 2 h is positive
MIN_GAP = wp.constant(4)
# A draw whose dense spline has a turn radius below this fraction of the required one is
# redrawn before resampling (it would fail the exact TURN check anyway).
EARLY_REJECT = wp.constant(0.9)


@wp.func
def all_finite(xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), e: int, n: int) -> bool:
    """Whether every centerline point and half width of env ``e`` is finite."""
    ok = bool(True)
    for i in range(n):
        p = xy[e, i]
        if not (wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(hw[e, i])):
            ok = False
    return ok


@wp.func
def length_and_widest(xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), e: int, n: int) -> wp.vec2f:
    """(closed length, largest half width) of env ``e``'s centerline."""
    total = float(0.0)
    wmax = float(0.0)
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        total += wp.length(xy[e, j] - xy[e, i])
        wmax = wp.max(wmax, hw[e, i])
    return wp.vec2f(total, wmax)


@wp.func
def point_status(
    xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), e: int, n: int, half: float, big_r: float
) -> int:
    """DEGENERATE, BOUNDS and TURN bits of env ``e``'s points: a zero-length neighbour segment;
    a band edge outside the square of half side ``half``; a turn radius below ``big_r``."""
    status = int(0)
    for i in range(n):
        im = i - 1
        if im < 0:
            im = n - 1
        ip = i + 1
        if ip == n:
            ip = 0
        p = xy[e, i]
        a = p - xy[e, im]
        b = xy[e, ip] - p
        t = xy[e, ip] - xy[e, im]
        tl = wp.length(t)
        la = wp.length(a)
        lb = wp.length(b)
        # every test is written so that NaN fails it (a NaN comparison is false)
        if not (tl > 0.0 and la > 0.0 and lb > 0.0):
            status = status | DEGENERATE
        else:
            t = t / tl
            nrm = left_normal(t) * hw[e, i]
            e1 = p + nrm
            e2 = p - nrm
            ext = wp.max(wp.max(wp.abs(e1[0]), wp.abs(e1[1])), wp.max(wp.abs(e2[0]), wp.abs(e2[1])))
            if not (ext <= half):
                status = status | BOUNDS
            ang = wp.abs(wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b)))
            if not (ang * big_r <= 0.5 * (la + lb)):
                status = status | TURN
    return status


@wp.func
def band_overlaps(
    xy: wp.array2d(dtype=wp.vec2f),
    hw: wp.array2d(dtype=wp.float32),
    e: int,
    n: int,
    h: float,
    gmin: int,
    reach: float,
    clearance: float,
) -> bool:
    """True when two parts of env ``e``'s band that the centerline turned back between come
    closer than their half widths plus ``clearance``.

    Segments ``i`` and ``j`` (cyclic index gap ``g``, arc distance ``g h`` with ``h`` the mean
    spacing) overlap when their distance is below both ``need`` (the two half widths plus
    ``clearance``) and ``2 / pi * g h - 2 h``. A curve whose turn radius is at least R never
    brings two points closer than ``2 / pi`` times the arc between them within half a turn
    (Schur's comparison with a circle of radius R), so only a centerline that bent back on
    itself can meet the second bound; ``2 h`` covers the polyline's discretization. The rule
    needs no window that grows with ``clearance``: a larger clearance only adds pairs.

    Pairs closer than ``gmin`` segments (``g h < pi R``, R the turn radius bound the caller has
    already checked) cannot meet the turn-back bound, by that same comparison: they are skipped,
    which keeps the test as fast as a window would, without depending on ``clearance``.

    Chunked: segments in at most MAX_CHUNKS chunks, chunk pairs whose bounding boxes are more
    than ``reach`` (the largest ``need``) apart skipped, then an exact midpoint prefilter."""
    chunk = wp.max(16, (n + MAX_CHUNKS - 1) / MAX_CHUNKS)
    nc = (n + chunk - 1) / chunk
    lo_x = chunk_vec()
    lo_y = chunk_vec()
    hi_x = chunk_vec()
    hi_y = chunk_vec()
    smax = float(0.0)
    for c in range(nc):
        bl = wp.vec2f(BIG, BIG)
        bh = wp.vec2f(-BIG, -BIG)
        for i in range(c * chunk, wp.min(c * chunk + chunk + 1, n + 1)):
            q = xy[e, i % n]
            bl = wp.min(bl, q)
            bh = wp.max(bh, q)
            if i > c * chunk:
                smax = wp.max(smax, wp.length(q - xy[e, i - 1]))
        lo_x[c] = bl[0]
        lo_y[c] = bl[1]
        hi_x[c] = bh[0]
        hi_y[c] = bh[1]
    for ca in range(nc):
        for cb in range(ca, nc):
            dx = wp.max(wp.max(lo_x[ca] - hi_x[cb], lo_x[cb] - hi_x[ca]), 0.0)
            dy = wp.max(wp.max(lo_y[ca] - hi_y[cb], lo_y[cb] - hi_y[ca]), 0.0)
            if dx * dx + dy * dy > reach * reach:
                continue
            for i in range(ca * chunk, wp.min(ca * chunk + chunk, n)):
                i1 = (i + 1) % n
                pi0 = xy[e, i]
                pi1 = xy[e, i1]
                mid_i = (pi0 + pi1) * 0.5
                wi = wp.max(hw[e, i], hw[e, i1])
                # only pairs whose cyclic gap lies in [gmin, n - gmin] can meet the turn-back bound
                for j in range(wp.max(cb * chunk, i + gmin), wp.min(wp.min(cb * chunk + chunk, n), i + n - gmin + 1)):
                    g = wp.min(j - i, n - (j - i))
                    bound = wp.min(wi + wp.max(hw[e, j], hw[e, (j + 1) % n]) + clearance,
                                   TWO_OVER_PI * float(g) * h - 2.0 * h)
                    if bound <= 0.0:
                        continue
                    pj0 = xy[e, j]
                    pj1 = xy[e, (j + 1) % n]
                    # exact prefilter: segment distance >= midpoint distance - longest segment
                    dm = (pj0 + pj1) * 0.5 - mid_i
                    if wp.dot(dm, dm) >= (bound + smax) * (bound + smax):
                        continue
                    if seg_seg_dist(pi0, pi1, pj0, pj1) < bound:
                        return True
    return False


@wp.func
def track_status(
    xy: wp.array2d(dtype=wp.vec2f),
    hw: wp.array2d(dtype=wp.float32),
    e: int,
    n: int,
    size: float,
    min_turn_radius: float,
    clearance: float,
    min_length: float,
    max_length: float,
) -> int:
    """Failure bits of env ``e``'s closed centerline and band (0: every constraint holds).

    Constraints (the numpy checker in the tests implements the same definitions): every point,
    half width and the length finite (else NONFINITE alone); length in [min_length,
    max_length]; both band edges of every point inside the square; turn radius at every point
    >= R = max(min_turn_radius, max half width); no overlap (:func:`band_overlaps`). Every
    comparison is written so that a NaN fails it.
    """
    if not all_finite(xy, hw, e, n):
        return NONFINITE
    lw = length_and_widest(xy, hw, e, n)
    total = lw[0]
    wmax = lw[1]
    if not (wp.isfinite(total) and wp.isfinite(wmax)):
        return NONFINITE    # finite points whose distances overflow float32
    status = int(0)
    if not (total >= min_length and total <= max_length):
        status = status | LENGTH
    big_r = wp.max(min_turn_radius, wmax)
    status = status | point_status(xy, hw, e, n, size * 0.5, big_r)
    if status != 0:
        return status
    h = total / float(n)
    gmin = wp.max(MIN_GAP, int(wp.floor(PI * big_r / h)))
    if band_overlaps(xy, hw, e, n, h, gmin, 2.0 * wmax + clearance, clearance):
        return status | OVERLAP
    return status


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
        # start at the flattest knot, so the start line sits on the straightest part of the loop
        kbest = int(0)
        kmin = float(BIG)
        for k in range(num_ctrl):
            kc = knot_curvature(ctrl, e, num_ctrl, k)
            if kc < kmin and use_points == 0:
                kmin = kc
                kbest = k
        # one pass over the dense curve: its length, and an early reject of draws whose spline
        # clearly turns tighter than allowed (the exact check on the resampled line still decides)
        per_span = dense / num_ctrl
        early = float(0.0)
        if attempt < max_attempts - 1 and use_points == 0:
            early = EARLY_REJECT * wp.max(min_turn_radius[e], w0 * (1.0 + var))
        lr = closed_length_and_tight(ctrl, e, num_ctrl, per_span, early)
        total = lr[0]
        if lr[1] > 0.0:
            status = TURN
            continue
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
            xy[e, i] = pa + (pb - pa) * f
            w = w0
            if var != 0.0:
                x = float(i) / float(num_points)
                wave = 0.6 * wp.sin(TWO_PI * 2.0 * x + phase1) + 0.4 * wp.sin(TWO_PI * 3.0 * x + phase2)
                w = w0 * (1.0 + var * wave)
            hw[e, i] = w
        status = track_status(
            xy, hw, e, num_points, size[e], min_turn_radius[e], clearance[e], min_length[e], max_length
        )
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
    n = num_points
    acc = float(0.0)
    for i in range(n):
        im = (i + n - 1) % n
        ip = (i + 1) % n
        p = xy[e, i]
        a = p - xy[e, im]
        b = xy[e, ip] - p
        t = wp.normalize(xy[e, ip] - xy[e, im])
        tangent[e, i] = t
        normal[e, i] = left_normal(t)
        s_out[e, i] = acc
        mean = 0.5 * (wp.length(a) + wp.length(b))
        k = float(0.0)
        if mean > 0.0:
            k = wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b)) / mean
        curvature[e, i] = k
        acc += wp.length(b)
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
