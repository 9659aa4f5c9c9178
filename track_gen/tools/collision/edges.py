"""The band's two edges as closed polylines, shared by both :class:`BandCollision` modes.

Segment ids: segment ``i`` of the left edge (``L_i -> L_{i+1}``) is ``g = i``, segment ``i`` of
the right edge is ``g = N + i`` (N = centreline points). The edges are cut into chunks of K
segments (:func:`~track_gen.tools._common.chunking`), ``2C`` chunks in all (left edge first), each
with a bounding box: the unit of the pruned nearest-segment searches.
"""

from __future__ import annotations

import warp as wp

from track_gen.math import BIG
from track_gen.tools._common import box_dist2, chunk_box

__all__ = ["band_inward_normal", "band_sign", "chunk_range", "edge_pt", "launch_edges", "nearest_chunk",
           "nearest_segment", "seg_point"]


# ------------------------------------------------------------------------------------------------
# geometry of the edges
# ------------------------------------------------------------------------------------------------
@wp.func
def chunk_range(k: int, K: int, C: int, N: int):
    """Chunk ``k`` of ``2C``: ``(side, i0, i1)``, its edge (0 left, 1 right) and its segments
    ``i0 .. i1 - 1`` of that edge."""
    side = k // C
    i0 = (k - side * C) * K
    i1 = wp.min(i0 + K, N)
    return side, i0, i1


@wp.func
def edge_pt(left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f), e: int, side: int, i: int):
    """Point ``i`` of env e's left (``side`` 0) or right (1) edge."""
    if side == 0:
        return left[e, i]
    return right[e, i]


@wp.func
def seg_point(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f):
    """Distance from ``p`` to segment ab and the clamped parameter t of the closest point
    (exactly 0 or 1 at an end, where the closest point is exactly a or b)."""
    d = b - a
    l2 = wp.dot(d, d)
    t = float(0.0)
    if l2 > 0.0:
        t = wp.clamp(wp.dot(p - a, d) / l2, 0.0, 1.0)
    q = a + t * d
    if t <= 0.0:
        q = a
    if t >= 1.0:
        q = b
    return wp.length(p - q), t


@wp.func
def _inward(a: wp.vec2f, b: wp.vec2f, side: int):
    """Unit normal of edge segment ab pointing into the band (zero for a zero-length segment)."""
    d = b - a
    n = wp.vec2f(d[1], -d[0])  # left edge: the band lies right of travel
    if side == 1:
        n = wp.vec2f(-d[1], d[0])
    ln = wp.length(n)
    if ln > 0.0:
        n = n / ln
    return n


@wp.func
def band_sign(p: wp.vec2f, left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f), e: int, N: int,
              g: int, t: float) -> float:
    """+1 when ``p`` lies inside the band, judged from its nearest edge segment ``g`` (closest
    point parameter ``t``): the segment's inward normal, or at a vertex the sum of both adjacent
    inward normals (the 2D pseudo-normal). -1 otherwise (0 on the edge counts as outside)."""
    side = g // N
    i = g - side * N
    j = (i + 1) % N
    a = edge_pt(left, right, e, side, i)
    b = edge_pt(left, right, e, side, j)
    s = float(0.0)
    if t > 0.0 and t < 1.0:
        s = wp.dot(p - a, _inward(a, b, side))
    else:
        v = i
        if t >= 1.0:
            v = j
        vp = (v + N - 1) % N
        vn = (v + 1) % N
        pv = edge_pt(left, right, e, side, v)
        n = _inward(edge_pt(left, right, e, side, vp), pv, side) + _inward(
            pv, edge_pt(left, right, e, side, vn), side)
        s = wp.dot(p - pv, n)
    return wp.where(s > 0.0, 1.0, -1.0)


