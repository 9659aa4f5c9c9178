"""Validity of a band-track centerline (``centerline.status``): the per-point checks (finite,
degenerate, bounds, turn radius), the self-overlap test of the band and the status they make.
Warp functions, called by the centerline kernel (:mod:`track_kernels`) on every draw and by the
layout kernels on imported tracks. Every prefilter here only skips work whose exact test would
give the same answer, so the status bits do not depend on which shortcut ran."""

from __future__ import annotations

import warp as wp

from track_gen.generators.curve import seg_seg_dist
from track_gen.generators.status import TrackStatus
from track_gen.math import BIG, PI, left_normal

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
def turn_is_tight(a: wp.vec2f, b: wp.vec2f, la: float, lb: float, half: float, big_r: float) -> bool:
    """True when the turn from ``a`` to ``b`` (lengths ``la``, ``lb``) surely fails the TURN test
    ``|atan2(a x b, a . b)| * big_r <= half`` of :func:`point_bits` (or the point is degenerate:
    either way its draw fails), without ``atan2``.

    For ``a . b > 0`` the angle is at least its sine ``|a x b| / (|a| |b|)`` (as float32 computes
    the cross and dot products and lengths: within a few ulp of the Lagrange identity ``|a x b|^2
    + (a . b)^2 = |a|^2 |b|^2``), so ``|a x b| big_r > half la lb`` settles it; the factor 0.999
    covers the rounding of this test, of those products and of ``atan2`` many times over, and
    keeps :func:`turn_is_wide` false. For ``a . b <= 0`` the angle is at least pi/2 (1.5 with
    margin). A right side outside [1e-30, 1e30] answers False."""
    d = wp.dot(a, b)
    if d > 0.0:
        rhs = half * la * lb
        return rhs >= 1.0e-30 and rhs <= BIG and 0.999 * wp.abs(a[0] * b[1] - a[1] * b[0]) * big_r > rhs
    return 1.5 * big_r > half


@wp.func
def point_bits(prev: wp.vec2f, p: wp.vec2f, nxt: wp.vec2f, a: wp.vec2f, la: float, b: wp.vec2f, lb: float,
               w: float, half: float, big_r: float) -> int:
    """DEGENERATE, BOUNDS and TURN bits of point ``p`` (neighbours ``prev``, ``nxt``; ``a = p - prev``
    and ``b = nxt - p`` with their lengths ``la``, ``lb``; half width ``w``): a zero-length
    neighbour segment; a band edge outside the square of half side ``half``; a turn radius below
    ``big_r``. ``atan2`` runs only where :func:`turn_is_wide` cannot settle the turn test; every
    test is written so that NaN fails it (a NaN comparison is false)."""
    t = nxt - prev
    tl = wp.length(t)
    if not (tl > 0.0 and la > 0.0 and lb > 0.0):
        return DEGENERATE
    bits = int(0)
    if not (wp.max(wp.abs(p[0]), wp.abs(p[1])) + wp.abs(w) <= INSIDE * half):
        t = t / tl
        nrm = left_normal(t) * w
        e1 = p + nrm
        e2 = p - nrm
        ext = wp.max(wp.max(wp.abs(e1[0]), wp.abs(e1[1])), wp.max(wp.abs(e2[0]), wp.abs(e2[1])))
        if not (ext <= half):
            bits = BOUNDS
    half_ab = 0.5 * (la + lb)
    if not turn_is_wide(a, b, half_ab, big_r):
        ang = wp.abs(wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b)))
        if not (ang * big_r <= half_ab):
            bits = bits | TURN
    return bits


@wp.func
def point_pass(
    xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), e: int, n: int, half: float, big_r: float,
    stop: bool,
) -> wp.vec4f:
    """(1 if every point is finite else 0, closed length, :func:`point_bits` of every point,
    longest segment) of env ``e``, in one pass: the points' part of :func:`finite_length_widest`
    (the same operations on the same values; the length sums the segments in index order) and
    the point-wise checks. Each segment vector and length is computed once and carried to the
    next point (the same bits as computing it again). With ``stop``, returns at the first failing
    point (the bits then say only that the draw fails)."""
    ok = float(1.0)
    total = float(0.0)
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
        if not (wp.isfinite(p[0]) and wp.isfinite(p[1])):
            ok = 0.0
        b = nxt - p
        lb = wp.length(b)
        total += lb
        smax = wp.max(smax, lb)
        status = status | point_bits(prev, p, nxt, a, la, b, lb, hw[e, i], half, big_r)
        if stop and status != 0:
            break
        prev = p
        p = nxt
        a = b
        la = lb
    return wp.vec4f(ok, total, float(status), smax)


@wp.func
def box_gap_sq(m: wp.vec2f, lo: wp.vec2f, hi: wp.vec2f) -> float:
    """Squared distance from ``m`` to the box [lo, hi], with the operations of the midpoint test
    of :func:`band_overlaps` (float32 rounding is monotone: every point of the box is at least
    this far from ``m`` as that test computes it)."""
    q = wp.vec2f(wp.max(wp.max(lo[0] - m[0], m[0] - hi[0]), 0.0), wp.max(wp.max(lo[1] - m[1], m[1] - hi[1]), 0.0))
    return wp.dot(q, q)


