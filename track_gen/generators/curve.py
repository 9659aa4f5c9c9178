"""Smooth curves through random control points: uniform cubic B-splines and arc-length walks.

A uniform cubic B-spline lies inside the convex hull of its control points (so a course drawn
from points inside a disc stays inside it) and is C2 (its curvature is continuous). Closed
curves wrap the control index; open curves clamp it, repeating the end points.

Both families place points at arc lengths along a closed spline's dense polyline (``per_span``
samples per span) with one walk: :func:`walk_start` at a knot, then :func:`walk_to` for each
increasing target and :func:`walk_point` there (band-track resampling, gate placement).
"""

from __future__ import annotations

import warp as wp


@wp.func
def ctrl_index(k: int, count: int, closed: int) -> int:
    if closed != 0:
        return ((k % count) + count) % count
    return wp.clamp(k, 0, count - 1)


@wp.func
def knot_curvature(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, k: int) -> float:
    """|curvature| of a closed curve at knot ``u = k`` (from the B-spline's exact derivatives)."""
    cm = ctrl[e, ctrl_index(k - 1, count, 1)]
    c0 = ctrl[e, ctrl_index(k, count, 1)]
    cp = ctrl[e, ctrl_index(k + 1, count, 1)]
    v = (cp - cm) * 0.5
    a = cm - c0 * 2.0 + cp
    speed = wp.length(v)
    return wp.abs(v[0] * a[1] - v[1] * a[0]) / wp.max(speed * speed * speed, 1.0e-12)


vec8 = wp.types.vector(length=8, dtype=wp.float32)


@wp.func
def span_coeffs(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, closed: int, k: int) -> vec8:
    """Power-basis coefficients (a, b, c, d per axis) of span ``k``: p(t) = a + b t + c t^2 + d t^3."""
    c0 = ctrl[e, ctrl_index(k - 1, count, closed)]
    c1 = ctrl[e, ctrl_index(k, count, closed)]
    c2 = ctrl[e, ctrl_index(k + 1, count, closed)]
    c3 = ctrl[e, ctrl_index(k + 2, count, closed)]
    a = (c0 + c1 * 4.0 + c2) / 6.0
    b = (c2 - c0) * 0.5
    c = (c0 - c1 * 2.0 + c2) * 0.5
    d = (c3 - c0 + (c1 - c2) * 3.0) / 6.0
    return vec8(a[0], b[0], c[0], d[0], a[1], b[1], c[1], d[1])


@wp.func
def span_point(q: vec8, t: float) -> wp.vec2f:
    return wp.vec2f(((q[3] * t + q[2]) * t + q[1]) * t + q[0], ((q[7] * t + q[6]) * t + q[5]) * t + q[4])


@wp.func
def dense_point(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, per_span: int, j: int) -> wp.vec2f:
    """Dense sample ``j`` (``per_span`` per span) of a closed curve: the same value as the span walk."""
    jj = ((j % (count * per_span)) + count * per_span) % (count * per_span)
    k = jj / per_span
    return span_point(span_coeffs(ctrl, e, count, 1, k), float(jj - k * per_span) / float(per_span))


@wp.func
def closed_length(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, per_span: int) -> float:
    """Length of a closed curve's dense polyline (``per_span`` samples per span): the sum of
    :func:`closed_length_and_tight` without its turn test (the same operations: the same bits)."""
    p = dense_point(ctrl, e, count, per_span, 0)
    total = float(0.0)
    inv = 1.0 / float(per_span)
    for k in range(count):
        q8 = span_coeffs(ctrl, e, count, 1, k)
        for m in range(1, per_span + 1):
            q = span_point(q8, float(m) * inv)
            total += wp.length(q - p)
            p = q
    return total


@wp.func
def walk_start(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, k: int, inv: float):
    """The arc walk's state at knot ``k`` of a closed curve (``inv`` = 1 / samples per span): the
    span's coefficients, the segment's two ends and its length."""
    q8 = span_coeffs(ctrl, e, count, 1, k)
    pa = span_point(q8, 0.0)
    pb = span_point(q8, inv)
    return q8, pa, pb, wp.length(pb - pa)


@wp.func
def walk_to(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, per_span: int, inv: float, dense: int,
            target: float, k0: int, sub0: int, q80: vec8, pa0: wp.vec2f, pb0: wp.vec2f, seg0: float, acc0: float,
            m0: int):
    """Advance the walk (span ``k``, sample ``sub`` in it, coefficients ``q8``, segment ``pa -> pb`` of
    length ``seg`` starting at arc length ``acc``, segment index ``m`` < ``dense``) to the segment
    holding arc length ``target`` (or the last one); returns the new state in the same order."""
    k = int(k0)
    sub = int(sub0)
    q8 = vec8(q80)
    pa = wp.vec2f(pa0)
    pb = wp.vec2f(pb0)
    seg = float(seg0)
    acc = float(acc0)
    m = int(m0)
    while acc + seg < target and m < dense - 1:
        acc += seg
        m += 1
        pa = pb
        sub += 1
        if sub > per_span:
            sub = 1
            k = (k + 1) % count
            q8 = span_coeffs(ctrl, e, count, 1, k)
        pb = span_point(q8, float(sub) * inv)
        seg = wp.length(pb - pa)
    return k, sub, q8, pa, pb, seg, acc, m


