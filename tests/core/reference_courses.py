"""Independent float64 numpy reference for the harder courses (issue 14): pole obstacles, the gate
course line they keep clear of, and the shape properties the difficulty promises.

Nothing here imports track_gen. Definitions:

* course line (what ``CenterlineFromGates`` draws): per leg a cubic Hermite from gate ``a`` to gate
  ``b`` with end tangents ``L * n_a`` and ``L * n_b`` (``n`` the unit gate normal ``(cos yaw, sin
  yaw, 0)``, ``L = |b - a|``); a loop has legs ``k -> k+1`` and the closing one; a sprint starts
  with the run-up leg from the start pose (tangent along ``start_yaw``), then ``k -> k+1``.
  Sampled densely here (``samples`` per leg).
* obstacle clearances (OBSTACLE), pole ``i`` at plan centre ``p`` with radius ``r``:
  ``max(|p_x|, |p_y|) + r <= arena / 2``; plan distance to every gate frame's footprint (a
  ``(w + 2 t) x t`` rectangle centred on the gate, long side along the gate's lateral axis)
  ``>= r + clearance``; plan distance to every course-line sample ``>= r + clearance`` (less the
  sampling error, ``L / samples`` per leg at most, credited to the library); plan distance to the
  start position ``>= r + clearance``; to every other pole ``>= r + r_j``; base at z = 0; radius
  and height inside their ranges; rows ``>= count`` zero.
* split-S column (COLUMN): a leg of the course line joining neither gate of a stacked pair never
  passes through either gate's frame footprint (plan view) at a height within ``[min z - b, max z +
  b]`` (``b`` half the outer frame height); legs sampled densely, pieces clipped exactly.
* shape metrics: *self-crossing* = two legs sharing no gate properly cross in plan view;
  *elevation range* = max - min gate height; *split-S* = two consecutive gates within 0.1 m in plan
  view, headings opposite (within 0.05 rad) and heights at least the outer frame height apart.
"""

from __future__ import annotations

import numpy as np

from .reference import _ge, _le, wrap_angle

__all__ = ["column_violations", "course_legs", "course_line_plan", "leg_points", "obstacle_violations", "self_crossing",
           "elevation_range", "has_split_s"]


def _dir(yaw):
    return np.array([np.cos(yaw), np.sin(yaw), 0.0])


def course_legs(pos, yaw, count, closed, start_pos, start_yaw):
    """The course line's legs ``(a, da, b, db, ga, gb)``: end points, unit end directions and the
    gate indices they join (``ga = -1`` for a sprint's run-up from the start pose)."""
    q = np.asarray(pos, np.float64)[: int(count)]
    y = np.asarray(yaw, np.float64)[: int(count)]
    n = len(q)
    if closed:
        return [(q[k], _dir(y[k]), q[(k + 1) % n], _dir(y[(k + 1) % n]), k, (k + 1) % n) for k in range(n)]
    legs = [(np.asarray(start_pos, np.float64), _dir(float(start_yaw)), q[0], _dir(y[0]), -1, 0)]
    return legs + [(q[k - 1], _dir(y[k - 1]), q[k], _dir(y[k]), k - 1, k) for k in range(1, n)]


def leg_points(a, da, b, db, samples):
    """``samples + 1`` points (3D) of one Hermite leg (end tangents ``L da``, ``L db``, L = |b - a|)."""
    u = np.linspace(0.0, 1.0, samples + 1)[:, None]
    h00, h10, h01, h11 = 2 * u**3 - 3 * u**2 + 1, u**3 - 2 * u**2 + u, -2 * u**3 + 3 * u**2, u**3 - u**2
    L = np.linalg.norm(b - a)
    return h00 * a + h10 * L * da + h01 * b + h11 * L * db


