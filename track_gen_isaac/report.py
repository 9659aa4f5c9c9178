"""Training and playback reports: learning curves, top-down flight paths, a summary table.

Independent of any task and of Isaac Lab (nothing here imports it): the inputs are an rsl_rl run
folder, numpy arrays and a dict of numbers. Figures are rendered on matplotlib's Agg canvas
directly (``matplotlib.figure.Figure``, no pyplot), so importing this module switches no global
backend. matplotlib and tensorboard are imported inside the functions that need them.

- :func:`read_scalars`: every scalar series of a run's ``events.out.tfevents.*`` file(s).
- :func:`plot_learning_curve`: reward, episode length and per-term panels vs iteration.
- :func:`plot_trajectories`: flight paths over their courses, one panel per env (at most 8).
- :func:`write_summary`: ``summary.json`` + ``summary.md`` of a playback.
- CLI: ``python -m track_gen_isaac.report curve <run_dir> [--out PNG]``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import numbers
import pathlib
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "read_scalars",
    "steps_per_iteration_from_params",
    "plot_learning_curve",
    "plot_trajectories",
    "write_summary",
    "SUMMARY_KEYS",
    "DEFAULT_CURVE_TAGS",
    "MAX_TRAJECTORY_PANELS",
]

PathLike = str | pathlib.Path

#: Panels of :func:`plot_learning_curve` by default (a pattern that matches no tag is left out).
DEFAULT_CURVE_TAGS: tuple[str, ...] = (
    "Train/mean_reward",
    "Train/mean_episode_length",
    "Episode_Reward/*",
    "Episode_Termination/*",
)
# used when no default panel has data (no episode finished yet): the run still gets a curve
_FALLBACK_CURVE_TAGS: tuple[str, ...] = ("Loss/value", "Loss/surrogate", "Loss/entropy", "Policy/mean_std")
# rsl_rl writes these with the training wall time in whole seconds as the step, not the iteration
_TIME_SUFFIX = "/time"

MAX_TRAJECTORY_PANELS = 8

_START_COLOR = "#27ae60"
_CRASH_COLOR = "#c0392b"
_LINE_COLOR = "#2c3e50"
_BAND_COLOR = "#c9d1d9"


# -- reading ------------------------------------------------------------------------------------
def read_scalars(run_dir: PathLike) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every scalar series of an rsl_rl (or any tensorboard) run folder.

    Reads all ``events.out.tfevents.*`` files directly in ``run_dir`` (not its subfolders) with
    tensorboard's ``EventAccumulator``, keeping every point (no down-sampling).

    Tags rsl_rl 5.5.1 writes (``rsl_rl/utils/logger.py``, once per learning iteration, step =
    iteration index, 0-based, continuing from the loaded iteration on resume):

    - ``Train/mean_reward``, ``Train/mean_episode_length``: mean return / length [env steps] over
      the last 100 finished episodes; only once an episode has finished.
    - ``Train/mean_reward/time``, ``Train/mean_episode_length/time``: the same values with the
      training wall time in whole seconds as the step (not the iteration).
    - ``Loss/value``, ``Loss/surrogate``, ``Loss/entropy`` (+ ``Loss/rnd``, ``Loss/symmetry`` when
      enabled), ``Loss/learning_rate``; ``Policy/mean_std`` (mean action std).
    - ``Perf/total_fps`` [env steps/s], ``Perf/collection_time``, ``Perf/learning_time`` [s].
    - ``Rnd/*`` with random network distillation.
    - Episode extras, the mean over the iteration's resets: keys holding a ``/`` are written as is,
      others as ``Episode/<key>``. Isaac Lab's managers fill them: ``Episode_Reward/<term>`` (a
      term's summed reward per episode divided by ``episode_length_s``), ``Episode_Termination/<term>``
      (fraction of envs whose last episode ended by that term), ``Curriculum/<term>[/<key>]``,
      ``Metrics/<command>/<metric>``.

    Returns:
        ``{tag: (steps int64 [K], values float64 [K])}`` in the order written.

    Raises:
        FileNotFoundError: ``run_dir`` is not a folder or holds no events file.
    """
    from tensorboard.backend.event_processing import event_accumulator as ea

    run = pathlib.Path(run_dir)
    if not run.is_dir():
        raise FileNotFoundError(f"run_dir {str(run)!r} is not a folder")
    files = sorted(run.glob("events.out.tfevents.*"))
    if not files:
        raise FileNotFoundError(
            f"no events.out.tfevents.* file in {str(run)!r} (expected an rsl_rl run folder such as "
            "logs/rsl_rl/<experiment>/<timestamp>)"
        )
    acc = ea.EventAccumulator(str(run), size_guidance={ea.SCALARS: 0})  # 0: keep every point
    acc.Reload()
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for tag in acc.Tags().get("scalars", []):
        events = acc.Scalars(tag)
        out[tag] = (
            np.array([e.step for e in events], dtype=np.int64),
            np.array([e.value for e in events], dtype=np.float64),
        )
    return out


