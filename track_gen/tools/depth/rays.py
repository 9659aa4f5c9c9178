"""Exact ray-primitive intersections, the device functions of :class:`~track_gen.tools.depth.DepthCamera`.

Every function takes a ray ``o + t d`` (``d`` need not be unit; ``t`` is then in units of
``|d|``) and a lower bound ``tmin``, and returns the smallest ``t >= tmin`` at which the ray
meets the primitive's **surface**, or :data:`~track_gen.math.BIG` when there is none. Surfaces,
not solids: a ray starting inside a box meets its far face (so a camera whose near plane clips a
face sees the inside of the face behind it, as a depth sensor would).

* :func:`ray_slab` / :func:`ray_box` -- an axis-aligned box ``[lo, hi]`` (slab method; a
  direction component of exactly 0 is the limit of the slab, inside or out); the ``_inv``
  variants take the direction's inverse (:func:`inverse_dir`), computed once for several boxes;
* :func:`ray_cylinder` -- an upright finite cylinder (side and both caps);
* :func:`ray_plane_z` -- the horizontal plane ``z = h`` (two-sided);
* :func:`ray_wall` -- a vertical quad over the horizontal segment ``a -> b`` whose bottom edge runs
  from height ``za`` at ``a`` to ``zb`` at ``b``, ``height`` tall (two-sided);
* :func:`ray_aabb2` -- the parameter interval of a 2D box (the band walls' chunk pruning);
* :func:`ray_gate_frame` -- the four bars of a gate frame, in the gate's own frame;
* :func:`sphere_misses` -- the bounding-sphere test that skips a primitive for a ray.

Boundary rules (the numpy references in ``tests/core/test_depth.py`` follow them): a ray grazing
an edge or touching a face tangentially counts as a hit; a ray parallel to a wall or plane misses it.
"""

from __future__ import annotations

import warp as wp

from track_gen.math import BIG

__all__ = ["inverse_dir", "ray_aabb2", "ray_box", "ray_box_inv", "ray_cylinder", "ray_gate_frame", "ray_plane_z",
           "ray_slab", "ray_slab_inv", "ray_wall", "sphere_misses"]


@wp.func
def _slab1(o: float, d: float, inv: float, lo: float, hi: float, t0: float, t1: float):
    """Clip the interval (t0, t1) to one slab ``lo <= o + t d <= hi`` (``inv = 1 / d`` when d is
    not 0; unused otherwise); empty: t0 > t1."""
    if d == 0.0:
        if o < lo or o > hi:
            return BIG, -BIG
        return t0, t1
    a = (lo - o) * inv
    b = (hi - o) * inv
    return wp.max(t0, wp.min(a, b)), wp.min(t1, wp.max(a, b))


@wp.func
def inverse_dir(d: wp.vec3f) -> wp.vec3f:
    """``1 / d`` per component, 0 where the component is 0 (the slab functions branch on d there)."""
    return wp.vec3f(wp.where(d[0] != 0.0, 1.0 / d[0], 0.0), wp.where(d[1] != 0.0, 1.0 / d[1], 0.0),
                    wp.where(d[2] != 0.0, 1.0 / d[2], 0.0))


@wp.func
def ray_slab_inv(o: wp.vec3f, d: wp.vec3f, inv: wp.vec3f, lo: wp.vec3f, hi: wp.vec3f):
    """:func:`ray_slab` with the direction's inverse precomputed (:func:`inverse_dir`)."""
    t0, t1 = _slab1(o[0], d[0], inv[0], lo[0], hi[0], -BIG, BIG)
    t0, t1 = _slab1(o[1], d[1], inv[1], lo[1], hi[1], t0, t1)
    t0, t1 = _slab1(o[2], d[2], inv[2], lo[2], hi[2], t0, t1)
    return t0, t1


@wp.func
def ray_slab(o: wp.vec3f, d: wp.vec3f, lo: wp.vec3f, hi: wp.vec3f):
    """``(t_enter, t_exit)`` of the ray's line in the box ``[lo, hi]`` (empty when t_enter > t_exit)."""
    return ray_slab_inv(o, d, inverse_dir(d), lo, hi)


@wp.func
def ray_box_inv(o: wp.vec3f, d: wp.vec3f, inv: wp.vec3f, lo: wp.vec3f, hi: wp.vec3f, tmin: float) -> float:
    """:func:`ray_box` with the direction's inverse precomputed (:func:`inverse_dir`)."""
    t0, t1 = ray_slab_inv(o, d, inv, lo, hi)
    if t0 > t1:
        return BIG
    if t0 >= tmin:
        return t0
    if t1 >= tmin:
        return t1
    return BIG


@wp.func
def ray_box(o: wp.vec3f, d: wp.vec3f, lo: wp.vec3f, hi: wp.vec3f, tmin: float) -> float:
    """Nearest ``t >= tmin`` on the surface of the axis-aligned box ``[lo, hi]``, else BIG."""
    return ray_box_inv(o, d, inverse_dir(d), lo, hi, tmin)


