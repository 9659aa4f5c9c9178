"""Gate courses in plain numpy, one env at a time: the algorithm of ``gates.layout.layout_kernel``
and ``frames_kernel``, vectorized over the points and gates of one env, looped over envs.

Per attempt (up to ``max_attempts``): polar control points (as a band track), a closed uniform
cubic B-spline sampled at ``control_points * dense_per_span`` segments, its length (a sprint,
``closed=False``, uses the first ``SPRINT_FRACTION`` of the loop), a gate count in [min_gates, max_gates], gates at jittered, evenly spaced arc lengths (the
dense-polyline walk), random heights, headings along the tangent plus jitter; validation with the
definitions of ``gates.validity.gates_status``. Then the start pose and the gate normals.

It does not reproduce the Warp random stream, and it computes in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bench.baselines.numpy_track import TWO_PI, bspline_matrix

SPACING, CROWDED, TURN, BOUNDS, GROUND = 1, 2, 4, 8, 16


def _library_sprint_fraction(default: float = 0.8) -> float:
    """``gates.layout.SPRINT_FRACTION`` when the library defines it (a sprint's share of the loop)."""
    try:
        from track_gen.generators.gates import layout as gate_kernels
    except ImportError:
        return default
    return float(getattr(gate_kernels, "SPRINT_FRACTION", default))


SPRINT_FRACTION = _library_sprint_fraction()


@dataclass(frozen=True)
class GateParams:
    """The layout and frame parameters (defaults: ``track_gen.GateGenConfig``'s, with a 1 m gate)."""

    size: float = 10.0
    min_gates: int = 6
    max_gates: int = 10
    min_spacing: float = 1.5
    max_spacing: float = 6.0
    height_min: float = 0.8
    height_max: float = 2.0
    yaw_jitter: float = 0.3
    max_turn: float = 1.2
    spacing_jitter: float = 0.3
    radius_min: float = 0.45
    radius_max: float = 0.9
    angle_jitter: float = 0.3
    control_points: int = 8
    closed: bool = True
    max_attempts: int = 16
    gate_width: float = 1.0
    gate_height: float = 0.0
    frame_thickness: float = 0.05
    dense_per_span: int = 32

    @classmethod
    def from_config(cls, cfg, dense_per_span: int = 32) -> "GateParams":
        """From a ``GateGenConfig`` (``dense_per_span`` is a stage parameter the config leaves at 32)."""
        fields = [f for f in cls.__dataclass_fields__ if f != "dense_per_span"]
        return cls(**{f: getattr(cfg, f) for f in fields}, dense_per_span=dense_per_span)


def wrap_angle(a):
    return a - TWO_PI * np.floor((a + math.pi) / TWO_PI)


def leg_angle(yaw, d):
    return np.abs(wrap_angle(np.arctan2(d[..., 1], d[..., 0]) - yaw))


def gates_status(pos: np.ndarray, yaw: np.ndarray, closed: bool, size: float, min_spacing: float,
                 max_spacing: float, max_turn: float, outer_half: float, bottom: float) -> int:
    """Failure bits of one course (``pos`` [G, 3], ``yaw`` [G] of its ``G = count`` gates), with the
    definitions of ``gates.validity.gates_status`` (0: valid)."""
    pos = np.asarray(pos, dtype=np.float64)
    yaw = np.asarray(yaw, dtype=np.float64)
    count = len(pos)
    status = 0
    k = np.arange(count if closed else count - 1)
    k1 = (k + 1) % count
    d = pos[k1] - pos[k]
    dist = np.linalg.norm(d, axis=1)
    if ((dist < min_spacing) | (dist > max_spacing)).any():
        status |= SPACING
    if ((leg_angle(yaw[k], d) > max_turn) | (leg_angle(yaw[k1], d) > max_turn)).any():
        status |= TURN
    if (np.maximum(np.abs(pos[:, 0]), np.abs(pos[:, 1])) + outer_half > 0.5 * size).any():
        status |= BOUNDS
    if (pos[:, 2] - bottom < 0.0).any():
        status |= GROUND
    sep = max(min_spacing, 2.0 * outer_half)
    a, b = np.triu_indices(count, 1)
    if (np.linalg.norm(pos[b] - pos[a], axis=1) < sep).any():
        status |= CROWDED
    return status


class NumpyGateGenerator:
    """Generates gate courses one env at a time (vectorized numpy within an env)."""

    def __init__(self, params: GateParams | None = None, seed: int = 0):
        self.p = p = params or GateParams()
        k = p.control_points
        self.dense = k * p.dense_per_span
        # dense + 1 samples of the closed curve (u = 0 .. K): the walk's segments m = 0 .. dense - 1
        self.w = bspline_matrix(k, self.dense, float(k), closed=True, include_end=True)
        self.kk = np.arange(k)
        self.rng = np.random.default_rng(seed)
        gh = p.gate_height if p.gate_height > 0.0 else p.gate_width
        self.outer_half = 0.5 * p.gate_width + p.frame_thickness
        self.bottom = 0.5 * gh + p.frame_thickness
        self.gate_h = gh

    def reseed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def draw(self):
        """One draw: (ctrl [K, 2], pos [count, 3], yaw [count], total length, dense points)."""
        p, k = self.p, self.p.control_points
        inner = 0.5 * p.size - self.outer_half
        r = self.rng.random(2 + 2 * k + 1 + 3 * p.max_gates)
        a0 = TWO_PI * r[0]
        reverse = r[1] < 0.5
        jit, frac = r[2:2 + 2 * k:2], r[3:3 + 2 * k:2]
        theta = a0 + TWO_PI * (self.kk + p.angle_jitter * (2.0 * jit - 1.0)) / k
        c, s = np.cos(theta), np.sin(theta)
        rad = (p.radius_min + (p.radius_max - p.radius_min) * frac) * inner / np.maximum(np.abs(c), np.abs(s))
        ctrl = np.stack([c * rad, s * rad], axis=1)
        if reverse:
            ctrl = ctrl[::-1]
        pts = self.w @ ctrl  # [dense + 1, 2]
        segv = pts[1:] - pts[:-1]
        seg = np.linalg.norm(segv, axis=1)
        cum = np.cumsum(seg)
        total = float(cum[-1]) * (1.0 if p.closed else SPRINT_FRACTION)
        rc = r[2 + 2 * k]
        count = min(p.min_gates + int(rc * (p.max_gates - p.min_gates + 1)), p.max_gates)
        g = np.arange(count)
        rg = r[3 + 2 * k:3 + 2 * k + 3 * count].reshape(count, 3)
        slots, offset = (float(count), 0.5) if p.closed else (float(count + 1), 1.0)
        tgt = (total / slots) * (g + offset + p.spacing_jitter * (rg[:, 0] - 0.5))
        m = np.minimum(np.searchsorted(cum, tgt, side="left"), self.dense - 1)
        start = cum[m] - seg[m]
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(seg[m] > 0.0, np.clip((tgt - start) / seg[m], 0.0, 1.0), 0.0)
        xy = pts[m] + segv[m] * f[:, None]
        height = p.height_min + (p.height_max - p.height_min) * rg[:, 1]
        pos = np.concatenate([xy, height[:, None]], axis=1)
        yaw = wrap_angle(np.arctan2(segv[m, 1], segv[m, 0]) + p.yaw_jitter * (2.0 * rg[:, 2] - 1.0))
        return ctrl, pos, yaw, total, pts

    def generate_one(self) -> dict:
        """One env: retries up to ``max_attempts``; returns the kept course, its frames and status."""
        p = self.p
        status, used = 0, 0
        for attempt in range(p.max_attempts):
            used = attempt + 1
            ctrl, pos, yaw, total, pts = self.draw()
            status = gates_status(pos, yaw, bool(p.closed), p.size, p.min_spacing, p.max_spacing, p.max_turn,
                                  self.outer_half, self.bottom)
            if status == 0:
                break
        count = len(pos)
        pos_out = np.zeros((p.max_gates, 3))
        yaw_out = np.zeros(p.max_gates)
        pos_out[:count], yaw_out[:count] = pos, yaw
        d0 = pts[1] - pts[0]
        normal = np.stack([np.cos(yaw_out), np.sin(yaw_out), np.zeros_like(yaw_out)], axis=1)
        return dict(
            control=ctrl, pos=pos_out, yaw=yaw_out, normal=normal, count=count, length=total,
            start_pos=np.array([pts[0, 0], pts[0, 1], pos_out[0, 2]]), start_yaw=float(np.arctan2(d0[1], d0[0])),
            width=p.gate_width, height=self.gate_h, thickness=p.frame_thickness,
            attempts=used, status=status, valid=int(status == 0),
        )

    def generate(self, num_envs: int) -> list[dict]:
        return [self.generate_one() for _ in range(num_envs)]
