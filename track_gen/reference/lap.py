"""The minimum-time reference: the fastest a point mass with a thrust limit flies a course line.

For a course line (points ``[N, 3]`` in order of travel, closed or open) and a vehicle's limits,
:func:`reference_laps` gives the lap time no controller of that vehicle can beat by much:

* **first lap**: from rest at ``start_s`` (arc length along the line) to the lap line
  ``finish_s``, crossing it at any speed (a standing start, as an episode starts);
* **flying lap**: one lap of the periodic steady state (closed lines only): the speed at the lap
  line equals the speed one lap later.

Method (quasi-steady point mass on a fixed path, the classic lap-time "g-g" method):

1. The line is resampled every ``ds`` metres along a chord-length cubic spline through the points
   (periodic when closed), which gives a unit tangent ``t`` and a curvature vector ``k = kappa n``
   at each sample.
2. The vehicle is a point mass whose thrust acceleration ``f`` (any direction: the body can
   point its thrust anywhere) is bounded, ``|f| <= a_max``; gravity ``-g z`` acts too. Flying the
   path at speed ``v`` with tangential acceleration ``a_t`` needs ``f = a_t t + v^2 k + g z``.
   Split ``g z`` into ``g t_z t`` and a part ``h`` normal to the path: the bound reads
   ``(a_t + g t_z)^2 + |v^2 k + h|^2 <= a_max^2``.
3. Speed limit ``v_lim`` per sample: the largest ``v`` with ``|v^2 k + h| <= a_max`` (a quadratic
   in ``v^2``), capped by ``max_speed`` when the vehicle has drag (None: no cap).
4. A forward pass (accelerate as hard as the bound allows: ``a_t = -g t_z + sqrt(a_max^2 - |v^2 k + h|^2)``)
   and a backward pass (brake as hard as it allows) under ``v_lim``; their minimum is the
   fastest feasible speed profile, hence the minimum time along that path. Loops iterate both
   passes around the lap until the profile is periodic.
5. Time = sum over samples of ``2 ds / (v_i + v_{i+1})`` (exact for constant acceleration).

Assumptions: the path is fixed (here the course line: a racer that cuts inside the gate openings
or a band flies a shorter, smoother path and can be much faster, ~30 % on gates-v1's 1 m gates; the
benchmark's reference therefore optimises the path too, :mod:`track_gen.reference.path`, and keeps
this one as the "course-line reference"); the thrust direction changes instantly (no attitude or
body-rate dynamics, no motor lag, so the real vehicle is slower); no drag unless ``max_speed`` is
given; gravity constant. On a fixed path the result is the point mass's minimum time to within
the sampling (closed forms in ``tests/core/test_min_time.py``).

Pure numpy float64; no Warp, no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["VehicleLimits", "SampledPath", "SpeedProfile", "LapReference", "sample_path", "speed_limits",
           "accel_limits", "open_profile", "periodic_profile", "reference_laps", "profile_time"]

#: standard gravity [m/s^2]
GRAVITY = 9.81


@dataclass(frozen=True)
class VehicleLimits:
    """What bounds the point mass: ``max_accel`` thrust acceleration [m/s^2] (thrust limit / mass),
    ``gravity`` [m/s^2], ``max_speed`` [m/s] (a drag-limited top speed; None: no cap)."""

    max_accel: float
    gravity: float = GRAVITY
    max_speed: float | None = None

    def __post_init__(self):
        if not (math.isfinite(self.max_accel) and self.max_accel > self.gravity >= 0.0):
            raise ValueError(f"VehicleLimits: max_accel must be finite and > gravity ({self.gravity}) to hover, "
                             f"got {self.max_accel!r}")
        if self.max_speed is not None and not (math.isfinite(self.max_speed) and self.max_speed > 0):
            raise ValueError(f"VehicleLimits.max_speed: expected None or a finite speed > 0, got {self.max_speed!r}")

    @classmethod
    def from_thrust_to_weight(cls, thrust_to_weight: float, gravity: float = GRAVITY,
                              max_speed: float | None = None) -> VehicleLimits:
        """Limits of a vehicle whose collective thrust reaches ``thrust_to_weight`` times its weight."""
        return cls(float(thrust_to_weight) * gravity, gravity, max_speed)


@dataclass(frozen=True)
class SampledPath:
    """A path resampled every ~``ds`` metres: ``s`` [M] arc length, ``pos`` / ``tangent`` /
    ``curvature`` [M, 3] (curvature vector = kappa times the unit normal), ``u`` [M] the spline
    parameter (arc length along the input polyline), ``length`` [m] (a loop: with its closing
    stretch), ``closed`` (sample M-1 joins sample 0), ``period``: the polyline's length."""

    s: np.ndarray
    pos: np.ndarray
    tangent: np.ndarray
    curvature: np.ndarray
    u: np.ndarray
    length: float
    closed: bool
    period: float

    def arc(self, u0: float, u1: float) -> SampledPath:
        """The open stretch of samples from polyline arc length ``u0`` to ``u1``; on a loop it wraps
        around (``u1 <= u0`` adds one lap; ``u1 - u0`` may exceed a lap)."""
        n = len(self.u)
        if self.closed:
            u0 = u0 % self.period
            if u1 <= u0:
                u1 += self.period
            laps = int(math.ceil(u1 / self.period)) + 1
            uu = np.concatenate([self.u + k * self.period for k in range(laps)])
            idx = np.nonzero((uu >= u0 - 1e-9) & (uu <= u1 + 1e-9))[0] % n
        else:
            idx = np.nonzero((self.u >= u0 - 1e-9) & (self.u <= u1 + 1e-9))[0]
        if len(idx) < 2:
            raise ValueError(f"arc: the stretch [{u0}, {u1}] m holds fewer than 2 samples")
        pos = self.pos[idx]
        s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pos, axis=0), axis=1))])
        return SampledPath(s, pos, self.tangent[idx], self.curvature[idx], self.u[idx], float(s[-1]), False,
                           self.period)


