"""Validity of a gate course (``gates.status``): spacing, crowding, turns, climbs, crossings, split-S
pairs, bounds, ground, opening and finite numbers. Warp functions, called by the layout kernel
(:mod:`layout`) on every draw and by the layout source on imported courses."""

from __future__ import annotations

import warp as wp

from track_gen.generators import shapes as S
from track_gen.generators.gates.bits import (BOUNDS, CLIMB, CROSSING, CROWDED, GROUND, NONFINITE, OPENING,
                                             SPACING, STACK, TURN)
from track_gen.math import PI, wrap_angle

__all__ = ["crossing_status", "gates_status", "leg_angle"]


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
    stacked: wp.array2d(dtype=wp.int32),
    max_climb: float,
    crossing_clearance: float,
) -> int:
    """Failure bits of env ``e``'s gates (0: valid). Same definitions as the tests' numpy checker:
    consecutive gate distances in [min_spacing, max_spacing] (the closing leg too when closed);
    every pair at least max(min_spacing, 2 * outer_half) apart; each leg leaves its gate and enters
    the next within max_turn of their headings; frames inside the square and above the ground.
    Legs flagged in ``stacked`` (split-S) skip the turn and climb tests and instead need their
    gates at the same xy (within STACK_XY), opposite headings (within STACK_YAW) and frames clear
    of each other vertically (|dz| >= 2 * bottom, the outer frame height) (STACK); every other leg
    climbs at most ``max_climb`` (CLIMB); two legs that are not neighbours and cross in plan view
    are at least ``crossing_clearance`` apart in height where they cross (CROSSING).
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
        plan = wp.sqrt(d[0] * d[0] + d[1] * d[1])
        if stacked[e, k] != 0:
            if not (plan <= S.STACK_XY and wp.abs(wrap_angle(yaw[e, k1] - yaw[e, k] - PI)) <= S.STACK_YAW
                    and wp.abs(d[2]) >= 2.0 * bottom):
                status = status | STACK
            continue
        if not (leg_angle(yaw[e, k], d) <= max_turn and leg_angle(yaw[e, k1], d) <= max_turn):
            status = status | TURN
        if max_climb < 1.5707963 and not (wp.atan2(wp.abs(d[2]), plan) <= max_climb):
            status = status | CLIMB  # (atan2 <= pi/2 always: no test needed at 90 degrees or more)
    status = status | crossing_status(pos, e, count, legs, crossing_clearance)
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


@wp.func
def crossing_status(pos: wp.array2d(dtype=wp.vec3f), e: int, count: int, legs: int, clearance: float) -> int:
    """CROSSING when two legs that share no gate cross in plan view (a proper intersection of
    the plan segments: a non-zero cross product, both parameters in [0, 1]) with heights there
    (linear along each leg) less than ``clearance`` apart."""
    for i in range(legs):
        a0 = pos[e, i]
        a1 = pos[e, (i + 1) % count]
        dax = a1[0] - a0[0]
        day = a1[1] - a0[1]
        for j in range(i + 2, legs):
            if (j + 1) % count == i:
                continue  # the closing leg shares gate 0 with leg 0
            b0 = pos[e, j]
            b1 = pos[e, (j + 1) % count]
            dbx = b1[0] - b0[0]
            dby = b1[1] - b0[1]
            den = dax * dby - day * dbx
            if den == 0.0:
                continue
            wx = b0[0] - a0[0]
            wy = b0[1] - a0[1]
            tn = wx * dby - wy * dbx
            un = wx * day - wy * dax
            if den < 0.0:
                den = -den
                tn = -tn
                un = -un
            # t = tn / den and u = un / den in [0, 1], tested without dividing first
            if tn >= 0.0 and tn <= den and un >= 0.0 and un <= den:
                t = tn / den
                u = un / den
                za = a0[2] + (a1[2] - a0[2]) * t
                zb = b0[2] + (b1[2] - b0[2]) * u
                if not (wp.abs(za - zb) >= clearance):
                    return CROSSING
    return 0
