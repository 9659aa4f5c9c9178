"""The evaluation's pictures: a histogram of lap-time ratios, and the best and worst courses top
down with the flown path coloured by speed (courses drawn by :func:`track_gen.plot.draw_course`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from track_gen.plot import draw_course

__all__ = ["plot_ratio_histogram", "plot_best_worst", "plot_layout_paths", "rank_courses"]

DPI = 110


def _figure(w: float, h: float, cols: int = 1):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h))
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, cols, squeeze=False)[0]


def plot_ratio_histogram(path: Path, rows: list[dict], title: str) -> Path:
    """Histogram of the per-course flying-lap and first-lap time ratios (1 = the reference)."""
    fig, (ax,) = _figure(7.0, 4.0)
    lap = np.array([r["lap_time_ratio"] for r in rows], float)
    first = np.array([r["first_lap_ratio"] for r in rows], float)
    lap, first = lap[np.isfinite(lap)], first[np.isfinite(first)]
    both = np.concatenate([lap, first])
    if both.size:
        bins = np.linspace(min(1.0, both.min()) * 0.98, both.max() * 1.02 + 1e-9, 31)
        ax.hist(first, bins=bins, color="#9ecae1", label=f"first lap, standing start ({first.size})")
        ax.hist(lap, bins=bins, color="#08519c", alpha=0.8, label=f"flying lap ({lap.size})")
        if lap.size:
            ax.axvline(float(np.median(lap)), color="k", ls="--", lw=1, label=f"median {np.median(lap):.2f}")
    else:
        ax.text(0.5, 0.5, "no course completed a lap", ha="center", va="center", transform=ax.transAxes)
    ax.axvline(1.0, color="#d62728", lw=1.5, label="minimum-time reference")
    ax.set_xlabel("lap time / reference lap time")
    ax.set_ylabel("courses")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    return path


def rank_courses(rows: list[dict]) -> list[int]:
    """Course indices best first: completed before not, then by lap-time ratio (first-lap ratio,
    then gates passed, for the others)."""
    def key(r):
        lap = r["lap_time_ratio"] if np.isfinite(r["lap_time_ratio"]) else np.inf
        first = r["first_lap_ratio"] if np.isfinite(r["first_lap_ratio"]) else np.inf
        return (not r["completed"], lap, first, -r["gates"])

    return [r["course"] for r in sorted(rows, key=key)]


def _path_panel(ax, course: dict, pos: np.ndarray, speed: np.ndarray, vmax: float, title: str):
    from matplotlib.collections import LineCollection

    extent = draw_course(ax, {k: v for k, v in course.items() if k not in ("poles", "reference_path")})
    ref = course.get("reference_path")
    if ref is not None:  # the minimum-time reference's optimised path, under the flown one
        ax.plot(ref[:, 0], ref[:, 1], color="#d62728", lw=1.2, alpha=0.75, zorder=4, label="reference path")
        ax.legend(loc="upper right", fontsize=7)
    xy = pos[:, :2]
    seg = np.stack([xy[:-1], xy[1:]], axis=1)
    lc = LineCollection(seg, cmap="viridis", linewidths=2.2, zorder=5)
    lc.set_array(0.5 * (speed[:-1] + speed[1:]))
    lc.set_clim(0.0, vmax)
    ax.add_collection(lc)
    ax.plot(*xy[0], "o", color="k", ms=5, zorder=6)
    pts = np.concatenate([np.concatenate(extent, axis=0)[:, :2] if extent else xy, xy], axis=0)
    lo, hi = pts.min(0), pts.max(0)
    pad = 0.08 * float((hi - lo).max()) + 0.5
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("x [m]")
    return lc


def _title(label: str, r: dict) -> str:
    one_pass = not np.isfinite(r["reference_lap_s"]) and np.isfinite(r["reference_first_lap_s"])
    if np.isfinite(r["lap_s"]):
        lap = f"lap {r['lap_s']:.2f} s = {r['lap_time_ratio']:.2f} x ref {r['reference_lap_s']:.2f} s"
    elif one_pass and np.isfinite(r["first_lap_s"]):  # a one-pass course: its time is the first lap
        lap = f"pass {r['first_lap_s']:.2f} s = {r['first_lap_ratio']:.2f} x ref {r['reference_first_lap_s']:.2f} s"
    elif one_pass:
        lap = f"not finished (ref {r['reference_first_lap_s']:.2f} s)"
    else:
        lap = f"no flying lap (ref {r['reference_lap_s']:.2f} s)"
    return f"{label}: course {r['course']}, {r['gates']} gates, {r['end']}\n{lap}"


def plot_best_worst(path: Path, rows: list[dict], courses: dict[int, dict], pos: np.ndarray, speed: np.ndarray,
                    steps: np.ndarray) -> Path:
    """Two top-down panels: the best and the worst course (:func:`rank_courses`) with the flown path
    coloured by speed and, where the course has one (``courses[c]["reference_path"]``), the
    minimum-time reference's optimised path in red."""
    order = rank_courses(rows)
    pick = [("best", order[0]), ("worst", order[-1])]
    vmax = max(float(speed[: int(steps[c]), c].max()) if steps[c] > 1 else 0.0 for _, c in pick) or 1.0
    fig, axes = _figure(11.0, 5.2, cols=2)
    lc = None
    for ax, (label, c) in zip(axes, pick):
        n = max(int(steps[c]), 2)
        lc = _path_panel(ax, courses[c], pos[:n, c], speed[:n, c], vmax, _title(label, rows[c]))
    axes[0].set_ylabel("y [m]")
    fig.colorbar(lc, ax=list(axes), label="speed [m/s]", shrink=0.85)
    fig.savefig(path, dpi=DPI)
    return path


