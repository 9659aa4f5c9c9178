"""Collision components: the body's box against band edges, gate posts or gate frames.

Three per-step components, each named ``"collision"`` unless you pass ``name=``; each writes a
:class:`~track_gen.tools.types.Contacts` (``course.step().contacts``):

* :class:`BandCollision` (band tracks): the body's footprint rectangle against the two edges of
  the band, exactly (``mode="segments"``) or from a baked signed-distance grid (``mode="sdf"``).
* :class:`DiscCollision` (gate courses): the footprint against the two posts of every gate,
  vertical discs of a given radius.
* :class:`FrameCollision` (gate courses): the body's 3D box against the four bars of every gate
  frame.

Inputs (bind them with ``course.bind``): ``box_position`` [E] vec3f, the box centre (routed from
``position`` unless bound), ``orientation`` [E] quatf (x, y, z, w), ``half_extents`` [E] vec2f,
the half length (body x) and half width (body y) of the box [m], and optionally ``origin`` [E]
vec3f, each env's origin in the world (e.g. Isaac Lab's ``env.scene.env_origins``). The courses
live in each env's own frame: positions are world-frame when ``origin`` is bound (the box centre
used is ``box_position[e] - origin[e]``; a non-finite origin counts as a non-finite position),
env-frame otherwise (this input is not :class:`BandCollision`'s ``origin`` attribute, the SDF
grid's corner). Only the yaw of the orientation is used, ``atan2(2(wz + xy), w^2 + x^2 - y^2 -
z^2)`` (so a quaternion need not be normalized); the absolute values of the half extents are used.

Results, every field [E]: ``clearance`` the signed distance [m] (> 0 free, <= 0 touching or
penetrating), ``hit = clearance <= 0``, ``depth = max(0, -clearance)``, ``normal`` a unit vector
that moves the body away from the obstacle that set ``clearance``, ``index`` that obstacle
(-1 when there is none). Special rows, all documented and per env:

* no obstacle (course ``valid == 0``, zero gates), and every masked row after a reset:
  ``hit 0, depth 0, clearance FAR (1e6 m), normal 0, index -1``;
* a non-finite box position, orientation or half extent: ``hit 1, depth 0, clearance 0,
  normal 0, index -1`` (treat it as a crash). Other envs are never affected.

All kernels run one thread per env (the SDF bake one per env and grid row) and only touch their
env's rows; ``step`` is stateless, so a replayed graph gives the eager result byte for byte.
"""

from __future__ import annotations

import warp as wp

from track_gen.tools._common import (ORIGIN_INPUT, box_dist2, chunk_box, chunking, env_position, gates_in_use,
                                     largest_size, no_origin, origin_args, real, resolution_arg, size_hi_arg,
                                     warn_uncovered)
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.types import Contacts
from track_gen.tools.component import check_name as _name

__all__ = ["BandCollision", "DiscCollision", "FrameCollision", "FAR", "NAN_POSE_CLEARANCE"]

#: clearance reported when an env has no obstacle (invalid course, no gates) [m]
FAR = 1.0e6
#: clearance reported for a non-finite pose (with hit = 1)
NAN_POSE_CLEARANCE = 0.0

_BIG = 1.0e30
_MARGIN = 2  # grid cells kept around the course square by the SDF bake

_POSE_INPUTS = {
    "box_position": InputSpec(wp.vec3f, default="position"),
    "orientation": InputSpec(wp.quatf),
    "half_extents": InputSpec(wp.vec2f),
    "origin": ORIGIN_INPUT,
}
#: the generator parameter that gives the side of a band track's course square
_SIZE_KEYS = ("centerline.size",)


# ------------------------------------------------------------------------------------------------
# shared device helpers
# ------------------------------------------------------------------------------------------------
@wp.func
def _yaw_axes(q: wp.quatf):
    """Body x and y axes (horizontal unit vectors) from the yaw of ``q`` (x, y, z, w): the
    normalized horizontal part ``(w^2 + x^2 - y^2 - z^2, 2(wz + xy))`` of the rotated x axis (of
    ``q`` normalized), i.e. ``(cos yaw, sin yaw)`` of the documented atan2 yaw. Scaled by its
    largest component first, so any quaternion scale works; when that part is zero or overflows
    (an x axis pointing straight up or down, a huge ``q``) it falls back to atan2/cos/sin."""
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


@wp.func
def _pose_finite(p: wp.vec3f, q: wp.quatf, h: wp.vec2f) -> bool:
    ok = wp.isfinite(p) and wp.isfinite(h)
    return ok and wp.isfinite(q[0]) and wp.isfinite(q[1]) and wp.isfinite(q[2]) and wp.isfinite(q[3])


@wp.func
def _body_pose(e: int, pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
               quat: wp.array(dtype=wp.quatf), ext: wp.array(dtype=wp.vec2f)):
    """Env e's box: whether its pose is finite, its env-frame centre (3D and xy), body x and y
    axes (yaw only) and absolute half extents (use them only when finite)."""
    p = env_position(pos, origin, has_origin, e)
    q = quat[e]
    h = ext[e]
    u, v = _yaw_axes(q)
    return _pose_finite(p, q, h), p, wp.vec2f(p[0], p[1]), u, v, wp.abs(h[0]), wp.abs(h[1])


@wp.func
def _write(e: int, hit: wp.array(dtype=wp.int32), depth: wp.array(dtype=wp.float32),
           clearance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3f), index: wp.array(dtype=wp.int32),
           cl: float, n: wp.vec3f, idx: int):
    hit[e] = wp.where(cl <= 0.0, 1, 0)
    depth[e] = wp.max(0.0 - cl, 0.0)
    clearance[e] = cl
    normal[e] = n
    index[e] = idx


