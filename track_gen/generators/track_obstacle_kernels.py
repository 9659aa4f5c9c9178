"""Warp kernel of the ``track.obstacles`` stage: pole obstacles on a band track (one thread per env).

The band's edges are the closed polylines ``L_i = xy_i + hw_i n_i`` (left) and ``R_i = xy_i - hw_i
n_i`` (right), as :class:`~track_gen.tools.BandCollision` draws them; the band is the set of points
inside an odd number of the two edge polygons. A pole at plan centre ``p`` with radius ``r`` keeps
(plan view; every test written so that a NaN fails it):

* inside: ``p`` in the band and its distance to each edge >= ``r`` (the whole pole stands in it);
* gap: the larger of the two edge distances minus ``r`` >= ``gap`` (a passage of at least ``gap``
  between the pole and one edge);
* start: distance from ``p`` to the start line (segment ``R_0 -> L_0``) >= ``r + clearance``;
* other poles: centre distance >= the sum of the radii plus ``gap`` (no two poles close a passage).

The height is drawn in ``[height_min, height_max]`` above the course at the pole's foot: on an
elevated track plus the height of the nearest centerline point (plan view, the first on a tie),
so a pole always stands above the course it blocks; the base is on the ground (z = 0).

Each pole gets ``tries`` draws (a centerline point, the side of its gap, a radius, a height and
a lateral offset that leaves the gap when the band is locally straight); the exact tests above
decide. A pole that finds no spot is left out; fewer than the least count of the env's
difficulty: OBSTACLE (``valid = 0``). Tracks already invalid get no poles.
"""

from __future__ import annotations

import warp as wp

from track_gen.generators.curve import point_seg_dist
from track_gen.generators.obstacle_kernels import (clear_obstacles, clear_of_poles, draw_obstacle_count,
                                                   store_obstacle_status)
from track_gen.generators.status import TrackStatus
from track_gen.math import BIG

OBSTACLE = wp.constant(int(TrackStatus.OBSTACLE))


@wp.func
def band_gaps(p: wp.vec2f, xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32),
              nrm: wp.array2d(dtype=wp.vec2f), e: int, n: int) -> wp.vec3f:
    """(distance to the left edge, distance to the right edge, 1 when ``p`` is in the band else 0)
    of env ``e``'s band (even-odd rule over both edge polygons, a ray towards +x)."""
    dl = float(BIG)
    dr = float(BIG)
    crossings = int(0)
    for i in range(n):
        j = (i + 1) % n
        for side in range(2):
            sgn = 1.0 - 2.0 * float(side)
            a = xy[e, i] + nrm[e, i] * (sgn * hw[e, i])
            b = xy[e, j] + nrm[e, j] * (sgn * hw[e, j])
            d = point_seg_dist(p, a, b)
            if side == 0:
                dl = wp.min(dl, d)
            else:
                dr = wp.min(dr, d)
            if (a[1] > p[1]) != (b[1] > p[1]):
                x = a[0] + (p[1] - a[1]) * (b[0] - a[0]) / (b[1] - a[1])
                if p[0] < x:
                    crossings += 1
    return wp.vec3f(dl, dr, float(crossings % 2))


@wp.func
def nearest_point(p: wp.vec2f, xy: wp.array2d(dtype=wp.vec2f), e: int, n: int) -> int:
    """Index of env ``e``'s centerline point nearest ``p`` (plan view; the first on a tie)."""
    best = float(BIG)
    k = int(0)
    for i in range(n):
        d = wp.length(xy[e, i] - p)
        if d < best:
            best = d
            k = i
    return k


@wp.kernel
def track_obstacles_kernel(
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    key: int,
    xy: wp.array2d(dtype=wp.vec2f),
    hw: wp.array2d(dtype=wp.float32),
    nrm: wp.array2d(dtype=wp.vec2f),
    z: wp.array2d(dtype=wp.float32),
    has_z: int,
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
    gap: wp.array(dtype=wp.float32),
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
    n = xy.shape[1]
    placed = int(0)
    if status == 0:
        lo, want, st = draw_obstacle_count(seeds[e], generation[e], key, difficulty[e], count_min[e], count_max[e],
                                           hard_count_min[e], hard_count_max[e], cap)
        g = gap[e]
        c = clearance[e]
        sl = xy[e, 0] + nrm[e, 0] * hw[e, 0]
        sr = xy[e, 0] - nrm[e, 0] * hw[e, 0]
        for k in range(want):
            for t in range(tries):
                r = radius_min[e] + (radius_max[e] - radius_min[e]) * wp.randf(st)
                h = height_min[e] + (height_max[e] - height_min[e]) * wp.randf(st)
                i = wp.min(int(wp.randf(st) * float(n)), n - 1)
                side = 1.0
                if wp.randf(st) < 0.5:
                    side = -1.0
                # the offset towards the gap side: the pole's far surface at most on the far edge,
                # its near surface at least ``gap`` from the gap-side edge (exact on a straight band)
                w = hw[e, i]
                lo_o = r - w
                hi_o = w - r - g
                o = lo_o + (hi_o - lo_o) * wp.randf(st)
                if not (hi_o >= lo_o):
                    continue
                p = xy[e, i] + nrm[e, i] * (side * o)
                ok = point_seg_dist(p, sr, sl) >= r + c
                ok = ok and clear_of_poles(p, r, g, opos, orad, e, placed)
                if ok:
                    b = band_gaps(p, xy, hw, nrm, e, n)
                    ok = b[2] > 0.5 and wp.min(b[0], b[1]) >= r and wp.max(b[0], b[1]) - r >= g
                if ok:
                    foot = float(0.0)
                    if has_z != 0:
                        foot = z[e, nearest_point(p, xy, e, n)]
                    opos[e, placed] = wp.vec3f(p[0], p[1], 0.0)
                    orad[e, placed] = r
                    oheight[e, placed] = foot + h
                    placed += 1
                    break
        # a pole that finds no spot in ``tries`` draws is left out; fewer than the least count of
        # this difficulty makes the track invalid
        if placed < wp.min(lo, cap):
            status = status | OBSTACLE
    store_obstacle_status(e, placed, status, ocount, status_out, valid)
