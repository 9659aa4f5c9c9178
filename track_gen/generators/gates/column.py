"""The split-S column rule (COLUMN): no other leg of a gate course flies through a stacked pair.

A split-S stacks gates ``g`` and ``g + 1`` at one plan position, passed in opposite directions.
Their *column* is the pair's frame footprint (plan view: per gate, the ``(w + 2 t) x t`` rectangle
about its centre, long side along its lateral axis) between heights ``min z - b`` and ``max z + b``
(``b`` half the outer frame height): the frames and the space between them. A leg of the course
line that joins neither gate (the line ``CenterlineFromGates`` draws: a cubic Hermite per leg, end
tangents ``L n`` with ``L`` the chord length and ``n`` the unit gate normal, or the start heading for
a sprint's run-up) must not pass through a footprint at a height within the column.

The test is conservative, so a valid course keeps the rule exactly: each leg is cut into
``PIECES`` pieces; ``|p''| <= 14 L`` on a Hermite leg, so a piece strays from its chord by at most
``14 L / (8 PIECES^2)`` (``delta``); a piece whose chord meets a footprint grown by ``delta`` on
every side while its height range (the leg's height is a monotone blend of its ends, so a piece's
range is that of its ends) overlaps the column fails. Adjacent legs (into ``g``, out of ``g + 1``)
and the stacked leg itself are exempt: they are the manoeuvre.
"""

from __future__ import annotations

import warp as wp

from track_gen.generators.gates.bits import COLUMN

__all__ = ["COLUMN", "PIECES", "column_status"]

#: pieces per leg of the conservative test
PIECES = wp.constant(16)


@wp.func
def _hermite(a: wp.vec3f, da: wp.vec3f, b: wp.vec3f, db: wp.vec3f, length: float, u: float) -> wp.vec3f:
    u2 = u * u
    u3 = u2 * u
    return (a * (2.0 * u3 - 3.0 * u2 + 1.0) + da * ((u3 - 2.0 * u2 + u) * length)
            + b * (3.0 * u2 - 2.0 * u3) + db * ((u3 - u2) * length))


@wp.func
def _clip(a: float, d: float, h: float, t: wp.vec2f) -> wp.vec2f:
    """The parameter interval ``t`` of ``a + s d`` cut to ``|x| <= h`` (empty: ``t[0] > t[1]``)."""
    if d != 0.0:
        u = (-h - a) / d
        v = (h - a) / d
        return wp.vec2f(wp.max(t[0], wp.min(u, v)), wp.min(t[1], wp.max(u, v)))
    if wp.abs(a) > h:
        return wp.vec2f(1.0, -1.0)
    return t


@wp.func
def _meets_box(a: wp.vec2f, b: wp.vec2f, hx: float, hy: float) -> bool:
    """Whether segment ab meets the box ``|x| <= hx, |y| <= hy`` (Liang-Barsky)."""
    t = _clip(a[0], b[0] - a[0], hx, wp.vec2f(0.0, 1.0))
    t = _clip(a[1], b[1] - a[1], hy, t)
    return t[0] <= t[1]


@wp.func
def _leg(e: int, k: int, count: int, closed: int, pos: wp.array2d(dtype=wp.vec3f),
         yaw: wp.array2d(dtype=wp.float32), start: wp.vec3f, start_yaw: float):
    """Leg ``k`` of the course line: start, its direction, end, its direction, and the gates joined
    (``-1`` for a sprint's run-up from the start pose)."""
    ga = k
    gb = (k + 1) % count
    if closed == 0:
        ga = k - 1
        gb = k
    a = start
    ya = start_yaw
    if ga >= 0:
        a = pos[e, ga]
        ya = yaw[e, ga]
    yb = yaw[e, gb]
    return (a, wp.vec3f(wp.cos(ya), wp.sin(ya), 0.0), pos[e, gb], wp.vec3f(wp.cos(yb), wp.sin(yb), 0.0), ga, gb)


@wp.func
def column_status(pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32),
                  stacked: wp.array2d(dtype=wp.int32), e: int, count: int, closed: int, start: wp.vec3f,
                  start_yaw: float, half_w: float, half_t: float, bottom: float) -> int:
    """COLUMN when a leg joining neither gate of a stacked pair may pass through the pair's column
    (see the module docstring); ``half_w``, ``half_t``: the footprint's half extents, ``bottom``:
    half the outer frame height."""
    if count < 2:
        return 0
    for g in range(count):
        if stacked[e, g] == 0 or (closed == 0 and g + 1 >= count):
            continue
        g1 = (g + 1) % count
        za = pos[e, g][2]
        zb = pos[e, g1][2]
        zlo = wp.min(za, zb) - bottom
        zhi = wp.max(za, zb) + bottom
        for k in range(count):  # a loop: count legs; a sprint: the run-up, then count - 1 legs
            a, da, b, db, ga, gb = _leg(e, k, count, closed, pos, yaw, start, start_yaw)
            if ga == g or ga == g1 or gb == g or gb == g1:
                continue
            length = wp.length(b - a)
            delta = 14.0 * length / (8.0 * float(PIECES * PIECES))
            p0 = a
            for i in range(1, PIECES + 1):
                p1 = _hermite(a, da, b, db, length, float(i) / float(PIECES))
                if not (wp.max(p0[2], p1[2]) < zlo or wp.min(p0[2], p1[2]) > zhi):
                    for m in range(2):
                        c = pos[e, g]
                        y = yaw[e, g]
                        if m == 1:
                            c = pos[e, g1]
                            y = yaw[e, g1]
                        nd = wp.vec2f(wp.cos(y), wp.sin(y))
                        r0 = wp.vec2f(p0[0] - c[0], p0[1] - c[1])
                        r1 = wp.vec2f(p1[0] - c[0], p1[1] - c[1])
                        q0 = wp.vec2f(wp.dot(r0, nd), -r0[0] * nd[1] + r0[1] * nd[0])
                        q1 = wp.vec2f(wp.dot(r1, nd), -r1[0] * nd[1] + r1[1] * nd[0])
                        if _meets_box(q0, q1, half_t + delta, half_w + delta):
                            return COLUMN
                p0 = p1
    return 0
