"""``BandCollision``: the body's footprint rectangle against the two edges of a band track, and
its exact ``mode="segments"`` step (the ``"sdf"`` mode's bake and step are in
:mod:`~track_gen.tools.collision.band_sdf`, the edges both modes share in
:mod:`~track_gen.tools.collision.edges`).
"""

from __future__ import annotations

import warp as wp

from track_gen.math import BIG
from track_gen.tools._common import box_dist2, chunking, largest_size, resolution_arg, size_hi_arg, warn_uncovered
from track_gen.tools.collision.band_sdf import MARGIN, launch_bake, launch_sdf_step
from track_gen.tools.collision.edges import (band_inward_normal, band_sign, chunk_range, edge_pt, launch_edges,
                                             nearest_chunk, seg_point)
from track_gen.tools.collision.pose import GO, BodyBox, CollisionBase, ContactRows, open_row, write, write_row
from track_gen.tools.component import check_name as _name

__all__ = ["BandCollision"]

#: the generator parameter that gives the side of a band track's course square
_SIZE_KEYS = ("centerline.size",)

#: per query point of the footprint (centre, then the four corners): a float and an int each
_vec5f = wp.types.vector(length=5, dtype=wp.float32)
_vec5i = wp.types.vector(length=5, dtype=wp.int32)


# ------------------------------------------------------------------------------------------------
# the footprint against one segment (rectangle frame: centre at 0, axes x and y)
# ------------------------------------------------------------------------------------------------
@wp.func
def query_point(q: int, ha: float, hb: float) -> wp.vec2f:
    """Query point ``q`` of the footprint of half extents (ha, hb), in its own frame: 0 the
    centre, 1 ... 4 the corners counter-clockwise from (+ha, +hb)."""
    if q == 0:
        return wp.vec2f(0.0, 0.0)
    if q == 1:
        return wp.vec2f(ha, hb)
    if q == 2:
        return wp.vec2f(-ha, hb)
    if q == 3:
        return wp.vec2f(-ha, -hb)
    return wp.vec2f(ha, -hb)


@wp.func
def _point_rect(p: wp.vec2f, hx: float, hy: float) -> float:
    """Distance from ``p`` (rectangle frame) to the solid rectangle [-hx, hx] x [-hy, hy]."""
    dx = wp.max(wp.abs(p[0]) - hx, 0.0)
    dy = wp.max(wp.abs(p[1]) - hy, 0.0)
    return wp.sqrt(dx * dx + dy * dy)


@wp.func
def _seg_hits_rect(a: wp.vec2f, b: wp.vec2f, hx: float, hy: float) -> bool:
    """True when segment ab (rectangle frame) meets the solid rectangle (Liang-Barsky clip)."""
    d = b - a
    t0 = float(0.0)
    t1 = float(1.0)
    if wp.abs(d[0]) > 0.0:
        u = (-hx - a[0]) / d[0]
        v = (hx - a[0]) / d[0]
        t0 = wp.max(t0, wp.min(u, v))
        t1 = wp.min(t1, wp.max(u, v))
    elif wp.abs(a[0]) > hx:
        return False
    if wp.abs(d[1]) > 0.0:
        u = (-hy - a[1]) / d[1]
        v = (hy - a[1]) / d[1]
        t0 = wp.max(t0, wp.min(u, v))
        t1 = wp.min(t1, wp.max(u, v))
    elif wp.abs(a[1]) > hy:
        return False
    return t0 <= t1


@wp.func
def _seg_rect_apart(a: wp.vec2f, b: wp.vec2f, hx: float, hy: float) -> bool:
    """True when segment ab (rectangle frame) and the solid rectangle are strictly apart along
    x, y or the segment's normal (separating axes, no division)."""
    if wp.max(a[0], b[0]) < -hx or wp.min(a[0], b[0]) > hx:
        return True
    if wp.max(a[1], b[1]) < -hy or wp.min(a[1], b[1]) > hy:
        return True
    n = wp.vec2f(a[1] - b[1], b[0] - a[0])
    return wp.abs(wp.dot(a, n)) > hx * wp.abs(n[0]) + hy * wp.abs(n[1])


@wp.func
def _corner_d2(p: wp.vec2f, a: wp.vec2f, d: wp.vec2f, inv: float) -> float:
    t = wp.clamp(wp.dot(p - a, d) * inv, 0.0, 1.0)
    r = a + t * d - p
    return wp.dot(r, r)


