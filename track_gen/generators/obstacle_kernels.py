"""Warp kernel of the ``gates.obstacles`` stage: pole obstacles per course (one thread per env).

Clearances (plan view, so they hold whatever the pole's height; every test written so that a
NaN fails it), for a pole at ``p`` of radius ``r``:

* inside the arena: ``max(|p.x|, |p.y|) + r <= arena / 2``;
* every gate frame: the distance from ``p`` to the frame's footprint (a ``w + 2t`` by ``t``
  rectangle about the gate centre, long side along the gate's lateral axis) >= ``r + clearance``;
* the course line: ``CenterlineFromGates``' line (a cubic Hermite per leg, end tangents = unit
  gate normal times the leg's chord length ``L``; a sprint's first leg leaves the start pose)
  lies, in plan view, within ``L * sqrt(0.0093 + (1 - cos dyaw) / 32)`` of its leg's chord
  (``dyaw`` the turn between the leg's end directions), so a chord distance >= ``r + clearance``
  plus that bound keeps the pole ``clearance`` from the line;
* the start position: distance >= ``r + clearance``;
* other poles: centre distance >= the sum of the radii (poles never merge).

Each pole gets ``tries`` random spots (radius and height drawn with each); one that finds no
clear spot is left out. Fewer poles than the least count of the env's difficulty: OBSTACLE
(``valid = 0``). The layout's invalid courses get no poles.
"""

from __future__ import annotations

import warp as wp

from track_gen.generators.curve import point_seg_dist
from track_gen.generators.gate_shapes import lerp
from track_gen.generators.status import GateStatus
from track_gen.math import BIG
from track_gen.rng import stream_state

OBSTACLE = wp.constant(int(GateStatus.OBSTACLE))


@wp.func
def hermite_bound(length: float, dir_a: wp.vec2f, dir_b: wp.vec2f) -> float:
    """How far (plan view) a course-line leg of chord length ``length`` strays from its chord."""
    c = wp.dot(dir_a, dir_b)
    return length * wp.sqrt(0.0093 + (1.0 - c) / 32.0)


@wp.func
def gate_dir(yaw: float) -> wp.vec2f:
    return wp.vec2f(wp.cos(yaw), wp.sin(yaw))


@wp.func
def course_gap(p: wp.vec2f, e: int, n: int, closed: int, gpos: wp.array2d(dtype=wp.vec3f),
               gyaw: wp.array2d(dtype=wp.float32), start: wp.vec3f, start_yaw: float, half_w: float,
               half_t: float) -> float:
    """The smallest clearance (plan view) between a point and env ``e``'s course: gate frame
    footprints, course-line legs (chord distance minus the Hermite bound) and the start point."""
    gap = float(BIG)
    for g in range(n):
        gp = gpos[e, g]
        nd = gate_dir(gyaw[e, g])
        rel = p - wp.vec2f(gp[0], gp[1])
        along = wp.abs(rel[0] * nd[0] + rel[1] * nd[1]) - half_t
        lat = wp.abs(-rel[0] * nd[1] + rel[1] * nd[0]) - half_w
        out = wp.sqrt(wp.max(along, 0.0) * wp.max(along, 0.0) + wp.max(lat, 0.0) * wp.max(lat, 0.0))
        gap = wp.min(gap, out + wp.min(wp.max(along, lat), 0.0))
    for k in range(n):  # a loop: n legs; a sprint: the run-up from the start pose, then n - 1 legs
        a = wp.vec3f()
        da = wp.vec2f()
        b = wp.vec3f()
        db = wp.vec2f()
        if closed != 0:
            a = gpos[e, k]
            da = gate_dir(gyaw[e, k])
            b = gpos[e, (k + 1) % n]
            db = gate_dir(gyaw[e, (k + 1) % n])
        elif k == 0:
            a = start
            da = gate_dir(start_yaw)
            b = gpos[e, 0]
            db = gate_dir(gyaw[e, 0])
        else:
            a = gpos[e, k - 1]
            da = gate_dir(gyaw[e, k - 1])
            b = gpos[e, k]
            db = gate_dir(gyaw[e, k])
        dist = point_seg_dist(p, wp.vec2f(a[0], a[1]), wp.vec2f(b[0], b[1]))
        gap = wp.min(gap, dist - hermite_bound(wp.length(b - a), da, db))
    return wp.min(gap, wp.length(p - wp.vec2f(start[0], start[1])))


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
def store_obstacle_status(e: int, placed: int, status: int, ocount: wp.array(dtype=wp.int32),
                          status_out: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32)):
    """Write env ``e``'s pole count and status; any failure bit clears ``valid``."""
    ocount[e] = placed
    status_out[e] = status
    if status != 0:
        valid[e] = 0


