"""The report's figures: a run's learning curve and top-down flight paths over their courses.

- :func:`plot_learning_curve`: reward, episode length and per-term panels vs iteration.
- :func:`plot_trajectories`: flight paths over their courses, one panel per env (at most 8).

Rendered on matplotlib's Agg canvas directly (``matplotlib.figure.Figure``, no pyplot), so no
global backend is switched; matplotlib is imported inside the functions. Courses are drawn by
:func:`track_gen.plot.draw_course` (imported on first use, like matplotlib).
"""

from __future__ import annotations

import fnmatch
import math
import numbers
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from track_gen_isaac.report.scalars import PathLike, course_scalars, read_scalars

__all__ = ["plot_learning_curve", "plot_trajectories", "DEFAULT_CURVE_TAGS", "MAX_TRAJECTORY_PANELS"]

#: Panels of :func:`plot_learning_curve` by default (a pattern that matches no tag is left out).
DEFAULT_CURVE_TAGS: tuple[str, ...] = (
    "Train/mean_reward",
    "Train/mean_episode_length",
    "Episode_Course/*",
    "Episode_Reward/*",
    "Episode_Termination/*",
)
# used when no default panel has data (no episode finished yet): the run still gets a curve
_FALLBACK_CURVE_TAGS: tuple[str, ...] = ("Loss/value", "Loss/surrogate", "Loss/entropy", "Policy/mean_std")
# rsl_rl writes these with the training wall time in whole seconds as the step, not the iteration
_TIME_SUFFIX = "/time"

MAX_TRAJECTORY_PANELS = 8
DPI = 110  # PNG pixels per figure inch

_START_COLOR = "#27ae60"
_CRASH_COLOR = "#c0392b"
_LINE_COLOR = "#2c3e50"


def _save(fig, out_png: PathLike) -> pathlib.Path:
    out = pathlib.Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    return out


# -- learning curve -----------------------------------------------------------------------------
def _select(scalars: Mapping[str, Any], pattern: str) -> list[str]:
    """Tags matching ``pattern`` (fnmatch); wall-time series only when named exactly."""
    if pattern in scalars:
        return [pattern]
    return [t for t in scalars if fnmatch.fnmatchcase(t, pattern) and not t.endswith(_TIME_SUFFIX)]


def _curve_panels(scalars: Mapping[str, Any], tags: Sequence[str] | None, run: pathlib.Path):
    """``[(pattern, matched tags)]``, one per panel: the given ``tags`` or the default panels."""
    if isinstance(tags, str):
        raise TypeError(f"tags must be a sequence of tag patterns, got the string {tags!r}")
    if tags is not None:
        panels = []
        for pattern in tags:
            matched = _select(scalars, pattern)
            if not matched:
                raise ValueError(f"tag {pattern!r} matches no scalar in {str(run)!r}; available: {sorted(scalars)}")
            panels.append((pattern, matched))
        return panels
    for candidates in (DEFAULT_CURVE_TAGS, _FALLBACK_CURVE_TAGS):
        panels = [(p, m) for p in candidates if (m := _select(scalars, p))]
        if panels:
            return panels
    raise ValueError(f"no scalar to plot in {str(run)!r}; tags present: {sorted(scalars)}")


def _curve_panel(ax, scalars, pattern: str, matched: list[str], steps_per_iteration: int | None) -> None:
    """One panel: the matched series vs iteration (or wall seconds), with an env-steps axis on top."""
    from matplotlib.ticker import MaxNLocator

    is_time = len(matched) == 1 and matched[0].endswith(_TIME_SUFFIX)
    for tag in matched:
        steps, values = scalars[tag]
        label = tag.split("/", 1)[1] if len(matched) > 1 and "/" in tag else tag
        ax.plot(steps, values, lw=1.3, marker="." if len(steps) < 30 else None, label=label)
    ax.set_title(pattern, fontsize=9)
    if not is_time:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("training wall time [s]" if is_time else "iteration", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, lw=0.4, alpha=0.5)
    if len(matched) > 1:
        ax.legend(fontsize=7, loc="best")
    if steps_per_iteration and not is_time:
        spi = float(steps_per_iteration)
        # iteration `it` is logged once its rollout is collected: (it + 1) * spi steps so far
        top = ax.secondary_xaxis("top", functions=(lambda it: (it + 1) * spi, lambda s: s / spi - 1))
        top.set_xlabel(f"env steps collected ({int(spi)} per iteration)", fontsize=8)
        top.tick_params(labelsize=7)