@wp.func
def chunks_in_reach(ca: int, cb: int, chunk: int, n: int, gmin: int) -> bool:
    """True when some segment ``i`` of chunk ``ca`` and ``j`` of chunk ``cb >= ca`` have ``j - i`` in
    [gmin, n - gmin] (the only pairs :func:`band_overlaps` measures): the largest and smallest
    ``j - i`` over the two chunks bracket the interval."""
    return wp.min(cb * chunk + chunk, n) - 1 - ca * chunk >= gmin and \
        cb * chunk - wp.min(ca * chunk + chunk, n) + 1 <= n - gmin


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

    Chunked: segments in chunks of at least 12 (at most MAX_CHUNKS chunks), chunk pairs with no
    index gap in [gmin, n - gmin] (:func:`chunks_in_reach`) or whose bounding boxes are more than
    ``reach`` (the largest ``need``) apart skipped; then an exact midpoint prefilter
    (segment distance >= midpoint distance - ``smax``, the longest segment), applied first
    against chunk ``cb``'s box for each segment ``i`` and then against ``reach`` for each pair,
    before the pair's own bound. Every skip is one the pair's own midpoint test would make (its
    bound is at most ``reach``; float rounding is monotone), so the answer is the same as testing
    every pair that way. The caller has checked that every point is finite (the boxes are plain
    compare-and-select minima and maxima)."""
    chunk = wp.max(12, (n + MAX_CHUNKS - 1) / MAX_CHUNKS)
    nc = (n + chunk - 1) / chunk
    lo_x = chunk_vec()
    lo_y = chunk_vec()
    hi_x = chunk_vec()
    hi_y = chunk_vec()
    for c in range(nc):
        x0 = float(BIG)
        y0 = float(BIG)
        x1 = float(-BIG)
        y1 = float(-BIG)
        for i in range(c * chunk, wp.min(c * chunk + chunk + 1, n + 1)):
            ii = i
            if ii == n:
                ii = 0
            q = xy[e, ii]
            # plain compare-and-select (the points are finite here: the exact min and max)
            x0 = wp.where(q[0] < x0, q[0], x0)
            y0 = wp.where(q[1] < y0, q[1], y0)
            x1 = wp.where(q[0] > x1, q[0], x1)
            y1 = wp.where(q[1] > y1, q[1], y1)
        lo_x[c] = x0
        lo_y[c] = y0
        hi_x[c] = x1
        hi_y[c] = y1
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
    # the skip below multiplies by this instead of dividing by ``step`` and scaling by 0.9999 (the same
    # two roundings of the same real quotient: as conservative)
    skip_scale = 0.9999 / step
    reach_far = wp.sqrt(far) * 1.0001
    for ca in range(nc):
        for cb in range(ca, nc):
            # no pair of these chunks has its index gap j - i in [gmin, n - gmin]: nothing to test
            if not chunks_in_reach(ca, cb, chunk, n, gmin):
                continue
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
                        skip = int(wp.min((wp.sqrt(dd) * 0.9999 - reach_far) * skip_scale, float(n)))
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
def finish_status(
    xy: wp.array2d(dtype=wp.vec2f),
    hw: wp.array2d(dtype=wp.float32),
    e: int,
    n: int,
    flw: wp.vec3f,
    bits: int,
    smax: float,
    min_turn_radius: float,
    clearance: float,
    min_length: float,
    max_length: float,
) -> int:
    """:func:`track_status` from its point-wise parts: ``flw`` of :func:`finite_length_widest`,
    ``bits`` and ``smax`` of :func:`point_pass` (measured with R = max(min_turn_radius, widest));
    then NONFINITE, LENGTH and, when every point passed, the band self-overlap test."""
    if flw[0] == 0.0:
        return NONFINITE
    total = flw[1]
    wmax = flw[2]
    if not (wp.isfinite(total) and wp.isfinite(wmax)):
        return NONFINITE    # finite points whose distances overflow float32
    status = int(0)
    if not (total >= min_length and total <= max_length):
        status = status | LENGTH
    status = status | bits
    if status != 0:
        return status
    big_r = wp.max(min_turn_radius, wmax)
    h = total / float(n)
    gmin = wp.max(MIN_GAP, int(wp.floor(PI * big_r / h)))
    if band_overlaps(xy, hw, e, n, h, gmin, 2.0 * wmax + clearance, clearance, smax):
        return status | OVERLAP
    return status


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
    if flw[0] == 0.0 or not (wp.isfinite(flw[1]) and wp.isfinite(flw[2])):
        return NONFINITE
    pts = point_pass(xy, hw, e, n, size * 0.5, wp.max(min_turn_radius, flw[2]), False)
    return finish_status(xy, hw, e, n, flw, int(pts[2]), pts[3], min_turn_radius, clearance, min_length, max_length)