def course_line_plan(pos, yaw, count, closed, start_pos, start_yaw, samples=64):
    """Dense plan-view samples of the course line and the chord length of each sample's leg."""
    pts, lens = [], []
    for a, da, b, db, _, _ in course_legs(pos, yaw, count, closed, start_pos, start_yaw):
        pts.append(leg_points(a, da, b, db, samples)[:, :2])
        lens.append(np.full(samples + 1, np.linalg.norm(b - a)))
    return np.concatenate(pts), np.concatenate(lens)


def _clip(a, b, h):
    """Parameter interval ``[t0, t1]`` (per row) of segments ``a -> b`` inside ``|x| <= h[0], |y| <= h[1]``."""
    t0 = np.zeros(len(a))
    t1 = np.ones(len(a))
    for ax in range(2):
        d = b[:, ax] - a[:, ax]
        with np.errstate(divide="ignore", invalid="ignore"):
            u = (-h[ax] - a[:, ax]) / d
            v = (h[ax] - a[:, ax]) / d
        move = d != 0.0
        t0 = np.where(move, np.maximum(t0, np.minimum(u, v)), t0)
        t1 = np.where(move, np.minimum(t1, np.maximum(u, v)), t1)
        t1 = np.where(~move & (np.abs(a[:, ax]) > h[ax]), -1.0, t1)
    return t0, t1


def column_violations(pos, yaw, count, stacked, *, closed, start_pos, start_yaw, gate_width, gate_height,
                      thickness, samples=512, tol=1e-4, ztol=None) -> set[str]:
    """``{"COLUMN"}`` when a course-line leg that joins neither gate of a stacked (split-S) pair
    passes through one of the pair's frame footprints (plan view: the ``(w + 2 t) x t`` rectangle)
    at a height within the column, ``[min z - b, max z + b]`` (``b`` = half the outer frame height).
    Legs are sampled densely; each piece between samples is clipped against the footprint shrunk
    by ``tol`` and its (linear) height range there compared with the column shrunk by ``ztol``
    (default ``tol``)."""
    q = np.asarray(pos, np.float64)[: int(count)]
    y = np.asarray(yaw, np.float64)[: int(count)]
    n = len(q)
    stk = np.asarray(stacked)[:n]
    gh = gate_height if gate_height > 0.0 else gate_width
    half = np.array([0.5 * thickness, 0.5 * gate_width + thickness]) - tol
    bottom = 0.5 * gh + thickness
    legs = course_legs(pos, yaw, count, closed, start_pos, start_yaw)
    ztol = tol if ztol is None else ztol
    for k in np.flatnonzero(stk):
        k1 = (k + 1) % n
        zlo, zhi = min(q[k, 2], q[k1, 2]) - bottom + ztol, max(q[k, 2], q[k1, 2]) + bottom - ztol
        for a, da, b, db, ga, gb in legs:
            if {ga, gb} & {k, k1}:
                continue
            pts = leg_points(a, da, b, db, samples)
            for g in (k, k1):
                nd = np.array([np.cos(y[g]), np.sin(y[g])])
                rel = pts[:, :2] - q[g, :2]
                loc = np.stack([rel @ nd, -rel[:, 0] * nd[1] + rel[:, 1] * nd[0]], axis=1)
                t0, t1 = _clip(loc[:-1], loc[1:], half)
                hit = t0 <= t1
                if not hit.any():
                    continue
                z0, z1 = pts[:-1, 2][hit], pts[1:, 2][hit]
                za, zb = z0 + (z1 - z0) * t0[hit], z0 + (z1 - z0) * t1[hit]
                if np.any((np.maximum(za, zb) >= zlo) & (np.minimum(za, zb) <= zhi)):
                    return {"COLUMN"}
    return set()


def _rect_dist(p, c, yaw, half_w, half_t):
    nd = np.array([np.cos(yaw), np.sin(yaw)])
    rel = p - c
    along = abs(rel @ nd) - half_t
    lat = abs(-rel[0] * nd[1] + rel[1] * nd[0]) - half_w
    return np.hypot(max(along, 0.0), max(lat, 0.0)) + min(max(along, lat), 0.0)