def plot_learning_curve(
    run_dir: PathLike,
    out_png: PathLike | None = None,
    tags: Sequence[str] | None = None,
    *,
    steps_per_iteration: int | None = None,
) -> pathlib.Path:
    """Plot a run's learning curve into a PNG: one panel per tag pattern, x = learning iteration.

    Args:
        run_dir: the rsl_rl run folder (holds ``events.out.tfevents.*``).
        out_png: the PNG to write (default ``<run_dir>/learning_curve.png``); folders are created.
        tags: one panel per entry, an exact tag or an fnmatch pattern (``"Loss/*"``) whose matches
            share the panel. Default :data:`DEFAULT_CURVE_TAGS` (mean reward, mean episode length,
            ``Episode_Course/*``, ``Episode_Reward/*``, ``Episode_Termination/*``), each only when
            present (a run logged before ``Episode_Course/*`` gets its passes per episode derived
            from the pass-counting reward term: :func:`course_scalars`); when none
            is (no episode finished yet) the loss and policy-std panels. Patterns skip the
            ``*/time`` series (their step is wall seconds); name one exactly to plot it vs seconds.
        steps_per_iteration: env steps per iteration (``num_steps_per_env * num_envs``); adds a
            second x axis on top: env steps collected when the iteration was logged,
            ``(iteration + 1) * steps_per_iteration`` (a fresh run, not a resumed one).
            See :func:`steps_per_iteration_from_params`.

    Returns:
        The PNG path.

    Raises:
        FileNotFoundError: no events file (see :func:`read_scalars`).
        ValueError: an explicit ``tags`` entry matches nothing, the run has no scalar to plot, or
            ``steps_per_iteration`` is not a positive integer.
    """
    from matplotlib.figure import Figure

    run = pathlib.Path(run_dir)
    if steps_per_iteration is not None and (
        isinstance(steps_per_iteration, bool) or not isinstance(steps_per_iteration, numbers.Integral)
        or steps_per_iteration <= 0
    ):
        raise ValueError(f"steps_per_iteration must be a positive integer, got {steps_per_iteration!r}")
    scalars = read_scalars(run)
    scalars = {**course_scalars(run, scalars), **scalars}  # an older run: passes derived from its reward term
    panels = _curve_panels(scalars, tags, run)

    ncols = 1 if len(panels) == 1 else 2
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(6.0 * ncols, 3.4 * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, (pattern, matched) in zip(axes.flat, panels):
        _curve_panel(ax, scalars, pattern, matched, steps_per_iteration)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(f"{run.parent.name}/{run.name}" if run.parent.name else run.name, fontsize=11)
    return _save(fig, out_png if out_png is not None else run / "learning_curve.png")


# -- trajectories -------------------------------------------------------------------------------
def _array(value: Any, name: str, shape_hint: str) -> np.ndarray:
    try:
        return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected a numeric array {shape_hint}, got {type(value).__name__}") from exc


def _check_trajectory_args(n: int, paths, titles, crashes, dt, color_by: str) -> None:
    if len(paths) != n:
        raise ValueError(f"courses and paths must have the same length, got {n} courses and {len(paths)} paths")
    if n == 0:
        raise ValueError("plot_trajectories needs at least one env (courses is empty)")
    if n > MAX_TRAJECTORY_PANELS:
        raise ValueError(f"at most {MAX_TRAJECTORY_PANELS} envs per figure, got {n}; pass a slice")
    if titles is not None and len(titles) != n:
        raise ValueError(f"titles has {len(titles)} entries for {n} envs")
    if crashes is not None and len(crashes) != n:
        raise ValueError(f"crashes has {len(crashes)} entries for {n} envs")
    if color_by not in ("speed", "time"):
        raise ValueError(f"color_by must be 'speed' or 'time', got {color_by!r}")
    if dt is not None and not (isinstance(dt, numbers.Real) and dt > 0):
        raise ValueError(f"dt must be a positive number of seconds, got {dt!r}")


def _path_points(paths: Sequence[Any]) -> list[np.ndarray]:
    """Each path's x, y ``[T,2]``."""
    xys = []
    for i, p in enumerate(paths):
        a = _array(p, f"paths[{i}]", "[T,3]")
        if a.ndim != 2 or a.shape[1] not in (2, 3) or len(a) == 0:
            raise ValueError(f"paths[{i}] must be [T,3] (or [T,2]) with T >= 1, got shape {a.shape}")
        xys.append(a[:, :2])
    return xys


def _crash_points(crashes: Sequence[Any | None] | None, n: int) -> list[np.ndarray]:
    """Each env's crash points x, y ``[K,2]`` (K = 0 without any)."""
    out = []
    for i in range(n):
        c = None if crashes is None else crashes[i]
        if c is None or (hasattr(c, "__len__") and len(c) == 0):
            out.append(np.zeros((0, 2)))
            continue
        a = _array(c, f"crashes[{i}]", "[K,3]")
        a = a.reshape(1, -1) if a.ndim == 1 else a
        if a.ndim != 2 or a.shape[1] not in (2, 3):
            raise ValueError(f"crashes[{i}] must be [K,3] (or [K,2]) points, got shape {a.shape}")
        out.append(a[:, :2])
    return out


def _segment_colors(xys: list[np.ndarray], color_by: str, dt: float | None):
    """Per path the value of each segment (speed or time), one color scale for all, the unit."""
    from matplotlib.colors import Normalize

    scale = float(dt) if dt is not None else 1.0
    values = []
    for xy in xys:
        if color_by == "speed":
            values.append(np.linalg.norm(np.diff(xy, axis=0), axis=1) / scale)
        else:
            values.append((np.arange(len(xy) - 1) + 0.5) * scale)
    flat = np.concatenate(values) if any(len(v) for v in values) else np.zeros(1)
    norm = Normalize(float(flat.min()), float(max(flat.max(), flat.min() + 1e-9)))
    unit = ("m/s" if dt is not None else "m/sample") if color_by == "speed" else ("s" if dt is not None else "sample")
    return values, norm, unit


def _draw_path(ax, xy: np.ndarray, values: np.ndarray, norm, crash: np.ndarray):
    """The colored path, a green start dot, an end square, red crosses; the path's collection
    (None for a single point)."""
    from matplotlib.collections import LineCollection

    lc = None
    if len(xy) > 1:
        lc = LineCollection(np.stack([xy[:-1], xy[1:]], axis=1), cmap="viridis", norm=norm, linewidths=1.6, zorder=4)
        lc.set_array(values)
        ax.add_collection(lc)
    ax.plot([xy[0, 0]], [xy[0, 1]], "o", ms=6, color=_START_COLOR, mec="white", mew=0.8, zorder=7)
    ax.plot([xy[-1, 0]], [xy[-1, 1]], "s", ms=4, color=_LINE_COLOR, zorder=6)
    if len(crash):
        ax.plot(crash[:, 0], crash[:, 1], "x", ms=8, mew=2.0, color=_CRASH_COLOR, zorder=8)
    return lc


def _square_view(ax, points: list[np.ndarray], title: str) -> None:
    """Square limits around ``points`` (equal aspect), title and axis labels."""
    pts = np.vstack(points)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    mid, half = 0.5 * (lo + hi), 0.5 * float(max(hi - lo)) * 1.06 + 0.1
    ax.set_xlim(mid[0] - half, mid[0] + half)
    ax.set_ylim(mid[1] - half, mid[1] + half)
    ax.set_aspect("equal", adjustable="box")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("x [m]", fontsize=7)
    ax.set_ylabel("y [m]", fontsize=7)
    ax.tick_params(labelsize=6)


def plot_trajectories(
    out_png: PathLike,
    courses: Sequence[Mapping[str, Any]],
    paths: Sequence[Any],
    *,
    titles: Sequence[str] | None = None,
    crashes: Sequence[Any | None] | None = None,
    dt: float | None = None,
    color_by: str = "speed",
) -> pathlib.Path:
    """Top-down (x, y) flight paths over their courses: one panel per env, at most 8 (4 a row).

    All positions are in one frame per env (env-local, i.e. world minus env origin) [m].

    Args:
        out_png: the PNG to write (folders are created).
        courses: per env a dict with ``"gates"`` (``pos`` [G,3], ``yaw`` [G], ``width``, optional
            ``count``, ``closed``) and/or ``"line"`` [N,2|3] (optional ``"closed"``, and
            ``"half_width"`` for a band track), drawn by :func:`track_gen.plot.draw_course`
            (which documents each entry).
        paths: per env positions ``[T,3]`` (or ``[T,2]``), colored by speed or time; the start is a
            green dot, the end a square.
        titles: per env panel titles (default ``env <i>``).
        crashes: per env an ``[K,2|3]`` array / list of crash points (red x) or None.
        dt: seconds between path samples; speeds in m/s and time in s with it, per sample without.
        color_by: ``"speed"`` or ``"time"``.

    Returns:
        The PNG path.

    Raises:
        ValueError: lengths of ``courses``, ``paths``, ``titles``, ``crashes`` differ; no env or
            more than :data:`MAX_TRAJECTORY_PANELS`; a malformed course, path or crash list.
        TypeError: a course is not a dict or an array is not numeric.
    """
    from matplotlib.figure import Figure

    from track_gen.plot import course_arrays, draw_course

    n = len(courses)
    _check_trajectory_args(n, paths, titles, crashes, dt, color_by)
    checked = [course_arrays(c, f"courses[{i}]") for i, c in enumerate(courses)]
    xys = _path_points(paths)
    crash_pts = _crash_points(crashes, n)
    values, norm, unit = _segment_colors(xys, color_by, dt)

    ncols = min(n, 4)
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(4.2 * ncols + 0.8, 4.2 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    mappable = None
    for i in range(n):
        ax = axes.flat[i]
        extent = draw_course(ax, checked[i])
        lc = _draw_path(ax, xys[i], values[i], norm, crash_pts[i])
        mappable = lc if lc is not None else mappable
        _square_view(ax, extent + [xys[i], crash_pts[i]], str(titles[i]) if titles is not None else f"env {i}")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if mappable is not None:
        cb = fig.colorbar(mappable, ax=list(axes.flat), shrink=0.8, aspect=30)
        cb.set_label(f"{color_by} [{unit}]", fontsize=8)
        cb.ax.tick_params(labelsize=7)
    return _save(fig, out_png)