@wp.func
def walk_point(pa: wp.vec2f, pb: wp.vec2f, seg: float, acc: float, target: float) -> wp.vec2f:
    """The point at arc length ``target`` on the walk's segment ``pa -> pb`` (clamped to it)."""
    f = float(0.0)
    if seg > 0.0:
        f = wp.clamp((target - acc) / seg, 0.0, 1.0)
    return pa + (pb - pa) * f


#: a dense turn whose radius is below this many ``min_radius`` marks its span as near-tight
NEAR_TIGHT = wp.constant(1.15)


@wp.func
def span_bits(k: int, count: int) -> wp.int64:
    """Bits of spans ``k - 1``, ``k`` and ``k + 1`` of a closed curve (spans >= 64 share bit 63)."""
    bits = wp.int64(0)
    for dk in range(-1, 2):
        kk = wp.min(((k + dk) % count + count) % count, 63)
        bits = bits | (wp.int64(1) << wp.int64(kk))
    return bits


@wp.func
def closed_length_and_tight(
    ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, per_span: int, min_radius: float
):
    """(length, True if some discrete turn radius < ``min_radius``, near-tight spans) of a closed
    curve's dense polyline (``per_span`` samples per span), in one pass over the spans.

    ``atan2`` runs only where a cheap bound says the radius could be small: for a turn of angle
    ``ang`` <= pi/2, ``ang <= (pi/2) |sin ang|``, so the radius is at least
    ``0.5 (la + lb) la lb / ((pi/2) |a x b|)``. The pass stops at the first tight turn (the
    length is then partial: a caller rejects such a draw); with ``min_radius <= 0`` no turn is
    tight and the turn test is skipped. Each segment's vector and length is carried to the next
    sample (the same operations: the same bits as computing it again). The near-tight spans (bit
    ``k``: :func:`span_bits`) are those within one span of a turn of radius below ``NEAR_TIGHT *
    min_radius``: where a resampled line most likely turns too tight (a hint for speed only).
    """
    p_prev = dense_point(ctrl, e, count, per_span, -1)
    p = dense_point(ctrl, e, count, per_span, 0)
    a = p - p_prev
    la = wp.length(a)
    total = float(0.0)
    near = wp.int64(0)
    check = min_radius > 0.0
    inv = 1.0 / float(per_span)
    for k in range(count):
        q8 = span_coeffs(ctrl, e, count, 1, k)
        for m in range(1, per_span + 1):
            q = span_point(q8, float(m) * inv)
            b = q - p
            lb = wp.length(b)
            total += lb
            if check:
                half = 0.5 * (la + lb)
                cr = wp.abs(a[0] * b[1] - a[1] * b[0])
                d = wp.dot(a, b)
                if d <= 0.0 or 1.5707964 * cr * min_radius > half * la * lb:
                    ang = wp.abs(wp.atan2(a[0] * b[1] - a[1] * b[0], d))
                    if ang * min_radius > half:
                        return total, True, near
                    if ang * (NEAR_TIGHT * min_radius) > half:
                        near = near | span_bits(k, count)
            p = q
            a = b
            la = lb
    return total, False, near


@wp.func
def point_seg_dist(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f) -> float:
    ab = b - a
    den = wp.dot(ab, ab)
    t = float(0.0)
    if den > 0.0:
        t = wp.clamp(wp.dot(p - a, ab) / den, 0.0, 1.0)
    return wp.length(p - (a + ab * t))


@wp.func
def seg_seg_dist(a0: wp.vec2f, a1: wp.vec2f, b0: wp.vec2f, b1: wp.vec2f) -> float:
    """Distance between 2D segments [a0, a1] and [b0, b1] (0 when they cross)."""
    da = a1 - a0
    db = b1 - b0
    den = da[0] * db[1] - da[1] * db[0]
    if wp.abs(den) > 1.0e-12:
        w = b0 - a0
        t = (w[0] * db[1] - w[1] * db[0]) / den
        s = (w[0] * da[1] - w[1] * da[0]) / den
        if t >= 0.0 and t <= 1.0 and s >= 0.0 and s <= 1.0:
            return 0.0
    d = point_seg_dist(a0, b0, b1)
    d = wp.min(d, point_seg_dist(a1, b0, b1))
    d = wp.min(d, point_seg_dist(b0, a0, a1))
    return wp.min(d, point_seg_dist(b1, a0, a1))