def _clean(points: np.ndarray, closed: bool) -> np.ndarray:
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] not in (2, 3):
        raise ValueError(f"points: expected [N, 3] (or [N, 2]) coordinates, got shape {p.shape}")
    if p.shape[1] == 2:
        p = np.concatenate([p, np.zeros((len(p), 1))], axis=1)
    if not np.isfinite(p).all():
        raise ValueError("points: every coordinate must be finite")
    keep = np.concatenate([[True], np.linalg.norm(np.diff(p, axis=0), axis=1) > 1e-9])
    p = p[keep]
    if closed and len(p) > 1 and np.linalg.norm(p[-1] - p[0]) <= 1e-9:
        p = p[:-1]
    if len(p) < (3 if closed else 2):
        raise ValueError(f"points: a {'closed' if closed else 'open'} path needs at least {3 if closed else 2} "
                         f"distinct points, got {len(p)}")
    return p


def _spline_moments(p: np.ndarray, h: np.ndarray, closed: bool) -> np.ndarray:
    """Second derivatives ``M`` [N, 3] at the knots of the chord-length cubic spline (periodic or natural)."""
    n = len(p)
    if not closed and n == 2:
        return np.zeros_like(p)
    A = np.zeros((n, n))
    rhs = np.zeros_like(p)
    for i in range(n):
        if not closed and i in (0, n - 1):
            A[i, i] = 1.0
            continue
        hp, hn = h[(i - 1) % len(h)], h[i % len(h)]
        A[i, (i - 1) % n] += hp
        A[i, i] += 2.0 * (hp + hn)
        A[i, (i + 1) % n] += hn
        rhs[i] = 6.0 * ((p[(i + 1) % n] - p[i]) / hn - (p[i] - p[(i - 1) % n]) / hp)
    return np.linalg.solve(A, rhs)


def sample_path(points, closed: bool, ds: float = 0.05) -> SampledPath:
    """Resample a polyline every ~``ds`` metres along a chord-length cubic spline through its points."""
    if not (math.isfinite(ds) and ds > 0):
        raise ValueError(f"ds: expected a finite step > 0 [m], got {ds!r}")
    p = _clean(points, bool(closed))
    seg_end = np.roll(p, -1, axis=0) if closed else p[1:]
    seg_start = p if closed else p[:-1]
    h = np.linalg.norm(seg_end - seg_start, axis=1)
    knots = np.concatenate([[0.0], np.cumsum(h)])
    M = _spline_moments(p, h, bool(closed))
    period = float(knots[-1])
    m = max(int(math.ceil(period / ds)), 8)
    u = np.linspace(0.0, period, m, endpoint=not closed)
    i = np.clip(np.searchsorted(knots, u, side="right") - 1, 0, len(h) - 1)
    x, hi = u - knots[i], h[i]
    a, b = seg_start[i], seg_end[i]
    Ma, Mb = M[i], M[(i + 1) % len(M)]
    xa, xb, span = (hi - x)[:, None], x[:, None], hi[:, None]
    pos = Ma * xa**3 / (6 * span) + Mb * xb**3 / (6 * span) + (a / span - Ma * span / 6) * xa + (b / span - Mb * span / 6) * xb
    d1 = -Ma * xa**2 / (2 * span) + Mb * xb**2 / (2 * span) - (a / span - Ma * span / 6) + (b / span - Mb * span / 6)
    d2 = Ma * xa / span + Mb * xb / span
    speed = np.linalg.norm(d1, axis=1, keepdims=True)
    t = d1 / speed
    k = (d2 - np.sum(d2 * t, axis=1, keepdims=True) * t) / speed**2
    chords = np.linalg.norm(np.diff(np.concatenate([pos, pos[:1]]) if closed else pos, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(chords)])
    length = float(s[-1])
    return SampledPath(s[: len(pos)], pos, t, k, u, length, bool(closed), period)


