"""Smooth curves through random control points: uniform cubic B-splines and arc-length walks.

A uniform cubic B-spline lies inside the convex hull of its control points (so a course drawn
from points inside a disc stays inside it) and is C2 (its curvature is continuous). Closed
curves wrap the control index; open curves clamp it, repeating the end points.
"""

from __future__ import annotations

import warp as wp

TWO_PI = wp.constant(6.283185307179586)


@wp.func
def ctrl_index(k: int, count: int, closed: int) -> int:
    if closed != 0:
        return ((k % count) + count) % count
    return wp.clamp(k, 0, count - 1)


@wp.func
def bspline(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, closed: int, u: float) -> wp.vec2f:
    """Point at parameter ``u`` (span ``floor(u)``) of env ``e``'s curve."""
    k = int(wp.floor(u))
    t = u - float(k)
    t2 = t * t
    t3 = t2 * t
    c0 = ctrl[e, ctrl_index(k - 1, count, closed)]
    c1 = ctrl[e, ctrl_index(k, count, closed)]
    c2 = ctrl[e, ctrl_index(k + 1, count, closed)]
    c3 = ctrl[e, ctrl_index(k + 2, count, closed)]
    b0 = (1.0 - t) * (1.0 - t) * (1.0 - t) / 6.0
    b1 = (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0
    b2 = (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0
    b3 = t3 / 6.0
    return c0 * b0 + c1 * b1 + c2 * b2 + c3 * b3


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


@wp.func
def curve_length(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, closed: int, samples: int) -> float:
    """Length of the dense polyline of ``samples`` segments over the whole parameter range."""
    span = float(count)
    if closed == 0:
        span = float(count - 1)
    prev = bspline(ctrl, e, count, closed, 0.0)
    total = float(0.0)
    for j in range(1, samples + 1):
        p = bspline(ctrl, e, count, closed, span * float(j) / float(samples))
        total += wp.length(p - prev)
        prev = p
    return total


@wp.func
def closed_length_and_min_radius(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int, samples: int) -> wp.vec2f:
    """(length, smallest discrete turn radius) of a closed curve's dense polyline, in one pass."""
    span = float(count)
    p_prev = bspline(ctrl, e, count, 1, span * float(samples - 1) / float(samples))
    p = bspline(ctrl, e, count, 1, 0.0)
    total = float(0.0)
    min_r = float(1.0e30)
    for j in range(1, samples + 1):
        q = bspline(ctrl, e, count, 1, span * float(j) / float(samples))
        a = p - p_prev
        b = q - p
        lb = wp.length(b)
        total += lb
        ang = wp.abs(wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b)))
        if ang > 0.0:
            min_r = wp.min(min_r, 0.5 * (wp.length(a) + lb) / ang)
        p_prev = p
        p = q
    return wp.vec2f(total, min_r)


@wp.func
def wrap_angle(a: float) -> float:
    """Wrap an angle to [-pi, pi)."""
    return a - TWO_PI * wp.floor((a + 3.141592653589793) / TWO_PI)


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