@wp.func
def _to_body(w: wp.vec2f, c: wp.vec2f, u: wp.vec2f, v: wp.vec2f) -> wp.vec2f:
    """World point ``w`` in the footprint frame (centre c, unit axes u, v)."""
    return wp.vec2f(wp.dot(w - c, u), wp.dot(w - c, v))


# ------------------------------------------------------------------------------------------------
# step, mode "segments": a fast path for a clear footprint, then the full path
# ------------------------------------------------------------------------------------------------
@wp.func
def _band_clear(c: wp.vec2f, u: wp.vec2f, v: wp.vec2f, ha: float, hb: float, rho: float,
                left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                boxes: wp.array2d(dtype=wp.vec4f), e: int, N: int, K: int, C: int):
    """Fast path of the segments step for a footprint clear of every edge: (found, clearance,
    segment). Squared distances only, one reciprocal per segment, pruned by the current
    separation plus the half-diagonal ``rho`` (which also bounds the centre's nearest segment).
    ``found`` is False as soon as a segment may touch the footprint, or when the centre is not
    inside the band: the caller then runs the full path."""
    k0 = nearest_chunk(c, boxes, e, C, 0)
    q1 = query_point(1, ha, hb)
    q2 = query_point(2, ha, hb)
    q3 = query_point(3, ha, hb)
    q4 = query_point(4, ha, hb)
    b0 = float(BIG)
    g0 = int(-1)
    t0 = float(0.0)
    bsep = float(BIG)
    gsep = int(-1)
    lim2 = float(BIG)
    for it in range(2 * C + 1):  # chunk k0 first, then the others that may still hold an answer
        k = k0
        if it > 0:
            k = it - 1
            if k == k0:
                continue
            if box_dist2(c, boxes[e, k]) > lim2:
                continue
        side, i0, i1 = chunk_range(k, K, C, N)
        al = _to_body(edge_pt(left, right, e, side, i0), c, u, v)
        for i in range(i0, i1):
            bl = _to_body(edge_pt(left, right, e, side, (i + 1) % N), c, u, v)
            # the segment's bounding box bounds its distance to the centre from below
            bx = wp.max(wp.max(wp.min(al[0], bl[0]), -wp.max(al[0], bl[0])), 0.0)
            by = wp.max(wp.max(wp.min(al[1], bl[1]), -wp.max(al[1], bl[1])), 0.0)
            if bx * bx + by * by > lim2:
                al = bl
                continue
            d = bl - al
            l2 = wp.dot(d, d)
            inv = float(0.0)
            if l2 > 0.0:
                inv = 1.0 / l2
            t = wp.clamp(wp.dot(-al, d) * inv, 0.0, 1.0)
            r = al + t * d
            d0 = wp.dot(r, r)
            if d0 < b0:
                b0 = d0
                g0 = side * N + i
                t0 = t
            if d0 > lim2:
                al = bl
                continue
            if not _seg_rect_apart(al, bl, ha, hb):
                return False, 0.0, -1
            ds = wp.min(wp.min(_corner_d2(q1, al, d, inv), _corner_d2(q2, al, d, inv)),
                        wp.min(_corner_d2(q3, al, d, inv), _corner_d2(q4, al, d, inv)))
            ex = wp.max(wp.abs(al[0]) - ha, 0.0)
            ey = wp.max(wp.abs(al[1]) - hb, 0.0)
            fx = wp.max(wp.abs(bl[0]) - ha, 0.0)
            fy = wp.max(wp.abs(bl[1]) - hb, 0.0)
            ds = wp.min(ds, wp.min(ex * ex + ey * ey, fx * fx + fy * fy))
            if ds < bsep:
                bsep = ds
                gsep = side * N + i
                lim = (wp.sqrt(bsep) + rho) * 1.0001 + 1.0e-4  # slack: rounding never prunes an answer
                lim2 = lim * lim
            al = bl
    if not (bsep > 0.0) or g0 < 0:
        return False, 0.0, -1
    if band_sign(c, left, right, e, N, g0, t0) < 0.0:
        return False, 0.0, -1
    return True, wp.sqrt(bsep), gsep


@wp.func
def _bound5(b: _vec5f, bsep: float) -> float:
    """The largest of the five query points' best distances and the footprint's separation."""
    return wp.max(wp.max(wp.max(b[0], b[1]), wp.max(b[2], b[3])), wp.max(b[4], bsep))


