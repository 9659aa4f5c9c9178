"""The minimum-time reference of each course of an env (:mod:`track_gen.min_time`), with the
vehicle limits of the task's quadrotor model.

The line is the course's own course line (``course.course_line``: a gate course's smooth line
through the gates, a band track's centerline); the standing start is the course start pose
projected onto it; the first lap ends at the lap line the progress component uses (the last
checkpoint's arc length), the flying lap is one full loop.
"""

from __future__ import annotations

import math

import numpy as np

from track_gen.min_time import LapReference, VehicleLimits, reference_laps

__all__ = ["vehicle_limits", "course_references", "project_on_line"]


def vehicle_limits(model, command: str = "rates", gravity: float = 9.81) -> VehicleLimits:
    """The point-mass limits of a :class:`~track_gen_isaac.quadrotor.QuadrotorModel`: collective thrust
    up to ``min(1 + thrust_range, thrust_to_weight)`` m g in rate mode (the command saturates
    first), ``thrust_to_weight`` m g in motor mode; no drag in the model, so no speed cap."""
    tw = float(model.thrust_to_weight)
    if command == "rates":
        tw = min(1.0 + float(model.thrust_range), tw)
    return VehicleLimits.from_thrust_to_weight(tw, gravity=gravity)


def project_on_line(points: np.ndarray, closed: bool, p: np.ndarray) -> float:
    """Arc length along the polyline ``points`` of the point nearest to ``p``."""
    a = np.asarray(points, np.float64)
    b = np.roll(a, -1, axis=0) if closed else a[1:]
    a = a if closed else a[:-1]
    d = b - a
    seg = np.linalg.norm(d, axis=1)
    t = np.clip(np.einsum("ij,ij->i", np.asarray(p, np.float64) - a, d) / np.maximum(seg**2, 1e-18), 0.0, 1.0)
    dist = np.linalg.norm(a + t[:, None] * d - p, axis=1)
    i = int(np.argmin(dist))
    total = float(seg.sum())
    s = float(np.concatenate([[0.0], np.cumsum(seg)])[i] + t[i] * seg[i])
    return 0.0 if closed and s > total - 1e-3 else s  # the closing point is the line's start


def course_references(ec, limits: VehicleLimits, ds: float = 0.05) -> list[LapReference | None]:
    """One :class:`~track_gen.min_time.LapReference` per env of an ``EnvCourse`` (None for an invalid course)."""
    line = ec.course.course_line.line
    pts, count, closed = line.points.numpy(), line.count.numpy(), line.closed.numpy()
    cps = ec.course.checkpoints
    cp_s, cp_n = cps.s.numpy(), cps.count.numpy()
    start = ec.course.result.start_pos.numpy()
    valid = ec.course.result.valid.numpy()
    out: list[LapReference | None] = []
    for e in range(ec.num_envs):
        n = int(count[e])
        if not valid[e] or n < 3 or cp_n[e] < 1:
            out.append(None)
            continue
        p = pts[e, :n].astype(np.float64)
        loop = bool(closed[e])
        s0 = project_on_line(p, loop, start[e].astype(np.float64))
        finish = float(cp_s[e, int(cp_n[e]) - 1])
        try:
            out.append(reference_laps(p, limits, closed=loop, start_s=s0, finish_s=finish, ds=ds))
        except ValueError:
            out.append(None)
    return out


def reference_row(ref: LapReference | None) -> dict:
    """The per-course reference columns."""
    if ref is None:
        return {"reference_first_lap_s": math.nan, "reference_lap_s": math.nan, "lap_length_m": math.nan,
                "reference_top_speed_mps": math.nan}
    top = ref.flying.v.max() if ref.flying is not None else ref.first.v.max()
    return {"reference_first_lap_s": ref.first_lap_s, "reference_lap_s": ref.flying_lap_s,
            "lap_length_m": ref.lap_length, "reference_top_speed_mps": float(top)}
