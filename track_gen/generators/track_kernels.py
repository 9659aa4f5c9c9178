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
# A point whose |x|, |y| plus the half width stay below this fraction of the half side has both
# band edges inside the square (the edge offset is the unit normal, rounded, times the half width:
# at most 1 + 5 ulp of its size), so its exact BOUNDS test is skipped.
INSIDE = wp.constant(0.99999)


@wp.func
def finite_length_widest(xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), e: int,
                         n: int) -> wp.vec3f:
    """(1 if every point and half width of env ``e`` is finite else 0, closed length, largest half
    width), in one pass (the length sums the segments in index order)."""
    ok = float(1.0)
    total = float(0.0)
    wmax = float(0.0)
    p = xy[e, 0]
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        q = xy[e, j]
        w = hw[e, i]
        if not (wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(w)):
            ok = 0.0
        total += wp.length(q - p)
        wmax = wp.max(wmax, w)
        p = q
    return wp.vec3f(ok, total, wmax)


@wp.func
def turn_is_wide(a: wp.vec2f, b: wp.vec2f, half: float, big_r: float) -> bool:
    """True when the turn from ``a`` to ``b`` provably passes the TURN test ``|atan2(a x b, a . b)|
    * big_r <= half``, so its ``atan2`` can be skipped.

    For ``a . b > 0`` the angle is below pi/2 and at most its tangent ``|a x b| / (a . b)`` (both
    as float32 computes them: ``atan2`` measures that very pair), so ``|a x b| big_r <= half (a .
    b)`` settles it; the factor 1.001 covers the rounding of this test and of ``atan2`` (a few
    ulp) many times over. A right side outside [1e-30, 1e30] (where underflow or overflow could
    bend the test) takes the exact test."""
    d = wp.dot(a, b)
    rhs = half * d
    return d > 0.0 and rhs >= 1.0e-30 and rhs <= BIG and 1.001 * wp.abs(a[0] * b[1] - a[1] * b[0]) * big_r <= rhs


@wp.func
def point_status(
    xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), e: int, n: int, half: float, big_r: float
) -> wp.vec2f:
    """(DEGENERATE, BOUNDS and TURN bits, longest segment) of env ``e``'s points: a zero-length
    neighbour segment; a band edge outside the square of half side ``half``; a turn radius below
    ``big_r``. One pass; each segment vector and length is computed once and carried to the next
    point (the same operations on the same operands: the same bits), and ``atan2`` runs only
    where :func:`turn_is_wide` cannot settle the turn test."""
    status = int(0)
    smax = float(0.0)
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
        t = nxt - prev
        tl = wp.length(t)
        lb = wp.length(b)
        smax = wp.max(smax, lb)
        # every test is written so that NaN fails it (a NaN comparison is false)
        if not (tl > 0.0 and la > 0.0 and lb > 0.0):
            status = status | DEGENERATE
        else:
            w = hw[e, i]
            if not (wp.max(wp.abs(p[0]), wp.abs(p[1])) + wp.abs(w) <= INSIDE * half):
                t = t / tl
                nrm = left_normal(t) * w
                e1 = p + nrm
                e2 = p - nrm
                ext = wp.max(wp.max(wp.abs(e1[0]), wp.abs(e1[1])), wp.max(wp.abs(e2[0]), wp.abs(e2[1])))
                if not (ext <= half):
                    status = status | BOUNDS
            half_ab = 0.5 * (la + lb)
            if not turn_is_wide(a, b, half_ab, big_r):
                ang = wp.abs(wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b)))
                if not (ang * big_r <= half_ab):
                    status = status | TURN
        prev = p
        p = nxt
        a = b
        la = lb
    return wp.vec2f(float(status), smax)