def _params_loader():
    """A safe YAML loader that reads Isaac Lab's ``python/tuple`` (and other) tags as plain data."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def plain(loader, _suffix, node):
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", plain)
    Loader.add_multi_constructor("!", plain)
    return Loader


def steps_per_iteration_from_params(run_dir: PathLike) -> int | None:
    """Env steps per learning iteration (``num_steps_per_env * scene.num_envs``) from the run's
    ``params/agent.yaml`` and ``params/env.yaml``; None when either is missing or lacks the key.

    Counts one process's envs (multi-GPU runs collect ``world_size`` times as many).
    """
    import yaml

    params = pathlib.Path(run_dir) / "params"
    try:
        with open(params / "agent.yaml") as f:
            agent = yaml.load(f, Loader=_params_loader())
        with open(params / "env.yaml") as f:
            env = yaml.load(f, Loader=_params_loader())
        n = int(agent["num_steps_per_env"]) * int(env["scene"]["num_envs"])
    except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError):
        return None
    return n if n > 0 else None


def term_count_scale(run_dir: PathLike, term: str) -> float | None:
    """What turns ``Episode_Reward/<term>`` into events per episode (e.g. gates passed) for a
    reward term worth ``weight`` per event: Isaac Lab logs the episode sum divided by the
    episode length in seconds, and each event adds ``weight * step_dt``, so the count is the
    logged value x ``episode_length_s / (weight * sim.dt * decimation)`` (this scale). Read from
    the run's ``params/env.yaml``; None when it or the term is missing or the weight is 0."""
    import yaml

    try:
        with open(pathlib.Path(run_dir) / "params" / "env.yaml") as f:
            env = yaml.load(f, Loader=_params_loader())
        weight = float(env["rewards"][term]["weight"])
        step_dt = float(env["sim"]["dt"]) * int(env["decimation"])
        scale = float(env["episode_length_s"]) / (weight * step_dt)
    except (OSError, KeyError, TypeError, ValueError, ZeroDivisionError, yaml.YAMLError):
        return None
    return scale if math.isfinite(scale) and scale > 0 else None


