"""Gate-course collision: the posts of every gate as vertical discs (:class:`DiscCollision`) and
the four bars of every gate frame as boxes (:class:`FrameCollision`)."""

from __future__ import annotations

import warp as wp

from track_gen.math import BIG, unit_lateral_xy
from track_gen.tools._common import gates_in_use, real
from track_gen.tools.collision.pose import (GO, BodyBox, CollisionBase, ContactRows, open_row, prism_gap, write,
                                           write_row)
from track_gen.tools.component import check_name as _name

__all__ = ["DiscCollision", "FrameCollision"]


# ------------------------------------------------------------------------------------------------
# posts (discs)
# ------------------------------------------------------------------------------------------------
@wp.kernel
def _disc_posts_kernel(mask: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
                       gpos: wp.array2d(dtype=wp.vec3f), gnormal: wp.array2d(dtype=wp.vec3f),
                       count: wp.array(dtype=wp.int32), width: wp.array(dtype=wp.float32),
                       thickness: wp.array(dtype=wp.float32), posts_out: wp.array2d(dtype=wp.vec2f)):
    """Post centres of env e's gates in use (slot 2g: +lateral, 2g + 1: -lateral); the other
    slots are zeroed so that a row depends on its course only."""
    e = wp.tid()
    if mask[e] == 0:
        return
    G = gates_in_use(valid[e], count[e], gpos.shape[1])
    off = 0.5 * width[e] + 0.5 * thickness[e]
    for gi in range(posts_out.shape[1]):
        g = gi // 2
        pc = wp.vec2f(0.0, 0.0)
        if g < G:
            s = 1.0 - 2.0 * float(gi - 2 * g)  # +1: the post on +lateral (index 2g), -1: on -lateral
            gp = gpos[e, g]
            pc = wp.vec2f(gp[0], gp[1]) + (s * off) * unit_lateral_xy(gnormal[e, g])
        posts_out[e, gi] = pc


@wp.kernel
def _disc_kernel(radius: float,
                 valid: wp.array(dtype=wp.int32), posts: wp.array2d(dtype=wp.vec2f), count: wp.array(dtype=wp.int32),
                 body: BodyBox,
                 contacts_out: ContactRows):
    agent = wp.tid()  # one thread per agent, against the course of its env
    e = agent // body.agents
    G = gates_in_use(valid[e], count[e], posts.shape[1] // 2)
    verdict, p3, c, u, v, ha, hb = open_row(agent, e, G > 0, body)
    if verdict != GO:
        write_row(agent, verdict, contacts_out)
        return
    # |pc - c| - rho <= sd_rect(pc) <= |pc - c|: a post whose centre lies farther than the
    # nearest centre plus the half-diagonal rho cannot be the nearest post; skip it (a relative
    # slack keeps rounding from dropping a tie)
    dmin2 = float(BIG)
    for gi in range(2 * G):
        dc = posts[e, gi] - c
        dmin2 = wp.min(dmin2, wp.dot(dc, dc))
    lim = (wp.sqrt(dmin2) + wp.sqrt(ha * ha + hb * hb)) * 1.0001 + 1.0e-4
    lim2 = lim * lim
    best = float(BIG)
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
    write(agent, contacts_out, best, wp.vec3f(bn[0], bn[1], 0.0), bidx)


class DiscCollision(CollisionBase):
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
        self.posts = wp.zeros((E, 2 * int(r.pos.shape[1])), dtype=wp.vec2f, device=dev)
        self._attach_result(ctx)

    def on_generate(self, ctx, mask) -> None:
        """Post centres of masked envs."""
        r = ctx.result
        wp.launch(_disc_posts_kernel, dim=ctx.num_envs, device=ctx.device,
                  inputs=[mask, r.valid, r.pos, r.normal, r.count, r.width, r.thickness],
                  outputs=[self.posts])

    def step(self, ctx) -> None:
        r = ctx.result
        wp.launch(_disc_kernel, dim=ctx.num_agents, device=ctx.device,
                  inputs=[self.radius, r.valid, self.posts, r.count, self._pose()],
                  outputs=[self._outputs()])

    def __repr__(self) -> str:
        return f"DiscCollision(radius={self.radius:g}, name={self.name!r})"

# ------------------------------------------------------------------------------------------------
# frames (boxes)
# ------------------------------------------------------------------------------------------------
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
    pen = float(BIG)
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
    best = float(BIG)
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
def _frame_kernel(half_height: float,
                  valid: wp.array(dtype=wp.int32), gpos: wp.array2d(dtype=wp.vec3f),
                  gnormal: wp.array2d(dtype=wp.vec3f), count: wp.array(dtype=wp.int32),
                  width: wp.array(dtype=wp.float32), height: wp.array(dtype=wp.float32),
                  thickness: wp.array(dtype=wp.float32), body: BodyBox,
                  contacts_out: ContactRows):
    agent = wp.tid()  # one thread per agent, against the course of its env
    e = agent // body.agents
    G = gates_in_use(valid[e], count[e], gpos.shape[1])
    verdict, p3, c, u, v, ha, hb = open_row(agent, e, G > 0, body)
    if verdict != GO:
        write_row(agent, verdict, contacts_out)
        return
    rho = wp.sqrt(ha * ha + hb * hb)
    w = width[e]
    gate_h = height[e]  # the opening's full height
    t = thickness[e]
    best = float(BIG)
    bidx = int(-1)
    bn = wp.vec3f(0.0, 0.0, 0.0)
    for gk in range(4 * G):
        g = gk // 4
        k = gk - 4 * g
        gp = gpos[e, g]
        nn = gnormal[e, g]
        lat = unit_lateral_xy(nn)
        n2 = wp.vec2f(nn[0], nn[1])
        ln = wp.length(n2)
        if ln > 0.0:
            n2 = n2 / ln
        cb = wp.vec2f(gp[0], gp[1])
        zb = gp[2]
        el = 0.5 * w + t  # top / bottom bars span the corners
        ez = 0.5 * t
        if k == 0:
            zb = gp[2] + 0.5 * gate_h + 0.5 * t
        elif k == 1:
            zb = gp[2] - 0.5 * gate_h - 0.5 * t
        else:
            el = 0.5 * t
            ez = 0.5 * gate_h
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
        sd, nv = prism_gap(dxy, dir2, dzs, dz)
        if sd < best:
            best = sd
            bidx = gk
            bn = nv
    write(agent, contacts_out, best, bn, bidx)


class FrameCollision(CollisionBase):
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
        half_h = real("half_height", half_height)
        if half_h < 0.0:
            raise ValueError(f"half_height: expected a vertical half extent >= 0 [m], got {half_height!r}")
        self.half_height = half_h
        self.name = _name(name)

    def attach(self, ctx) -> None:
        self._attach_result(ctx)

    def step(self, ctx) -> None:
        r = ctx.result
        wp.launch(_frame_kernel, dim=ctx.num_agents, device=ctx.device,
                  inputs=[self.half_height, r.valid, r.pos, r.normal, r.count, r.width, r.height, r.thickness,
                          self._pose()],
                  outputs=[self._outputs()])

    def __repr__(self) -> str:
        return f"FrameCollision(half_height={self.half_height:g}, name={self.name!r})"
