"""A cubic spline with fixed knots as linear maps, and its geometry with a reverse-mode gradient.

The path optimiser (:mod:`track_gen.reference.path`) moves the spline's control points and needs the
lap time's gradient with respect to them. With the knots (the parameter value of each control
point) held fixed, the spline's position, first and second derivative at fixed sample parameters
are linear in the control points: ``pos = S0 X``, ``d1 = S1 X``, ``d2 = S2 X`` (:class:`SplineBasis`,
built once per course). :func:`geometry` turns them into what the speed profile reads (unit
tangent, curvature vector, chord lengths between samples) and :func:`geometry_vjp` carries a
gradient of those back to the control points.

The spline is the same interpolating cubic spline as :func:`track_gen.reference.lap.sample_path`
(natural ends when open, periodic when closed); only the knots differ: chord lengths of the
initial control points there, fixed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from track_gen.reference.lap import SampledPath

__all__ = ["SplineBasis", "Geometry", "spline_basis", "chord_knots", "geometry", "geometry_vjp", "sampled_path",
           "path_of"]


def chord_knots(points: np.ndarray, closed: bool) -> np.ndarray:
    """Chord-length knots of control points [n, 3]: n values from 0 (open), n + 1 (closed: the last
    one is the period, where the loop returns to point 0)."""
    p = np.asarray(points, np.float64)
    q = np.concatenate([p, p[:1]]) if closed else p
    h = np.linalg.norm(np.diff(q, axis=0), axis=1)
    if np.any(h <= 1e-9):
        raise ValueError("chord_knots: two consecutive control points coincide")
    return np.concatenate([[0.0], np.cumsum(h)])


def _moment_map(h: np.ndarray, n: int, closed: bool) -> np.ndarray:
    """[n, n]: second derivatives at the knots = this matrix times the control points."""
    A = np.zeros((n, n))
    R = np.zeros((n, n))
    for i in range(n):
        if not closed and i in (0, n - 1):
            A[i, i] = 1.0  # natural end: zero second derivative
            continue
        hp, hn = h[(i - 1) % len(h)], h[i % len(h)]
        A[i, (i - 1) % n] += hp
        A[i, i] += 2.0 * (hp + hn)
        A[i, (i + 1) % n] += hn
        R[i, (i + 1) % n] += 6.0 / hn
        R[i, i] -= 6.0 / hn + 6.0 / hp
        R[i, (i - 1) % n] += 6.0 / hp
    if not closed and n == 2:
        return np.zeros((n, n))
    return np.linalg.solve(A, R)


@dataclass(frozen=True)
class SplineBasis:
    """Linear maps [M, n] from control points to the spline at M fixed parameters ``u``:
    ``S0`` position, ``S1`` first and ``S2`` second derivative; ``closed`` (sample M-1 joins
    sample 0), ``period`` (the last knot)."""

    S0: np.ndarray
    S1: np.ndarray
    S2: np.ndarray
    u: np.ndarray
    closed: bool
    period: float


def spline_basis(knots: np.ndarray, closed: bool, ds: float | None = None, *,
                 u: np.ndarray | None = None) -> SplineBasis:
    """The basis of the spline with ``knots`` (see :func:`chord_knots`) sampled every ~``ds`` of
    parameter (the parameter is close to arc length while the control points stay near where the
    knots were measured), or at the given parameters ``u``."""
    knots = np.asarray(knots, np.float64)
    h = np.diff(knots)
    n = len(knots) - 1 if closed else len(knots)
    if n < (3 if closed else 2):
        raise ValueError(f"spline_basis: a {'closed' if closed else 'open'} spline needs at least "
                         f"{3 if closed else 2} control points, got {n}")
    period = float(knots[-1])
    if u is None:
        if ds is None or not (math.isfinite(ds) and ds > 0):
            raise ValueError(f"ds: expected a finite step > 0 [m], got {ds!r}")
        m = max(int(math.ceil(period / ds)), 8)
        u = np.linspace(0.0, period, m, endpoint=not closed)
    u = np.asarray(u, np.float64)
    m = len(u)
    Mm = _moment_map(h, n, closed)
    i = np.clip(np.searchsorted(knots, u, side="right") - 1, 0, len(h) - 1)
    x, hi = u - knots[i], h[i]
    xa, xb = hi - x, x
    ia, ib = i % n, (i + 1) % n
    rows = np.arange(m)
    S0, S1, S2 = (np.zeros((m, n)) for _ in range(3))
    # pos = Ma xa^3/6h + Mb xb^3/6h + (a/h - Ma h/6) xa + (b/h - Mb h/6) xb
    for S, ca, cb, cma, cmb in (
        (S0, xa / hi, xb / hi, xa**3 / (6 * hi) - hi * xa / 6, xb**3 / (6 * hi) - hi * xb / 6),
        (S1, -1.0 / hi, 1.0 / hi, -xa**2 / (2 * hi) + hi / 6, xb**2 / (2 * hi) - hi / 6),
        (S2, 0.0 * hi, 0.0 * hi, xa / hi, xb / hi),
    ):
        np.add.at(S, (rows, ia), ca)
        np.add.at(S, (rows, ib), cb)
        S += cma[:, None] * Mm[ia] + cmb[:, None] * Mm[ib]
    return SplineBasis(S0, S1, S2, u, bool(closed), period)


@dataclass
class Geometry:
    """The spline at its samples: ``pos``, ``d1``, ``d2`` [M, 3], ``speed`` = |d1| [M], unit
    ``tangent`` and ``curvature`` vector [M, 3], ``chord`` [M-1] (open) or [M] (closed: the last
    one closes the loop) and their unit directions ``chord_dir``."""

    pos: np.ndarray
    d1: np.ndarray
    d2: np.ndarray
    speed: np.ndarray
    tangent: np.ndarray
    curvature: np.ndarray
    chord: np.ndarray
    chord_dir: np.ndarray


def geometry(basis: SplineBasis, X: np.ndarray) -> Geometry:
    """Geometry of the spline through control points ``X`` [n, 3]."""
    pos, d1, d2 = basis.S0 @ X, basis.S1 @ X, basis.S2 @ X
    sp = np.linalg.norm(d1, axis=1)
    if np.any(sp <= 1e-12):
        raise ValueError("geometry: the spline stops (zero derivative) at a sample")
    t = d1 / sp[:, None]
    k = (d2 - np.sum(d2 * t, axis=1, keepdims=True) * t) / sp[:, None] ** 2
    nxt = np.roll(pos, -1, axis=0) if basis.closed else pos[1:]
    diff = nxt - (pos if basis.closed else pos[:-1])
    chord = np.linalg.norm(diff, axis=1)
    return Geometry(pos, d1, d2, sp, t, k, chord, diff / np.maximum(chord, 1e-300)[:, None])


def geometry_vjp(basis: SplineBasis, geo: Geometry, g_tangent: np.ndarray, g_curv: np.ndarray,
                 g_chord: np.ndarray) -> np.ndarray:
    """Gradient [n, 3] with respect to the control points of a scalar whose gradients with respect
    to ``geo.tangent``, ``geo.curvature`` [M, 3] and ``geo.chord`` are given."""
    t, k, d2, sp = geo.tangent, geo.curvature, geo.d2, geo.speed[:, None]
    # k = (d2 - (d2.t) t) / sp^2 ; t = d1 / sp
    proj = g_curv - np.sum(g_curv * t, axis=1, keepdims=True) * t
    g_d2 = proj / sp**2
    d2t = np.sum(d2 * t, axis=1, keepdims=True)
    g_t = g_tangent - (d2t * g_curv + np.sum(t * g_curv, axis=1, keepdims=True) * d2) / sp**2
    g_sp = -2.0 * np.sum(k * g_curv, axis=1, keepdims=True) / sp
    g_d1 = (g_t - np.sum(g_t * t, axis=1, keepdims=True) * t) / sp + g_sp * t
    e = g_chord[:, None] * geo.chord_dir
    g_pos = np.zeros_like(geo.pos)
    if basis.closed:
        g_pos += np.roll(e, 1, axis=0) - e
    else:
        g_pos[1:] += e
        g_pos[:-1] -= e
    return basis.S0.T @ g_pos + basis.S1.T @ g_d1 + basis.S2.T @ g_d2


def sampled_path(basis: SplineBasis, X: np.ndarray) -> SampledPath:
    """The :class:`~track_gen.reference.lap.SampledPath` the speed-profile functions read."""
    geo = geometry(basis, X)
    return path_of(basis, geo)


def path_of(basis: SplineBasis, geo: Geometry) -> SampledPath:
    """A :class:`~track_gen.reference.lap.SampledPath` of already computed geometry."""
    s = np.concatenate([[0.0], np.cumsum(geo.chord)])
    length = float(s[-1])
    return SampledPath(s[: len(geo.pos)], geo.pos, geo.tangent, geo.curvature, basis.u, length, basis.closed,
                       basis.period)
