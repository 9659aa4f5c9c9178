"""Top-down pictures of courses, for eyeballing a generator (not for a training loop).

Everything here reads the committed result back to the host (``.numpy()``), so keep it out of
recorded graphs and hot paths. matplotlib is imported inside the functions, and figures are
rendered with the Agg canvas directly: importing this module never imports matplotlib, and no
global backend is switched.

- :func:`draw_track` / :func:`draw_gates` draw one env's course into a matplotlib ``Axes``.
- :func:`draw_course` draws a course given as plain arrays (a dict of gates and/or a line), e.g.
  under a flight path (``track_gen_isaac.report``); :func:`course_arrays` validates such a dict.

All three draw through one renderer (:func:`_render_band` for a band and its line,
:func:`_render_gates` for gate bars), in the contact sheet's look (heights as colors, invalid
envs in red) or the plain look under a flight path.
- :func:`contact_sheet` draws the first envs of a track and/or a gate generator into a PNG grid.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = ["draw_track", "draw_gates", "draw_course", "course_arrays", "contact_sheet", "host_result"]

_INVALID_COLOR = "#c0392b"
_BAND_COLOR = "#9aa7b4"
_LIGHT_BAND_COLOR = "#c9d1d9"  # draw_course: under a flight path
_LINE_COLOR = "#2c3e50"
_START_COLOR = "#27ae60"


# -- host copies --------------------------------------------------------------------------------
def _to_numpy(arr: Any) -> np.ndarray:
    return arr.numpy() if hasattr(arr, "numpy") else np.asarray(arr)


def host_result(result: Any) -> SimpleNamespace:
    """A host copy of a result: every field as a numpy array (one read per array).

    Accepts a :class:`~track_gen.TrackResult` / :class:`~track_gen.GateResult` (or any dataclass of
    arrays), a generator (its ``.result`` is used), or an object that is already a host copy.
    Passing the copy to :func:`draw_track` / :func:`draw_gates` avoids reading the device once per
    panel.
    """
    if isinstance(result, SimpleNamespace):
        return result
    if hasattr(result, "result") and not dataclasses.is_dataclass(result):
        result = result.result
    if not dataclasses.is_dataclass(result):
        raise TypeError(
            f"expected a TrackResult, a GateResult or a generator, got {type(result).__name__}"
        )
    return SimpleNamespace(**{f.name: _to_numpy(getattr(result, f.name)) for f in dataclasses.fields(result)})


def _status_text(status: int, flags: Any) -> str:
    """Failure bits as ``"BOUNDS|OVERLAP"`` ("" when none is set)."""
    if not status:
        return ""
    names = [m.name for m in flags if m.value and status & m.value]
    return "|".join(names) if names else f"status {status}"


def _start_arrow(ax, x: float, y: float, yaw: float, length: float, zorder: int = 6) -> None:
    ax.plot([x], [y], marker="o", ms=5, color=_START_COLOR, mec="white", mew=0.8, zorder=zorder)
    ax.annotate(
        "", xy=(x + length * math.cos(yaw), y + length * math.sin(yaw)), xytext=(x, y),
        arrowprops=dict(arrowstyle="-|>", color=_START_COLOR, lw=1.6, mutation_scale=10), zorder=zorder,
    )


def _frame(ax, size: float | None, extent: np.ndarray, valid: bool) -> None:
    """Square outline, equal aspect, limits, and a red frame around invalid envs."""
    from matplotlib.patches import Rectangle

    lim = float(np.max(np.abs(extent))) if extent.size else 1.0
    if size is not None and size > 0:
        h = 0.5 * float(size)
        ax.add_patch(Rectangle((-h, -h), 2 * h, 2 * h, fill=False, ls="--", lw=0.8, ec="0.55", zorder=0))
        lim = max(lim, h)  # a course leaving its square (BOUNDS) stays in view
    lim = lim * 1.06 + 1e-3
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=6, length=2)
    for spine in ax.spines.values():
        spine.set_color(_INVALID_COLOR if not valid else "0.6")
        spine.set_linewidth(2.5 if not valid else 0.8)


def _title(ax, env: int, length: float, valid: bool, status_text: str, extra: str = "") -> None:
    text = f"env {env}  L={length:.1f} m{extra}\n" + (
        "valid" if valid else "INVALID" + (f" [{status_text}]" if status_text else ""))
    ax.set_title(text, fontsize=7, color=_INVALID_COLOR if not valid else "black",
                 fontweight="bold" if not valid else "normal")


# -- the renderer -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Look:
    """How :func:`_render` draws: the contact sheet's panels (:func:`draw_track`, :func:`draw_gates`)
    or a plain course under a flight path (:func:`draw_course`)."""

    band: str = _LIGHT_BAND_COLOR
    band_alpha: float = 1.0
    edge: str = "0.35"
    edge_lw: float = 0.8
    line: str = "0.5"
    line_lw: float = 0.7
    line_ls: str = "--"
    legs: str = "0.6"
    legs_lw: float = 0.6
    arrows: bool = False  # gates: an arrow along the flight direction (else a short tick) and the index behind it


def _sheet_look(valid: bool) -> _Look:
    """The contact sheet's look; an invalid env is drawn in red."""
    bad = _INVALID_COLOR
    return _Look(band=_BAND_COLOR if valid else "#f1a9a0", band_alpha=0.9, edge="0.35" if valid else bad, edge_lw=0.6,
                 line=_LINE_COLOR if valid else bad, line_lw=1.0, line_ls="-", legs="0.55" if valid else bad,
                 legs_lw=0.7, arrows=True)