@wp.func
def _write_none(e: int, hit: wp.array(dtype=wp.int32), depth: wp.array(dtype=wp.float32),
                clearance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3f),
                index: wp.array(dtype=wp.int32)):
    hit[e] = 0
    depth[e] = 0.0
    clearance[e] = FAR
    normal[e] = wp.vec3f(0.0, 0.0, 0.0)
    index[e] = -1


@wp.func
def _write_nan(e: int, hit: wp.array(dtype=wp.int32), depth: wp.array(dtype=wp.float32),
               clearance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3f),
               index: wp.array(dtype=wp.int32)):
    hit[e] = 1
    depth[e] = 0.0
    clearance[e] = NAN_POSE_CLEARANCE
    normal[e] = wp.vec3f(0.0, 0.0, 0.0)
    index[e] = -1


@wp.kernel
def _reset_kernel(active: wp.array(dtype=wp.int32), hit: wp.array(dtype=wp.int32), depth: wp.array(dtype=wp.float32),
                  clearance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3f),
                  index: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if active[e] != 0:
        _write_none(e, hit, depth, clearance, normal, index)


@wp.func
def _seg_point(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f):
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


# ------------------------------------------------------------------------------------------------
# band: edges, chunk boxes, signs
# ------------------------------------------------------------------------------------------------
@wp.kernel
def _band_edges_kernel(active: wp.array(dtype=wp.int32), use_mask: int, xy: wp.array2d(dtype=wp.vec2f),
                       half_width: wp.array2d(dtype=wp.float32), nrm: wp.array2d(dtype=wp.vec2f), K: int, C: int,
                       left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                       boxes: wp.array2d(dtype=wp.vec4f)):
    e = wp.tid()
    if use_mask != 0 and active[e] == 0:
        return
    N = xy.shape[1]
    for i in range(N):
        p = xy[e, i]
        off = half_width[e, i] * nrm[e, i]
        left[e, i] = p + off
        right[e, i] = p - off
    for k in range(2 * C):
        side = k // C
        i0 = (k - side * C) * K
        i1 = wp.min(i0 + K, N)
        if side == 0:
            boxes[e, k] = chunk_box(left, e, i0, i1, N)
        else:
            boxes[e, k] = chunk_box(right, e, i0, i1, N)


@wp.func
def _edge_pt(left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f), e: int, side: int, i: int):
    if side == 0:
        return left[e, i]
    return right[e, i]


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
def _band_sign(p: wp.vec2f, left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f), e: int, N: int,
               g: int, t: float) -> float:
    """+1 when ``p`` lies inside the band, judged from its nearest edge segment ``g`` (closest
    point parameter ``t``): the segment's inward normal, or at a vertex the sum of both adjacent
    inward normals (the 2D pseudo-normal). -1 otherwise (0 on the edge counts as outside)."""
    side = g // N
    i = g - side * N
    j = (i + 1) % N
    a = _edge_pt(left, right, e, side, i)
    b = _edge_pt(left, right, e, side, j)
    s = float(0.0)
    if t > 0.0 and t < 1.0:
        s = wp.dot(p - a, _inward(a, b, side))
    else:
        v = i
        if t >= 1.0:
            v = j
        vp = (v + N - 1) % N
        vn = (v + 1) % N
        pv = _edge_pt(left, right, e, side, v)
        n = _inward(_edge_pt(left, right, e, side, vp), pv, side) + _inward(
            pv, _edge_pt(left, right, e, side, vn), side)
        s = wp.dot(p - pv, n)
    return wp.where(s > 0.0, 1.0, -1.0)


@wp.func
def _box_dist(p: wp.vec2f, box: wp.vec4f) -> float:
    return wp.sqrt(box_dist2(p, box))


@wp.func
def _band_inward_normal(nrm: wp.array2d(dtype=wp.vec2f), e: int, N: int, g: int):
    """The reported contact normal of edge segment g: the centreline normal at its start point,
    negated for the left edge (both point into the band)."""
    side = g // N
    i = g - side * N
    n = nrm[e, i]
    if side == 0:
        n = -n
    return wp.vec3f(n[0], n[1], 0.0)


@wp.func
def _nearest_segment(p: wp.vec2f, left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                     boxes: wp.array2d(dtype=wp.vec4f), e: int, N: int, K: int, C: int, warm: int):
    """Exact nearest edge segment to ``p`` (distance, segment id, parameter t), pruned by the
    chunk boxes; ``warm`` (a segment id or -1) seeds the search."""
    best = float(_BIG)
    bg = int(-1)
    bt = float(0.0)
    if warm >= 0:
        ws = warm // N
        wi = warm - ws * N
        d, t = _seg_point(p, _edge_pt(left, right, e, ws, wi), _edge_pt(left, right, e, ws, (wi + 1) % N))
        best = d
        bg = warm
        bt = t
    for k in range(2 * C):
        if _box_dist(p, boxes[e, k]) <= best:
            side = k // C
            i0 = (k - side * C) * K
            i1 = wp.min(i0 + K, N)
            a = _edge_pt(left, right, e, side, i0)
            for i in range(i0, i1):
                b = _edge_pt(left, right, e, side, (i + 1) % N)
                d, t = _seg_point(p, a, b)
                if d < best:
                    best = d
                    bg = side * N + i
                    bt = t
                a = b
    return best, bg, bt