def obstacle_violations(opos, orad, oheight, ocount, pos, yaw, count, *, closed, start_pos, start_yaw, arena,
                        gate_width, thickness, clearance, radius_range, height_range, samples=256,
                        tol=1e-4) -> set[str]:
    """Names of the obstacle rules one course breaks (``OBSTACLE``, ``PADDING``; empty: all hold)."""
    out: set[str] = set()
    opos = np.asarray(opos, np.float64).reshape(-1, 3)
    orad = np.asarray(orad, np.float64).reshape(-1)
    oheight = np.asarray(oheight, np.float64).reshape(-1)
    m = int(ocount)
    if np.any(opos[m:] != 0) or np.any(orad[m:] != 0) or np.any(oheight[m:] != 0):
        out.add("PADDING")
    if m == 0:
        return out
    line, lens = course_line_plan(pos, yaw, count, closed, start_pos, start_yaw, samples)
    err = 2.0 * lens / samples  # a line point is within 2 L / samples of a sample (|p'| <= 3.5 L)
    q = np.asarray(pos, np.float64)[: int(count)]
    y = np.asarray(yaw, np.float64)[: int(count)]
    half_w, half_t = 0.5 * gate_width + thickness, 0.5 * thickness
    sp = np.asarray(start_pos, np.float64)[:2]
    for i in range(m):
        p, r = opos[i, :2], orad[i]
        bad = (not np.all(np.isfinite(opos[i]))) or _ge(-abs(opos[i, 2]), 0.0, tol)
        bad |= _ge(r, radius_range[0], tol) or _le(r, radius_range[1], tol)
        bad |= _ge(oheight[i], height_range[0], tol) or _le(oheight[i], height_range[1], tol)
        bad |= _le(np.abs(p).max() + r, 0.5 * arena, tol)
        frames = [_rect_dist(p, q[g, :2], y[g], half_w, half_t) for g in range(len(q))]
        bad |= _ge(np.array(frames), r + clearance, tol)
        bad |= _ge(np.linalg.norm(line - p, axis=1) + err, r + clearance, tol)
        bad |= _ge(np.linalg.norm(p - sp), r + clearance, tol)
        for j in range(i):
            bad |= _ge(np.linalg.norm(p - opos[j, :2]), r + orad[j], tol)
        if bad:
            out.add("OBSTACLE")
    return out


def self_crossing(pos, count, closed) -> bool:
    """Whether two legs sharing no gate properly cross in plan view."""
    q = np.asarray(pos, np.float64)[: int(count), :2]
    n = len(q)
    legs = n if closed else n - 1
    for i in range(legs):
        for j in range(i + 2, legs):
            if (j + 1) % n == i:
                continue
            a0, a1, b0, b1 = q[i], q[(i + 1) % n], q[j], q[(j + 1) % n]
            da, db, w = a1 - a0, b1 - b0, b0 - a0
            den = da[0] * db[1] - da[1] * db[0]
            if den == 0.0:
                continue
            t = (w[0] * db[1] - w[1] * db[0]) / den
            u = (w[0] * da[1] - w[1] * da[0]) / den
            if 0.0 < t < 1.0 and 0.0 < u < 1.0:
                return True
    return False


def elevation_range(pos, count) -> float:
    z = np.asarray(pos, np.float64)[: int(count), 2]
    return float(z.max() - z.min())


def has_split_s(pos, yaw, count, closed, outer_height) -> bool:
    """Whether two consecutive gates are stacked and passed in opposite directions."""
    q = np.asarray(pos, np.float64)[: int(count)]
    y = np.asarray(yaw, np.float64)[: int(count)]
    n = len(q)
    for k in range(n if closed else n - 1):
        k1 = (k + 1) % n
        d = q[k1] - q[k]
        if (np.hypot(d[0], d[1]) <= 0.1 and abs(wrap_angle(y[k1] - y[k] - np.pi)) <= 0.05
                and abs(d[2]) >= outer_height - 1e-6):
            return True
    return False
