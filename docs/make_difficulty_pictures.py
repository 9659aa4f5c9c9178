"""Contact sheets of the difficulty levels (issue 14), for ``docs/user-guide/difficulty.rst``.

    PYTHONPATH=. python docs/make_difficulty_pictures.py [out_dir]

Writes ``difficulty_gates_<d>.png`` (per course: top-down with the pole obstacles, and a side
view: gate height along the path) for d = 0, 0.5, 1, and ``difficulty_tracks.png`` (band tracks at
0, 0.5, 1 with their pole obstacles, and close-ups of poles at 1) into ``docs/_static`` (or ``out_dir``). Top-down panels are drawn by
:func:`track_gen.plot.draw_gates` / :func:`~track_gen.plot.draw_track`.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import warp as wp

import track_gen as tg
from track_gen.generators.shapes import SHAPE_NAMES
from track_gen.pipeline import presets
from track_gen.plot import draw_gates, draw_track, host_result

HERE = pathlib.Path(__file__).resolve().parent
COLS = 4


def gate_sheet(d: float, path: pathlib.Path, envs: int = 8, seed: int = 5) -> pathlib.Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    g = tg.GateGenerator(presets.gates(64, "cpu", gate_width=1.0, difficulty=d, max_obstacles=4), seeds=seed)
    r = host_result(g.result)
    shape = g.result.shape.numpy()
    # show every shape the level draws: the first env of each, then the rest in order
    order = list(dict.fromkeys([int(np.flatnonzero(shape == s)[0]) for s in range(4) if (shape == s).any()]
                               + list(range(64))))[:envs]
    rows = 2 * ((envs + COLS - 1) // COLS)
    fig = Figure(figsize=(COLS * 2.8, rows * 2.0 + 0.5), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, COLS, squeeze=False, height_ratios=[2.8, 1.2] * (rows // 2))
    ztop = 6.0
    for i, e in enumerate(order):
        top, side = axes[2 * (i // COLS), i % COLS], axes[2 * (i // COLS) + 1, i % COLS]
        draw_gates(top, r, e, size=float(g.result.arena.numpy()[e]), z_range=(0.0, ztop), labels=False)
        for k in range(int(g.result.obstacle_count.numpy()[e])):
            p = g.result.obstacle_pos.numpy()[e, k]
            rad = max(float(g.result.obstacle_radius.numpy()[e, k]), 0.12)
            top.add_patch(Circle((p[0], p[1]), rad, color="black", zorder=6))
        top.set_title(f"env {e}: {SHAPE_NAMES[shape[e]]}" + ("" if r.valid[e] else " (invalid)"), fontsize=8)
        n = int(r.count[e])
        pos = np.asarray(r.pos[e])[:n]
        loop = np.vstack([pos, pos[:1]])
        s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(loop[:, :2], axis=0), axis=1))])
        side.plot(s, loop[:, 2], "-o", ms=3, lw=1.0, color="tab:blue")
        stacked = np.flatnonzero(np.asarray(g.result.stacked.numpy()[e])[:n])
        for k in stacked:
            side.plot([s[k], s[k + 1]], [loop[k, 2], loop[k + 1, 2]], "-", lw=2.5, color="tab:red")
        side.set_ylim(0.0, ztop)
        side.set_xlabel("plan distance along the gates [m]", fontsize=6)
        side.set_ylabel("z [m]", fontsize=6)
        side.tick_params(labelsize=6)
    fig.suptitle(f"gate courses at difficulty {d:g} (top-down: gates colored by height 0-6 m, black: poles; "
                 f"side: gate heights, red: split-S)", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def _poles(ax, r, e, ring: float = 0.0) -> None:
    """Env ``e``'s poles at their true size (black), each marked by a red ring of radius ``ring``."""
    from matplotlib.patches import Circle

    for k in range(int(r.obstacle_count[e])):
        p = r.obstacle_pos[e, k]
        ax.add_patch(Circle((p[0], p[1]), float(r.obstacle_radius[e, k]), color="black", zorder=6))
        if ring > 0.0:
            ax.add_patch(Circle((p[0], p[1]), ring, fill=False, lw=0.8, color="tab:red", zorder=6))


def track_sheet(path: pathlib.Path, seed: int = 6) -> pathlib.Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(COLS * 2.6, 4 * 2.6 + 0.4), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(4, COLS, squeeze=False)
    for row, d in enumerate((0.0, 0.5, 1.0)):
        t = tg.TrackGenerator(presets.track(32, "cpu", difficulty=d, max_obstacles=4), seeds=seed)
        shape = t.result.shape.numpy()
        order = list(dict.fromkeys([int(i) for i in np.flatnonzero(shape == 2)[:2]] + list(range(32))))[:COLS]
        r = host_result(t.result)
        for c, e in enumerate(order):
            draw_track(axes[row, c], r, e, size=10.0)
            _poles(axes[row, c], r, e, ring=0.45)
            axes[row, c].set_title(f"d={d:g} env {e}: {'hairpin' if shape[e] == 2 else 'loop'}, "
                                   f"poles: {int(r.obstacle_count[e])}", fontsize=8)
        if d == 1.0:  # the last row: close-ups of poles at difficulty 1 (the passage beside each)
            for c in range(COLS):
                e = order[c % len(order)]
                k = min(c // len(order), int(r.obstacle_count[e]) - 1)
                ax = axes[3, c]
                draw_track(ax, r, e, title=False)
                _poles(ax, r, e)
                p = r.obstacle_pos[e, k]
                ax.set_xlim(p[0] - 1.0, p[0] + 1.0)
                ax.set_ylim(p[1] - 1.0, p[1] + 1.0)
                ax.set_title(f"d=1 env {e} pole {k} (r {r.obstacle_radius[e, k]:.2f} m)", fontsize=8)
    fig.suptitle("band tracks at difficulty 0, 0.5, 1 (rows 1-3): hairpin tracks bend a thin band into a C; "
                 "black: poles (true size, red rings mark them), each leaving a passage >= 0.3 m; row 4: close-ups",
                 fontsize=8)
    fig.savefig(path, dpi=110)
    return path


def main(out_dir: str | pathlib.Path = HERE / "_static") -> list[pathlib.Path]:
    wp.config.log_level = wp.LOG_WARNING
    out = pathlib.Path(out_dir)
    paths = [gate_sheet(d, out / f"difficulty_gates_{str(d).replace('.', '')}.png") for d in (0.0, 0.5, 1.0)]
    return paths + [track_sheet(out / "difficulty_tracks.png")]


if __name__ == "__main__":
    for p in main(*sys.argv[1:]):
        print(p, p.stat().st_size, "bytes")