# ------------------------------------------------------------------------------------------------
# band: exact segments step
# ------------------------------------------------------------------------------------------------
@wp.func
def _pick(d: float, t: float, g: int, best: float, bg: int, bt: float):
    if d < best:
        return d, g, t
    return best, bg, bt


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
def _band_clear(c: wp.vec2f, u: wp.vec2f, v: wp.vec2f, ha: float, hb: float, rho: float,
                left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                boxes: wp.array2d(dtype=wp.vec4f), e: int, N: int, K: int, C: int):
    """Fast path of the segments step for a footprint clear of every edge: (found, clearance,
    segment). Squared distances only, one reciprocal per segment, pruned by the current
    separation plus the half-diagonal ``rho`` (which also bounds the centre's nearest segment).
    ``found`` is False as soon as a segment may touch the footprint, or when the centre is not
    inside the band: the caller then runs the full path."""
    k0 = int(0)
    lb0 = float(_BIG)
    for k in range(2 * C):
        lb = box_dist2(c, boxes[e, k])
        if lb < lb0:
            lb0 = lb
            k0 = k
    q1 = wp.vec2f(ha, hb)
    q2 = wp.vec2f(-ha, hb)
    q3 = wp.vec2f(-ha, -hb)
    q4 = wp.vec2f(ha, -hb)
    b0 = float(_BIG)
    g0 = int(-1)
    t0 = float(0.0)
    bsep = float(_BIG)
    gsep = int(-1)
    lim2 = float(_BIG)
    for it in range(2 * C + 1):
        k = k0
        if it > 0:
            k = it - 1
            if k == k0:
                continue
            if box_dist2(c, boxes[e, k]) > lim2:
                continue
        side = k // C
        i0 = (k - side * C) * K
        i1 = wp.min(i0 + K, N)
        aw = _edge_pt(left, right, e, side, i0)
        al = wp.vec2f(wp.dot(aw - c, u), wp.dot(aw - c, v))
        for i in range(i0, i1):
            bw = _edge_pt(left, right, e, side, (i + 1) % N)
            bl = wp.vec2f(wp.dot(bw - c, u), wp.dot(bw - c, v))
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
    if _band_sign(c, left, right, e, N, g0, t0) < 0.0:
        return False, 0.0, -1
    return True, wp.sqrt(bsep), gsep