# -- learning curve -----------------------------------------------------------------------------
def _select(scalars: Mapping[str, Any], pattern: str) -> list[str]:
    """Tags matching ``pattern`` (fnmatch); wall-time series only when named exactly."""
    if pattern in scalars:
        return [pattern]
    return [t for t in scalars if fnmatch.fnmatchcase(t, pattern) and not t.endswith(_TIME_SUFFIX)]


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
            ``Episode_Reward/*``, ``Episode_Termination/*``), each only when present; when none
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
    from matplotlib.ticker import MaxNLocator

    run = pathlib.Path(run_dir)
    if steps_per_iteration is not None and (
        isinstance(steps_per_iteration, bool) or not isinstance(steps_per_iteration, numbers.Integral)
        or steps_per_iteration <= 0
    ):
        raise ValueError(f"steps_per_iteration must be a positive integer, got {steps_per_iteration!r}")
    scalars = read_scalars(run)
    if isinstance(tags, str):
        raise TypeError(f"tags must be a sequence of tag patterns, got the string {tags!r}")

    panels: list[tuple[str, list[str]]] = []
    if tags is not None:
        for pattern in tags:
            matched = _select(scalars, pattern)
            if not matched:
                raise ValueError(
                    f"tag {pattern!r} matches no scalar in {str(run)!r}; available: {sorted(scalars)}"
                )
            panels.append((pattern, matched))
    else:
        for candidates in (DEFAULT_CURVE_TAGS, _FALLBACK_CURVE_TAGS):
            panels = [(p, m) for p in candidates if (m := _select(scalars, p))]
            if panels:
                break
        if not panels:
            raise ValueError(f"no scalar to plot in {str(run)!r}; tags present: {sorted(scalars)}")

    ncols = 1 if len(panels) == 1 else 2
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(6.0 * ncols, 3.4 * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, (pattern, matched) in zip(axes.flat, panels):
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
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(f"{run.parent.name}/{run.name}" if run.parent.name else run.name, fontsize=11)

    out = pathlib.Path(out_png) if out_png is not None else run / "learning_curve.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


# -- trajectories -------------------------------------------------------------------------------
def _array(value: Any, name: str, shape_hint: str) -> np.ndarray:
    try:
        return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected a numeric array {shape_hint}, got {type(value).__name__}") from exc


def _check_course(i: int, course: Any) -> dict[str, Any]:
    """Validated numpy copy of ``courses[i]``."""
    if not isinstance(course, Mapping):
        raise TypeError(f"courses[{i}]: expected a dict, got {type(course).__name__}")
    if "gates" not in course and "line" not in course:
        raise ValueError(f"courses[{i}]: needs a 'gates' and/or a 'line' entry, got keys {sorted(course)}")
    out: dict[str, Any] = {}
    if "gates" in course:
        g = course["gates"]
        if not isinstance(g, Mapping) or "pos" not in g or "yaw" not in g:
            raise ValueError(f"courses[{i}]['gates']: expected a dict with 'pos' [G,3] and 'yaw' [G]")
        pos = _array(g["pos"], f"courses[{i}]['gates']['pos']", "[G,3]")
        yaw = _array(g["yaw"], f"courses[{i}]['gates']['yaw']", "[G]").reshape(-1)
        if pos.ndim != 2 or pos.shape[1] not in (2, 3) or len(pos) != len(yaw):
            raise ValueError(
                f"courses[{i}]['gates']: pos must be [G,3] and yaw [G], got {pos.shape} and {yaw.shape}")
        count = int(g.get("count", len(pos)))
        if not 0 <= count <= len(pos):
            raise ValueError(f"courses[{i}]['gates']['count'] = {count} is outside 0..{len(pos)}")
        if "width" not in g:
            raise ValueError(f"courses[{i}]['gates'] needs 'width' (the opening [m])")
        width = float(g["width"])
        if not width > 0:
            raise ValueError(f"courses[{i}]['gates']['width'] must be > 0, got {width}")
        out["gates"] = dict(pos=pos[:count, :2], yaw=yaw[:count], width=width,
                            closed=bool(g.get("closed", True)))
    if "line" in course:
        line = _array(course["line"], f"courses[{i}]['line']", "[N,2|3]")
        if line.ndim != 2 or line.shape[1] not in (2, 3) or len(line) < 2:
            raise ValueError(f"courses[{i}]['line'] must be [N,2] or [N,3] with N >= 2, got {line.shape}")
        out["line"] = line[:, :2]
        out["closed"] = bool(course.get("closed", True))
    if "half_width" in course:
        if "line" not in out:
            raise ValueError(f"courses[{i}]: 'half_width' needs a 'line' (the centerline)")
        hw = _array(course["half_width"], f"courses[{i}]['half_width']", "[N]").reshape(-1)
        if hw.size == 1:
            hw = np.full(len(out["line"]), float(hw[0]))
        if len(hw) != len(out["line"]):
            raise ValueError(
                f"courses[{i}]: half_width has {len(hw)} values for a line of {len(out['line'])} points")
        out["half_width"] = hw
    return out


def _band_edges(xy: np.ndarray, hw: np.ndarray, closed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Left/right edges ``xy ± hw * normal`` (normal = tangent turned +90°)."""
    if closed:
        tang = np.roll(xy, -1, axis=0) - np.roll(xy, 1, axis=0)
    else:
        tang = np.gradient(xy, axis=0)
    tang /= np.maximum(np.linalg.norm(tang, axis=1, keepdims=True), 1e-12)
    nrm = np.stack([-tang[:, 1], tang[:, 0]], axis=1)
    return xy + hw[:, None] * nrm, xy - hw[:, None] * nrm


def _gate_bars(pos: np.ndarray, yaw: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Gate bars ``[G,2,2]`` (the opening, ``width`` long along ``yaw + 90°``) and unit flight
    directions ``[G,2]`` (along ``yaw``) from centers ``pos [G,2]`` and ``yaw [G]``."""
    fwd = np.stack([np.cos(yaw), np.sin(yaw)], axis=1)
    across = np.stack([-fwd[:, 1], fwd[:, 0]], axis=1)
    half = 0.5 * width
    return np.stack([pos - half * across, pos + half * across], axis=1), fwd


def _draw_course(ax, c: dict[str, Any]) -> list[np.ndarray]:
    """Draw a validated course; returns the point sets that bound it."""
    from matplotlib.collections import LineCollection

    extent: list[np.ndarray] = []
    if "line" in c:
        xy = c["line"]
        loop = np.vstack([xy, xy[:1]]) if c["closed"] else xy
        if "half_width" in c:
            left, right = _band_edges(xy, c["half_width"], c["closed"])
            if c["closed"]:
                left, right = np.vstack([left, left[:1]]), np.vstack([right, right[:1]])
            ax.fill(np.concatenate([left[:, 0], right[::-1, 0]]), np.concatenate([left[:, 1], right[::-1, 1]]),
                    color=_BAND_COLOR, lw=0, zorder=0)
            for edge in (left, right):
                ax.plot(edge[:, 0], edge[:, 1], color="0.35", lw=0.8, zorder=1)
            extent += [left, right]
        ax.plot(loop[:, 0], loop[:, 1], color="0.5", lw=0.7, ls="--", zorder=1)
        extent.append(xy)
    if "gates" in c:
        g = c["gates"]
        pos, yaw, half = g["pos"], g["yaw"], 0.5 * g["width"]
        if len(pos):
            segs, fwd = _gate_bars(pos, yaw, g["width"])
            across = np.stack([-fwd[:, 1], fwd[:, 0]], axis=1)
            if "line" not in c:
                legs = np.vstack([pos, pos[:1]]) if (g["closed"] and len(pos) > 2) else pos
                ax.plot(legs[:, 0], legs[:, 1], color="0.6", lw=0.6, zorder=1)
            ax.add_collection(LineCollection(segs, colors=_LINE_COLOR, linewidths=3.0, capstyle="butt", zorder=3))
            tick = np.stack([pos, pos + 0.5 * half * fwd], axis=1)  # the direction a gate is passed in
            ax.add_collection(LineCollection(tick, colors=_LINE_COLOR, linewidths=1.0, zorder=3))
            for k in range(len(pos)):
                p = pos[k] + 1.6 * half * across[k]
                ax.text(p[0], p[1], str(k), fontsize=7, ha="center", va="center", zorder=5)
            extent += [segs[:, 0], segs[:, 1]]
    return extent


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
        courses: per env a dict with ``"gates"`` and/or ``"line"``:

            - ``"gates"``: ``{"pos": [G,3], "yaw": [G] (rad, the flight direction through the gate),
              "width": float (opening [m]), "count": int (first ``count`` are real; default G),
              "closed": bool (join the last gate to the first; default True)}``. Drawn as a bar
              of length ``width`` along ``yaw + 90°``, a tick along ``yaw``, and its index.
            - ``"line"``: ``[N,2|3]`` course line or centerline (dashed), ``"closed"`` (default True).
            - ``"half_width"``: ``[N]`` (or a scalar) with a ``"line"``: a band track; its edges are
              drawn at ``line ± half_width`` along the line's normal.
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
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    n = len(courses)
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

    checked = [_check_course(i, c) for i, c in enumerate(courses)]
    xys: list[np.ndarray] = []
    for i, p in enumerate(paths):
        a = _array(p, f"paths[{i}]", "[T,3]")
        if a.ndim != 2 or a.shape[1] not in (2, 3) or len(a) == 0:
            raise ValueError(f"paths[{i}] must be [T,3] (or [T,2]) with T >= 1, got shape {a.shape}")
        xys.append(a[:, :2])
    crash_pts: list[np.ndarray] = []
    for i in range(n):
        c = None if crashes is None else crashes[i]
        if c is None or (hasattr(c, "__len__") and len(c) == 0):
            crash_pts.append(np.zeros((0, 2)))
            continue
        a = _array(c, f"crashes[{i}]", "[K,3]")
        a = a.reshape(1, -1) if a.ndim == 1 else a
        if a.ndim != 2 or a.shape[1] not in (2, 3):
            raise ValueError(f"crashes[{i}] must be [K,3] (or [K,2]) points, got shape {a.shape}")
        crash_pts.append(a[:, :2])

    # per-segment color values, one scale for the whole figure
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

    ncols = min(n, 4)
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(4.2 * ncols + 0.8, 4.2 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    mappable = None
    for i in range(n):
        ax = axes.flat[i]
        extent = _draw_course(ax, checked[i])
        xy = xys[i]
        if len(xy) > 1:
            segs = np.stack([xy[:-1], xy[1:]], axis=1)
            lc = LineCollection(segs, cmap="viridis", norm=norm, linewidths=1.6, zorder=4)
            lc.set_array(values[i])
            ax.add_collection(lc)
            mappable = lc
        ax.plot([xy[0, 0]], [xy[0, 1]], "o", ms=6, color=_START_COLOR, mec="white", mew=0.8, zorder=7)
        ax.plot([xy[-1, 0]], [xy[-1, 1]], "s", ms=4, color=_LINE_COLOR, zorder=6)
        if len(crash_pts[i]):
            ax.plot(crash_pts[i][:, 0], crash_pts[i][:, 1], "x", ms=8, mew=2.0, color=_CRASH_COLOR, zorder=8)
        pts = np.vstack(extent + [xy, crash_pts[i]])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        mid, half = 0.5 * (lo + hi), 0.5 * float(max(hi - lo)) * 1.06 + 0.1  # square view, equal aspect
        ax.set_xlim(mid[0] - half, mid[0] + half)
        ax.set_ylim(mid[1] - half, mid[1] + half)
        ax.set_aspect("equal", adjustable="box")
        ax.set_title(str(titles[i]) if titles is not None else f"env {i}", fontsize=9)
        ax.set_xlabel("x [m]", fontsize=7)
        ax.set_ylabel("y [m]", fontsize=7)
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if mappable is not None:
        cb = fig.colorbar(mappable, ax=list(axes.flat), shrink=0.8, aspect=30)
        cb.set_label(f"{color_by} [{unit}]", fontsize=8)
        cb.ax.tick_params(labelsize=7)

    out = pathlib.Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


# -- summary ------------------------------------------------------------------------------------
#: Keys :func:`write_summary` expects (each optional; extras are kept), in table order.
SUMMARY_KEYS: dict[str, str] = {
    "task": "registered task id",
    "checkpoint": "the model_<it>.pt played back",
    "num_envs": "parallel envs",
    "steps": "env steps per env played back",
    "episodes": "finished episodes, all envs",
    "gates_per_episode": "mean gates passed per finished episode",
    "gates_per_episode_max": "most gates passed in one episode",
    "lap_rate": "fraction of episodes that completed a lap",
    "crash_rate": "fraction of episodes ended by a crash (terminated)",
    "timeout_rate": "fraction of episodes ended by the time limit",
    "env_steps_per_s": "playback throughput, all envs [env steps/s]",
}
_RATE_KEYS = ("lap_rate", "crash_rate", "timeout_rate")


def _round(x: float) -> float | None:
    """6 significant digits; NaN/inf become None (JSON has no such numbers)."""
    if not math.isfinite(x):
        return None
    return float(f"{x:.6g}")


def _plain(value: Any, where: str) -> Any:
    """JSON-ready copy: numpy scalars/arrays and tensors to Python, floats rounded."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        value = value.item() if value.ndim == 0 else value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _round(float(value))
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{j}]") for j, v in enumerate(value)]
    raise TypeError(f"{where}: cannot write a {type(value).__name__} to JSON")


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value).replace("|", "\\|")


def write_summary(out_dir: PathLike, stats: Mapping[str, Any]) -> tuple[pathlib.Path, pathlib.Path]:
    """Write a playback's numbers as ``summary.json`` and a readable ``summary.md`` table.

    ``stats`` holds any of :data:`SUMMARY_KEYS` (task, checkpoint, num_envs, steps, episodes,
    gates_per_episode, gates_per_episode_max, lap_rate, crash_rate, timeout_rate,
    env_steps_per_s) plus any extra keys, and optionally ``"baselines": {name: {key: value}}``
    (e.g. ``"zero"`` and ``"random"`` actions), which become extra columns next to the policy's.

    Floats are rounded to 6 significant digits (NaN/inf written as null); numpy and torch values
    become plain Python numbers or lists.

    Returns:
        ``(summary.json, summary.md)`` paths.

    Raises:
        TypeError: ``stats`` or a baseline is not a dict, or a value cannot be written to JSON.
        ValueError: a rate (``lap_rate``, ``crash_rate``, ``timeout_rate``) is outside [0, 1].
    """
    if not isinstance(stats, Mapping):
        raise TypeError(f"stats must be a dict, got {type(stats).__name__}")
    data = _plain(dict(stats), "stats")
    baselines = data.pop("baselines", None) or {}
    if not isinstance(baselines, dict) or not all(isinstance(b, dict) for b in baselines.values()):
        raise TypeError(f"stats['baselines'] must be {{name: {{key: value}}}}, got {stats.get('baselines')!r}")
    for name, d in [("policy", data), *baselines.items()]:
        for key in _RATE_KEYS:
            v = d.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} {key} must be a fraction in [0, 1], got {v}")

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "summary.json", out / "summary.md"
    full = dict(data, baselines=baselines) if baselines else data
    json_path.write_text(json.dumps(full, indent=2) + "\n")

    keys = [k for k in SUMMARY_KEYS if k in data or any(k in b for b in baselines.values())]
    keys += [k for k in data if k not in keys]
    for b in baselines.values():
        keys += [k for k in b if k not in keys]
    cols = ["policy", *baselines]
    title = data.get("task") or "playback"
    lines = [f"# Playback summary: {_cell(title)}", ""]
    if data.get("checkpoint") is not None:
        lines += [f"checkpoint: `{data['checkpoint']}`", ""]
    lines.append("| metric | " + " | ".join(cols) + " |")
    lines.append("|---|" + "---:|" * len(cols))
    for k in keys:
        row = [_cell(data.get(k))] + [_cell(b.get(k)) for b in baselines.values()]
        lines.append(f"| {k} | " + " | ".join(row) + " |")
    md_path.write_text("\n".join(lines) + "\n")
    return json_path, md_path


# -- CLI ----------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m track_gen_isaac.report curve <run_dir> [--out PNG] [--tags ...]``."""
    parser = argparse.ArgumentParser(prog="python -m track_gen_isaac.report", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    curve = sub.add_parser("curve", help="learning curve PNG of an rsl_rl run folder")
    curve.add_argument("run_dir", type=pathlib.Path, help="logs/rsl_rl/<experiment>/<timestamp>")
    curve.add_argument("--out", type=pathlib.Path, default=None, help="PNG (default <run_dir>/learning_curve.png)")
    curve.add_argument("--tags", nargs="+", default=None, help="tags or fnmatch patterns, one panel each")
    curve.add_argument("--steps-per-iteration", type=int, default=None,
                       help="env steps per iteration for the top axis (default: from params/*.yaml; 0: none)")
    curve.add_argument("--list", action="store_true", help="also print every scalar tag and its last value")
    args = parser.parse_args(argv)

    try:
        spi = args.steps_per_iteration
        if spi is None:
            spi = steps_per_iteration_from_params(args.run_dir)
        out = plot_learning_curve(args.run_dir, args.out, args.tags, steps_per_iteration=spi or None)
        if args.list:
            for tag, (steps, values) in read_scalars(args.run_dir).items():
                print(f"{tag}: {len(steps)} points, last step {steps[-1]} = {values[-1]:.6g}")
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
