"""Per-course rows and suite aggregates with 95% bootstrap intervals.

Per course (one run from the start pose): ``completed`` (all gates of the suite's laps, in
order: the run ended by the lap count), ``gates`` passed (checkpoints on a band track),
``first_lap_s`` (start to the first lap event, a standing start), ``lap_s`` (the flying lap:
first to second lap event), both at the policy step's resolution; mean and top speed; the
ending (``laps``, ``time_out`` or the failure term: ``crash``, ``missed``, ``off_course`` /
``off_track``, ``altitude``); the reference times and ``lap_time_ratio`` = ``lap_s`` /
``reference_lap_s`` (``first_lap_ratio`` likewise), ``line_lap_time_ratio`` = ``lap_s`` /
``line_reference_lap_s`` (the course-line reference, when the rows have it).

Aggregates: means over courses (times and ratios over the courses that have them), rates as
fractions of all courses. Every aggregate has a ``_ci95`` twin: the 2.5 and 97.5 percentiles of
the statistic over ``B`` bootstrap resamples of the courses, drawn from a fixed seed, so the same
rows give the same intervals.
"""

from __future__ import annotations

import math

import numpy as np

from track_gen_isaac.evaluate.rollout import NOT_FAILURE, Flight

__all__ = ["course_rows", "aggregate", "bootstrap_ci", "BOOTSTRAP_SAMPLES", "BOOTSTRAP_SEED"]

BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 20260101

#: ending -> the rate it counts in (besides crash_rate, which counts every failure)
_END_RATES = {"collision_rate": ("crash",), "missed_gate_rate": ("missed",),
              "off_course_rate": ("off_course", "off_track"), "altitude_rate": ("altitude",),
              "timeout_rate": ("time_out",)}


def course_rows(flight: Flight, refs: list[dict], laps: int) -> list[dict]:
    """One dict per course from a :class:`Flight` and its reference columns."""
    dt = flight.step_dt
    rows = []
    for c in range(len(flight.steps)):
        n = int(flight.steps[c])
        ls = flight.lap_steps[c]
        first = ls[0] * dt if ls[0] > 0 else math.nan
        lap = (ls[1] - ls[0]) * dt if laps >= 2 and ls[0] > 0 and ls[1] > 0 else math.nan
        sp = flight.speed[:n, c]
        ref = refs[c]
        rows.append({
            "course": c,
            "completed": bool(flight.end[c] == "laps" and (ls >= 0).all()),
            "gates": int(flight.passed[c]),
            "first_lap_s": first,
            "lap_s": lap,
            "mean_speed_mps": float(sp.mean()) if n else 0.0,
            "top_speed_mps": float(sp.max()) if n else 0.0,
            "end": flight.end[c],
            "duration_s": n * dt,
            **ref,
            "first_lap_ratio": first / ref["reference_first_lap_s"],
            "lap_time_ratio": lap / ref["reference_lap_s"],
            "line_lap_time_ratio": lap / ref.get("line_reference_lap_s", math.nan),
        })
    return rows


def _nanmean(x: np.ndarray, axis=None):
    with np.errstate(invalid="ignore", divide="ignore"):
        cnt = np.sum(~np.isnan(x), axis=axis)
        tot = np.nansum(x, axis=axis)
        return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def bootstrap_ci(values: np.ndarray, samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED) -> list[float]:
    """95% percentile interval of the mean of ``values`` (NaNs skipped, per resample) over
    ``samples`` resamples drawn with a fixed seed; [nan, nan] when no value is finite."""
    v = np.asarray(values, np.float64)
    if v.size == 0 or np.isnan(v).all():
        return [math.nan, math.nan]
    idx = np.random.default_rng(seed).integers(0, v.size, size=(samples, v.size))
    means = _nanmean(v[idx], axis=1)
    means = means[~np.isnan(means)]
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def _stat(out: dict, key: str, values) -> None:
    v = np.asarray(values, np.float64)
    out[key] = float(_nanmean(v)) if v.size else math.nan
    out[key + "_ci95"] = bootstrap_ci(v)


def aggregate(rows: list[dict]) -> dict:
    """Suite aggregates of course rows (see the module docstring), each with its ``_ci95`` twin."""
    out: dict = {"num_courses": len(rows)}
    col = lambda k: np.array([r[k] for r in rows], np.float64)  # noqa: E731
    ends = [r["end"] for r in rows]
    _stat(out, "completion_rate", [r["completed"] for r in rows])
    _stat(out, "gates_per_course", col("gates"))
    _stat(out, "first_lap_time_mean_s", col("first_lap_s"))
    _stat(out, "lap_time_mean_s", col("lap_s"))
    _stat(out, "reference_first_lap_time_mean_s", col("reference_first_lap_s"))
    _stat(out, "reference_lap_time_mean_s", col("reference_lap_s"))
    _stat(out, "first_lap_ratio", col("first_lap_ratio"))
    _stat(out, "lap_time_ratio", col("lap_time_ratio"))
    if rows and "line_reference_lap_s" in rows[0]:
        _stat(out, "line_reference_lap_time_mean_s", col("line_reference_lap_s"))
        _stat(out, "line_lap_time_ratio", col("line_lap_time_ratio"))
    _stat(out, "mean_speed_mps", col("mean_speed_mps"))
    _stat(out, "top_speed_mps", col("top_speed_mps"))
    _stat(out, "crash_rate", [e not in NOT_FAILURE for e in ends])
    for key, names in _END_RATES.items():
        _stat(out, key, [e in names for e in ends])
    ratios = col("lap_time_ratio")
    out["lap_time_ratio_median"] = float(np.nanmedian(ratios)) if np.isfinite(ratios).any() else math.nan
    out["courses_with_flying_lap"] = int(np.isfinite(col("lap_s")).sum())
    out["top_speed_max_mps"] = float(col("top_speed_mps").max()) if rows else math.nan
    out["endings"] = {k: ends.count(k) for k in sorted(set(ends))}
    return out