@wp.kernel
def _band_segments_kernel(valid: wp.array(dtype=wp.int32), left: wp.array2d(dtype=wp.vec2f),
                          right: wp.array2d(dtype=wp.vec2f), nrm: wp.array2d(dtype=wp.vec2f),
                          boxes: wp.array2d(dtype=wp.vec4f), K: int, C: int, pos: wp.array(dtype=wp.vec3f),
                          origin: wp.array(dtype=wp.vec3f), has_origin: int, quat: wp.array(dtype=wp.quatf),
                          ext: wp.array(dtype=wp.vec2f),
                          hit: wp.array(dtype=wp.int32), depth: wp.array(dtype=wp.float32),
                          clearance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3f),
                          index: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if valid[e] == 0:
        _write_none(e, hit, depth, clearance, normal, index)
        return
    ok, p3, c, u, v, ha, hb = _body_pose(e, pos, origin, has_origin, quat, ext)
    if not ok:
        _write_nan(e, hit, depth, clearance, normal, index)
        return
    N = left.shape[1]
    rho = wp.sqrt(ha * ha + hb * hb)
    clear, cl0, g = _band_clear(c, u, v, ha, hb, rho, left, right, boxes, e, N, K, C)
    if clear:
        _write(e, hit, depth, clearance, normal, index, cl0, _band_inward_normal(nrm, e, N, g), g)
        return
    # touching or outside: the full path
    # the five query points in the body frame: centre, then the corners counter-clockwise
    p0 = wp.vec2f(0.0, 0.0)
    p1 = wp.vec2f(ha, hb)
    p2 = wp.vec2f(-ha, hb)
    p3b = wp.vec2f(-ha, -hb)
    p4 = wp.vec2f(ha, -hb)

    # start with the chunk nearest to the centre: it almost always holds every answer
    k0 = int(0)
    lb0 = float(_BIG)
    for k in range(2 * C):
        lb = _box_dist(c, boxes[e, k])
        if lb < lb0:
            lb0 = lb
            k0 = k

    b0 = float(_BIG)
    b1 = float(_BIG)
    b2 = float(_BIG)
    b3 = float(_BIG)
    b4 = float(_BIG)
    g0 = int(-1)
    g1 = int(-1)
    g2 = int(-1)
    g3 = int(-1)
    g4 = int(-1)
    t0 = float(0.0)
    t1 = float(0.0)
    t2 = float(0.0)
    t3 = float(0.0)
    t4 = float(0.0)
    bsep = float(_BIG)
    gsep = int(-1)
    bin_ = float(0.0)
    gin = int(-1)
    for it in range(2 * C + 1):
        k = k0
        if it > 0:
            k = it - 1
            if k == k0:
                continue
            bound = wp.max(wp.max(wp.max(b0, b1), wp.max(b2, b3)), wp.max(b4, bsep))
            if _box_dist(c, boxes[e, k]) - rho > bound:
                continue
        side = k // C
        i0 = (k - side * C) * K
        i1 = wp.min(i0 + K, N)
        aw = _edge_pt(left, right, e, side, i0)
        al = wp.vec2f(wp.dot(aw - c, u), wp.dot(aw - c, v))
        for i in range(i0, i1):
            g = side * N + i
            bw = _edge_pt(left, right, e, side, (i + 1) % N)
            bl = wp.vec2f(wp.dot(bw - c, u), wp.dot(bw - c, v))
            d0, s0 = _seg_point(p0, al, bl)
            if d0 - rho > wp.max(wp.max(wp.max(b0, b1), wp.max(b2, b3)), wp.max(b4, bsep)):
                al = bl  # no footprint point is nearer than the current answers: skip the rest
                continue
            d1, s1 = _seg_point(p1, al, bl)
            d2, s2 = _seg_point(p2, al, bl)
            d3, s3 = _seg_point(p3b, al, bl)
            d4, s4 = _seg_point(p4, al, bl)
            b0, g0, t0 = _pick(d0, s0, g, b0, g0, t0)
            b1, g1, t1 = _pick(d1, s1, g, b1, g1, t1)
            b2, g2, t2 = _pick(d2, s2, g, b2, g2, t2)
            b3, g3, t3 = _pick(d3, s3, g, b3, g3, t3)
            b4, g4, t4 = _pick(d4, s4, g, b4, g4, t4)
            # distance from the solid footprint to the segment
            dsep = float(0.0)
            if not _seg_hits_rect(al, bl, ha, hb):
                dsep = wp.min(wp.min(wp.min(d1, d2), wp.min(d3, d4)),
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

    sc = _band_sign(c, left, right, e, N, g0, t0)
    cl = float(0.0)
    idx = gsep
    if bsep > 0.0 and sc > 0.0:
        cl = bsep
    else:
        dep = float(0.0)
        if sc < 0.0 and b0 > dep:
            dep = b0
            idx = g0
        w1 = c + p1[0] * u + p1[1] * v
        if _band_sign(w1, left, right, e, N, g1, t1) < 0.0 and b1 > dep:
            dep = b1
            idx = g1
        w2 = c + p2[0] * u + p2[1] * v
        if _band_sign(w2, left, right, e, N, g2, t2) < 0.0 and b2 > dep:
            dep = b2
            idx = g2
        w3 = c + p3b[0] * u + p3b[1] * v
        if _band_sign(w3, left, right, e, N, g3, t3) < 0.0 and b3 > dep:
            dep = b3
            idx = g3
        w4 = c + p4[0] * u + p4[1] * v
        if _band_sign(w4, left, right, e, N, g4, t4) < 0.0 and b4 > dep:
            dep = b4
            idx = g4
        if bin_ > dep:
            dep = bin_
            idx = gin
        cl = 0.0 - dep
    _write(e, hit, depth, clearance, normal, index, cl, _band_inward_normal(nrm, e, N, idx), idx)


# ------------------------------------------------------------------------------------------------
# band: SDF bake and lookups
# ------------------------------------------------------------------------------------------------
@wp.kernel
def _band_bake_kernel(active: wp.array(dtype=wp.int32), use_mask: int, valid: wp.array(dtype=wp.int32),
                      left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                      boxes: wp.array2d(dtype=wp.vec4f), K: int, C: int, x0: float, cell: float,
                      grid: wp.array3d(dtype=wp.float32), gidx: wp.array3d(dtype=wp.int16)):
    e, r = wp.tid()
    if use_mask != 0 and active[e] == 0:
        return
    n = grid.shape[2]
    if valid[e] == 0:
        for j in range(n):
            grid[e, r, j] = 0.0
            gidx[e, r, j] = wp.int16(-1)
        return
    N = left.shape[1]
    y = x0 + float(r) * cell
    warm = int(-1)
    for j in range(n):
        p = wp.vec2f(x0 + float(j) * cell, y)
        d, g, t = _nearest_segment(p, left, right, boxes, e, N, K, C, warm)
        warm = g
        grid[e, r, j] = d * _band_sign(p, left, right, e, N, g, t)
        gidx[e, r, j] = wp.int16(g)


@wp.func
def _grid_lookup(grid: wp.array3d(dtype=wp.float32), e: int, x0: float, cell: float, p: wp.vec2f):
    """Bilinear value and gradient of the grid at ``p``, plus the (row, col) of the nearest node.
    Outside the grid: the value at the clamped point minus the distance to it (a deeper, never
    shallower, estimate), the gradient pointing back to the grid."""
    n = grid.shape[2]
    top = float(n - 1)
    fx = (p[0] - x0) / cell
    fy = (p[1] - x0) / cell
    cx = wp.clamp(fx, 0.0, top)
    cy = wp.clamp(fy, 0.0, top)
    ix = wp.min(int(wp.floor(cx)), n - 2)
    iy = wp.min(int(wp.floor(cy)), n - 2)
    tx = cx - float(ix)
    ty = cy - float(iy)
    v00 = grid[e, iy, ix]
    v01 = grid[e, iy, ix + 1]
    v10 = grid[e, iy + 1, ix]
    v11 = grid[e, iy + 1, ix + 1]
    val = (1.0 - ty) * ((1.0 - tx) * v00 + tx * v01) + ty * ((1.0 - tx) * v10 + tx * v11)
    gx = ((1.0 - ty) * (v01 - v00) + ty * (v11 - v10)) / cell
    gy = ((1.0 - tx) * (v10 - v00) + tx * (v11 - v01)) / cell
    out = wp.vec2f((cx - fx) * cell, (cy - fy) * cell)
    lo = wp.length(out)
    grad = wp.vec2f(gx, gy)
    if lo > 0.0:
        val = val - lo
        grad = out / lo
    rx = wp.min(int(wp.floor(cx + 0.5)), n - 1)
    ry = wp.min(int(wp.floor(cy + 0.5)), n - 1)
    return val, grad, ry, rx


@wp.kernel
def _band_sdf_kernel(valid: wp.array(dtype=wp.int32), grid: wp.array3d(dtype=wp.float32),
                     gidx: wp.array3d(dtype=wp.int16), nrm: wp.array2d(dtype=wp.vec2f), x0: float, cell: float,
                     max_side: int, pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f),
                     has_origin: int, quat: wp.array(dtype=wp.quatf), ext: wp.array(dtype=wp.vec2f),
                     hit: wp.array(dtype=wp.int32), depth: wp.array(dtype=wp.float32),
                     clearance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3f),
                     index: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if valid[e] == 0:
        _write_none(e, hit, depth, clearance, normal, index)
        return
    ok, p3, c, u, v, ha, hb = _body_pose(e, pos, origin, has_origin, quat, ext)
    if not ok:
        _write_nan(e, hit, depth, clearance, normal, index)
        return
    best, bgrad, br, bc = _grid_lookup(grid, e, x0, cell, c)
    # the boundary, walked counter-clockwise from corner (+a, +b): each side cut into pieces of
    # at most one cell (at most max_side pieces), every piece end sampled (corners included)
    nx = wp.clamp(int(wp.ceil(2.0 * ha / cell)), 1, max_side)
    ny = wp.clamp(int(wp.ceil(2.0 * hb / cell)), 1, max_side)
    for s in range(4):
        sa = wp.vec2f(ha, hb)
        sb = wp.vec2f(-ha, hb)
        m = nx
        if s == 1:
            sa = wp.vec2f(-ha, hb)
            sb = wp.vec2f(-ha, -hb)
            m = ny
        elif s == 2:
            sa = wp.vec2f(-ha, -hb)
            sb = wp.vec2f(ha, -hb)
            m = nx
        elif s == 3:
            sa = wp.vec2f(ha, -hb)
            sb = wp.vec2f(ha, hb)
            m = ny
        for k in range(m):
            f = float(k) / float(m)
            pb = sa + f * (sb - sa)
            val, grad, rr, cc = _grid_lookup(grid, e, x0, cell, c + pb[0] * u + pb[1] * v)
            if val < best:
                best = val
                bgrad = grad
                br = rr
                bc = cc
    idx = wp.int32(gidx[e, br, bc])
    n3 = wp.vec3f(0.0, 0.0, 0.0)
    lg = wp.length(bgrad)
    if lg > 1.0e-12:
        n3 = wp.vec3f(bgrad[0] / lg, bgrad[1] / lg, 0.0)
    elif idx >= 0:
        n3 = _band_inward_normal(nrm, e, nrm.shape[1], idx)
    _write(e, hit, depth, clearance, normal, index, best, n3, idx)