@wp.kernel
def obstacles_kernel(
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    key: int,
    gpos: wp.array2d(dtype=wp.vec3f),
    gyaw: wp.array2d(dtype=wp.float32),
    gcount: wp.array(dtype=wp.int32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    arena: wp.array(dtype=wp.float32),
    difficulty: wp.array(dtype=wp.float32),
    status_in: wp.array(dtype=wp.int32),
    count_min: wp.array(dtype=wp.float32),
    count_max: wp.array(dtype=wp.float32),
    hard_count_min: wp.array(dtype=wp.float32),
    hard_count_max: wp.array(dtype=wp.float32),
    radius_min: wp.array(dtype=wp.float32),
    radius_max: wp.array(dtype=wp.float32),
    height_min: wp.array(dtype=wp.float32),
    height_max: wp.array(dtype=wp.float32),
    clearance: wp.array(dtype=wp.float32),
    gate_width: wp.array(dtype=wp.float32),
    thickness: wp.array(dtype=wp.float32),
    closed: int,
    tries: int,
    # outputs
    opos: wp.array2d(dtype=wp.vec3f),
    orad: wp.array2d(dtype=wp.float32),
    oheight: wp.array2d(dtype=wp.float32),
    ocount: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    cap = opos.shape[1]
    clear_obstacles(opos, orad, oheight, e)
    status = status_in[e]
    n = wp.clamp(gcount[e], 0, gpos.shape[1])
    placed = int(0)
    if status == 0 and n >= 2:
        lo, want, st = draw_obstacle_count(seeds[e], generation[e], key, difficulty[e], count_min[e], count_max[e],
                                           hard_count_min[e], hard_count_max[e], cap)
        half = 0.5 * arena[e]
        half_w = 0.5 * gate_width[e] + thickness[e]
        half_t = 0.5 * thickness[e]
        c = clearance[e]
        sp = start_pos[e]
        for k in range(want):
            for t in range(tries):
                r = radius_min[e] + (radius_max[e] - radius_min[e]) * wp.randf(st)
                h = height_min[e] + (height_max[e] - height_min[e]) * wp.randf(st)
                lim = half - r
                p = wp.vec2f(lim * (2.0 * wp.randf(st) - 1.0), lim * (2.0 * wp.randf(st) - 1.0))
                ok = (wp.max(wp.abs(p[0]), wp.abs(p[1])) + r <= half
                      and course_gap(p, e, n, closed, gpos, gyaw, sp, start_yaw[e], half_w, half_t) >= r + c)
                ok = ok and clear_of_poles(p, r, 0.0, opos, orad, e, placed)
                if ok:
                    opos[e, placed] = wp.vec3f(p[0], p[1], 0.0)
                    orad[e, placed] = r
                    oheight[e, placed] = h
                    placed += 1
                    break
        # a pole that finds no clear spot in ``tries`` draws is left out; fewer than the least
        # count of this difficulty makes the course invalid
        if placed < wp.min(lo, cap):
            status = status | OBSTACLE
    store_obstacle_status(e, placed, status, ocount, status_out, valid)