def _height_lines(segs: np.ndarray, values: np.ndarray, z_range, cmap: str, width: float, zorder: int, **kw):
    """A ``LineCollection`` of ``segs`` colored by ``values`` on ``z_range`` (default: their range)."""
    from matplotlib.collections import LineCollection

    lo, hi = z_range if z_range is not None else ((float(values.min()), float(values.max())) if values.size
                                                   else (0.0, 1.0))
    if hi <= lo:
        hi = lo + 1e-6
    lines = LineCollection(segs, cmap=cmap, linewidths=width, zorder=zorder, **kw)
    lines.set_array(values)
    lines.set_clim(lo, hi)
    return lines


def _render_band(ax, line: np.ndarray, left: np.ndarray | None, right: np.ndarray | None, closed: bool,
                 look: _Look, z: np.ndarray | None = None, z_range=None, cmap: str = "viridis"):
    """A band (filled between its ``left`` and ``right`` edges, when given) and its centre ``line``
    (colored by height ``z`` when given). Returns the drawn point arrays and the height lines (or None)."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path

    extent: list[np.ndarray] = []
    if left is not None:
        if closed:  # a ring: the left edge one way, the right edge the other (nonzero winding leaves the hole)
            verts = np.concatenate([left, left[:1], right[::-1], right[-1:]])
            codes = np.full(len(verts), Path.LINETO, dtype=np.uint8)
            codes[[0, len(left) + 1]] = Path.MOVETO
            codes[[len(left), -1]] = Path.CLOSEPOLY
            left, right = np.vstack([left, left[:1]]), np.vstack([right, right[:1]])
        else:
            verts = np.concatenate([left, right[::-1], left[:1]])
            codes = np.full(len(verts), Path.LINETO, dtype=np.uint8)
            codes[0], codes[-1] = Path.MOVETO, Path.CLOSEPOLY
        ax.add_patch(PathPatch(Path(verts, codes), fc=look.band, ec="none", alpha=look.band_alpha, lw=0, zorder=0))
        for edge in (left, right):
            ax.plot(edge[:, 0], edge[:, 1], color=look.edge, lw=look.edge_lw, zorder=1)
        extent += [left, right]
    path = np.vstack([line, line[:1]]) if closed else line
    lines = None
    if z is not None:
        zl = np.append(z, z[:1]) if closed else z
        lines = _height_lines(np.stack([path[:-1], path[1:]], axis=1), 0.5 * (zl[:-1] + zl[1:]), z_range, cmap, 1.8, 3)
        ax.add_collection(lines)
    else:
        ax.plot(path[:, 0], path[:, 1], color=look.line, lw=look.line_lw, ls=look.line_ls, zorder=2)
    extent.append(line)
    return extent, lines


def _render_gates(ax, centers: np.ndarray, fwd: np.ndarray, half: float, legs: bool, closed: bool, look: _Look,
                  z: np.ndarray | None = None, z_range=None, cmap: str = "plasma", labels: bool = True,
                  span: float = 1.0):
    """Gate bars (``2 half`` long across the flight direction ``fwd``, colored by height ``z`` when
    given), the flight direction, each gate's index and, with ``legs``, lines joining the gates in
    order. Returns the drawn point arrays and the bars' ``LineCollection``."""
    from matplotlib.collections import LineCollection

    count = len(centers)
    across = np.stack([-fwd[:, 1], fwd[:, 0]], axis=1)
    if legs and count:
        path = np.vstack([centers, centers[:1]]) if (closed and count > 2) else centers
        ax.plot(path[:, 0], path[:, 1], color=look.legs, lw=look.legs_lw, zorder=1)
    segs = np.stack([centers - half * across, centers + half * across], axis=1) if count else np.zeros((0, 2, 2))
    if z is not None:
        bars = _height_lines(segs, z, z_range, cmap, 3.0, 3, capstyle="butt")
    else:
        bars = LineCollection(segs, colors=_LINE_COLOR, linewidths=3.0, capstyle="butt", zorder=3)
    ax.add_collection(bars)
    if look.arrows:
        arrow = max(0.6 * half, 0.06 * span)
        if count:
            ax.quiver(centers[:, 0], centers[:, 1], arrow * fwd[:, 0], arrow * fwd[:, 1], angles="xy",
                      scale_units="xy", scale=1.0, width=0.006, headwidth=4, headlength=4, headaxislength=3.5,
                      color=_LINE_COLOR, zorder=4)
        spots = centers - 0.9 * arrow * fwd + 0.35 * arrow * across
    else:
        tick = np.stack([centers, centers + 0.5 * half * fwd], axis=1)  # the direction a gate is passed in
        ax.add_collection(LineCollection(tick, colors=_LINE_COLOR, linewidths=1.0, zorder=3))
        spots = centers + 1.6 * half * across
    if labels:
        for k in range(count):
            ax.text(spots[k, 0], spots[k, 1], str(k), fontsize=6 if look.arrows else 7, ha="center", va="center",
                    color="black", zorder=5)
    return ([segs[:, 0], segs[:, 1]] if count else []), bars


