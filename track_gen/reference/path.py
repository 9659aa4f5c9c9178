"""The minimum-time reference over the flown path: a point mass through a course's openings.

:func:`track_gen.reference.lap.reference_laps` flies a fixed path (the course line through the gate
centres). A racer is not held to that line: a gate is passed anywhere inside its opening, and the
path between gates is free. :func:`path_reference_laps` therefore also optimises the path:

* **Openings** (:class:`Openings`): the planes to pass in order, each with a rectangular opening
  (centre, unit normal = direction of passage, half width along ``lateral = normalize(cross(z,
  n))``, half height along ``vertical = cross(n, lateral)``), the rule the progress component
  uses to count a pass. Each opening is shrunk by ``PathOptions.margin`` (lateral, vertical), e.g.
  the vehicle's half size, so the body fits through.
* **Path**: an interpolating cubic spline (knots fixed at the chord lengths of the starting
  control points, :mod:`track_gen.reference.spline`) through one control point per opening,
  offset inside the shrunk opening (2 parameters, or 1 with ``vertical=False``: lateral only, as
  in a band), plus ``waypoints_per_leg`` free control points between consecutive openings (and
  between the start and the first opening), each moving across the path (2 parameters, up to
  ``waypoint_range``).
* **Objective**: the minimum time of :mod:`track_gen.reference.lap` along that spline (periodic around
  a loop: the flying lap; from rest at the start position through the openings to the last one,
  any end speed: the first lap), sampled every ``ds_opt`` while optimising, with its exact
  gradient (:mod:`track_gen.reference.gradient`), minimised by L-BFGS-B within the bounds. The
  reported times are the same method on the optimised spline at the fine ``ds``.
* **Two stages** per lap: the openings' offsets alone first (from the centres; for the first lap
  from the flying lap's offsets), then with the waypoints, placed on the first stage's spline so
  the second stage starts where the first ended. (Measured on 16 ``gates-v1``-like courses: the
  flying lap 28 % under the course line with both stages, 27 % with openings only; about 0.3 s
  per course for both laps on one busy CPU core.)

The result is the time of a feasible point-mass path through the shrunk openings, so it is an
upper bound of the point-mass optimum and close to it; the optimiser finds a local optimum of a
piecewise-smooth objective (no global guarantee). What the point mass ignores (attitude
dynamics; gate frames, including their depth when the path crosses an opening at an angle;
poles; crossing another gate's plane outside its opening) makes it faster than a real vehicle: a
lower-bound-style reference.

Pure numpy / scipy float64 (scipy is not a dependency of the core package: it comes with the
``isaac`` extra, which the benchmark needs anyway).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from track_gen.reference.lap import LapReference, SampledPath, VehicleLimits, open_profile, periodic_profile
from track_gen.reference.gradient import lap_time_grad
from track_gen.reference.spline import chord_knots, sampled_path, spline_basis

__all__ = ["Openings", "PathOptions", "PathLapReference", "path_reference_laps", "opening_axes", "START_TOLERANCE"]

#: the start counts as on or past opening 0's plane within this signed distance [m] (as progress)
START_TOLERANCE = 1.0e-3
_Z = np.array([0.0, 0.0, 1.0])


def opening_axes(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lateral, vertical) unit axes [G, 3] of openings with unit normals [G, 3], as the progress
    component measures a pass: ``lateral = normalize(cross(z, n))``, ``vertical = cross(n, lateral)``."""
    n = np.asarray(normal, np.float64)
    lat = np.cross(_Z, n)
    q = np.linalg.norm(lat, axis=1, keepdims=True)
    if np.any(q <= 1e-9):
        raise ValueError("Openings.normal: a vertical normal has no lateral axis")
    lat = lat / q
    return lat, np.cross(n, lat)


