"""Band tracks in plain numpy, one env at a time: the algorithm of ``track.centerline.centerline_kernel``
and ``band_kernel``, vectorized over the points of one env, looped over envs.

Same steps as the Warp kernels, per attempt (up to ``max_attempts``):

1. ``control_points`` polar control points at jittered, evenly spaced angles, each at a random
   fraction of the largest radius that keeps it (and the band around it) inside the square; random
   rotation and direction.
2. A closed uniform cubic B-spline, sampled densely (``dense = K * max(2, ceil(2N / K))`` samples,
   the kernel's count) starting at the flattest knot; arc-length resampling to ``num_points``.
   A draw whose dense spline turns much tighter than allowed is redrawn before resampling when
   the library does that (``track.centerline.EARLY_REJECT``).
3. The half-width profile.
4. Validation with the definitions of ``track.validity.track_status``: length, band inside the
   square, turn radius, degenerate points, band self-overlap (same chunked bounding-box culling,
   same gap rule, same segment-segment distance).

Then the band quantities (tangent, normal, arc length, curvature, length, start pose).

It does not reproduce the Warp random stream (numpy's PCG64 draws the same number of uniforms per
attempt in the same roles), and it computes in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

LENGTH, BOUNDS, TURN, OVERLAP, DEGENERATE = 1, 2, 4, 8, 16
CHUNK = 16
TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class TrackParams:
    """The centerline parameters (defaults: ``track_gen.TrackGenConfig``'s)."""

    size: float = 10.0
    radius_min: float = 0.5
    radius_max: float = 1.0
    angle_jitter: float = 0.3
    half_width: float = 0.4
    half_width_variation: float = 0.0
    min_turn_radius: float = 0.6
    clearance: float = 0.1
    min_length: float = 10.0
    max_length: float = 40.0
    control_points: int = 8
    num_points: int = 256
    max_attempts: int = 16
    early_reject: float | None = None
    """Redraw before resampling when the dense spline's turn radius is below this fraction of the
    required one (not on the last attempt); None: no early reject."""

    @classmethod
    def from_config(cls, cfg) -> "TrackParams":
        """From a ``TrackGenConfig`` (or anything with the same attribute names); ``early_reject``
        follows ``track.centerline.EARLY_REJECT`` when the library defines it."""
        fields = [f for f in cls.__dataclass_fields__ if f != "early_reject"]
        return cls(**{f: getattr(cfg, f) for f in fields}, early_reject=library_early_reject())


def library_early_reject() -> float | None:
    try:
        from track_gen.generators.track import centerline as track_kernels
    except ImportError:
        return None
    value = getattr(track_kernels, "EARLY_REJECT", None)
    return None if value is None else float(value)


# -- shared geometry ----------------------------------------------------------------------------

def bspline_matrix(count: int, samples: int, span: float, closed: bool, include_end: bool) -> np.ndarray:
    """[M, count] matrix W with ``W @ ctrl`` = curve points at ``u = span * m / samples``.

    Uniform cubic B-spline basis; a closed curve wraps the control index, an open one clamps it
    (as ``curve.ctrl_index``). ``include_end`` adds the sample at ``u = span``.
    """
    m = np.arange(samples + 1 if include_end else samples, dtype=np.float64)
    u = span * m / samples
    k = np.floor(u).astype(np.int64)
    t = u - k
    t2, t3 = t * t, t * t * t
    basis = np.stack(
        [(1 - t) ** 3 / 6, (3 * t3 - 6 * t2 + 4) / 6, (-3 * t3 + 3 * t2 + 3 * t + 1) / 6, t3 / 6], axis=1
    )
    idx = k[:, None] + np.arange(-1, 3)[None, :]
    idx = np.mod(idx, count) if closed else np.clip(idx, 0, count - 1)
    w = np.zeros((len(u), count))
    np.add.at(w, (np.repeat(np.arange(len(u)), 4), idx.ravel()), basis.ravel())
    return w


def _cross(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _point_seg_dist(p, a, b):
    ab = b - a
    den = np.einsum("...i,...i->...", ab, ab)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(den > 0.0, np.clip(np.einsum("...i,...i->...", p - a, ab) / den, 0.0, 1.0), 0.0)
    return np.linalg.norm(p - (a + ab * t[..., None]), axis=-1)


def seg_seg_dist(a0, a1, b0, b1):
    """Distances between 2D segments [a0, a1] and [b0, b1] (rows), 0 where they cross (curve.seg_seg_dist)."""
    da, db, w = a1 - a0, b1 - b0, b0 - a0
    den = _cross(da, db)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = _cross(w, db) / den
        s = _cross(w, da) / den
    cross = (np.abs(den) > 1e-12) & (t >= 0) & (t <= 1) & (s >= 0) & (s <= 1)
    d = np.minimum(
        np.minimum(_point_seg_dist(a0, b0, b1), _point_seg_dist(a1, b0, b1)),
        np.minimum(_point_seg_dist(b0, a0, a1), _point_seg_dist(b1, a0, a1)),
    )
    return np.where(cross, 0.0, d)


# -- validation ---------------------------------------------------------------------------------

def track_status(xy: np.ndarray, hw: np.ndarray, size: float, min_turn_radius: float, clearance: float,
                 min_length: float, max_length: float) -> int:
    """Failure bits of one closed centerline ``xy`` [N, 2] with half widths ``hw`` [N]
    (the definitions of ``track.validity.track_status``; 0: valid)."""
    xy = np.asarray(xy, dtype=np.float64)
    hw = np.asarray(hw, dtype=np.float64)
    n = len(xy)
    half = 0.5 * size
    nxt = np.roll(xy, -1, axis=0)
    prv = np.roll(xy, 1, axis=0)
    b = nxt - xy
    lb = np.linalg.norm(b, axis=1)
    total = float(lb.sum())
    wmax = float(hw.max())
    status = 0
    if total < min_length or total > max_length:
        status |= LENGTH
    big_r = max(min_turn_radius, wmax)
    a = xy - prv
    la = np.roll(lb, 1)
    t = nxt - prv
    tl = np.linalg.norm(t, axis=1)
    degenerate = (tl <= 0.0) | (la <= 0.0) | (lb <= 0.0)
    if degenerate.any():
        status |= DEGENERATE
    ok = ~degenerate
    with np.errstate(divide="ignore", invalid="ignore"):
        tn = t / tl[:, None]
    nrm = np.stack([-tn[:, 1], tn[:, 0]], axis=1) * hw[:, None]
    ext = np.maximum(np.abs(xy + nrm).max(axis=1), np.abs(xy - nrm).max(axis=1))
    if (ext[ok] > half).any():
        status |= BOUNDS
    ang = np.abs(np.arctan2(_cross(a, b), np.einsum("ij,ij->i", a, b)))
    if (ang * big_r > 0.5 * (la + lb))[ok].any():
        status |= TURN
    if status:
        return status
    if _overlaps(xy, hw, total, wmax, clearance):
        status |= OVERLAP
    return status


def _overlaps(xy, hw, total, wmax, clearance) -> bool:
    """Band self-overlap (segments closer than both their half widths plus ``clearance`` and the
    turn-back bound ``2 / pi * g h - 2 h``), with the kernel's chunked bounding-box culling
    (CHUNK segments per box)."""
    n = len(xy)
    h = total / n
    reach = 2.0 * wmax + clearance
    nc = (n + CHUNK - 1) // CHUNK
    # chunk c's box covers points c*CHUNK .. c*CHUNK + CHUNK (its segments' end points), wrapped
    ext = np.concatenate([xy, xy[:1]], axis=0)
    ext = np.concatenate([ext, np.repeat(ext[-1:], nc * CHUNK + 1 - len(ext), axis=0)], axis=0)
    win = np.lib.stride_tricks.sliding_window_view(ext, CHUNK + 1, axis=0)[::CHUNK]  # [nc, 2, CHUNK+1]
    lo, hi = win.min(axis=2), win.max(axis=2)
    ca, cb = np.triu_indices(nc)
    dx = np.maximum(np.maximum(lo[ca, 0] - hi[cb, 0], lo[cb, 0] - hi[ca, 0]), 0.0)
    dy = np.maximum(np.maximum(lo[ca, 1] - hi[cb, 1], lo[cb, 1] - hi[ca, 1]), 0.0)
    near = dx * dx + dy * dy <= reach * reach
    ca, cb = ca[near], cb[near]
    if len(ca) == 0:
        return False
    off = np.arange(CHUNK)
    i = (ca[:, None, None] * CHUNK + off[None, :, None]) + 0 * off[None, None, :]
    j = (cb[:, None, None] * CHUNK + off[None, None, :]) + 0 * off[None, :, None]
    gap = j - i
    gap = np.minimum(gap, n - gap)
    keep = (i < n) & (j < n) & (j > i) & (gap >= 4)
    i, j, gap = i[keep], j[keep], gap[keep]
    if len(i) == 0:
        return False
    i1, j1 = (i + 1) % n, (j + 1) % n
    need = np.maximum(hw[i], hw[i1]) + np.maximum(hw[j], hw[j1]) + clearance
    bound = np.minimum(need, 2.0 / math.pi * gap * h - 2.0 * h)
    return bool((seg_seg_dist(xy[i], xy[i1], xy[j], xy[j1]) < bound).any())


# -- generation ---------------------------------------------------------------------------------

class NumpyTrackGenerator:
    """Generates band tracks one env at a time (vectorized numpy within an env)."""

    def __init__(self, params: TrackParams | None = None, seed: int = 0):
        self.p = p = params or TrackParams()
        k, n = p.control_points, p.num_points
        self.dense = k * max(2, math.ceil(2 * n / k))
        self.per_span = self.dense // k
        self.w = bspline_matrix(k, self.dense, float(k), closed=True, include_end=False)  # [dense, K]
        x = np.arange(n) / n
        self.wave_a = TWO_PI * 2.0 * x
        self.wave_b = TWO_PI * 3.0 * x
        self.targets = np.arange(n) / n
        self.kk = np.arange(k)
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def draw_control(self):
        """Control points [K, 2], the flattest knot and the two half-width phases of one draw."""
        p, k = self.p, self.p.control_points
        inner = 0.5 * p.size - p.half_width * (1.0 + p.half_width_variation)
        r = self.rng.random(2 + 2 * k + 2)
        a0 = TWO_PI * r[0]
        reverse = r[1] < 0.5
        jit, frac = r[2:2 + 2 * k:2], r[3:3 + 2 * k:2]
        theta = a0 + TWO_PI * (self.kk + p.angle_jitter * (2.0 * jit - 1.0)) / k
        c, s = np.cos(theta), np.sin(theta)
        rad = (p.radius_min + (p.radius_max - p.radius_min) * frac) * inner / np.maximum(np.abs(c), np.abs(s))
        ctrl = np.stack([rad * c, rad * s], axis=1)
        if reverse:
            ctrl = ctrl[::-1]
        # flattest knot (exact derivatives of the spline at u = k)
        cm, cp = np.roll(ctrl, 1, axis=0), np.roll(ctrl, -1, axis=0)
        v = 0.5 * (cp - cm)
        acc = cm - 2.0 * ctrl + cp
        speed = np.linalg.norm(v, axis=1)
        kbest = int(np.argmin(np.abs(_cross(v, acc)) / np.maximum(speed ** 3, 1e-12)))
        return ctrl, kbest, TWO_PI * r[-2], TWO_PI * r[-1]

    def dense_curve(self, ctrl, kbest):
        """The dense closed polyline from the flattest knot: (points, next points, segment lengths)."""
        pts = np.roll(self.w @ ctrl, -kbest * self.per_span, axis=0)
        nxt = np.roll(pts, -1, axis=0)
        return pts, nxt, np.linalg.norm(nxt - pts, axis=1)

    @staticmethod
    def min_turn_radius(pts, seg):
        """Smallest discrete turn radius of the dense polyline (curve.closed_length_and_min_radius)."""
        a = pts - np.roll(pts, 1, axis=0)
        b = np.roll(pts, -1, axis=0) - pts
        ang = np.abs(np.arctan2(_cross(a, b), np.einsum("ij,ij->i", a, b)))
        turning = ang > 0.0
        if not turning.any():
            return math.inf
        return float((0.5 * (np.roll(seg, 1) + seg)[turning] / ang[turning]).min())

    def resample(self, pts, nxt, seg, phase1, phase2):
        """Arc-length resampling to ``num_points`` (the kernel's walk) and the half-width profile."""
        p = self.p
        cum = np.cumsum(seg)
        tgt = cum[-1] * self.targets
        m = np.minimum(np.searchsorted(cum, tgt, side="left"), self.dense - 1)
        start = cum[m] - seg[m]
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(seg[m] > 0.0, np.clip((tgt - start) / seg[m], 0.0, 1.0), 0.0)
        xy = pts[m] + (nxt[m] - pts[m]) * f[:, None]
        hw = p.half_width * (1.0 + p.half_width_variation * (
            0.6 * np.sin(self.wave_a + phase1) + 0.4 * np.sin(self.wave_b + phase2)))
        return xy, hw

    def generate_one(self) -> dict:
        """One env: retries up to ``max_attempts``; returns the kept draw, its band and status."""
        p = self.p
        status, used = 0, 0
        reject_below = None
        if p.early_reject is not None:
            reject_below = p.early_reject * max(p.min_turn_radius, p.half_width * (1.0 + p.half_width_variation))
        ctrl = xy = hw = None
        for attempt in range(p.max_attempts):
            used = attempt + 1
            ctrl, kbest, phase1, phase2 = self.draw_control()
            pts, nxt, seg = self.dense_curve(ctrl, kbest)
            if (reject_below is not None and attempt < p.max_attempts - 1
                    and self.min_turn_radius(pts, seg) < reject_below):
                status = TURN
                continue
            xy, hw = self.resample(pts, nxt, seg, phase1, phase2)
            status = track_status(xy, hw, p.size, p.min_turn_radius, p.clearance, p.min_length, p.max_length)
            if status == 0:
                break
        out = band(xy)
        out.update(control=ctrl, xy=xy, half_width=hw, attempts=used, status=status, valid=int(status == 0))
        return out

    def generate(self, num_envs: int) -> list[dict]:
        return [self.generate_one() for _ in range(num_envs)]


def band(xy: np.ndarray) -> dict:
    """Tangent, normal, arc length, signed curvature, length and start pose (``band_kernel``)."""
    prv, nxt = np.roll(xy, 1, axis=0), np.roll(xy, -1, axis=0)
    a, b = xy - prv, nxt - xy
    t = nxt - prv
    t = t / np.linalg.norm(t, axis=1, keepdims=True)
    lb = np.linalg.norm(b, axis=1)
    la = np.roll(lb, 1)
    mean = 0.5 * (la + lb)
    with np.errstate(divide="ignore", invalid="ignore"):
        curv = np.where(mean > 0.0, np.arctan2(_cross(a, b), np.einsum("ij,ij->i", a, b)) / mean, 0.0)
    s = np.concatenate([[0.0], np.cumsum(lb)[:-1]])
    return dict(
        tangent=t, normal=np.stack([-t[:, 1], t[:, 0]], axis=1), s=s, curvature=curv, length=float(lb.sum()),
        start_pos=np.array([xy[0, 0], xy[0, 1], 0.0]), start_yaw=float(np.arctan2(t[0, 1], t[0, 0])),
    )
