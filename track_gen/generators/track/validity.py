"""Validity of a band-track centerline (``centerline.status``): the per-point checks (finite,
degenerate, bounds, turn radius) and the status they make with the band's self-overlap test
(:mod:`overlap`). Warp functions, called by the centerline kernel (:mod:`centerline`) on every
draw and by the layout kernels on imported tracks. Every prefilter here only skips work whose exact
test would give the same answer, so the status bits do not depend on which shortcut ran."""

from __future__ import annotations

import warp as wp

from track_gen.generators.track.bits import BOUNDS, DEGENERATE, LENGTH, NONFINITE, OVERLAP, TURN
from track_gen.generators.track.overlap import band_overlaps
from track_gen.math import BIG, PI, left_normal

# the smallest cyclic segment gap whose turn-back bound 2 / pi * g h - 2 h is positive
MIN_GAP = wp.constant(4)
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
