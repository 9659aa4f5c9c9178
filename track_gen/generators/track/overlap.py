"""The band's self-overlap test (OVERLAP): two parts of a band track that the centerline turned back
between must stay their half widths plus ``clearance`` apart. Chunked bounding boxes and exact
midpoint prefilters skip only pairs whose own test would pass (see :func:`band_overlaps`)."""

from __future__ import annotations

import warp as wp

from track_gen.generators.curve import seg_seg_dist
from track_gen.math import BIG

MAX_CHUNKS = wp.constant(64)
chunk_vec = wp.types.vector(length=MAX_CHUNKS, dtype=wp.float32)
TWO_OVER_PI = wp.constant(0.6366197723675814)


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
def chunk_box(xy: wp.array2d(dtype=wp.vec2f), e: int, n: int, c: int, chunk: int) -> wp.vec4f:
    """(min x, min y, max x, max y) of chunk ``c``'s points (its segments' ends, wrapping at ``n``), by
    plain compare-and-select (the points are finite here: the exact min and max)."""
    x0 = float(BIG)
    y0 = float(BIG)
    x1 = float(-BIG)
    y1 = float(-BIG)
    for i in range(c * chunk, wp.min(c * chunk + chunk + 1, n + 1)):
        ii = i
        if ii == n:
            ii = 0
        q = xy[e, ii]
        x0 = wp.where(q[0] < x0, q[0], x0)
        y0 = wp.where(q[1] < y0, q[1], y0)
        x1 = wp.where(q[0] > x1, q[0], x1)
        y1 = wp.where(q[1] > y1, q[1], y1)
    return wp.vec4f(x0, y0, x1, y1)


@wp.func
def midpoint_skips(span: float, reach: float, smax: float):
    """(whether the midpoint prefilters may run, squared far distance, far distance, skip scale) for
    coordinates within ``span`` of the origin: the prefilters rely on sums and squares that cannot
    overflow (coordinates within 1e18)."""
    far = (reach + smax) * (reach + smax)
    fast = span <= 1.0e18
    # the farthest two consecutive midpoints can be apart: half of two segments, plus their rounding
    step = smax * 1.0001 + span * 1.0e-6
    # the skip multiplies by this instead of dividing by ``step`` and scaling by 0.9999 (the same two
    # roundings of the same real quotient: as conservative)
    return fast, far, wp.sqrt(far) * 1.0001, 0.9999 / step


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
    span = float(0.0)
    for c in range(nc):
        box = chunk_box(xy, e, n, c, chunk)
        lo_x[c] = box[0]
        lo_y[c] = box[1]
        hi_x[c] = box[2]
        hi_y[c] = box[3]
    for c in range(nc):
        span = wp.max(span, wp.max(wp.max(-lo_x[c], -lo_y[c]), wp.max(hi_x[c], hi_y[c])))
    fast, far, reach_far, skip_scale = midpoint_skips(span, reach, smax)
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
