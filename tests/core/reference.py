"""Independent plain-numpy (float64) reference for the course contracts of track_gen.

Nothing here imports track_gen: every quantity is re-derived from the written definitions of
the constraints, so the tests compare the Warp kernels against a second implementation.

Band tracks (N centerline points ``p_i``, closed, indices cyclic; ``w_i`` the half width):

* LENGTH   ``L = sum_i |p_{i+1} - p_i|`` in ``[min_length, max_length]``.
* BOUNDS   with ``t_i = normalize(p_{i+1} - p_{i-1})``, ``n_i = (-t_y, t_x)``, both band edges
  ``p_i +- w_i n_i`` satisfy ``max(|x|, |y|) <= size / 2``.
* TURN     ``a = p_i - p_{i-1}``, ``b = p_{i+1} - p_i``, ``theta_i = |atan2(a x b, a . b)|``; the local
  radius ``0.5 (|a| + |b|) / theta_i`` is at least ``R = max(min_turn_radius, max_i w_i)``.
* OVERLAP  no two segments ``i = [p_i, p_{i+1}]`` and ``j`` with cyclic index gap
  ``g = min(|i - j|, N - |i - j|)`` have a 2D segment distance below both
  ``need = max(w_i, w_{i+1}) + max(w_j, w_{j+1}) + clearance`` and the turn-back bound
  ``2 / pi * g h - 2 h`` (``h = L / N``, the mean spacing). Within half a turn a curve of turn
  radius >= R keeps two points at least ``2 / pi`` times their arc distance apart, so only a
  centerline that bent back on itself can be that close; there is no window that grows with
  ``clearance``, so a larger clearance only adds violations.
* DEGENERATE  a zero chord (``|a|``, ``|b|`` or ``|p_{i+1} - p_{i-1}|`` is 0).
* GROUND   (elevated) ``z_i >= 0``.
* GRADE    (elevated) ``|z_{i+1} - z_i| <= 1.001 * max_grade * |p_{i+1} - p_i|`` (0.1 % slack).
* NONFINITE  a NaN or inf anywhere in the inputs, or a squared segment length beyond the
  float32 range (the device computes lengths in float32: finite points whose distances overflow
  it are non-finite geometry there). NONFINITE is reported alone.

Gate courses (``count`` gates; legs ``k -> k+1`` for ``k < count - 1``, plus ``count-1 -> 0``
when closed):

* SPACING  3D leg length in ``[min_spacing, max_spacing]``.
* TURN     the horizontal leg heading ``atan2(d_y, d_x)`` is within ``max_turn`` (wrapped) of
  both the leaving gate's and the entering gate's yaw.
* CROWDED  every pair of gates at least ``max(min_spacing, gate_width + 2 thickness)`` apart (3D).
* BOUNDS   ``max(|x|, |y|) + gate_width / 2 + thickness <= size / 2``.
* GROUND   ``z - (h / 2 + thickness) >= 0`` with ``h = gate_height``, or ``gate_width`` when 0.
* OPENING  ``gate_width <= 0``: a gate with no opening can never be passed.
* STACK    (split-S legs, flagged in ``stacked``; they skip TURN and CLIMB) the two gates lie within
  0.1 m of each other in plan view, their headings are opposite within 0.05 rad, and their
  heights differ by at least the outer frame height ``h + 2 thickness``.
* CLIMB    every other leg's ``atan2(|d_z|, |d_xy|)`` is at most ``max_climb`` (when given).
* CROSSING two legs sharing no gate whose plan segments properly cross (a non-zero cross
  product, both parameters in [0, 1]; shaded by ``tol`` like every bound) have heights there
  (linear along each leg) at least ``crossing_clearance`` apart.
* PADDING  rows ``>= count`` of ``pos`` and ``yaw`` (and legs past the last of ``stacked``) are not all zero.
* COUNT    ``count`` outside ``[2, capacity]``.
* NONFINITE  a NaN or inf in the used rows.

Tolerance. The library works in float32, this module in float64, so a course the library
accepted right at a bound may land a few ulps beyond it here. Every comparison
``value <= bound`` is therefore evaluated as ``value <= bound + rel_tol * max(|bound|, floor)``
(and ``>=`` symmetrically): a value within ``rel_tol`` (relative) of its bound counts as
satisfied. ``floor`` keeps the slack from vanishing at bounds near zero: 1 m for the ground
bounds and the overlap/crowding distances, 1 rad for angles, and 1 cm for the per-segment grade
bound (whose scale is a few centimetres). A *negative* ``rel_tol`` tightens every bound by the
same amount instead; the tests use it to confirm a library rejection (a course the library
refused must violate something even when every bound is shaded ``|rel_tol|`` towards failure).
Non-finite values always count as violations (every test is written as ``not (ok)``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["band_reference", "gate_normals", "gate_violations", "seg_seg_dist", "track_violations", "wrap_angle"]


# ---------------------------------------------------------------------------------------------
# small helpers
_F32_MAX = float(np.finfo(np.float32).max)


def _slack(bound, rel_tol, floor=1.0):
    return rel_tol * np.maximum(np.abs(bound), floor)


def _le(value, bound, rel_tol, floor=1.0) -> bool:
    """True when some element violates ``value <= bound`` (NaN violates)."""
    return bool(np.any(~(np.asarray(value) <= np.asarray(bound) + _slack(bound, rel_tol, floor))))


def _ge(value, bound, rel_tol, floor=1.0) -> bool:
    """True when some element violates ``value >= bound`` (NaN violates)."""
    return bool(np.any(~(np.asarray(value) >= np.asarray(bound) - _slack(bound, rel_tol, floor))))


def wrap_angle(a):
    """Wrap to [-pi, pi)."""
    return (np.asarray(a, np.float64) + np.pi) % (2.0 * np.pi) - np.pi


def _cross(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _point_seg_dist(p, a, b):
    ab = b - a
    den = np.einsum("...i,...i->...", ab, ab)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(den > 0.0, np.einsum("...i,...i->...", p - a, ab) / np.where(den > 0.0, den, 1.0), 0.0)
    t = np.clip(t, 0.0, 1.0)
    return np.linalg.norm(p - (a + ab * t[..., None]), axis=-1)


def seg_seg_dist(a0, a1, b0, b1):
    """Distance between 2D segments ``[a0, a1]`` and ``[b0, b1]`` (broadcast over leading axes).

    0 when they properly cross; otherwise the smallest endpoint-to-segment distance (which is
    also 0 for touching or collinear-overlapping segments).
    """
    o1 = _cross(a1 - a0, b0 - a0)
    o2 = _cross(a1 - a0, b1 - a0)
    o3 = _cross(b1 - b0, a0 - b0)
    o4 = _cross(b1 - b0, a1 - b0)
    crossing = (o1 * o2 < 0.0) & (o3 * o4 < 0.0)
    d = np.minimum(
        np.minimum(_point_seg_dist(a0, b0, b1), _point_seg_dist(a1, b0, b1)),
        np.minimum(_point_seg_dist(b0, a0, a1), _point_seg_dist(b1, a0, a1)),
    )
    return np.where(crossing, 0.0, d)


# ---------------------------------------------------------------------------------------------
# band tracks
_PAIRS: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _pairs(n):
    """Every segment pair ``i < j`` of a closed n-gon and its cyclic index gap (cached per n)."""
    if n not in _PAIRS:
        i, j = np.triu_indices(n, k=1)
        _PAIRS[n] = (i, j, np.minimum(j - i, n - (j - i)))
    return _PAIRS[n]


def band_reference(xy):
    """Derived band quantities of one closed centerline ``xy`` [N, 2], in float64.

    Returns ``(tangent [N,2], normal [N,2], s [N], curvature [N], length)``:
    ``tangent_i = normalize(p_{i+1} - p_{i-1})``, ``normal = (-t_y, t_x)``, ``s_i`` the chord
    length from point 0 to point i, ``length`` the closed sum, and
    ``curvature_i = atan2(a x b, a . b) / (0.5 (|a| + |b|))``.
    """
    p = np.asarray(xy, np.float64).reshape(-1, 2)
    nxt = np.roll(p, -1, axis=0)
    prv = np.roll(p, 1, axis=0)
    t = nxt - prv
    tl = np.linalg.norm(t, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tangent = t / tl[:, None]
    normal = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
    chord = np.linalg.norm(nxt - p, axis=1)
    s = np.concatenate([[0.0], np.cumsum(chord)[:-1]])
    length = float(chord.sum())
    a = p - prv
    b = nxt - p
    mean = 0.5 * (np.linalg.norm(a, axis=1) + np.linalg.norm(b, axis=1))
    ang = np.arctan2(_cross(a, b), np.einsum("ij,ij->i", a, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        curvature = np.where(mean > 0.0, ang / np.where(mean > 0.0, mean, 1.0), 0.0)
    return tangent, normal, s, curvature, length


def track_violations(
    xy,
    hw,
    *,
    size,
    min_turn_radius,
    clearance,
    min_length,
    max_length,
    z=None,
    max_grade=None,
    rel_tol=1e-4,
) -> set[str]:
    """Names of the constraints one closed band track violates (empty set: valid).

    ``xy`` [N, 2] centerline, ``hw`` [N] half widths, ``z`` [N] heights (elevated tracks only,
    with ``max_grade``). See the module docstring for the definitions and ``rel_tol``.
    """
    p = np.asarray(xy, np.float64).reshape(-1, 2)
    w = np.asarray(hw, np.float64).reshape(-1)
    n = p.shape[0]
    out: set[str] = set()
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(w)) and (z is None or np.all(np.isfinite(z)))):
        out.add("NONFINITE")
        return out
    nxt = np.roll(p, -1, axis=0)
    prv = np.roll(p, 1, axis=0)
    chord = np.linalg.norm(nxt - p, axis=1)
    total = float(chord.sum())
    if not (np.all(np.sum((nxt - p) ** 2, axis=1) <= _F32_MAX) and total <= _F32_MAX):
        out.add("NONFINITE")
        return out
    # LENGTH
    if _ge(total, min_length, rel_tol) or _le(total, max_length, rel_tol):
        out.add("LENGTH")
    a = p - prv
    b = nxt - p
    t = nxt - prv
    la = np.linalg.norm(a, axis=1)
    lb = np.linalg.norm(b, axis=1)
    tl = np.linalg.norm(t, axis=1)
    good = (la > 0.0) & (lb > 0.0) & (tl > 0.0)
    if not np.all(good):
        out.add("DEGENERATE")
    # BOUNDS
    tu = t[good] / tl[good, None]
    nrm = np.stack([-tu[:, 1], tu[:, 0]], axis=1) * w[good, None]
    pg = p[good]
    ext = np.maximum(np.abs(pg + nrm).max(axis=1), np.abs(pg - nrm).max(axis=1))
    if _le(ext, 0.5 * size, rel_tol):
        out.add("BOUNDS")
    # TURN
    big_r = max(float(min_turn_radius), float(w.max()))
    theta = np.abs(np.arctan2(_cross(a, b), np.einsum("ij,ij->i", a, b)))[good]
    mean = 0.5 * (la + lb)[good]
    with np.errstate(divide="ignore"):
        radius = np.where(theta > 0.0, mean / np.where(theta > 0.0, theta, 1.0), np.inf)
    if _ge(radius, big_r, rel_tol, floor=0.0):
        out.add("TURN")
    # OVERLAP
    if total > 0.0:
        h = total / n
        i, j, gap = _pairs(n)
        wseg = np.maximum(w, np.roll(w, -1))
        bound = np.minimum(wseg[i] + wseg[j] + clearance, 2.0 / math.pi * gap * h - 2.0 * h)
        sel = bound + _slack(bound, rel_tol) > 0.0
        i, j, bound = i[sel], j[sel], bound[sel]
        # exact distances only where the cheap lower bound |m_i - m_j| - (|s_i| + |s_j|) / 2
        # (segment midpoints m, lengths |s|) does not already clear the bound
        mid = 0.5 * (p + nxt)
        lower = np.linalg.norm(mid[i] - mid[j], axis=1) - 0.5 * (chord[i] + chord[j])
        near = ~(lower >= bound - _slack(bound, rel_tol))
        i, j, bound = i[near], j[near], bound[near]
        if i.size and _ge(seg_seg_dist(p[i], nxt[i], p[j], nxt[j]), bound, rel_tol):
            out.add("OVERLAP")
    # elevation
    if z is not None:
        zz = np.asarray(z, np.float64).reshape(-1)
        if _ge(zz, 0.0, rel_tol):
            out.add("GROUND")
        if max_grade is not None:
            rise = np.abs(np.roll(zz, -1) - zz)
            if _le(rise, 1.001 * float(max_grade) * chord, rel_tol, floor=0.01):
                out.add("GRADE")
    return out


# ---------------------------------------------------------------------------------------------
# gate courses
def _crossing(q, k, k1, clearance, tol) -> bool:
    """Some two legs (``q[k] -> q[k1]``) sharing no gate cross in plan view closer in height than
    ``clearance`` (module docstring; the parameter range shrinks by ``tol`` when lenient)."""
    n = len(k)
    a0, a1 = q[k], q[k1]
    for i in range(n):
        for j in range(i + 2, n):
            if k1[j] == k[i]:
                continue
            da, db = a1[i, :2] - a0[i, :2], a1[j, :2] - a0[j, :2]
            den = da[0] * db[1] - da[1] * db[0]
            if den == 0.0:
                continue
            w = a0[j, :2] - a0[i, :2]
            t = (w[0] * db[1] - w[1] * db[0]) / den
            u = (w[0] * da[1] - w[1] * da[0]) / den
            if tol <= t <= 1.0 - tol and tol <= u <= 1.0 - tol:
                za = a0[i, 2] + (a1[i, 2] - a0[i, 2]) * t
                zb = a0[j, 2] + (a1[j, 2] - a0[j, 2]) * u
                if _ge(abs(za - zb), clearance, tol):
                    return True
    return False


def gate_normals(yaw):
    """Unit gate normals ``(cos yaw, sin yaw, 0)`` in float64, shape ``yaw.shape + (3,)``."""
    y = np.asarray(yaw, np.float64)
    return np.stack([np.cos(y), np.sin(y), np.zeros_like(y)], axis=-1)


def gate_violations(
    pos,
    yaw,
    count,
    *,
    closed,
    size,
    min_spacing,
    max_spacing,
    max_turn,
    gate_width,
    gate_height,
    thickness,
    stacked=None,
    max_climb=None,
    crossing_clearance=1.5,
    tol=1e-4,
) -> set[str]:
    """Names of the constraints one gate course violates (empty set: valid).

    ``pos`` [G, 3] gate centres and ``yaw`` [G] headings of all G slots, ``count`` gates used.
    ``tol`` is the relative tolerance (``rel_tol`` of the module docstring; negative tightens).
    """
    pos_all = np.asarray(pos, np.float64).reshape(-1, 3)
    yaw_all = np.asarray(yaw, np.float64).reshape(-1)
    count = int(count)
    out: set[str] = set()
    if count < 2 or count > pos_all.shape[0]:
        out.add("COUNT")
        return out
    if np.any(pos_all[count:] != 0.0) or np.any(yaw_all[count:] != 0.0):
        out.add("PADDING")
    q = pos_all[:count]
    y = yaw_all[:count]
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(y))):
        out.add("NONFINITE")
        return out
    k = np.arange(count if closed else count - 1)
    k1 = (k + 1) % count
    d = q[k1] - q[k]
    dist = np.linalg.norm(d, axis=1)
    if _ge(dist, min_spacing, tol) or _le(dist, max_spacing, tol):
        out.add("SPACING")
    flags = np.zeros(pos_all.shape[0], bool) if stacked is None else np.asarray(stacked).reshape(-1) != 0
    if np.any(flags[len(k):]):
        out.add("PADDING")
    st = flags[: len(k)]
    free = ~st
    heading = np.arctan2(d[:, 1], d[:, 0])
    turn = np.maximum(np.abs(wrap_angle(heading - y[k])), np.abs(wrap_angle(heading - y[k1])))
    if _le(turn[free], max_turn, tol):
        out.add("TURN")
    plan = np.hypot(d[:, 0], d[:, 1])
    if max_climb is not None and _le(np.arctan2(np.abs(d[free, 2]), plan[free]), max_climb, tol):
        out.add("CLIMB")
    h_open = float(gate_height) if gate_height > 0.0 else float(gate_width)
    if np.any(st) and (_le(plan[st], 0.1, tol) or _le(np.abs(wrap_angle(y[k1[st]] - y[k[st]] - np.pi)), 0.05, tol)
                       or _ge(np.abs(d[st, 2]), h_open + 2.0 * float(thickness), tol)):
        out.add("STACK")
    if _crossing(q, k, k1, float(crossing_clearance), tol):
        out.add("CROSSING")
    sep = max(float(min_spacing), float(gate_width) + 2.0 * float(thickness))
    ii, jj = np.triu_indices(count, k=1)
    if _ge(np.linalg.norm(q[jj] - q[ii], axis=1), sep, tol):
        out.add("CROWDED")
    outer = 0.5 * float(gate_width) + float(thickness)
    if _le(np.abs(q[:, :2]).max(axis=1) + outer, 0.5 * float(size), tol):
        out.add("BOUNDS")
    if not gate_width > 0.0:
        out.add("OPENING")
    h = float(gate_height) if gate_height > 0.0 else float(gate_width)
    if _ge(q[:, 2] - (0.5 * h + float(thickness)), 0.0, tol):
        out.add("GROUND")
    return out