@wp.func
def ray_cylinder(o: wp.vec3f, d: wp.vec3f, c: wp.vec2f, r: float, z0: float, z1: float, tmin: float) -> float:
    """Nearest ``t >= tmin`` on the upright cylinder of axis ``c`` (xy), radius ``r``, heights
    ``[z0, z1]``: its side, or its caps ``z = z0`` / ``z = z1`` (discs of radius r), else BIG."""
    best = float(BIG)
    if not (r > 0.0) or not (z1 > z0):
        return best
    mx = o[0] - c[0]
    my = o[1] - c[1]
    a = d[0] * d[0] + d[1] * d[1]
    hb = mx * d[0] + my * d[1]  # b / 2
    cc = mx * mx + my * my - r * r
    disc = hb * hb - a * cc
    if a > 0.0 and disc >= 0.0:
        sq = wp.sqrt(disc)
        q = -(hb + wp.where(hb < 0.0, -sq, sq))  # the stable root pair: q / a and cc / q
        ta = q / a
        tb = float(BIG)
        if q != 0.0:
            tb = cc / q
        else:
            tb = ta
        t_lo = wp.min(ta, tb)
        t_hi = wp.max(ta, tb)
        z = o[2] + t_lo * d[2]
        if t_lo >= tmin and z >= z0 and z <= z1:
            best = t_lo
        else:
            z = o[2] + t_hi * d[2]
            if t_hi >= tmin and z >= z0 and z <= z1:
                best = t_hi
    if d[2] != 0.0:
        for k in range(2):
            zc = z0
            if k == 1:
                zc = z1
            t = (zc - o[2]) / d[2]
            if t >= tmin and t < best:
                px = mx + t * d[0]
                py = my + t * d[1]
                if px * px + py * py <= r * r:
                    best = t
    return best


@wp.func
def ray_plane_z(o: wp.vec3f, d: wp.vec3f, h: float, tmin: float) -> float:
    """``t >= tmin`` where the ray meets the plane ``z = h`` (either side), else BIG."""
    if d[2] == 0.0:
        return BIG
    t = (h - o[2]) / d[2]
    if t >= tmin:
        return t
    return BIG


@wp.func
def ray_wall(o: wp.vec3f, d: wp.vec3f, a: wp.vec2f, b: wp.vec2f, za: float, zb: float, height: float,
             tmin: float) -> float:
    """``t >= tmin`` where the ray meets the vertical quad over segment ``a -> b`` (bottom edge
    from ``za`` at a to ``zb`` at b, ``height`` tall, either side), else BIG."""
    ex = b[0] - a[0]
    ey = b[1] - a[1]
    den = d[0] * ey - d[1] * ex  # cross(d.xy, e)
    if den == 0.0:
        return BIG
    wx = a[0] - o[0]
    wy = a[1] - o[1]
    t = (wx * ey - wy * ex) / den  # cross(a - o, e) / cross(d, e)
    s = (wx * d[1] - wy * d[0]) / den  # cross(a - o, d) / cross(d, e)
    if t < tmin or s < 0.0 or s > 1.0:
        return BIG
    zb0 = za + s * (zb - za)
    z = o[2] + t * d[2]
    if z < zb0 or z > zb0 + height:
        return BIG
    return t


@wp.func
def ray_aabb2(o: wp.vec3f, d: wp.vec3f, box: wp.vec4f):
    """``(t_enter, t_exit)`` of the ray's horizontal projection in the 2D box (min x, min y,
    max x, max y); empty when t_enter > t_exit."""
    t0, t1 = _slab1(o[0], d[0], wp.where(d[0] != 0.0, 1.0 / d[0], 0.0), box[0], box[2], -BIG, BIG)
    t0, t1 = _slab1(o[1], d[1], wp.where(d[1] != 0.0, 1.0 / d[1], 0.0), box[1], box[3], t0, t1)
    return t0, t1


@wp.func
def ray_gate_frame(ol: wp.vec3f, dl: wp.vec3f, ex: float, ey: float, ez: float, half_w: float, half_h: float,
                   tmin: float, best: float) -> float:
    """The nearest surface ``t`` in ``[tmin, best)`` of a gate frame's four bars, boxes in the
    gate's frame (``ol``, ``dl``: the ray there; frame half extents ``ex, ey, ez``, opening half
    width ``half_w`` and height ``half_h``); else ``best``."""
    inv = inverse_dir(dl)
    t0, t1 = ray_slab_inv(ol, dl, inv, wp.vec3f(-ex, -ey, -ez), wp.vec3f(ex, ey, ez))  # the whole frame
    if t0 > t1 or t1 < tmin or t0 >= best:
        return best
    top = ray_box_inv(ol, dl, inv, wp.vec3f(-ex, -ey, half_h), wp.vec3f(ex, ey, ez), tmin)
    bottom = ray_box_inv(ol, dl, inv, wp.vec3f(-ex, -ey, -ez), wp.vec3f(ex, ey, -half_h), tmin)
    plus_lat = ray_box_inv(ol, dl, inv, wp.vec3f(half_w, -ey, -half_h), wp.vec3f(ex, ey, half_h), tmin)
    minus_lat = ray_box_inv(ol, dl, inv, wp.vec3f(-ex, -ey, -half_h), wp.vec3f(-half_w, ey, half_h), tmin)
    best = wp.min(best, top)
    best = wp.min(best, bottom)
    best = wp.min(best, plus_lat)
    best = wp.min(best, minus_lat)
    return best


@wp.func
def sphere_misses(o: wp.vec3f, d: wp.vec3f, c: wp.vec3f, rad: float, tmin: float, best: float) -> bool:
    """True when the ray (``d`` unit) surely meets nothing inside the sphere (c, rad) in [tmin, best)."""
    r = c - o
    tc = wp.dot(r, d)
    m2 = wp.dot(r, r) - tc * tc
    return m2 > rad * rad or tc - rad >= best or tc + rad < tmin