# ------------------------------------------------------------------------------------------------
# gates: posts (discs) and frames (boxes)
# ------------------------------------------------------------------------------------------------
@wp.func
def _lateral(nrm: wp.vec3f):
    """normalize(cross(z, normal)) in the horizontal plane (zero for a vertical normal)."""
    lat = wp.vec2f(-nrm[1], nrm[0])
    ln = wp.length(lat)
    if ln > 0.0:
        lat = lat / ln
    return lat


@wp.kernel
def _disc_posts_kernel(active: wp.array(dtype=wp.int32), use_mask: int, valid: wp.array(dtype=wp.int32),
                       gpos: wp.array2d(dtype=wp.vec3f), gnormal: wp.array2d(dtype=wp.vec3f),
                       count: wp.array(dtype=wp.int32), width: wp.array(dtype=wp.float32),
                       thickness: wp.array(dtype=wp.float32), posts: wp.array2d(dtype=wp.vec2f)):
    """Post centres of env e's gates in use (slot 2g: +lateral, 2g + 1: -lateral); the other
    slots are zeroed so that a row depends on its course only."""
    e = wp.tid()
    if use_mask != 0 and active[e] == 0:
        return
    G = gates_in_use(valid[e], count[e], gpos.shape[1])
    off = 0.5 * width[e] + 0.5 * thickness[e]
    for gi in range(posts.shape[1]):
        g = gi // 2
        pc = wp.vec2f(0.0, 0.0)
        if g < G:
            s = 1.0 - 2.0 * float(gi - 2 * g)  # +1: the post on +lateral (index 2g), -1: on -lateral
            gp = gpos[e, g]
            pc = wp.vec2f(gp[0], gp[1]) + (s * off) * _lateral(gnormal[e, g])
        posts[e, gi] = pc


