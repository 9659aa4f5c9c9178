"""The minimum-time references of each course of an env, with the vehicle limits of the task's
quadrotor model, or of its car (:func:`car_limits`: the friction circle, ``|a| <= mu g`` in the plane).

Two references per course, both for a point mass under the model's thrust limit:

* the **path reference** (:func:`track_gen.reference.path.path_reference_laps`), the one the
  benchmark divides by: the flown path is optimised too, through each checkpoint's opening (a gate
  course: each gate's opening, anywhere in it; a band track: each checkpoint of the band, at any
  lateral offset, at the band's height), each opening shrunk by the body's half size (laterally
  its larger half extent, vertically its half height). The first lap starts at rest at the course
  start position and ends at the last checkpoint (the lap line progress counts); the flying lap
  is one periodic loop. Where the optimiser ends above the course-line reference (not seen on
  the suites), the course-line time is used: both are times of feasible point-mass paths.
* the **course-line reference** (:func:`track_gen.reference.lap.reference_laps`): the course's own
  line (``course.course_line``: a gate course's smooth line through the gate centres, a band
  track's centerline), the start pose projected onto it, the lap line at the last checkpoint's
  arc length.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from track_gen.reference.lap import LapReference, VehicleLimits, reference_laps
from track_gen.reference.path import Openings, PathLapReference, PathOptions, path_reference_laps

__all__ = ["vehicle_limits", "car_limits", "task_vehicle", "course_references", "cache_dir", "project_on_line", "reference_row", "reference_path",
           "path_options", "CourseReference"]


def vehicle_limits(model, command: str = "rates", gravity: float = 9.81) -> VehicleLimits:
    """The point-mass limits of a :class:`~track_gen_isaac.quadrotor.QuadrotorModel`: collective thrust
    up to ``min(1 + thrust_range, thrust_to_weight)`` m g in rate mode (the command saturates
    first), ``thrust_to_weight`` m g in motor mode; no drag in the model, so no speed cap."""
    tw = float(model.thrust_to_weight)
    if command == "rates":
        tw = min(1.0 + float(model.thrust_range), tw)
    return VehicleLimits.from_thrust_to_weight(tw, gravity=gravity)


def car_limits(model, gravity: float = 9.81) -> VehicleLimits:
    """The point-mass limits of a :class:`~track_gen_isaac.car.CarModel`: the friction circle
    ``|a| <= mu g`` in the ground plane, up to the model's top speed. The reference's point mass
    pushes against gravity, so on a flat band track a thrust acceleration of ``sqrt((mu g)^2 + g^2)``
    leaves exactly ``mu g`` in the plane. The car's drive is weaker than that (``accel_max`` below
    ``mu g``, falling as ``1 / v`` above ``switch_speed``): the reference ignores it, as the
    friction-limited bound."""
    mu_g = float(model.friction) * gravity
    return VehicleLimits(math.hypot(mu_g, gravity), gravity, max_speed=float(model.speed_max))


#: the car's reference sampling: final times every 0.25 m, the optimiser's path every 1 m (its laps are
#: 300-800 m: at the drones' 0.05 / 0.2 m one course takes ~20 s on one core; at these ~2.5 s, and the
#: lap time moves by < 0.5 %)
CAR_DS, CAR_DS_OPT = 0.25, 1.0


def task_vehicle(cfg) -> tuple[VehicleLimits, dict, dict]:
    """``(limits, path keywords, description)`` of an env cfg's vehicle: a car (an action term with a
    ``CarModel``: :func:`car_limits`, the band narrowed by the car's half width, coarser sampling:
    :data:`CAR_DS`) or a quadrotor (the ``rotors`` term: :func:`vehicle_limits`, the openings shrunk
    by the larger half extent). The path keywords go to :func:`course_references` (``lateral``,
    ``ds_opt``, ``ds``: the default sampling); the description is the ``vehicle`` entry of ``eval.json``."""
    actions = cfg.actions
    car = getattr(actions, "car", None)
    if car is not None and hasattr(getattr(car, "model", None), "friction"):
        m = car.model
        lim = car_limits(m)
        half_width = abs(float(cfg.course.half_extents[1]))
        return lim, {"lateral": half_width, "ds_opt": CAR_DS_OPT, "ds": CAR_DS}, {
            "kind": "car", "max_accel_mps2": float(m.friction) * lim.gravity, "gravity_mps2": lim.gravity,
            "max_speed_mps": lim.max_speed, "friction": float(m.friction), "half_width_m": half_width,
            "reference": (f"a point mass with |a| <= mu g = {float(m.friction) * lim.gravity:.2f} m/s^2 in the plane "
                          f"(friction {float(m.friction):g}) up to {lim.max_speed:g} m/s, on the fastest path it "
                          f"finds through the checkpoints of the band narrowed by the car's half width "
                          f"({half_width:.3f} m; `track_gen.reference.path`); the course-line reference drives "
                          "the centre line (`track_gen.reference.lap`). The point mass has no drive limit and "
                          "turns its acceleration instantly, so a real lap sits above a ratio of 1.")}
    rotors = actions.rotors
    lim = vehicle_limits(rotors.model, getattr(rotors, "command", "rates"))
    return lim, {"lateral": None, "ds_opt": None, "ds": 0.05}, {"kind": "quadrotor", "max_accel_mps2": lim.max_accel, "gravity_mps2": lim.gravity,
                       "max_speed_mps": lim.max_speed, "thrust_to_weight": lim.max_accel / lim.gravity}


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


@dataclass(frozen=True)
class CourseReference:
    """The references of one course: ``line`` (course line), ``path`` (optimised path; None when
    it was not computed or failed)."""

    line: LapReference
    path: PathLapReference | None


def path_options(ec, lateral: float | None = None, ds_opt: float | None = None) -> PathOptions:
    """The path optimiser's options for an ``EnvCourse``: openings shrunk by the body's half size
    (``CourseCfg.half_extents``: the larger one laterally, or ``lateral`` [m] when given -- a car's
    half width; ``half_height`` vertically); a gate course moves through its openings in both axes
    with one free waypoint per leg, a band track laterally only (its checkpoints are 1-2 m apart:
    no waypoints); ``ds_opt``: the optimiser's sample step (None: :class:`PathOptions`' own)."""
    gates = hasattr(ec.course.result, "width")
    cfg = ec.cfg
    lat = max(abs(float(v)) for v in cfg.half_extents) if lateral is None else abs(float(lateral))
    extra = {} if ds_opt is None else {"ds_opt": float(ds_opt)}
    return PathOptions(margin=(lat, abs(float(cfg.half_height))), vertical=gates, waypoints_per_leg=1 if gates else 0,
                       **extra)


def cache_dir() -> Path | None:
    """Where computed references are kept: ``$TRACK_GEN_CACHE/reference`` (default
    ``~/.cache/track_gen/reference``); None when ``TRACK_GEN_REFERENCE_CACHE=0`` turns the cache off."""
    if os.environ.get("TRACK_GEN_REFERENCE_CACHE", "1") == "0":
        return None
    root = os.environ.get("TRACK_GEN_CACHE") or str(Path.home() / ".cache" / "track_gen")
    return Path(root) / "reference"


def _code_version() -> str:
    """A hash of the reference's source: a change to how references are computed empties the cache."""
    import track_gen.reference as pkg

    h = hashlib.sha256()
    for f in sorted(Path(pkg.__file__).parent.glob("*.py")) + [Path(__file__)]:
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _key(*parts) -> str:
    """The cache key of one course's references: every number that goes in, as bytes."""
    h = hashlib.sha256()
    for p in parts:
        h.update(np.ascontiguousarray(p).tobytes() if isinstance(p, np.ndarray) else repr(p).encode())
        h.update(b"|")
    return h.hexdigest()