@wp.func
def band_inward_normal(nrm: wp.array2d(dtype=wp.vec2f), e: int, N: int, g: int):
    """The reported contact normal of edge segment g: the centreline normal at its start point,
    negated for the left edge (both point into the band)."""
    side = g // N
    i = g - side * N
    n = nrm[e, i]
    if side == 0:
        n = -n
    return wp.vec3f(n[0], n[1], 0.0)


# ------------------------------------------------------------------------------------------------
# searches
# ------------------------------------------------------------------------------------------------
@wp.func
def nearest_chunk(p: wp.vec2f, boxes: wp.array2d(dtype=wp.vec4f), e: int, C: int, root: int) -> int:
    """The chunk whose bounding box is nearest to ``p`` (the first one on a tie).

    ``root`` 0 compares squared distances, 1 their square roots: the same chunk except where two
    squared distances round to one root. Each caller keeps the comparison it has always used, so
    the scan order, and with it which of two equally near segments is reported, stays the same."""
    k0 = int(0)
    lb0 = float(BIG)
    for k in range(2 * C):
        lb = box_dist2(p, boxes[e, k])
        if root != 0:
            lb = wp.sqrt(lb)
        if lb < lb0:
            lb0 = lb
            k0 = k
    return k0


@wp.func
def nearest_segment(p: wp.vec2f, left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                    boxes: wp.array2d(dtype=wp.vec4f), e: int, N: int, K: int, C: int, warm: int):
    """Exact nearest edge segment to ``p`` (distance, segment id, parameter t), pruned by the
    chunk boxes; ``warm`` (a segment id or -1) seeds the search."""
    best = float(BIG)
    bg = int(-1)
    bt = float(0.0)
    if warm >= 0:
        ws = warm // N
        wi = warm - ws * N
        d, t = seg_point(p, edge_pt(left, right, e, ws, wi), edge_pt(left, right, e, ws, (wi + 1) % N))
        best = d
        bg = warm
        bt = t
    for k in range(2 * C):
        if wp.sqrt(box_dist2(p, boxes[e, k])) <= best:
            side, i0, i1 = chunk_range(k, K, C, N)
            a = edge_pt(left, right, e, side, i0)
            for i in range(i0, i1):
                b = edge_pt(left, right, e, side, (i + 1) % N)
                d, t = seg_point(p, a, b)
                if d < best:
                    best = d
                    bg = side * N + i
                    bt = t
                a = b
    return best, bg, bt


# ------------------------------------------------------------------------------------------------
# on_generate: edges and chunk boxes
# ------------------------------------------------------------------------------------------------
@wp.kernel
def _band_edges_kernel(mask: wp.array(dtype=wp.int32), xy: wp.array2d(dtype=wp.vec2f),
                       half_width: wp.array2d(dtype=wp.float32), nrm: wp.array2d(dtype=wp.vec2f), K: int, C: int,
                       left_out: wp.array2d(dtype=wp.vec2f), right_out: wp.array2d(dtype=wp.vec2f),
                       boxes_out: wp.array2d(dtype=wp.vec4f)):
    e = wp.tid()
    if mask[e] == 0:
        return
    N = xy.shape[1]
    for i in range(N):
        p = xy[e, i]
        off = half_width[e, i] * nrm[e, i]
        left_out[e, i] = p + off
        right_out[e, i] = p - off
    for k in range(2 * C):
        side, i0, i1 = chunk_range(k, K, C, N)
        if side == 0:
            boxes_out[e, k] = chunk_box(left_out, e, i0, i1, N)
        else:
            boxes_out[e, k] = chunk_box(right_out, e, i0, i1, N)


def launch_edges(ctx, mask, K: int, C: int, left, right, boxes) -> None:
    """Edges and chunk boxes of the masked envs (``mask`` [E] int32) from the generator result."""
    r = ctx.result
    wp.launch(_band_edges_kernel, dim=ctx.num_envs, device=ctx.device,
              inputs=[mask, r.xy, r.half_width, r.normal, K, C], outputs=[left, right, boxes])