@wp.kernel
def _disc_kernel(valid: wp.array(dtype=wp.int32), posts: wp.array2d(dtype=wp.vec2f), count: wp.array(dtype=wp.int32),
                 radius: float, pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
                 quat: wp.array(dtype=wp.quatf), ext: wp.array(dtype=wp.vec2f),
                 hit: wp.array(dtype=wp.int32), depth: wp.array(dtype=wp.float32),
                 clearance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3f),
                 index: wp.array(dtype=wp.int32)):
    e = wp.tid()
    G = gates_in_use(valid[e], count[e], posts.shape[1] // 2)
    if G <= 0:
        _write_none(e, hit, depth, clearance, normal, index)
        return
    ok, p3, c, u, v, ha, hb = _body_pose(e, pos, origin, has_origin, quat, ext)
    if not ok:
        _write_nan(e, hit, depth, clearance, normal, index)
        return
    # |pc - c| - rho <= sd_rect(pc) <= |pc - c|: a post whose centre lies farther than the
    # nearest centre plus the half-diagonal rho cannot be the nearest post; skip it (a relative
    # slack keeps rounding from dropping a tie)
    dmin2 = float(_BIG)
    for gi in range(2 * G):
        dc = posts[e, gi] - c
        dmin2 = wp.min(dmin2, wp.dot(dc, dc))
    lim = (wp.sqrt(dmin2) + wp.sqrt(ha * ha + hb * hb)) * 1.0001 + 1.0e-4
    lim2 = lim * lim
    best = float(_BIG)
    bidx = int(-1)
    bn = wp.vec2f(0.0, 0.0)
    for gi in range(2 * G):
        dc = posts[e, gi] - c
        if wp.dot(dc, dc) > lim2:
            continue
        pl = wp.vec2f(wp.dot(dc, u), wp.dot(dc, v))
        qx = wp.abs(pl[0]) - ha
        qy = wp.abs(pl[1]) - hb
        outside = wp.sqrt(wp.max(qx, 0.0) * wp.max(qx, 0.0) + wp.max(qy, 0.0) * wp.max(qy, 0.0))
        sd = outside + wp.min(wp.max(qx, qy), 0.0) - radius
        if sd < best:
            best = sd
            bidx = gi
            nb = wp.vec2f(0.0, 0.0)
            if outside > 0.0:
                cp = wp.vec2f(wp.clamp(pl[0], -ha, ha), wp.clamp(pl[1], -hb, hb))
                nb = (cp - pl) / outside
            elif qx > qy:
                nb = wp.vec2f(-wp.where(pl[0] < 0.0, -1.0, 1.0), 0.0)
            else:
                nb = wp.vec2f(0.0, -wp.where(pl[1] < 0.0, -1.0, 1.0))
            bn = nb[0] * u + nb[1] * v
    _write(e, hit, depth, clearance, normal, index, best, wp.vec3f(bn[0], bn[1], 0.0), bidx)


@wp.func
def _rect_vertex_dist(p: wp.vec2f, c: wp.vec2f, ax: wp.vec2f, ay: wp.vec2f, hx: float, hy: float):
    """Distance from world point ``p`` to the solid rectangle (centre c, unit axes ax, ay, half
    extents hx, hy) and the closest point of the rectangle (world)."""
    lx = wp.dot(p - c, ax)
    ly = wp.dot(p - c, ay)
    cx = wp.clamp(lx, -hx, hx)
    cy = wp.clamp(ly, -hy, hy)
    return wp.sqrt((lx - cx) * (lx - cx) + (ly - cy) * (ly - cy)), c + cx * ax + cy * ay


@wp.func
def _rect_rect(ca: wp.vec2f, ua: wp.vec2f, va: wp.vec2f, ha: float, hb: float,
               cb: wp.vec2f, ub: wp.vec2f, vb: wp.vec2f, ea: float, eb: float):
    """Signed distance between rectangles A and B (> 0: gap, < 0: minus the SAT penetration
    depth) and the unit direction that moves A away from B."""
    d = ca - cb
    pen = float(_BIG)
    pdir = wp.vec2f(0.0, 0.0)
    sep = bool(False)
    for k in range(4):
        ax = ua
        if k == 1:
            ax = va
        elif k == 2:
            ax = ub
        elif k == 3:
            ax = vb
        s = wp.dot(d, ax)
        ra = ha * wp.abs(wp.dot(ua, ax)) + hb * wp.abs(wp.dot(va, ax))
        rb = ea * wp.abs(wp.dot(ub, ax)) + eb * wp.abs(wp.dot(vb, ax))
        ov = ra + rb - wp.abs(s)
        if ov < 0.0:
            sep = True
        if ov < pen:
            pen = ov
            pdir = wp.where(s < 0.0, -ax, ax)
    if not sep:
        return 0.0 - pen, pdir
    best = float(_BIG)
    bdir = wp.vec2f(0.0, 0.0)
    for k in range(8):
        sx = wp.where((k % 4) == 0 or (k % 4) == 3, 1.0, -1.0)
        sy = wp.where((k % 4) < 2, 1.0, -1.0)
        dist = float(0.0)
        dd = wp.vec2f(0.0, 0.0)
        if k < 4:  # a vertex of A against B
            p = ca + (sx * ha) * ua + (sy * hb) * va
            dist, cp = _rect_vertex_dist(p, cb, ub, vb, ea, eb)
            dd = p - cp
        else:  # a vertex of B against A
            p = cb + (sx * ea) * ub + (sy * eb) * vb
            dist, cp = _rect_vertex_dist(p, ca, ua, va, ha, hb)
            dd = cp - p
        if dist < best:
            best = dist
            bdir = wp.vec2f(0.0, 0.0)
            if dist > 0.0:
                bdir = dd / dist
    return best, bdir


@wp.kernel
def _frame_kernel(valid: wp.array(dtype=wp.int32), gpos: wp.array2d(dtype=wp.vec3f),
                  gnormal: wp.array2d(dtype=wp.vec3f), count: wp.array(dtype=wp.int32),
                  width: wp.array(dtype=wp.float32), height: wp.array(dtype=wp.float32),
                  thickness: wp.array(dtype=wp.float32), half_height: float,
                  pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
                  quat: wp.array(dtype=wp.quatf), ext: wp.array(dtype=wp.vec2f),
                  hit: wp.array(dtype=wp.int32), depth: wp.array(dtype=wp.float32),
                  clearance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3f),
                  index: wp.array(dtype=wp.int32)):
    e = wp.tid()
    G = gates_in_use(valid[e], count[e], gpos.shape[1])
    if G <= 0:
        _write_none(e, hit, depth, clearance, normal, index)
        return
    ok, p3, c, u, v, ha, hb = _body_pose(e, pos, origin, has_origin, quat, ext)
    if not ok:
        _write_nan(e, hit, depth, clearance, normal, index)
        return
    rho = wp.sqrt(ha * ha + hb * hb)
    w = width[e]
    hh = height[e]
    t = thickness[e]
    best = float(_BIG)
    bidx = int(-1)
    bn = wp.vec3f(0.0, 0.0, 0.0)
    for gk in range(4 * G):
        g = gk // 4
        k = gk - 4 * g
        gp = gpos[e, g]
        nn = gnormal[e, g]
        lat = _lateral(nn)
        n2 = wp.vec2f(nn[0], nn[1])
        ln = wp.length(n2)
        if ln > 0.0:
            n2 = n2 / ln
        cb = wp.vec2f(gp[0], gp[1])
        zb = gp[2]
        el = 0.5 * w + t  # top / bottom bars span the corners
        ez = 0.5 * t
        if k == 0:
            zb = gp[2] + 0.5 * hh + 0.5 * t
        elif k == 1:
            zb = gp[2] - 0.5 * hh - 0.5 * t
        else:
            el = 0.5 * t
            ez = 0.5 * hh
            sgn = wp.where(k == 2, 1.0, -1.0)
            cb = cb + (sgn * (0.5 * w + 0.5 * t)) * lat
        dzs = p3[2] - zb
        dz = wp.abs(dzs) - (half_height + ez)
        # bounding circles: a pair surely apart by more than the best so far is skipped
        lxy = wp.max(wp.length(c - cb) - rho - wp.sqrt(el * el + 0.25 * t * t), 0.0)
        lz = wp.max(dz, 0.0)
        lb = wp.sqrt(lxy * lxy + lz * lz)
        if lb > 0.0 and lb > best:
            continue
        dxy, dir2 = _rect_rect(c, u, v, ha, hb, cb, lat, n2, el, 0.5 * t)
        zsgn = wp.where(dzs < 0.0, -1.0, 1.0)
        sd = float(0.0)
        nv = wp.vec3f(0.0, 0.0, 0.0)
        if dxy > 0.0 or dz > 0.0:
            px = wp.max(dxy, 0.0)
            pz = wp.max(dz, 0.0)
            sd = wp.sqrt(px * px + pz * pz)
            nv = wp.vec3f(dir2[0] * px, dir2[1] * px, zsgn * pz)
            lv = wp.length(nv)
            if lv > 0.0:
                nv = nv / lv
        elif dxy >= dz:
            sd = dxy
            nv = wp.vec3f(dir2[0], dir2[1], 0.0)
        else:
            sd = dz
            nv = wp.vec3f(0.0, 0.0, zsgn)
        if sd < best:
            best = sd
            bidx = gk
            bn = nv
    _write(e, hit, depth, clearance, normal, index, best, bn, bidx)