def speed_limits(path: SampledPath, limits: VehicleLimits) -> np.ndarray:
    """``v_lim`` [M]: the largest speed at each sample with ``|v^2 k + h| <= a_max`` (``h``: gravity's
    part normal to the path), capped by ``limits.max_speed``."""
    g, a = limits.gravity, limits.max_accel
    t, k = path.tangent, path.curvature
    h = g * (np.array([0.0, 0.0, 1.0]) - t[:, 2:3] * t)
    kk = np.sum(k * k, axis=1)
    kh = np.sum(k * h, axis=1)
    c = np.sum(h * h, axis=1) - a * a  # < 0: the vehicle can hover
    with np.errstate(divide="ignore", invalid="ignore"):
        w = (-kh + np.sqrt(np.maximum(kh * kh - kk * c, 0.0))) / kk
    w = np.where(kk > 1e-12, w, np.inf)
    cap = np.inf if limits.max_speed is None else limits.max_speed**2
    return np.sqrt(np.minimum(w, cap))


def _coefficients(path: SampledPath, limits: VehicleLimits) -> tuple[list, list, list, list]:
    """Per sample: ``g t_z``, ``|k|^2``, ``2 k.h``, ``|h|^2`` (``|v^2 k + h|^2 = w^2 |k|^2 + w 2k.h + |h|^2``)."""
    g = limits.gravity
    t, k = path.tangent, path.curvature
    h = g * (np.array([0.0, 0.0, 1.0]) - t[:, 2:3] * t)
    return ((g * t[:, 2]).tolist(), np.sum(k * k, 1).tolist(), (2.0 * np.sum(k * h, 1)).tolist(),
            np.sum(h * h, 1).tolist())


def accel_limits(path: SampledPath, limits: VehicleLimits, j: int, w: float) -> tuple[float, float]:
    """(largest acceleration, largest deceleration) along the path at sample ``j`` flown at ``v^2 = w``."""
    gt, kk, kh2, h_sq = (c[j] for c in _coefficients(path, limits))
    r = math.sqrt(max(limits.max_accel**2 - (w * w * kk + w * kh2 + h_sq), 0.0))
    return -gt + r, gt + r


def _sweep(w: np.ndarray, pairs: np.ndarray, ds: np.ndarray, coef, a2: float, sign: float) -> float:
    """Propagate ``w = v^2`` along ``pairs`` (from, to) with step lengths ``ds``: ``w[to] <= w[from] +
    2 ds a``, ``a`` the largest acceleration (``sign = -1``: forward) or deceleration (``+1``:
    backward, pairs run against travel) at ``from``. Returns the largest decrease."""
    gt, kk, kh2, h_sq = coef
    wl = w.tolist()
    change = 0.0
    for (i, j), d in zip(pairs.tolist(), ds.tolist()):
        x = wl[i]
        r = math.sqrt(max(a2 - (x * x * kk[i] + x * kh2[i] + h_sq[i]), 0.0))
        bound = max(x + 2.0 * d * (sign * gt[i] + r), 0.0)
        if bound < wl[j]:
            change = max(change, wl[j] - bound)
            wl[j] = bound
    w[:] = wl
    return change