# -- one env of a generator ---------------------------------------------------------------------
def draw_track(
    ax,
    result: Any,
    env: int,
    *,
    show_points: bool = False,
    size: float | None = None,
    color_by_z: bool | None = None,
    z_range: tuple[float, float] | None = None,
    cmap: str = "viridis",
    title: bool = True,
):
    """Draw env ``env``'s band track top-down into ``ax``.

    Draws the band (filled between the edges ``xy ± half_width * normal``), the centerline, the
    start pose (a dot and an arrow along ``start_yaw``) and, with ``size``, the square the course
    must fit in. An invalid env gets a red band, a red frame and its failure bits in the title.

    Args:
        ax: a matplotlib ``Axes``.
        result: a :class:`~track_gen.TrackResult`, its :func:`host_result` copy, or a generator.
        env: the env index.
        show_points: also mark every centerline point.
        size: side of the square [m] to outline (e.g. ``generator.params["centerline.size"]``).
        color_by_z: color the centerline by height; ``None`` does so when the height varies
            (elevated tracks).
        z_range: ``(lo, hi)`` of the height colormap (default: this env's range).
        cmap: the height colormap.
        title: set the panel title (env, loop length, validity).

    Returns:
        The height ``LineCollection`` when the centerline is colored by z (for a colorbar), else None.
    """
    from track_gen.generators.track import TrackStatus

    r = host_result(result)
    e = int(env)
    xy = np.asarray(r.xy[e], dtype=np.float64).reshape(-1, 2)
    hw = np.asarray(r.half_width[e], dtype=np.float64).reshape(-1)
    nrm = np.asarray(r.normal[e], dtype=np.float64).reshape(-1, 2)
    z = np.asarray(r.z[e], dtype=np.float64).reshape(-1) if hasattr(r, "z") else np.zeros(len(xy))
    valid = bool(r.valid[e])
    status = int(r.status[e]) if hasattr(r, "status") else 0
    length = float(r.length[e]) if hasattr(r, "length") else float(np.sum(np.linalg.norm(np.diff(xy, axis=0), axis=1)))
    if color_by_z is None:
        color_by_z = bool(z.size and np.ptp(z) > 1e-6)
    left, right = xy + hw[:, None] * nrm, xy - hw[:, None] * nrm  # the stored normals
    _, lines = _render_band(ax, xy, left, right, True, _sheet_look(valid), z if color_by_z else None, z_range, cmap)
    if show_points:
        ax.plot(xy[:, 0], xy[:, 1], ".", ms=2, color="black", zorder=4)
    sp = np.asarray(r.start_pos[e], dtype=np.float64).reshape(-1)
    extent = np.vstack([left, right])
    span = size if size else float(np.ptp(extent, axis=0).max()) if extent.size else 1.0
    _start_arrow(ax, sp[0], sp[1], float(r.start_yaw[e]), 0.1 * span)
    _frame(ax, size, extent, valid)
    if title:
        zt = f"  z {z.min():.2f}..{z.max():.2f}" if color_by_z else ""
        _title(ax, e, length, valid, _status_text(status, TrackStatus), zt)
    return lines