# ------------------------------------------------------------------------------------------------
# components
# ------------------------------------------------------------------------------------------------
def _contacts(E: int, device) -> Contacts:
    return Contacts(
        hit=wp.zeros(E, dtype=wp.int32, device=device),
        depth=wp.zeros(E, dtype=wp.float32, device=device),
        clearance=wp.full(E, FAR, dtype=wp.float32, device=device),
        normal=wp.zeros(E, dtype=wp.vec3f, device=device),
        index=wp.full(E, -1, dtype=wp.int32, device=device),
    )


class _CollisionBase(Component):
    """Common parts: the inputs, the Contacts result, the reset to "no contact"."""

    name = "collision"
    inputs = _POSE_INPUTS

    def _attach_result(self, ctx) -> None:
        self.result = _contacts(ctx.num_envs, ctx.device)
        self._no_origin = no_origin(ctx.device)
        self.utility = self

    def reset(self, ctx, mask) -> None:
        """Masked rows read "no contact" (clearance FAR, index -1) until the next step."""
        r = self.result
        wp.launch(_reset_kernel, dim=ctx.num_envs, inputs=[mask], device=ctx.device,
                  outputs=[r.hit, r.depth, r.clearance, r.normal, r.index])

    def _pose(self):
        b = self._bound
        return [b["box_position"], *origin_args(b, self._no_origin), b["orientation"], b["half_extents"]]

    def _outputs(self):
        r = self.result
        return [r.hit, r.depth, r.clearance, r.normal, r.index]


class BandCollision(_CollisionBase):
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
    a shared vertex) either may be reported. No state is kept between steps. Positions are world-frame when ``origin`` is bound (the
    footprint centre is then ``box_position - origin``), env-frame otherwise.

    ``mode="sdf"`` (approximate): ``on_generate`` bakes ``sd`` at the nodes of a per-env grid
    of ``resolution`` cells across the course square of side ``size_hi`` (centred on the
    origin, plus a margin of 2 cells): exactly, node by node, with the segments search.
    ``step`` takes the minimum of bilinear lookups at the footprint centre, corners and side
    points at most one cell apart (a side is cut into at most 64 pieces): an estimate of the
    minimum of ``sd`` over the footprint's boundary and centre, within ~ one cell
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
        self._N = N
        self._K, self._C = chunking(N)
        self._all = wp.ones(E, dtype=wp.int32, device=dev)
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
            self.origin = -0.5 * self.side - _MARGIN * self.cell
            n = self.resolution + 1 + 2 * _MARGIN
            self.grid = wp.zeros((E, n, n), dtype=wp.float32, device=dev)
            self.grid_index = wp.full((E, n, n), -1, dtype=wp.int16, device=dev)
            self._check_cover(ctx.generator, stacklevel=5)
        self._attach_result(ctx)

    def on_generate(self, ctx, mask) -> None:
        """Edges and chunk boxes of masked envs (and the SDF bake in ``"sdf"`` mode)."""
        r = ctx.result
        E, dev = ctx.num_envs, ctx.device
        active = self._all if mask is None else mask
        use = 0 if mask is None else 1
        wp.launch(_band_edges_kernel, dim=E, device=dev,
                  inputs=[active, use, r.xy, r.half_width, r.normal, self._K, self._C],
                  outputs=[self.left, self.right, self.boxes])
        if self.mode == "sdf":
            self._check_cover(ctx.generator, stacklevel=4)
            wp.launch(_band_bake_kernel, dim=(E, self.grid.shape[1]), device=dev,
                      inputs=[active, use, r.valid, self.left, self.right, self.boxes, self._K, self._C,
                              self.origin, self.cell],
                      outputs=[self.grid, self.grid_index])

    def step(self, ctx) -> None:
        r = ctx.result
        if self.mode == "segments":
            wp.launch(_band_segments_kernel, dim=ctx.num_envs, device=ctx.device,
                      inputs=[r.valid, self.left, self.right, r.normal, self.boxes, self._K, self._C, *self._pose()],
                      outputs=self._outputs())
        else:
            wp.launch(_band_sdf_kernel, dim=ctx.num_envs, device=ctx.device,
                      inputs=[r.valid, self.grid, self.grid_index, r.normal, self.origin, self.cell, 64,
                              *self._pose()],
                      outputs=self._outputs())

    def __repr__(self) -> str:
        return f"BandCollision(mode={self.mode!r}, name={self.name!r})"