@dataclass(frozen=True)
class Openings:
    """The openings of one course in order of passage: ``pos`` [G, 3] centres, ``normal`` [G, 3]
    unit directions of passage, ``half_width`` / ``half_height`` [G] [m], ``closed`` (a loop: the
    last opening is followed by the first)."""

    pos: np.ndarray
    normal: np.ndarray
    half_width: np.ndarray
    half_height: np.ndarray
    closed: bool = True

    def __post_init__(self):
        pos = np.asarray(self.pos, np.float64)
        if pos.ndim != 2 or pos.shape[1] != 3 or len(pos) < 1:
            raise ValueError(f"Openings.pos: expected [G, 3] centres, got shape {pos.shape}")
        G = len(pos)
        nrm = np.asarray(self.normal, np.float64)
        if nrm.shape != (G, 3):
            raise ValueError(f"Openings.normal: expected [{G}, 3], got shape {nrm.shape}")
        hw = np.broadcast_to(np.asarray(self.half_width, np.float64), (G,)).copy()
        half_h = np.broadcast_to(np.asarray(self.half_height, np.float64), (G,)).copy()
        for name, v in (("pos", pos), ("normal", nrm), ("half_width", hw), ("half_height", half_h)):
            if not np.isfinite(v).all():
                raise ValueError(f"Openings.{name}: every value must be finite")
        if np.any(hw < 0) or np.any(half_h < 0):
            raise ValueError("Openings.half_width / half_height: expected values >= 0 [m]")
        if self.closed and G < 2:
            raise ValueError(f"Openings: a loop needs at least 2 openings, got {G}")
        nrm = nrm / np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-300)
        for name, v in (("pos", pos), ("normal", nrm), ("half_width", hw), ("half_height", half_h)):
            object.__setattr__(self, name, v)
        object.__setattr__(self, "closed", bool(self.closed))


@dataclass(frozen=True)
class PathOptions:
    """How the path is parameterised and optimised.

    Attributes:
        margin: (lateral, vertical) shrink of every opening [m] (e.g. the body's half size).
        vertical: offsets inside an opening move vertically too (False: lateral only, a band).
        waypoints_per_leg: free control points between consecutive openings (and before the first).
        waypoint_range: how far each waypoint may move across the path from its start [m].
        ds_opt: sample step while optimising [m]; the final times use the fine ``ds``.
        max_iter: L-BFGS-B iterations per lap.
    """

    margin: tuple[float, float] = (0.0, 0.0)
    vertical: bool = True
    waypoints_per_leg: int = 1
    waypoint_range: float = 1.5
    ds_opt: float = 0.2
    max_iter: int = 80

    def __post_init__(self):
        m = tuple(float(v) for v in self.margin)
        if len(m) != 2 or not all(math.isfinite(v) and v >= 0 for v in m):
            raise ValueError(f"PathOptions.margin: expected (lateral, vertical) >= 0 [m], got {self.margin!r}")
        object.__setattr__(self, "margin", m)
        if int(self.waypoints_per_leg) != self.waypoints_per_leg or self.waypoints_per_leg < 0:
            raise ValueError(f"PathOptions.waypoints_per_leg: expected an int >= 0, got {self.waypoints_per_leg!r}")
        if not (math.isfinite(self.waypoint_range) and self.waypoint_range >= 0):
            raise ValueError(f"PathOptions.waypoint_range: expected a distance >= 0 [m], got {self.waypoint_range!r}")
        if not (math.isfinite(self.ds_opt) and self.ds_opt > 0):
            raise ValueError(f"PathOptions.ds_opt: expected a step > 0 [m], got {self.ds_opt!r}")
        if int(self.max_iter) != self.max_iter or self.max_iter < 0:
            raise ValueError(f"PathOptions.max_iter: expected an int >= 0, got {self.max_iter!r}")


@dataclass(frozen=True)
class PathLapReference(LapReference):
    """A :class:`~track_gen.reference.lap.LapReference` over an optimised path, plus the paths:
    ``first_path`` / ``flying_path`` (:class:`~track_gen.reference.lap.SampledPath` at the fine ``ds``;
    None without a flying lap), their control points ``first_points`` / ``flying_points`` [n, 3],
    ``evaluations`` (objective evaluations, both laps)."""

    first_path: SampledPath
    flying_path: SampledPath | None
    first_points: np.ndarray
    flying_points: np.ndarray | None
    evaluations: int