#: path colour per ending in :func:`plot_layout_paths`
END_COLORS = {"laps": "#2ca02c", "time_out": "#7f7f7f", "crash": "#d62728", "missed": "#ff7f0e",
              "off_course": "#9467bd", "off_track": "#9467bd", "altitude": "#8c564b"}


def plot_layout_paths(path: Path, rows: list[dict], courses: dict[int, dict], pos: np.ndarray, speed: np.ndarray,
                      steps: np.ndarray, title: str) -> Path:
    """Every run's flown path top down over the layout (course 0's gates and course line; the
    others differ by the gate jitter), coloured by how the run ended, its end marked with x."""
    from matplotlib.patches import Circle

    course = courses[0]
    fig, (ax,) = _figure(12.0, 6.0)
    extent = draw_course(ax, {k: v for k, v in course.items() if k not in ("poles", "reference_path")})
    for p, r in course.get("poles", ()):
        ax.add_patch(Circle((p[0], p[1]), max(float(r), 0.05), color="k", zorder=4))
    seen: dict[str, int] = {}
    pts = [np.concatenate(extent, axis=0)[:, :2]] if extent else []
    for row in rows:
        c = row["course"]
        n = max(int(steps[c]), 2)
        xy = pos[:n, c, :2]
        end = "laps" if row["completed"] else row["end"]
        color = END_COLORS.get(end, "#17becf")
        label = None if end in seen else end
        seen[end] = seen.get(end, 0) + 1
        ax.plot(xy[:, 0], xy[:, 1], color=color, lw=1.0, alpha=0.7, zorder=5, label=label)
        ax.plot(*xy[-1], "x", color=color, ms=5, zorder=6)
        pts.append(xy)
    ax.plot(*pos[0, 0, :2], "o", color="k", ms=5, zorder=7, label="start")
    allp = np.concatenate(pts, axis=0)
    lo, hi = allp.min(0), allp.max(0)
    pad = 0.05 * float((hi - lo).max()) + 0.5
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal")
    done = sum(r["completed"] for r in rows)
    ax.set_title(f"{title}\n{done} of {len(rows)} runs completed; endings: "
                 + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())), fontsize=9)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [("completed" if lb == "laps" else lb) for lb in labels], fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    return path