class DiscCollision(_CollisionBase):
    """The body's footprint rectangle against the posts of every gate, as vertical discs.

    Gate ``g`` has two posts of radius ``radius`` (circles in the horizontal plane, infinitely
    tall) centred at ``pos_g.xy +- (width/2 + thickness/2) * lateral_g``, ``lateral_g =
    normalize(cross(z, normal_g))``; the ``+lateral`` post has ``index = 2g``, the other
    ``2g + 1``. ``clearance`` is the exact signed distance between the rectangle and the nearest
    disc: ``sd_rect(post centre) - radius`` (the distance of the centre to the solid rectangle,
    or minus its depth inside it), so ``depth`` is the exact minimal translation. ``normal``
    (z = 0) points from the post to the rectangle's closest point, or, with the post centre
    inside the rectangle, away from the nearest side. Only gates ``g < count`` take part.
    Positions are world-frame when ``origin`` is bound (the footprint centre is then
    ``box_position - origin``), env-frame otherwise.

    Cost: ``on_generate`` stores the post centres of the regenerated envs (``posts``, [E, 2G]
    vec2f, G the gate capacity; 8 bytes per post per env). Per env-step: one squared distance
    per post in use, then the exact rectangle test only for posts whose centre lies within the
    nearest centre's distance plus the footprint's half-diagonal (the others cannot be nearest),
    typically 1-4 posts.

    Args:
        radius: post radius [m], > 0.
        name: the component name.

    Attributes (after attach): ``posts`` [E, 2G] vec2f post centres (slot ``2g`` / ``2g + 1``
    as ``index``; zero beyond ``2 * count`` and on invalid courses).
    """

    topology = ("gates",)

    def __init__(self, radius: float, *, name: str = "collision"):
        r = real("radius", radius)
        if r <= 0.0:
            raise ValueError(f"radius: expected a post radius > 0 [m], got {radius!r}")
        self.radius = r
        self.name = _name(name)

    def attach(self, ctx) -> None:
        r = ctx.result
        E, dev = ctx.num_envs, ctx.device
        self._all = wp.ones(E, dtype=wp.int32, device=dev)
        self.posts = wp.zeros((E, 2 * int(r.pos.shape[1])), dtype=wp.vec2f, device=dev)
        self._attach_result(ctx)

    def on_generate(self, ctx, mask) -> None:
        """Post centres of masked envs."""
        r = ctx.result
        active = self._all if mask is None else mask
        wp.launch(_disc_posts_kernel, dim=ctx.num_envs, device=ctx.device,
                  inputs=[active, 0 if mask is None else 1, r.valid, r.pos, r.normal, r.count, r.width, r.thickness],
                  outputs=[self.posts])

    def step(self, ctx) -> None:
        r = ctx.result
        wp.launch(_disc_kernel, dim=ctx.num_envs, device=ctx.device,
                  inputs=[r.valid, self.posts, r.count, self.radius, *self._pose()],
                  outputs=self._outputs())

    def __repr__(self) -> str:
        return f"DiscCollision(radius={self.radius:g}, name={self.name!r})"


class FrameCollision(_CollisionBase):
    """The body's 3D box against the four bars of every gate frame.

    The body box: centre ``box_position``, yaw of ``orientation`` (roll and pitch are ignored:
    the box stays upright), half extents ``(half_extents.x, half_extents.y, half_height)``.
    Gate ``g`` (centre ``pos_g``, unit normal ``n_g``, lateral ``l_g = normalize(cross(z, n_g))``,
    per-env opening width ``w``, height ``h``, bar thickness ``t``) has four upright boxes, all
    ``t`` deep along ``n_g``: top (``index 4g``) and bottom (``4g + 1``) bars centred at ``pos_g
    +- (h/2 + t/2) z`` with half extents ``(w/2 + t, t/2)`` along ``(l_g, z)`` (they cover the
    corners), and the posts on ``+l_g`` (``4g + 2``) and ``-l_g`` (``4g + 3``) centred at
    ``pos_g +- (w/2 + t/2) l_g`` with half extents ``(t/2, h/2)``.

    Both boxes are upright prisms (a horizontal rectangle times a height interval), so their
    exact signed distance is that of the box SDF over the pair: with ``d_xy`` the signed
    distance of the two footprints (the gap between them, or minus the SAT penetration over
    their four edge normals) and ``d_z`` that of the height intervals, ``clearance =
    |max(d_xy, 0), max(d_z, 0)|`` when apart, else ``max(d_xy, d_z)`` (minus the smaller of the
    two translations that separate them). ``normal`` is the unit direction that increases it for
    the body (3D, from the nearest bar). Only gates ``g < count``. Cost per env-step:
    O(4 * count) box pairs. Positions are world-frame when ``origin`` is bound (the box centre
    is then ``box_position - origin``, z included), env-frame otherwise.

    Args:
        half_height: vertical half extent of the body box [m], >= 0.
        name: the component name.
    """

    topology = ("gates",)

    def __init__(self, half_height: float, *, name: str = "collision"):
        hh = real("half_height", half_height)
        if hh < 0.0:
            raise ValueError(f"half_height: expected a vertical half extent >= 0 [m], got {half_height!r}")
        self.half_height = hh
        self.name = _name(name)

    def attach(self, ctx) -> None:
        self._attach_result(ctx)

    def step(self, ctx) -> None:
        r = ctx.result
        wp.launch(_frame_kernel, dim=ctx.num_envs, device=ctx.device,
                  inputs=[r.valid, r.pos, r.normal, r.count, r.width, r.height, r.thickness, self.half_height,
                          *self._pose()],
                  outputs=self._outputs())

    def __repr__(self) -> str:
        return f"FrameCollision(half_height={self.half_height:g}, name={self.name!r})"