@wp.kernel
def _band_segments_kernel(K: int, C: int,
                          valid: wp.array(dtype=wp.int32), left: wp.array2d(dtype=wp.vec2f),
                          right: wp.array2d(dtype=wp.vec2f), nrm: wp.array2d(dtype=wp.vec2f),
                          boxes: wp.array2d(dtype=wp.vec4f), body: BodyBox,
                          contacts_out: ContactRows):
    agent = wp.tid()  # one thread per agent, against the course of its env
    e = agent // body.agents
    verdict, p3, c, u, v, ha, hb = open_row(agent, e, valid[e] != 0, body)
    if verdict != GO:
        write_row(agent, verdict, contacts_out)
        return
    N = left.shape[1]
    rho = wp.sqrt(ha * ha + hb * hb)
    clear, cl0, g = _band_clear(c, u, v, ha, hb, rho, left, right, boxes, e, N, K, C)
    if clear:
        write(agent, contacts_out, cl0, band_inward_normal(nrm, e, N, g), g)
        return
    # touching or outside: the full path. Per query point q (0 the centre, 1 ... 4 the corners,
    # see query_point): its nearest segment bg[q], distance bd[q] and closest-point parameter bt[q]
    # (the loops over q have constant bounds: Warp unrolls them, the vectors stay in registers)
    k0 = nearest_chunk(c, boxes, e, C, 1)  # scanned first: it almost always holds every answer
    bd = _vec5f(BIG, BIG, BIG, BIG, BIG)
    bg = _vec5i(-1, -1, -1, -1, -1)
    bt = _vec5f(0.0, 0.0, 0.0, 0.0, 0.0)
    bsep = float(BIG)
    gsep = int(-1)
    bin_ = float(0.0)
    gin = int(-1)
    for it in range(2 * C + 1):
        k = k0
        if it > 0:
            k = it - 1
            if k == k0:
                continue
            if wp.sqrt(box_dist2(c, boxes[e, k])) - rho > _bound5(bd, bsep):
                continue
        side, i0, i1 = chunk_range(k, K, C, N)
        al = _to_body(edge_pt(left, right, e, side, i0), c, u, v)
        for i in range(i0, i1):
            g = side * N + i
            bl = _to_body(edge_pt(left, right, e, side, (i + 1) % N), c, u, v)
            d0, s0 = seg_point(query_point(0, ha, hb), al, bl)
            if d0 - rho > _bound5(bd, bsep):
                al = bl  # no footprint point is nearer than the current answers: skip the rest
                continue
            dq = _vec5f(d0, 0.0, 0.0, 0.0, 0.0)
            sq = _vec5f(s0, 0.0, 0.0, 0.0, 0.0)
            for q in range(1, 5):
                dd, ss = seg_point(query_point(q, ha, hb), al, bl)
                dq[q] = dd
                sq[q] = ss
            for q in range(5):
                if dq[q] < bd[q]:
                    bd[q] = dq[q]
                    bg[q] = g
                    bt[q] = sq[q]
            # distance from the solid footprint to the segment
            dsep = float(0.0)
            if not _seg_hits_rect(al, bl, ha, hb):
                dsep = wp.min(wp.min(wp.min(dq[1], dq[2]), wp.min(dq[3], dq[4])),
                              wp.min(_point_rect(al, ha, hb), _point_rect(bl, ha, hb)))
            if dsep < bsep:
                bsep = dsep
                gsep = g
            # an edge vertex strictly inside the footprint: how deep
            if wp.abs(al[0]) < ha and wp.abs(al[1]) < hb:
                din = wp.min(ha - wp.abs(al[0]), hb - wp.abs(al[1]))
                if din > bin_:
                    bin_ = din
                    gin = g
            al = bl

    sc = band_sign(c, left, right, e, N, bg[0], bt[0])
    cl = float(0.0)
    idx = gsep
    if bsep > 0.0 and sc > 0.0:
        cl = bsep
    else:
        # the deepest of: the centre or a corner outside the band, an edge vertex inside the footprint
        dep = float(0.0)
        if sc < 0.0 and bd[0] > dep:
            dep = bd[0]
            idx = bg[0]
        for q in range(1, 5):
            pq = query_point(q, ha, hb)
            wq = c + pq[0] * u + pq[1] * v
            if band_sign(wq, left, right, e, N, bg[q], bt[q]) < 0.0 and bd[q] > dep:
                dep = bd[q]
                idx = bg[q]
        if bin_ > dep:
            dep = bin_
            idx = gin
        cl = 0.0 - dep
    write(agent, contacts_out, cl, band_inward_normal(nrm, e, N, idx), idx)


