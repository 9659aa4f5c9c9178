"""Independent float64 numpy reference for pole obstacles on band tracks, and for the pole
collision (a yawed box against upright cylinders). Nothing here imports track_gen.

Band: edges ``L_i = xy_i + hw_i n_i`` and ``R_i = xy_i - hw_i n_i`` with ``n_i`` the left normal of
``normalize(xy_{i+1} - xy_{i-1})`` (recomputed here in float64); a point is in the band when it is
inside an odd number of the two edge polygons (crossing numbers).

Pole rules (``band_pole_violations``), pole ``i`` at plan centre ``p`` with radius ``r``: ``p`` in the
band; distance to each edge polyline ``>= r``; the larger edge distance minus ``r`` ``>= gap``;
distance to the start line (segment ``R_0 -> L_0``) ``>= r + clearance``; centre distance to every
other pole ``>= r + r_j + gap``; base at z = 0; radius in its range; height minus the course height
at the nearest centerline point (plan view) in the height range; rows ``>= count`` zero.
"""

from __future__ import annotations

import numpy as np

__all__ = ["band_edges", "band_pole_violations", "crossings", "pole_box_clearance", "polyline_dist"]


def band_edges(xy, hw):
    """Left and right edge points [N, 2] of a closed centerline (float64 normals)."""
    p = np.asarray(xy, np.float64)
    t = np.roll(p, -1, 0) - np.roll(p, 1, 0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    n = np.stack([-t[:, 1], t[:, 0]], 1)
    w = np.asarray(hw, np.float64)[:, None]
    return p + w * n, p - w * n


def polyline_dist(p, pts):
    """Distance from point ``p`` to the closed polyline ``pts`` [N, 2]."""
    a, b = pts, np.roll(pts, -1, 0)
    d = b - a
    den = np.einsum("ij,ij->i", d, d)
    t = np.clip(np.einsum("ij,ij->i", p - a, d) / np.where(den > 0, den, 1.0), 0.0, 1.0)
    return float(np.min(np.linalg.norm(a + t[:, None] * d - p, axis=1)))


def crossings(p, pts) -> int:
    """How many edges of the closed polygon ``pts`` a ray from ``p`` towards +x crosses."""
    a, b = pts, np.roll(pts, -1, 0)
    straddle = (a[:, 1] > p[1]) != (b[:, 1] > p[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        x = a[:, 0] + (p[1] - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
    return int(np.count_nonzero(straddle & (p[0] < x)))


def _seg_dist(p, a, b):
    d = b - a
    t = np.clip(np.dot(p - a, d) / max(np.dot(d, d), 1e-300), 0.0, 1.0)
    return float(np.linalg.norm(a + t * d - p))


def band_pole_violations(opos, orad, oheight, ocount, xy, hw, z=None, *, gap, clearance, radius_range,
                         height_range, tol=1e-4) -> set[str]:
    """Names of the pole rules one band track breaks (``INSIDE``, ``GAP``, ``START``, ``APART``,
    ``RANGE``, ``PADDING``; empty: all hold). ``z``: the centerline heights of an elevated track."""
    out: set[str] = set()
    opos = np.asarray(opos, np.float64).reshape(-1, 3)
    orad = np.asarray(orad, np.float64).reshape(-1)
    oheight = np.asarray(oheight, np.float64).reshape(-1)
    m = int(ocount)
    if np.any(opos[m:] != 0) or np.any(orad[m:] != 0) or np.any(oheight[m:] != 0):
        out.add("PADDING")
    left, right = band_edges(xy, hw)
    pts = np.asarray(xy, np.float64)
    zz = np.zeros(len(pts)) if z is None else np.asarray(z, np.float64)
    for i in range(m):
        p, r = opos[i, :2], orad[i]
        if not np.all(np.isfinite(opos[i])):
            out.add("INSIDE")
            continue
        dl, dr = polyline_dist(p, left), polyline_dist(p, right)
        if (crossings(p, left) + crossings(p, right)) % 2 != 1 or min(dl, dr) < r - tol:
            out.add("INSIDE")
        if max(dl, dr) - r < gap - tol:
            out.add("GAP")
        if _seg_dist(p, right[0], left[0]) < r + clearance - tol:
            out.add("START")
        for j in range(i):
            if np.linalg.norm(p - opos[j, :2]) < r + orad[j] + gap - tol:
                out.add("APART")
        dc = np.linalg.norm(pts - p, axis=1)
        near = zz[dc <= dc.min() + tol]  # the nearest point's height (any point tied within tol)
        above = oheight[i] - near
        if (opos[i, 2] != 0.0 or not radius_range[0] - tol <= r <= radius_range[1] + tol
                or not np.any((above >= height_range[0] - tol) & (above <= height_range[1] + tol))):
            out.add("RANGE")
    return out


def pole_box_clearance(c, yaw, ha, hb, hh, opos, orad, oheight, ocount):
    """Signed distance (float64) from a box (centre ``c`` 3D, yaw, half extents ``ha``, ``hb``, half
    height ``hh``) to the nearest pole (upright cylinder on its base ``opos``, radius, height):
    the plan distance from the yawed rectangle to the pole axis minus the radius, combined with the
    height gap as ``|max(dxy, 0), max(dz, 0)|`` when apart in either, else ``max(dxy, dz)``.
    Returns ``(clearance, pole index)``; ``(inf, -1)`` without poles."""
    u = np.array([np.cos(yaw), np.sin(yaw)])
    v = np.array([-u[1], u[0]])
    best, idx = np.inf, -1
    for k in range(int(ocount)):
        q = np.asarray(opos[k], np.float64)
        rel = q[:2] - np.asarray(c[:2], np.float64)
        qx, qy = abs(rel @ u) - ha, abs(rel @ v) - hb
        dxy = np.hypot(max(qx, 0.0), max(qy, 0.0)) + min(max(qx, qy), 0.0) - orad[k]
        dz = abs(c[2] - (q[2] + 0.5 * oheight[k])) - (hh + 0.5 * oheight[k])
        sd = np.hypot(max(dxy, 0.0), max(dz, 0.0)) if (dxy > 0 or dz > 0) else max(dxy, dz)
        if sd < best:
            best, idx = sd, k
    return best, idx