def _cached(key: str | None, compute):
    """``compute()``, or its result stored under ``key`` by an earlier call (pickled numpy; the same
    numbers, bit for bit). A file that cannot be read is recomputed and rewritten."""
    root = cache_dir()
    if key is None or root is None:
        return compute()
    path = root / key[:2] / f"{key}.pkl"
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
        pass
    value = compute()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)   # atomic: a reader never sees half a file
    except OSError:
        pass                    # a read-only home: no cache, same numbers
    return value


def _course_reference(p, loop, s0, finish, start, op, limits, ds, opts) -> CourseReference | None:
    try:
        line_ref = reference_laps(p, limits, closed=loop, start_s=s0, finish_s=finish, ds=ds)
    except ValueError:
        return None
    path_ref = None
    if opts is not None:
        try:
            path_ref = path_reference_laps(op, limits, start=start, options=opts, ds=ds)
        except ValueError:
            path_ref = None
    return CourseReference(line_ref, path_ref)


def course_references(ec, limits: VehicleLimits, ds: float = 0.05, *, path: bool = True,
                      lateral: float | None = None, ds_opt: float | None = None) -> list[CourseReference | None]:
    """One :class:`CourseReference` per course of an ``EnvCourse`` (per env; per race with K agents
    per course; None for an invalid course); ``path=False`` skips the path optimisation (about
    0.2-0.4 s per course on one CPU core); ``lateral`` / ``ds_opt``: the path's lateral margin and
    optimiser step (:func:`path_options`).

    References are kept on disk (:func:`cache_dir`), keyed by every number of the course that goes
    in, the vehicle limits, the options and the reference's source code: a held-out suite's
    courses are computed once, and every later evaluation reads the same numbers back."""
    line = ec.course.course_line.line
    pts, count, closed = line.points.numpy(), line.count.numpy(), line.closed.numpy()
    cps = ec.course.checkpoints
    cp_s, cp_n = cps.s.numpy(), cps.count.numpy()
    cp_pos, cp_nrm = cps.pos.numpy(), cps.normal.numpy()
    cp_half_w, cp_half_h, cp_closed = cps.half_width.numpy(), cps.half_height.numpy(), cps.closed.numpy()
    start = ec.course.result.start_pos.numpy()
    valid = ec.course.result.valid.numpy()
    opts = path_options(ec, lateral, ds_opt) if path else None
    version = _code_version()
    out: list[CourseReference | None] = []
    for e in range(getattr(ec, "num_races", ec.num_envs)):  # one per course (K agents race one course)
        n, k = int(count[e]), int(cp_n[e])
        if not valid[e] or n < 3 or k < 1:
            out.append(None)
            continue
        p = pts[e, :n].astype(np.float64)
        loop = bool(closed[e])
        s0 = project_on_line(p, loop, start[e].astype(np.float64))
        finish = float(cp_s[e, k - 1])
        op = Openings(cp_pos[e, :k], cp_nrm[e, :k], cp_half_w[e, :k], cp_half_h[e, :k], bool(cp_closed[e]))
        key = _key(version, p, loop, s0, finish, start[e], cp_pos[e, :k], cp_nrm[e, :k], cp_half_w[e, :k],
                   cp_half_h[e, :k], bool(cp_closed[e]), limits, ds, opts)
        out.append(_cached(key, lambda: _course_reference(p, loop, s0, finish, start[e].astype(np.float64), op,
                                                          limits, ds, opts)))
    return out


