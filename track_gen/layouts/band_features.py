"""The features of a band track that :func:`~track_gen.layouts.coverage` compares (numpy, float64).

Measured the same way on a layout and on every generated track, in plan view (x, y), from the
centre line's points and half widths:

=====================  ==========  ===============================================================
``half_width``         per point   band half width [m]
``curvature``          per point   |1/R| of the centre line [1/m]: the turn between the two segments
                                   at a point over their mean length
``straight_length``    per run     length of each run of points with ``|curvature| < straight`` [m]
``corners_per_100m``   per track   runs with ``|curvature| >= straight`` that turn by at least
                                   :data:`CORNER_MIN_TURN` in total, per 100 m of the loop
``length``             per track   loop length [m]
=====================  ==========  ===============================================================

``straight`` is one curvature for the layout and the distribution alike, taken from the layout: a
radius of :data:`STRAIGHT_RADIUS` times its median half width (for a 6 m half width, 600 m; the
same at any ``scale``, since both scale together).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["BAND_FEATURES", "CORNER_MIN_TURN", "STRAIGHT_RADIUS", "band_course_features", "band_features",
           "polyline_curvature", "straight_curvature"]

#: band-track features, in table order, with their unit
BAND_FEATURES: dict[str, str] = {"half_width": "m", "curvature": "1/m", "straight_length": "m",
                                 "corners_per_100m": "", "length": "m"}
#: a stretch is straight where its radius exceeds this many (median) half widths of the layout
STRAIGHT_RADIUS = 100.0
#: the least total turn of a corner [rad] (15 degrees): shorter bends of a straight are not counted
CORNER_MIN_TURN = math.pi / 12


def polyline_curvature(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(|curvature| [N] at each point, length [N] of the segment from each point to the next) of the
    closed polyline ``xy`` [N, 2]: the angle between the segments meeting at a point over their mean length."""
    xy = np.asarray(xy, np.float64)
    a = xy - np.roll(xy, 1, axis=0)
    b = np.roll(xy, -1, axis=0) - xy
    turn = np.arctan2(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0], np.einsum("ij,ij->i", a, b))
    la, lb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    mean = 0.5 * (la + lb)
    return np.abs(turn) / np.where(mean > 0.0, mean, np.inf), lb


def _run_sums(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sums of ``values`` [K, N] over each circular run of True in ``mask`` [N]: [K, runs]."""
    n = mask.size
    if not mask.any():
        return np.zeros((values.shape[0], 0))
    if mask.all():
        return values.sum(axis=1, keepdims=True)
    start = int(np.argmin(mask))              # a False: no run wraps past index 0 after the roll
    m, v = np.roll(mask, -start), np.roll(values, -start, axis=1)
    edge = np.diff(m.astype(np.int8), prepend=0, append=0)
    begins, ends = np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)
    cum = np.concatenate([np.zeros((values.shape[0], 1)), np.cumsum(v, axis=1)], axis=1)
    return cum[:, ends] - cum[:, begins]


def band_features(xy, half_width, straight: float) -> dict[str, np.ndarray]:
    """The features of one band track (float64 arrays by feature name): centre points ``xy`` [N, 2] in
    order (closed), ``half_width`` [N] (or one number), ``straight`` the curvature [1/m] below which a
    point counts as straight."""
    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    kappa, seg = polyline_curvature(xy)
    length = float(seg.sum())
    flat = kappa < straight
    straights = _run_sums(flat, seg[None])[0]
    bends = _run_sums(~flat, np.stack([kappa * seg]))[0]
    corners = int(np.count_nonzero(bends >= CORNER_MIN_TURN))
    return {
        "half_width": np.broadcast_to(np.asarray(half_width, np.float64), (xy.shape[0],)).copy(),
        "curvature": kappa,
        "straight_length": straights,
        "corners_per_100m": np.array([100.0 * corners / length]),
        "length": np.array([length]),
    }


def straight_curvature(half_width) -> float:
    """The curvature [1/m] below which a point is straight: 1 / (:data:`STRAIGHT_RADIUS` x the median
    half width)."""
    return 1.0 / (STRAIGHT_RADIUS * float(np.median(np.asarray(half_width, np.float64))))


def band_course_features(result, straight: float) -> dict[str, np.ndarray]:
    """The features pooled over the valid tracks of a band-track generator's ``result`` (host numpy)."""
    valid = result.valid.numpy() != 0
    xy, hw = result.xy.numpy(), result.half_width.numpy()
    pooled: dict[str, list[np.ndarray]] = {n: [] for n in BAND_FEATURES}
    for e in np.flatnonzero(valid):
        for k, v in band_features(xy[e], hw[e], straight).items():
            pooled[k].append(v)
    return {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in pooled.items()}
