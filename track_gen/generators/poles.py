"""Pole placement shared by both families' ``obstacles`` stages: Warp functions for the count draw, a
pole's size draw, the pole-to-pole clearance, storing a placed pole and the stage's closing status.

Each family's kernel (:mod:`gates.obstacles`, :mod:`track.obstacles`) draws a spot for each pole with
its own rules; the rest is here, once. A random state is passed by value: the draws return the
advanced state, so the stream is the same as with the code inlined.
"""

from __future__ import annotations

import warp as wp

from track_gen.generators.shapes import lerp
from track_gen.rng import stream_state

__all__ = ["clear_obstacles", "clear_of_poles", "draw_obstacle_count", "draw_pole_size", "finish_poles", "put_pole"]


@wp.func
def clear_obstacles(opos: wp.array2d(dtype=wp.vec3f), orad: wp.array2d(dtype=wp.float32),
                    oheight: wp.array2d(dtype=wp.float32), e: int):
    """Zero env ``e``'s pole rows (rows past the count it places stay zero)."""
    for k in range(opos.shape[1]):
        opos[e, k] = wp.vec3f(0.0, 0.0, 0.0)
        orad[e, k] = 0.0
        oheight[e, k] = 0.0


@wp.func
def draw_obstacle_count(seed: int, generation: int, key: int, d: float, count_min: float, count_max: float,
                        hard_count_min: float, hard_count_max: float, cap: int):
    """(least count, poles to place, the random stream after that draw) at difficulty ``d``: a
    uniform count in ``[lerp(count_min, hard_count_min, d), lerp(count_max, hard_count_max, d)]``
    (rounded), at most ``cap``; the placement draws continue on the returned stream."""
    lo = int(wp.round(lerp(count_min, hard_count_min, d)))
    hi = int(wp.round(lerp(count_max, hard_count_max, d)))
    st = stream_state(seed, generation, key, 0)
    want = lo + int(wp.randf(st) * float(hi - lo + 1))
    want = wp.clamp(wp.min(want, hi), 0, cap)
    return lo, want, st


@wp.func
def draw_pole_size(st: wp.uint32, radius_min: float, radius_max: float, height_min: float, height_max: float):
    """(radius, height, the advanced random state): the first two draws of every try of a spot."""
    r = radius_min + (radius_max - radius_min) * wp.randf(st)
    h = height_min + (height_max - height_min) * wp.randf(st)
    return r, h, st


@wp.func
def clear_of_poles(p: wp.vec2f, r: float, gap: float, opos: wp.array2d(dtype=wp.vec3f),
                   orad: wp.array2d(dtype=wp.float32), e: int, placed: int) -> bool:
    """True when a pole of radius ``r`` at ``p`` keeps ``gap`` from each of env ``e``'s ``placed``
    poles (plan view; ``gap = 0``: they may touch, the comparison is the same as without it)."""
    ok = bool(True)
    for j in range(placed):
        q = opos[e, j]
        if not (wp.length(p - wp.vec2f(q[0], q[1])) >= r + orad[e, j] + gap):
            ok = False
    return ok


@wp.func
def put_pole(opos: wp.array2d(dtype=wp.vec3f), orad: wp.array2d(dtype=wp.float32),
             oheight: wp.array2d(dtype=wp.float32), e: int, placed: int, p: wp.vec2f, r: float, h: float) -> int:
    """Store a pole of radius ``r`` and height ``h`` standing at ``p`` on the ground as env ``e``'s pole
    ``placed``; returns the new count."""
    opos[e, placed] = wp.vec3f(p[0], p[1], 0.0)
    orad[e, placed] = r
    oheight[e, placed] = h
    return placed + 1


@wp.func
def finish_poles(e: int, placed: int, lo: int, cap: int, status: int, missing: int,
                 ocount_out: wp.array(dtype=wp.int32), status_out: wp.array(dtype=wp.int32),
                 valid_out: wp.array(dtype=wp.int32)):
    """Write env ``e``'s pole count and status: fewer poles than the least count ``lo`` (at most the
    capacity) adds the family's ``missing`` bit; any failure bit clears ``valid``."""
    if placed < wp.min(lo, cap):
        status = status | missing
    ocount_out[e] = placed
    status_out[e] = status
    if status != 0:
        valid_out[e] = 0