def draw_gates(
    ax,
    result: Any,
    env: int,
    *,
    size: float | None = None,
    closed: bool = True,
    z_range: tuple[float, float] | None = None,
    cmap: str = "plasma",
    labels: bool = True,
    title: bool = True,
):
    """Draw env ``env``'s gate course top-down into ``ax``.

    Each gate is a bar of length ``width + 2 * thickness`` across its normal, colored by its
    height, with an arrow along the normal (the direction it is passed in) and its index. A thin
    line joins the gate centres in order (closed for a loop); the start pose is a dot and an arrow.
    An invalid env gets a red frame and its failure bits in the title.

    Args:
        ax: a matplotlib ``Axes``.
        result: a :class:`~track_gen.GateResult`, its :func:`host_result` copy, or a generator.
        env: the env index.
        size: side of the square [m] to outline (e.g. ``generator.params["gates.size"]``).
        closed: the course is a loop (draw the leg from the last gate back to the first).
        z_range: ``(lo, hi)`` of the height colormap (default: this env's gate heights).
        cmap: the height colormap.
        labels: write each gate's index next to it.
        title: set the panel title (env, path length, gate count, validity).

    Returns:
        The ``LineCollection`` of gate bars (for a colorbar of the heights).
    """
    from track_gen.generators.gates import GateStatus

    r = host_result(result)
    e = int(env)
    count = int(r.count[e])
    pos = np.asarray(r.pos[e], dtype=np.float64).reshape(-1, 3)[:count]
    nrm = np.asarray(r.normal[e], dtype=np.float64).reshape(-1, 3)[:count, :2]
    valid = bool(r.valid[e])
    status = int(r.status[e]) if hasattr(r, "status") else 0
    bar = 0.5 * float(r.width[e]) + float(r.thickness[e])
    centers = pos[:, :2]
    span = size if size else (float(np.ptp(centers, axis=0).max()) + 2 * bar if count else 1.0)
    _, bars = _render_gates(ax, centers, nrm, bar, True, closed, _sheet_look(valid), pos[:, 2], z_range, cmap,
                            labels, span)
    sp = np.asarray(r.start_pos[e], dtype=np.float64).reshape(-1)
    _start_arrow(ax, sp[0], sp[1], float(r.start_yaw[e]), 0.1 * span)
    extent = np.vstack([centers - bar, centers + bar, sp[None, :2]]) if count else sp[None, :2]
    _frame(ax, size, extent, valid)
    if title:
        _title(ax, e, float(r.length[e]), valid, _status_text(status, GateStatus), f"  {count} gates")
    return bars