@wp.func
def box_gap_sq(m: wp.vec2f, lo: wp.vec2f, hi: wp.vec2f) -> float:
    """Squared distance from ``m`` to the box [lo, hi], with the operations of the midpoint test
    of :func:`band_overlaps` (float32 rounding is monotone: every point of the box is at least
    this far from ``m`` as that test computes it)."""
    q = wp.vec2f(wp.max(wp.max(lo[0] - m[0], m[0] - hi[0]), 0.0), wp.max(wp.max(lo[1] - m[1], m[1] - hi[1]), 0.0))
    return wp.dot(q, q)


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
    smax: float,
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
    than ``reach`` (the largest ``need``) apart skipped; then an exact midpoint prefilter
    (segment distance >= midpoint distance - ``smax``, the longest segment), applied first
    against chunk ``cb``'s box for each segment ``i`` and then against ``reach`` for each pair,
    before the pair's own bound. Every skip is one the pair's own midpoint test would make (its
    bound is at most ``reach``; float rounding is monotone), so the answer is the same as testing
    every pair that way."""
    chunk = wp.max(16, (n + MAX_CHUNKS - 1) / MAX_CHUNKS)
    nc = (n + chunk - 1) / chunk
    lo_x = chunk_vec()
    lo_y = chunk_vec()
    hi_x = chunk_vec()
    hi_y = chunk_vec()
    for c in range(nc):
        bl = wp.vec2f(BIG, BIG)
        bh = wp.vec2f(-BIG, -BIG)
        for i in range(c * chunk, wp.min(c * chunk + chunk + 1, n + 1)):
            ii = i
            if ii == n:
                ii = 0
            q = xy[e, ii]
            bl = wp.min(bl, q)
            bh = wp.max(bh, q)
        lo_x[c] = bl[0]
        lo_y[c] = bl[1]
        hi_x[c] = bh[0]
        hi_y[c] = bh[1]
    far = (reach + smax) * (reach + smax)
    # the midpoint prefilters rely on sums and squares that cannot overflow: coordinates within 1e18
    fast = bool(True)
    span = float(0.0)
    for c in range(nc):
        span = wp.max(span, wp.max(wp.max(-lo_x[c], -lo_y[c]), wp.max(hi_x[c], hi_y[c])))
    if not (span <= 1.0e18):
        fast = False
    # the farthest two consecutive midpoints can be apart: half of two segments, plus their rounding
    step = smax * 1.0001 + span * 1.0e-6
    reach_far = wp.sqrt(far) * 1.0001
    for ca in range(nc):
        for cb in range(ca, nc):
            dx = wp.max(wp.max(lo_x[ca] - hi_x[cb], lo_x[cb] - hi_x[ca]), 0.0)
            dy = wp.max(wp.max(lo_y[ca] - hi_y[cb], lo_y[cb] - hi_y[ca]), 0.0)
            if dx * dx + dy * dy > reach * reach:
                continue
            lo_b = wp.vec2f(lo_x[cb], lo_y[cb])
            hi_b = wp.vec2f(hi_x[cb], hi_y[cb])
            for i in range(ca * chunk, wp.min(ca * chunk + chunk, n)):
                # only pairs whose cyclic gap lies in [gmin, n - gmin] can meet the turn-back bound
                j0 = wp.max(cb * chunk, i + gmin)
                j1 = wp.min(wp.min(cb * chunk + chunk, n), i + n - gmin + 1)
                if j0 >= j1:
                    continue
                i1 = i + 1
                if i1 == n:
                    i1 = 0
                pi0 = xy[e, i]
                pi1 = xy[e, i1]
                mid_i = (pi0 + pi1) * 0.5
                if fast and box_gap_sq(mid_i, lo_b, hi_b) >= far:
                    continue
                wi = wp.max(hw[e, i], hw[e, i1])
                j = j0
                pj0 = xy[e, j0]
                while j < j1:
                    jn = j + 1
                    if jn == n:
                        jn = 0
                    pj1 = xy[e, jn]
                    dm = (pj0 + pj1) * 0.5 - mid_i
                    dd = wp.dot(dm, dm)
                    if fast and dd >= far:
                        skip = int(wp.min((wp.sqrt(dd) * 0.9999 - reach_far) / step * 0.9999, float(n)))
                        if skip > 0:
                            j = j + 1 + skip
                            if j < j1:
                                pj0 = xy[e, j]
                            continue
                    else:
                        g = wp.min(j - i, n - (j - i))
                        bound = wp.min(wi + wp.max(hw[e, j], hw[e, jn]) + clearance,
                                       TWO_OVER_PI * float(g) * h - 2.0 * h)
                        # exact prefilter: segment distance >= midpoint distance - longest segment
                        if bound > 0.0 and dd < (bound + smax) * (bound + smax):
                            if seg_seg_dist(pi0, pi1, pj0, pj1) < bound:
                                return True
                    pj0 = pj1
                    j += 1
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
    flw = finite_length_widest(xy, hw, e, n)
    if flw[0] == 0.0:
        return NONFINITE
    total = flw[1]
    wmax = flw[2]
    if not (wp.isfinite(total) and wp.isfinite(wmax)):
        return NONFINITE    # finite points whose distances overflow float32
    status = int(0)
    if not (total >= min_length and total <= max_length):
        status = status | LENGTH
    big_r = wp.max(min_turn_radius, wmax)
    ps = point_status(xy, hw, e, n, size * 0.5, big_r)
    status = status | int(ps[0])
    if status != 0:
        return status
    h = total / float(n)
    gmin = wp.max(MIN_GAP, int(wp.floor(PI * big_r / h)))
    if band_overlaps(xy, hw, e, n, h, gmin, 2.0 * wmax + clearance, clearance, ps[1]):
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