def _across(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit axes across direction ``d``: horizontal, then the one above it (a waypoint moves
    across the path only: sliding along it changes little but the spline's parameter speed, and
    can fold the spline into a cusp that the sampled profile would mistake for a free turn)."""
    d = d / max(np.linalg.norm(d), 1e-300)
    e1 = np.cross(d, _Z)
    if np.linalg.norm(e1) < 1e-6:
        e1 = np.array([1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(e1, d)


class _Layout:
    """Control points ``X = base + (B @ theta).reshape(n, 3)`` of one lap: the ``start`` (fixed, when
    given), one per opening of ``order`` (offsets inside the shrunk opening) and, with ``legs``,
    waypoints between consecutive points (``legs[key] = (points, directions)``, each free across
    its direction within ``waypoint_range``); the parameters' bounds and keys (the two laps and the
    two stages share values by key). ``leg_slots``: (key, index of the point the leg leaves)."""

    def __init__(self, op: Openings, opt: PathOptions, order: list[int], start: np.ndarray | None, closed: bool,
                 legs: dict | None = None):
        lat, ver = opening_axes(op.normal)
        shrink_w = np.maximum(op.half_width - opt.margin[0], 0.0)
        shrink_h = np.maximum(op.half_height - opt.margin[1], 0.0)
        base, cols, bounds, keys = [], [], [], []
        self.leg_slots: list[tuple] = []

        def add_param(axis: np.ndarray, lo: float, hi: float, key) -> None:
            cols.append((len(base) - 1, axis))
            bounds.append((lo, hi))
            keys.append(key)

        def add_leg(key) -> None:
            self.leg_slots.append((key, len(base) - 1))
            if legs is None:
                return
            for q, (pt, d) in enumerate(zip(*legs[key])):
                base.append(pt)
                for ax, axis in enumerate(_across(d)):
                    add_param(axis, -opt.waypoint_range, opt.waypoint_range, ("wp", key, q, ax))

        if start is not None:
            base.append(np.asarray(start, np.float64))
            add_leg("start")
        for idx, k in enumerate(order):
            base.append(op.pos[k])
            add_param(lat[k], -shrink_w[k], shrink_w[k], ("lat", k))
            if opt.vertical:
                add_param(ver[k], -shrink_h[k], shrink_h[k], ("ver", k))
            if idx + 1 < len(order) or closed:
                add_leg(k)
        self.base = np.array(base)
        n = len(self.base)
        self.B = np.zeros((3 * n, len(cols)))
        for c, (point, axis) in enumerate(cols):
            self.B[3 * point: 3 * point + 3, c] = axis
        self.bounds, self.keys, self.closed = bounds, keys, closed

    def points(self, theta: np.ndarray) -> np.ndarray:
        return self.base + (self.B @ theta).reshape(-1, 3)

    def initial(self, values: dict) -> np.ndarray:
        """Parameters from ``values`` by key (0 where absent), clipped to the bounds."""
        return np.array([min(max(values.get(k, 0.0), lo), hi) for k, (lo, hi) in zip(self.keys, self.bounds)])


_BLAS: list = []


@contextmanager
def _one_blas_thread():
    """Run scipy's bundled OpenBLAS on one thread meanwhile (restored after): L-BFGS-B makes many
    tiny BLAS/LAPACK calls, and on a busy machine a threaded one can wait for a descheduled worker
    (measured on a loaded 2-core machine: ~7 ms instead of ~0.05 ms per iteration, 1.2 s instead of
    0.2 s per course). No-op when that library is not found (another scipy build)."""
    if not _BLAS:
        lib = None
        try:
            import ctypes
            import glob
            import os

            import scipy

            for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(scipy.__file__)), "scipy.libs",
                                                      "libscipy_openblas*.so*"))):
                cand = ctypes.CDLL(path)
                if hasattr(cand, "scipy_openblas_set_num_threads") and hasattr(cand, "scipy_openblas_get_num_threads"):
                    lib = cand
                    break
        except OSError:
            lib = None
        _BLAS.append(lib)
    lib = _BLAS[0]
    if lib is None:
        yield
        return
    before = int(lib.scipy_openblas_get_num_threads())
    lib.scipy_openblas_set_num_threads(1)
    try:
        yield
    finally:
        lib.scipy_openblas_set_num_threads(before)


def _solve(layout: _Layout, limits: VehicleLimits, opt: PathOptions, theta0: np.ndarray):
    """(theta, knots, evaluations): L-BFGS-B on the coarse lap time from ``theta0``, the knots
    fixed at the chord lengths of the starting control points."""
    knots = chord_knots(layout.points(theta0), layout.closed)
    basis = spline_basis(knots, layout.closed, opt.ds_opt)
    count = [0]
    best = [math.inf, theta0.copy()]

    def f(theta):
        count[0] += 1
        try:
            tg = lap_time_grad(basis, layout.points(theta), limits)
        except ValueError:  # a degenerate spline (it stops at a sample): a bad step
            return 1e6, np.zeros_like(theta)
        if not math.isfinite(tg.time):
            return 1e6, np.zeros_like(theta)
        if tg.time < best[0]:
            best[0], best[1] = tg.time, theta.copy()
        return tg.time, np.nan_to_num(layout.B.T @ tg.grad.reshape(-1), nan=0.0, posinf=0.0, neginf=0.0)

    if len(theta0) and opt.max_iter > 0:
        with _one_blas_thread():
            minimize(f, theta0, jac=True, method="L-BFGS-B", bounds=layout.bounds,
                     options={"maxiter": int(opt.max_iter), "ftol": 1e-7, "gtol": 1e-6})
    return best[1], knots, count[0]


def _lap(op: Openings, opt: PathOptions, limits: VehicleLimits, order: list[int], start, closed: bool,
         values: dict):
    """Optimise one lap in two stages: the openings' offsets alone (a spline through the openings),
    then with the waypoints placed on that optimum's spline (so stage 2 starts where stage 1
    ended). Returns (layout, theta, knots, evaluations)."""
    lay = _Layout(op, opt, order, start, closed)
    theta, knots, evals = _solve(lay, limits, opt, lay.initial(values))
    m = int(opt.waypoints_per_leg)
    if m == 0:
        return lay, theta, knots, evals
    X = lay.points(theta)
    legs, u = {}, []
    for key, i in lay.leg_slots:
        u.append(knots[i] + (knots[i + 1] - knots[i]) * np.arange(1, m + 1) / (m + 1))
    at = spline_basis(knots, closed, u=np.concatenate(u))
    pts, dirs = at.S0 @ X, at.S1 @ X
    for q, (key, _) in enumerate(lay.leg_slots):
        legs[key] = (pts[q * m:(q + 1) * m], dirs[q * m:(q + 1) * m])
    lay2 = _Layout(op, opt, order, start, closed, legs)
    theta2, knots2, n2 = _solve(lay2, limits, opt, lay2.initial(dict(zip(lay.keys, theta))))
    return lay2, theta2, knots2, evals + n2


def path_reference_laps(openings: Openings, limits: VehicleLimits, *, start=None, options: PathOptions | None = None,
                        ds: float = 0.05) -> PathLapReference:
    """Minimum-time reference over the flown path (see the module docstring).

    Args:
        openings: the course's :class:`Openings` in order of passage.
        limits: the vehicle's :class:`~track_gen.reference.lap.VehicleLimits`.
        start: [3] the standing start (env frame) [m]; None: at the first opening's centre. The
            first lap passes openings 0 .. G-1 (1 .. G-1 when the start lies on or past opening 0's
            plane, as progress counts it) and ends at the last one at any speed.
        options: :class:`PathOptions` (default: no margin, one waypoint per leg).

    Raises ValueError for a bad ``ds`` or start, or a course of one opening without a start.
        ds: sample step of the reported times [m].
    """
    opt = PathOptions() if options is None else options
    if not (math.isfinite(ds) and ds > 0):
        raise ValueError(f"ds: expected a finite step > 0 [m], got {ds!r}")
    op = openings
    G = len(op.pos)
    if start is None and G == 1:
        raise ValueError("start: a course of one opening needs a start position")
    p0 = op.pos[0] if start is None else np.asarray(start, np.float64).reshape(3)
    if not np.isfinite(p0).all():
        raise ValueError("start: expected a finite [3] position")
    first = 1 if G >= 2 and float(np.dot(p0 - op.pos[0], op.normal[0])) >= -START_TOLERANCE else 0
    evals = 0
    values: dict = {}
    flying = flying_path = flying_X = None
    flying_s = lap_length = math.nan
    if op.closed:
        lay, theta, knots, n = _lap(op, opt, limits, list(range(G)), None, True, {})
        evals += n
        values = {k: v for k, v in zip(lay.keys, theta) if k[0] != "wp"}
        flying_X = lay.points(theta)
        flying_path = sampled_path(spline_basis(knots, True, ds), flying_X)
        flying = periodic_profile(flying_path, limits)
        flying_s, lap_length = flying.time, flying_path.length
    lay, theta, knots, n = _lap(op, opt, limits, list(range(first, G)), p0, False, values)
    evals += n
    first_X = lay.points(theta)
    first_path = sampled_path(spline_basis(knots, False, ds), first_X)
    first_prof = open_profile(first_path, limits, v_start=0.0)
    return PathLapReference(first_prof.time, flying_s, first_prof, flying, lap_length, first_path.length, limits,
                            first_path, flying_path, first_X, flying_X, evals)