def _top(ref: LapReference) -> float:
    return float(ref.flying.v.max() if ref.flying is not None else ref.first.v.max())


def reference_row(ref: CourseReference | None) -> dict:
    """The per-course reference columns: ``reference_first_lap_s`` / ``reference_lap_s`` (the
    path reference, never above the course-line one), ``line_reference_first_lap_s`` /
    ``line_reference_lap_s`` (the course line), ``lap_length_m`` (the course line's loop),
    ``reference_lap_length_m`` (the optimised loop), ``reference_top_speed_mps``."""
    if ref is None:
        return {k: math.nan for k in ("reference_first_lap_s", "reference_lap_s", "line_reference_first_lap_s",
                                      "line_reference_lap_s", "lap_length_m", "reference_lap_length_m",
                                      "reference_top_speed_mps")}
    line, path = ref.line, ref.path
    first, lap, length, top = line.first_lap_s, line.flying_lap_s, line.lap_length, _top(line)
    if path is not None:
        if math.isfinite(path.first_lap_s) and not path.first_lap_s > first:
            first = path.first_lap_s
            if line.flying is None:  # an open course: the first lap is the whole run
                top = _top(path)
        if math.isfinite(path.flying_lap_s) and not path.flying_lap_s > lap:
            lap, length, top = path.flying_lap_s, path.lap_length, _top(path)
    return {"reference_first_lap_s": first, "reference_lap_s": lap,
            "line_reference_first_lap_s": line.first_lap_s, "line_reference_lap_s": line.flying_lap_s,
            "lap_length_m": line.lap_length, "reference_lap_length_m": length, "reference_top_speed_mps": top}


def reference_path(ref: CourseReference | None) -> np.ndarray | None:
    """The optimised path [M, 3] the benchmark's reference time was flown on (the flying lap's, a
    one-pass course's first lap), for the pictures; None when the course-line reference was used
    (its line is the course line the pictures draw anyway) or there is none."""
    if ref is None or ref.path is None:
        return None
    row = reference_row(ref)
    path = ref.path
    if path.flying_path is not None:
        return path.flying_path.pos if row["reference_lap_s"] == path.flying_lap_s else None
    return path.first_path.pos if row["reference_first_lap_s"] == path.first_lap_s else None