# ------------------------------------------------------------------------------------------------
# the component
# ------------------------------------------------------------------------------------------------
class BandCollision(CollisionBase):
    """The body's footprint rectangle against the two edges of a band track.

    The edges are closed polylines: left ``L_i = xy_i + half_width_i * normal_i``, right
    ``R_i = xy_i - half_width_i * normal_i``. Segment ``i`` of the left edge (``L_i -> L_{i+1}``)
    has ``index = i``, segment ``i`` of the right edge has ``index = N + i`` (N = centreline
    points). The footprint is the rectangle centred at ``box_position.xy``, yawed by
    ``orientation``, of half extents ``half_extents``.

    ``sd(p)`` is the signed distance of a point to the edges (> 0 inside the band), its sign
    taken from the nearest segment's inward normal (at a vertex, the sum of both segments').

    ``mode="segments"`` (exact; the definition):

    * footprint clear of every segment with its centre inside the band: ``clearance`` = the
      distance from the solid rectangle to the nearest segment (> 0);
    * otherwise ``clearance = -depth``, ``depth`` = the largest of 0, ``-sd`` at the centre and
      at the four corners, and the depth of any edge vertex strictly inside the rectangle
      (its distance to the rectangle's boundary): how far the body reaches past an edge, or how
      far an edge reaches into the body. So ``hit`` is exact: the footprint touches an edge or
      its centre lies outside the band. The depth looks at the corners, not along the sides:
      where a side cuts across a concave part of the wall (a footprint wider than the inner
      radius of a tight turn), points between the corners can lie deeper past the edge.

    ``index`` is the segment that set the value (for a contact of depth 0, a touching segment),
    ``normal`` the band's inward normal at that segment's start point (``-normal_i`` on the
    left edge, ``+normal_i`` on the right; z = 0). Cost per env-step: O(C + S) with C = 2 *
    ceil(N / K) chunk boxes (K = ceil(sqrt N), 16 for N = 256) and S the segments of the chunks
    that can hold an answer (within the current best distances of the footprint, typically 2-4
    chunks), each rejected after one point distance when it is farther than every answer. A
    first pass handles the usual case (footprint clear, centre inside) with squared distances
    and a tighter bound (separation plus half-diagonal); the full pass runs only when a segment
    may touch the footprint or the centre is outside. Where two segments are equally near (at
    a shared vertex) either may be reported. No state is kept between steps. Positions are
    world-frame when ``origin`` is bound (the footprint centre is then ``box_position -
    origin``), env-frame otherwise.

    ``mode="sdf"`` (approximate): ``on_generate`` bakes ``sd`` at the nodes of a per-env grid
    of ``resolution`` cells across the course square of side ``size_hi`` (centred on the
    origin, plus a margin of 2 cells): exactly, node by node, with the segments search.
    ``step`` takes the minimum of bilinear lookups at the footprint centre, corners and side
    points at most one cell apart (a side is cut into at most ``band_sdf.SIDE_PIECES`` = 64
    pieces): an estimate of the minimum of ``sd`` over the footprint's boundary and centre, within ~ one cell
    ``size_hi / resolution`` (bilinear interpolation of a 1-Lipschitz field: <= 0.71 cell;
    side sampling: <= 0.5 cell; measured <= 0.75 cell). So for a clear footprint it agrees with
    ``"segments"`` within that bound; when penetrating it also sees the sides and may report a
    deeper contact (see above). ``normal`` is the normalized grid gradient at that sample,
    ``index`` the nearest segment baked at the sample's nearest node. Outside the grid a
    lookup subtracts the distance to the grid from the clamped value (a deeper estimate). Step
    cost: 5 + 2 * (ceil(2 hx / cell) + ceil(2 hy / cell)) lookups. Bake cost per regenerated env:
    one nearest-segment search per node, (resolution + 5)^2 of them (~ 0.3 us each on one CPU
    core; on a GPU one thread per env and grid row); memory 6 bytes per node per env (float32
    value, int16 segment).

    Args:
        mode: ``"segments"`` or ``"sdf"``.
        resolution: SDF grid cells across the course square, 2 ... 4096 (``"sdf"`` only).
        size_hi: side of the square the grid covers [m] (``"sdf"`` only); default: the largest
            course the generator can draw (``centerline.size``, or its randomizer's hi). Pass it
            when a curriculum will grow the size later. A grid that does not cover the largest
            size warns :class:`~track_gen.errors.ResolutionWarning` once (at construction, or at
            a later ``on_generate`` after the size grew).
        name: the component name.

    Attributes (after attach): ``left`` / ``right`` [E, N] vec2f edge points, ``boxes``
    [E, 2C] vec4f chunk bounds (min x, min y, max x, max y); in ``"sdf"`` mode ``grid``
    [E, n, n] float32 (row: y, column: x; node (i, j) at ``(origin + j cell, origin + i cell)``),
    ``grid_index`` [E, n, n] int16, ``side``, ``cell``, ``origin`` [m].

    Invalid courses (``valid == 0``) report no contact; a non-finite pose reports a hit of depth
    0 (see the module docstring).
    """

    topology = ("track",)

    def __init__(self, mode: str = "segments", resolution: int = 128, size_hi: float | None = None, *,
                 name: str = "collision"):
        if isinstance(mode, bool):
            raise TypeError(f"mode: expected 'segments' or 'sdf', got the bool {mode!r}")
        if mode not in ("segments", "sdf"):
            raise ValueError(f"mode: expected 'segments' or 'sdf', got {mode!r}")
        resolution = resolution_arg(resolution, "cells across the course", "cells")
        size_hi = size_hi_arg(size_hi)
        self.mode = mode
        self.resolution = resolution
        self.size_hi = size_hi
        self.name = _name(name)
        self._warned = False
        self.grid = None
        self.grid_index = None
        self.side = None
        self.cell = None
        self.origin = None

    # -- sizes ------------------------------------------------------------------------------------
    @staticmethod
    def _largest_size(generator) -> float | None:
        """The largest ``centerline.size`` the generator can draw now (None when it has none)."""
        found = largest_size(generator, _SIZE_KEYS)
        return None if found is None else found[1]

    def _check_cover(self, generator, stacklevel: int) -> None:
        if self.mode != "sdf" or self._warned:
            return
        self._warned = warn_uncovered(self.name, "SDF grid", self.side, generator, _SIZE_KEYS,
                                      "contacts are extrapolated", stacklevel)

    # -- hooks --------------------------------------------------------------------------------------
    def attach(self, ctx) -> None:
        r = ctx.result
        E, dev = ctx.num_envs, ctx.device
        N = int(r.xy.shape[1])
        if 2 * N > 32767:
            raise ValueError(f"{self.name!r}: {N} centreline points exceed the 16383 the segment index supports")
        self._K, self._C = chunking(N)
        self.left = wp.zeros((E, N), dtype=wp.vec2f, device=dev)
        self.right = wp.zeros((E, N), dtype=wp.vec2f, device=dev)
        self.boxes = wp.zeros((E, 2 * self._C), dtype=wp.vec4f, device=dev)
        if self.mode == "sdf":
            side = self.size_hi
            if side is None:
                side = self._largest_size(ctx.generator)
                if side is None:
                    raise ValueError(
                        f"{self.name!r}: the generator has no centerline.size parameter; pass size_hi= (the side of "
                        f"the square the SDF grid covers, in metres)"
                    )
            self.side = float(side)
            self.cell = self.side / self.resolution
            self.origin = -0.5 * self.side - MARGIN * self.cell
            n = self.resolution + 1 + 2 * MARGIN
            self.grid = wp.zeros((E, n, n), dtype=wp.float32, device=dev)
            self.grid_index = wp.full((E, n, n), -1, dtype=wp.int16, device=dev)
            self._check_cover(ctx.generator, stacklevel=5)
        self._attach_result(ctx)

    def on_generate(self, ctx, mask) -> None:
        """Edges and chunk boxes of masked envs (and the SDF bake in ``"sdf"`` mode)."""
        launch_edges(ctx, mask, self._K, self._C, self.left, self.right, self.boxes)
        if self.mode == "sdf":
            self._check_cover(ctx.generator, stacklevel=4)
            launch_bake(ctx, mask, self)

    def step(self, ctx) -> None:
        if self.mode == "sdf":
            launch_sdf_step(ctx, self)
            return
        r = ctx.result
        wp.launch(_band_segments_kernel, dim=ctx.num_agents, device=ctx.device,
                  inputs=[self._K, self._C, r.valid, self.left, self.right, r.normal, self.boxes, self._pose()],
                  outputs=[self._outputs()])

    def __repr__(self) -> str:
        return f"BandCollision(mode={self.mode!r}, name={self.name!r})"