# -- courses as plain arrays --------------------------------------------------------------------
def _float_array(value: Any, name: str, shape_hint: str) -> np.ndarray:
    try:
        return np.asarray(_to_numpy(value), dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected a numeric array {shape_hint}, got {type(value).__name__}") from exc


def _course_gates(g: Any, name: str) -> dict[str, Any]:
    """Validated ``course["gates"]``: the first ``count`` centers ``[G,2]``, yaws, width, closed."""
    if not isinstance(g, Mapping) or "pos" not in g or "yaw" not in g:
        raise ValueError(f"{name}: expected a dict with 'pos' [G,3] and 'yaw' [G]")
    pos = _float_array(g["pos"], f"{name}['pos']", "[G,3]")
    yaw = _float_array(g["yaw"], f"{name}['yaw']", "[G]").reshape(-1)
    if pos.ndim != 2 or pos.shape[1] not in (2, 3) or len(pos) != len(yaw):
        raise ValueError(f"{name}: pos must be [G,3] and yaw [G], got {pos.shape} and {yaw.shape}")
    count = int(g.get("count", len(pos)))
    if not 0 <= count <= len(pos):
        raise ValueError(f"{name}['count'] = {count} is outside 0..{len(pos)}")
    if "width" not in g:
        raise ValueError(f"{name} needs 'width' (the opening [m])")
    width = float(g["width"])
    if not width > 0:
        raise ValueError(f"{name}['width'] must be > 0, got {width}")
    return dict(pos=pos[:count, :2], yaw=yaw[:count], width=width, closed=bool(g.get("closed", True)))


def course_arrays(course: Any, name: str = "course") -> dict[str, Any]:
    """A validated numpy copy of a course given as plain arrays (the input of :func:`draw_course`).

    ``course`` is a dict with ``"gates"`` and/or ``"line"`` (and optionally ``"half_width"``, see
    :func:`draw_course`); the copy keeps x, y of every point, the first ``count`` gates, a
    scalar ``half_width`` repeated per line point, and ``closed`` flags filled with their defaults.
    ``name`` prefixes the error messages (e.g. ``"courses[3]"``).

    Raises:
        TypeError: ``course`` is not a dict, or an array is not numeric.
        ValueError: no ``"gates"`` and no ``"line"``, or an entry of the wrong shape or value.
    """
    if not isinstance(course, Mapping):
        raise TypeError(f"{name}: expected a dict, got {type(course).__name__}")
    if "gates" not in course and "line" not in course:
        raise ValueError(f"{name}: needs a 'gates' and/or a 'line' entry, got keys {sorted(course)}")
    out: dict[str, Any] = {}
    if "gates" in course:
        out["gates"] = _course_gates(course["gates"], f"{name}['gates']")
    if "line" in course:
        line = _float_array(course["line"], f"{name}['line']", "[N,2|3]")
        if line.ndim != 2 or line.shape[1] not in (2, 3) or len(line) < 2:
            raise ValueError(f"{name}['line'] must be [N,2] or [N,3] with N >= 2, got {line.shape}")
        out["line"] = line[:, :2]
        out["closed"] = bool(course.get("closed", True))
    if "half_width" in course:
        if "line" not in out:
            raise ValueError(f"{name}: 'half_width' needs a 'line' (the centerline)")
        hw = _float_array(course["half_width"], f"{name}['half_width']", "[N]").reshape(-1)
        if hw.size == 1:
            hw = np.full(len(out["line"]), float(hw[0]))
        if len(hw) != len(out["line"]):
            raise ValueError(f"{name}: half_width has {len(hw)} values for a line of {len(out['line'])} points")
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


def draw_course(ax, course: Any) -> list[np.ndarray]:
    """Draw one course given as plain arrays top-down into ``ax`` (e.g. under a flight path).

    ``course`` is a dict (validated by :func:`course_arrays`) with ``"gates"`` and/or ``"line"``:

    - ``"gates"``: ``{"pos": [G,3], "yaw": [G] (rad, the flight direction through the gate),
      "width": float (opening [m]), "count": int (first ``count`` are real; default G),
      "closed": bool (join the last gate to the first; default True)}``. Drawn as a dark bar of
      length ``width`` along ``yaw + 90°``, a tick along ``yaw``, and its index; without a
      ``"line"``, a thin line joins the gates in order.
    - ``"line"``: ``[N,2|3]`` course line or centerline (dashed), ``"closed"`` (default True).
    - ``"half_width"``: ``[N]`` (or a scalar) with a ``"line"``: a band track, filled between its
      edges ``line ± half_width`` along the line's normal.

    Sets no limits, aspect or title. Returns the point arrays ``[K,2]`` that bound what was drawn
    (for the caller's view limits).
    """
    c = course_arrays(course)
    look = _Look()
    extent: list[np.ndarray] = []
    if "line" in c:
        left, right = _band_edges(c["line"], c["half_width"], c["closed"]) if "half_width" in c else (None, None)
        extent += _render_band(ax, c["line"], left, right, c["closed"], look)[0]
    if "gates" in c:
        g = c["gates"]
        fwd = _gate_bars(g["pos"], g["yaw"], g["width"])[1]
        extent += _render_gates(ax, g["pos"], fwd, 0.5 * g["width"], "line" not in c, g["closed"], look)[0]
    return extent


# -- contact sheet ------------------------------------------------------------------------------
def _param(gen: Any, name: str, num: int) -> np.ndarray | None:
    """Per-env values of a parameter for the first ``num`` envs (None when it has none)."""
    params = getattr(gen, "params", None)
    if params is None:
        return None
    try:
        base = float(params[name])
    except KeyError:
        return None
    values = np.full(num, base)
    randomizers = getattr(gen, "randomizers", None)
    if randomizers is not None and name in randomizers:
        table = getattr(gen, "_params", None)
        try:  # the values this generation drew; fall back to the widest range
            values = table.values_of(name).numpy()[:num].astype(np.float64)
        except Exception:
            values = np.full(num, float(randomizers[name][1]))
    return values


def _colorbar(fig, mappable, axes, label: str) -> None:
    cb = fig.colorbar(mappable, ax=list(axes.flat), shrink=0.8, pad=0.01, aspect=30)
    cb.set_label(label, fontsize=7)
    cb.ax.tick_params(labelsize=6)


def _grid_rows(n: int, cols: int) -> int:
    return (n + cols - 1) // cols if n else 0


def contact_sheet(
    track_gen: Any = None,
    gate_gen: Any = None,
    path: str | pathlib.Path = "out/courses.png",
    *,
    envs: int = 8,
    cols: int = 4,
    title: str | None = None,
) -> pathlib.Path:
    """Draw the first ``envs`` envs of each generator given into one PNG grid and return its path.

    Track panels come first (row-major), then gate panels on rows of their own. Every panel has
    equal aspect, the env's square, and a title with the env index, course length and validity.
    Elevated tracks color the centerline by height and gates are colored by height, each on a
    scale shared by all panels of its generator.

    Args:
        track_gen: a :class:`~track_gen.TrackGenerator` (or its result), or None.
        gate_gen: a :class:`~track_gen.GateGenerator` (or its result), or None.
        path: where to write the PNG (parent folders are created).
        envs: how many envs of each generator to draw (at most its ``num_envs``).
        cols: panels per row.
        title: the figure title (default: generator kinds and env counts).

    Returns:
        The path of the PNG written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if track_gen is None and gate_gen is None:
        raise ValueError("contact_sheet: pass a track generator, a gate generator, or both")
    if isinstance(envs, bool) or not isinstance(envs, int) or envs < 1:
        raise ValueError(f"envs: expected an int >= 1, got {envs!r}")
    if isinstance(cols, bool) or not isinstance(cols, int) or cols < 1:
        raise ValueError(f"cols: expected an int >= 1, got {cols!r}")

    tr = host_result(track_gen) if track_gen is not None else None
    gr = host_result(gate_gen) if gate_gen is not None else None
    nt = min(envs, len(tr.valid)) if tr is not None else 0
    ng = min(envs, len(gr.valid)) if gr is not None else 0
    cols = max(1, min(cols, max(nt, ng)))
    rt, rg = _grid_rows(nt, cols), _grid_rows(ng, cols)

    panel = 2.7
    fig = Figure(figsize=(cols * panel, (rt + rg) * panel + 0.5), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rt + rg, cols, squeeze=False)
    for ax in axes.flat:
        ax.set_visible(False)

    if tr is not None:
        sizes = _param(track_gen, "centerline.size", nt)
        z = np.asarray(tr.z[:nt], dtype=np.float64)
        elevated = bool(np.ptp(z) > 1e-6)
        z_range = (float(z.min()), float(z.max())) if elevated else None
        for i in range(nt):
            ax = axes[i // cols, i % cols]
            ax.set_visible(True)
            lines = draw_track(ax, tr, i, size=None if sizes is None else float(sizes[i]), color_by_z=elevated,
                               z_range=z_range)
        if elevated and lines is not None:
            _colorbar(fig, lines, axes[:rt], "track height [m]")
    if gr is not None:
        sizes = _param(gate_gen, "gates.size", ng)
        closed_val = _param(gate_gen, "gates.closed", 1)
        closed = True if closed_val is None else bool(closed_val[0])
        counts = np.asarray(gr.count[:ng])
        heights = np.concatenate([np.asarray(gr.pos[i])[: int(counts[i]), 2] for i in range(ng)] or [np.zeros(0)])
        z_range = (float(heights.min()), float(heights.max())) if heights.size else None
        for i in range(ng):
            ax = axes[rt + i // cols, i % cols]
            ax.set_visible(True)
            bars = draw_gates(ax, gr, i, size=None if sizes is None else float(sizes[i]), closed=closed,
                              z_range=z_range)
        if ng:
            _colorbar(fig, bars, axes[rt:], "gate height [m]")

    if title is None:
        parts = []
        if tr is not None:
            parts.append(f"band tracks: {int(np.sum(tr.valid[:nt]))}/{nt} valid")
        if gr is not None:
            parts.append(f"gate courses ({'loop' if closed else 'sprint'}): {int(np.sum(gr.valid[:ng]))}/{ng} valid")
        title = "   |   ".join(parts)
    fig.suptitle(title, fontsize=9)

    out = pathlib.Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, format="png")
    return out
