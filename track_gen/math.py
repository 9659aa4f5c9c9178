"""Device math shared by the kernels of track_gen and track_gen_isaac: one definition of each
small formula that several modules use, so that copies cannot drift apart.

Only Warp is imported here (nothing from track_gen), so any module may import it without a cycle.

Every function is a ``wp.func`` (callable from kernels and other ``wp.func``\\ s). Warp fuses
floating-point multiply-adds, so the operand order of each formula is part of its result bit for
bit: a caller that needs a different order must not be switched to these silently.

Conventions: angles in radians, quaternions ``(x, y, z, w)`` (Warp's ``quatf``), "horizontal"
means the xy plane, z is up.

Contents:

* :data:`BIG` -- a float32 "infinity" for running minima (``1e30``; finite, so it survives
  arithmetic such as ``BIG - rho``);
* :func:`finite3`, :func:`finite_quat` -- every component finite;
* :func:`left_normal`, :func:`lateral_axis`, :func:`unit_lateral`, :func:`unit_lateral_xy` --
  the lateral (left) axis of a direction: ``cross(z, n)`` in the horizontal plane;
* :func:`wrap_angle` -- an angle wrapped to ``[-pi, pi)``;
* :func:`yaw_quat` -- the rotation by ``yaw`` about z; :func:`quat_yaw_axes` -- the body x and y
  axes (horizontal, unit) of a quaternion's yaw;
* :func:`jitter_position` -- a point moved by a uniform lateral and vertical jitter.
"""

from __future__ import annotations

import warp as wp

__all__ = [
    "BIG", "PI", "TWO_PI", "finite3", "finite_quat", "jitter_position", "lateral_axis", "left_normal",
    "quat_yaw_axes", "unit_lateral", "unit_lateral_xy", "wrap_angle", "yaw_quat",
]

#: a float32 "infinity" that stays finite: the start value of running minima (and ``-BIG`` of maxima)
BIG = wp.constant(1.0e30)
#: pi and 2 pi as float32 constants
PI = wp.constant(3.141592653589793)
TWO_PI = wp.constant(6.283185307179586)


# ------------------------------------------------------------------------------------------------
# finite checks
# ------------------------------------------------------------------------------------------------
@wp.func
def finite3(v: wp.vec3f) -> bool:
    """True when the three components of ``v`` are finite (no NaN, no inf)."""
    return wp.isfinite(v[0]) and wp.isfinite(v[1]) and wp.isfinite(v[2])


@wp.func
def finite_quat(q: wp.quatf) -> bool:
    """True when the four components of ``q`` are finite (no NaN, no inf)."""
    return wp.isfinite(q[0]) and wp.isfinite(q[1]) and wp.isfinite(q[2]) and wp.isfinite(q[3])


# ------------------------------------------------------------------------------------------------
# the lateral axis: cross(z, n) in the horizontal plane, > 0 to the left of travel along n
# ------------------------------------------------------------------------------------------------
@wp.func
def left_normal(t: wp.vec2f) -> wp.vec2f:
    """``t`` turned 90 degrees counter-clockwise, ``(-t.y, t.x)`` (same length; the left normal of
    a 2D tangent)."""
    return wp.vec2f(-t[1], t[0])


@wp.func
def lateral_axis(n: wp.vec3f) -> wp.vec3f:
    """``cross(z, n) = (-n.y, n.x, 0)``, not normalized (length = the horizontal length of ``n``)."""
    return wp.vec3f(-n[1], n[0], 0.0)


@wp.func
def unit_lateral(n: wp.vec3f) -> wp.vec3f:
    """``normalize(cross(z, n))`` (3D, z = 0); zero for a vertical (or zero) ``n``."""
    lat = wp.vec3f(-n[1], n[0], 0.0)
    ll = wp.length(lat)
    if ll > 0.0:
        lat = lat / ll
    return lat


@wp.func
def unit_lateral_xy(n: wp.vec3f) -> wp.vec2f:
    """``normalize(cross(z, n))`` as a horizontal 2D vector; zero for a vertical (or zero) ``n``."""
    lat = wp.vec2f(-n[1], n[0])
    ln = wp.length(lat)
    if ln > 0.0:
        lat = lat / ln
    return lat


# ------------------------------------------------------------------------------------------------
# angles and yaw
# ------------------------------------------------------------------------------------------------
@wp.func
def wrap_angle(a: float) -> float:
    """``a`` wrapped to ``[-pi, pi)``."""
    return a - TWO_PI * wp.floor((a + PI) / TWO_PI)


@wp.func
def yaw_quat(yaw: float) -> wp.quatf:
    """The rotation by ``yaw`` about z, ``(0, 0, sin(yaw / 2), cos(yaw / 2))``."""
    h = 0.5 * yaw
    return wp.quatf(0.0, 0.0, wp.sin(h), wp.cos(h))


@wp.func
def quat_yaw_axes(q: wp.quatf):
    """Body x and y axes (horizontal unit vectors) from the yaw of ``q`` (x, y, z, w).

    The yaw is that of the rotated x axis, ``atan2(2(wz + xy), w^2 + x^2 - y^2 - z^2)``; any
    quaternion scale works (the horizontal part ``(w^2 + x^2 - y^2 - z^2, 2(wz + xy))`` is scaled
    by its largest component, then normalized). When that part is zero or overflows (an x axis
    pointing straight up or down, a huge ``q``) it falls back to atan2 / cos / sin.

    Returns ``(u, v)``: ``u = (cos yaw, sin yaw)``, ``v = (-sin yaw, cos yaw)``.
    """
    x = q[0]
    y = q[1]
    z = q[2]
    w = q[3]
    a = w * w + x * x - y * y - z * z
    b = 2.0 * (w * z + x * y)
    m = wp.max(wp.abs(a), wp.abs(b))
    if m > 0.0 and m < 3.0e38:
        a = a / m
        b = b / m
        il = 1.0 / wp.sqrt(a * a + b * b)
        cy = a * il
        sy = b * il
        return wp.vec2f(cy, sy), wp.vec2f(-sy, cy)
    yaw = wp.atan2(b, a)
    cy = wp.cos(yaw)
    sy = wp.sin(yaw)
    return wp.vec2f(cy, sy), wp.vec2f(-sy, cy)


# ------------------------------------------------------------------------------------------------
# jitter
# ------------------------------------------------------------------------------------------------
@wp.func
def jitter_position(base: wp.vec3f, lateral: wp.vec3f, r1: float, r2: float, jitter_lateral: float,
                    jitter_vertical: float) -> wp.vec3f:
    """``base`` moved by uniform jitter: ``jitter_lateral`` half range along the unit ``lateral``
    axis and ``jitter_vertical`` along z, from two uniform draws ``r1``, ``r2`` in [0, 1)."""
    p = base + lateral * (jitter_lateral * (2.0 * r1 - 1.0))
    return p + wp.vec3f(0.0, 0.0, jitter_vertical * (2.0 * r2 - 1.0))