def _pairs(path: SampledPath, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Consecutive (from, to) sample pairs along ``order`` and the arc length between each pair."""
    pairs = np.stack([order[:-1], order[1:]], 1)
    lo = np.minimum(pairs[:, 0], pairs[:, 1])
    hi = np.maximum(pairs[:, 0], pairs[:, 1])
    ds = np.where(hi - lo == 1, path.s[hi] - path.s[lo], path.length - path.s[hi])  # else: the closing step
    return pairs, ds


def profile_time(s: np.ndarray, v: np.ndarray) -> float:
    """Time to fly samples at arc lengths ``s`` with speeds ``v`` (constant acceleration between samples)."""
    vs = v[:-1] + v[1:]
    if np.any(vs <= 0.0):
        return math.inf
    return float(np.sum(2.0 * np.diff(s) / vs))


@dataclass(frozen=True)
class SpeedProfile:
    """The fastest speed profile along a path: ``s`` / ``v`` / ``v_limit`` [M], ``time`` [s], ``length`` [m]."""

    s: np.ndarray
    v: np.ndarray
    v_limit: np.ndarray
    time: float
    length: float


def open_profile(path: SampledPath, limits: VehicleLimits, *, v_start: float = 0.0,
                 v_end: float | None = None) -> SpeedProfile:
    """Fly an open path from speed ``v_start`` to its end (``v_end``: None for any end speed)."""
    if path.closed:
        raise ValueError("open_profile: the path is closed; take path.arc(u0, u1) or use periodic_profile")
    vl = speed_limits(path, limits)
    w = vl**2
    w[0] = min(w[0], float(v_start) ** 2)
    if v_end is not None:
        w[-1] = min(w[-1], float(v_end) ** 2)
    n = len(w)
    coef, a2 = _coefficients(path, limits), limits.max_accel**2
    _sweep(w, *_pairs(path, np.arange(n)), coef, a2, -1.0)
    _sweep(w, *_pairs(path, np.arange(n - 1, -1, -1)), coef, a2, 1.0)
    v = np.sqrt(w)
    return SpeedProfile(path.s, v, vl, profile_time(path.s, v), path.length)


def periodic_profile(path: SampledPath, limits: VehicleLimits, *, max_rounds: int = 20) -> SpeedProfile:
    """The steady-state (periodic) fastest profile around a closed path; ``s``/``v`` end with the
    wrap-around sample (``s = length``, ``v = v[0]``)."""
    if not path.closed:
        raise ValueError("periodic_profile: the path is open")
    vl = speed_limits(path, limits)
    w = vl**2
    n = len(w)
    i0 = int(np.argmin(vl))  # the slowest corner: start the sweeps where the profile is tightest
    ring = (i0 + np.arange(2 * n + 1)) % n
    fwd, bwd = _pairs(path, ring), _pairs(path, ring[::-1])
    w = np.minimum(w, 1e12)  # a straight stretch has no limit of its own
    coef, a2 = _coefficients(path, limits), limits.max_accel**2
    for _ in range(max_rounds):
        change = max(_sweep(w, *fwd, coef, a2, -1.0), _sweep(w, *bwd, coef, a2, 1.0))
        if change <= 1e-12 * max(1.0, float(w.max())):
            break
    v = np.sqrt(w)
    s = np.concatenate([path.s, [path.length]])
    vv = np.concatenate([v, v[:1]])
    return SpeedProfile(s, vv, np.concatenate([vl, vl[:1]]), profile_time(s, vv), path.length)


@dataclass(frozen=True)
class LapReference:
    """Reference times of one course: ``first_lap_s`` (standing start to the lap line),
    ``flying_lap_s`` (periodic steady state; nan on an open course), their profiles, ``lap_length``
    (the loop) and ``first_lap_length`` [m], ``limits``."""

    first_lap_s: float
    flying_lap_s: float
    first: SpeedProfile
    flying: SpeedProfile | None
    lap_length: float
    first_lap_length: float
    limits: VehicleLimits


def reference_laps(points, limits: VehicleLimits, *, closed: bool = True, start_s: float = 0.0,
                   finish_s: float | None = None, ds: float = 0.05) -> LapReference:
    """Minimum-time reference of a course line (see the module docstring for the method).

    Args:
        points: [N, 3] course line in order of travel (env frame) [m].
        limits: the vehicle's :class:`VehicleLimits`.
        closed: the line is a loop (its last point joins the first).
        start_s: where the standing start is, as arc length along the polyline ``points`` [m].
        finish_s: the lap line (arc length [m]); None: one full lap on a loop, the end on an open line.
            On a loop a finish at or before the start wraps around.
        ds: resampling step [m].
    """
    path = sample_path(points, closed, ds)
    period = path.period
    if closed:
        u0 = float(start_s) % period
        u1 = u0 + period if finish_s is None else float(finish_s) % period
        first = open_profile(path.arc(u0, u1), limits)
        flying = periodic_profile(path, limits)
        return LapReference(first.time, flying.time, first, flying, path.length, first.length, limits)
    u1 = period if finish_s is None else float(finish_s)
    first = open_profile(path.arc(float(start_s), u1), limits)
    return LapReference(first.time, math.nan, first, None, path.length, first.length, limits)
