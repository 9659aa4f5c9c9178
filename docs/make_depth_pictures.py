"""Regenerate the picture of the depth camera page (CPU only, a few seconds).

    PYTHONPATH=. python docs/make_depth_pictures.py [out_dir]

Writes into ``docs/_static/components`` (or ``out_dir``):

* ``depth_camera.png``: a gate course with pole obstacles and a band track, top down, each with
  three camera poses and their horizontal frustums, beside the depth images ``tools.DepthCamera``
  casts from those poses (one env per pose, all on the same course);
* ``depth_task.png``: what the policy of ``TrackGen-Drone-Gates-Depth-v0`` sees: its course and
  camera (16 x 12, 90 deg, far 10 m, 5 cm ahead of the body centre), three poses of a flight
  through the gates (the last one pitched forward, as when accelerating) with their frustums and
  a downward range grid (the height scan, ``grid=``), beside the task's image and the same view at
  32 x 24 and 64 x 48.

Every depth value drawn comes from ``course.step()``.
"""

from __future__ import annotations

import math
import pathlib
import sys

import numpy as np
import warp as wp

import track_gen as tg
from track_gen import tools
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.plot import draw_gates, draw_track, host_result

HERE = pathlib.Path(__file__).resolve().parent
W, H, FOV, FAR = 64, 48, 90.0, 12.0
COLORS = ("tab:red", "tab:blue", "tab:green")


def quat(yaw: float, pitch: float = 0.0) -> np.ndarray:
    """(x, y, z, w) of Rz(yaw) Ry(pitch) (pitch > 0 noses down)."""
    cy, sy, cp, sp = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(pitch / 2), math.sin(pitch / 2)
    return np.array([-sp * sy, sp * cy, cp * sy, cp * cy])


def shoot(generator, poses, cam, pitches=None, grid=False):
    """The same course in every env (one seed), one camera pose per env: images [P, H, W] (and,
    with ``grid``, the range grid [P, rows, cols])."""
    course = Course(generator, [cam])
    pitches = pitches or [0.0] * len(poses)
    pos = wp.array(np.array([p for p, _ in poses], np.float32), dtype=wp.vec3f)
    q = wp.array(np.array([quat(y, pt) for (_, y), pt in zip(poses, pitches)], np.float32), dtype=wp.quatf)
    course.bind(position=pos, orientation=q)
    res = course.step()["depth_camera"]
    img = res.depth.numpy().copy()
    return (img, res.grid.numpy().copy()) if grid else img


def frustum(ax, p, yaw, color, reach):
    """The horizontal field of view, ``reach`` metres deep; returns its corners."""
    half = math.radians(FOV) / 2
    pts = [p[:2]] + [p[:2] + reach * np.array([math.cos(yaw + a), math.sin(yaw + a)]) for a in (half, -half)]
    ax.fill(*np.array(pts).T, color=color, alpha=0.15, zorder=7)
    ax.plot(*np.array(pts + [pts[0]]).T, color=color, lw=1.2, zorder=8)
    ax.plot(*p[:2], "o", color=color, ms=5, zorder=9)
    return np.array(pts)


#: the depth task's camera (``track_gen_isaac.tasks.drone_depth.DEPTH_CAMERA``) and course
TASK_CAM = dict(fov_deg=90.0, near=0.05, far=10.0, offset=(0.05, 0.0, 0.0))
TASK_RES = ((16, 12), (32, 24), (64, 48))
GRID = dict(grid=(5, 5), grid_spacing=0.4)  # a downward height scan, 1.6 m square


def task_picture(out_dir: pathlib.Path) -> None:
    """``depth_task.png``: the depth task's view at its resolution and at two finer ones."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n, far = 3, TASK_CAM["far"]
    gen = tg.GateGenerator(presets.gates(n, "cpu", gate_width=1.0, gate_height=1.0, size=10.0), seeds=[7] * n)
    r = host_result(gen.result)
    g0, g1, g2 = (r.pos[0, k].astype(float) for k in (0, 1, 2))
    yaw01 = math.atan2(*(g1 - g0)[1::-1])
    yaw12 = math.atan2(*(g2 - g1)[1::-1])
    poses = [(g0 + 0.3 * (g1 - g0), yaw01), (g0 + 0.75 * (g1 - g0), yaw01 + 0.35), (g1 + 0.3 * (g2 - g1), yaw12)]
    pitches = [0.0, 0.0, math.radians(20.0)]  # the last one nose down 20 deg (accelerating)
    imgs, grids = [], None
    for w, h in TASK_RES:
        img, gr = shoot(gen, poses, tools.DepthCamera(w, h, **TASK_CAM, post_radius=None, **GRID), pitches, grid=True)
        imgs.append(img)
        grids = gr if grids is None else grids
    fig = Figure(figsize=(15, 9), dpi=100)
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(3, 4, width_ratios=[1.5, 1, 1, 1], wspace=0.12, hspace=0.3)
    ax = fig.add_subplot(grid[:, 0])
    draw_gates(ax, r, 0, title=False)
    pts = np.concatenate([frustum(ax, p, yaw, c, 4.0) for (p, yaw), c in zip(poses, COLORS)])
    for (p, yaw), gr in zip(poses, grids):  # the height-scan grid points, coloured by range
        rows, cols = gr.shape
        sp = GRID["grid_spacing"]
        bx = (0.5 * (rows - 1) - np.arange(rows))[:, None] * sp + 0 * np.arange(cols)[None]
        by = (0.5 * (cols - 1) - np.arange(cols))[None] * sp + 0 * np.arange(rows)[:, None]
        c, s = math.cos(yaw), math.sin(yaw)
        ax.scatter(p[0] + c * bx - s * by, p[1] + s * bx + c * by, c=gr, s=6, cmap="viridis_r", vmin=0, vmax=far,
                   zorder=10)
    lo, hi = np.array(ax.get_xlim()), np.array(ax.get_ylim())
    ax.set_xlim(min(lo[0], pts[:, 0].min()) - 0.3, max(lo[1], pts[:, 0].max()) + 0.3)
    ax.set_ylim(min(hi[0], pts[:, 1].min()) - 0.3, max(hi[1], pts[:, 1].max()) + 0.3)
    ax.set_aspect("equal")
    ax.set_title("the depth task's course; three poses, frustums 4 m deep,\ndots: a 5 x 5 downward range grid",
                 fontsize=10)
    for row, c in enumerate(COLORS):
        for k, ((w, h), img) in enumerate(zip(TASK_RES, imgs)):
            a = fig.add_subplot(grid[row, k + 1])
            im = a.imshow(np.ma.masked_where(img[row] >= far, img[row]), cmap="viridis_r", vmin=0.0, vmax=far,
                          interpolation="nearest")
            a.set_facecolor("0.85")
            a.set_xticks([])
            a.set_yticks([])
            for sp_ in a.spines.values():
                sp_.set_edgecolor(c)
                sp_.set_linewidth(3 if k == 0 else 1.5)
            tilt = ", nose 20 deg down" if row == 2 else ""
            a.set_title(f"pose {row + 1}{tilt}: {w}x{h} (the task's)" if k == 0 else f"{w}x{h}", fontsize=9)
    fig.colorbar(im, ax=[fig.axes[-1]], fraction=0.046, pad=0.02, label="depth [m]")
    fig.suptitle("TrackGen-Drone-Gates-Depth-v0: the policy sees a 16 x 12 depth image (90 deg, far 10 m) and its "
                 "own state; grey: nothing within far", fontsize=12)
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_dir / "depth_task.png", bbox_inches="tight")
    print(out_dir / "depth_task.png")


def main(out_dir: pathlib.Path) -> None:
    task_picture(out_dir)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    n = len(COLORS)
    gen = tg.GateGenerator(presets.gates(n, "cpu", gate_width=1.0, max_obstacles=6, obstacle_count_min=3,
                                       obstacle_count_max=4), seeds=[11] * n)
    r = host_result(gen.result)
    poses_g = []
    for g in (0, 2, 4):
        gp, nn = r.pos[0, g].astype(float), r.normal[0, g].astype(float)
        yaw = math.atan2(nn[1], nn[0]) + (0.25 if g == 2 else 0.0)
        poses_g.append((gp - 3.0 * np.array([math.cos(yaw), math.sin(yaw), 0.0]), yaw))
    img_g = shoot(gen, poses_g, tools.DepthCamera(W, H, FOV, 0.05, FAR, offset=(0.1, 0.0, 0.0), post_radius=0.05))

    trk = tg.TrackGenerator(presets.track(n, "cpu"), seeds=[5] * n)
    t = host_result(trk.result)
    poses_t = []
    for i in (0, 60, 150):
        xy, tan = t.xy[0, i].astype(float), t.tangent[0, i].astype(float)
        poses_t.append((np.array([xy[0], xy[1], 0.12]), math.atan2(tan[1], tan[0])))
    img_t = shoot(trk, poses_t, tools.DepthCamera(W, H, FOV, 0.05, FAR, pitch_deg=8.0, wall_height=0.3))

    fig = Figure(figsize=(15, 8), dpi=100)
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, 4, width_ratios=[1.6, 1, 1, 1], wspace=0.15, hspace=0.25)
    for row, (poses, imgs, kind, vmax) in enumerate(((poses_g, img_g, "gates", FAR), (poses_t, img_t, "track", 6.0))):
        ax = fig.add_subplot(grid[row, 0])
        if kind == "gates":
            draw_gates(ax, r, 0, title=False)
            if r.obstacle_pos is not None:
                for k in range(int(r.obstacle_count[0])):
                    b = r.obstacle_pos[0, k]
                    ax.add_patch(Circle((b[0], b[1]), float(r.obstacle_radius[0, k]), color="0.3", zorder=6))
            ax.set_title("gate course (poles grey), cameras 3 m before gates 0, 2, 4", fontsize=10)
        else:
            draw_track(ax, t, 0, title=False)
            ax.set_title("band track, walls 0.3 m tall on both edges; camera 0.12 m up", fontsize=10)
        lo, hi = np.array(ax.get_xlim()), np.array(ax.get_ylim())
        pts = np.concatenate([frustum(ax, p, yaw, c, 3.0) for (p, yaw), c in zip(poses, COLORS)])
        ax.set_xlim(min(lo[0], pts[:, 0].min()) - 0.3, max(lo[1], pts[:, 0].max()) + 0.3)
        ax.set_ylim(min(hi[0], pts[:, 1].min()) - 0.3, max(hi[1], pts[:, 1].max()) + 0.3)
        ax.set_aspect("equal")
        for k, (img, c) in enumerate(zip(imgs, COLORS)):
            a = fig.add_subplot(grid[row, k + 1])
            shown = np.ma.masked_where(img >= FAR, img)
            im = a.imshow(shown, cmap="viridis_r", vmin=0.0, vmax=vmax, interpolation="nearest")
            a.set_facecolor("0.85")
            a.set_xticks([])
            a.set_yticks([])
            for s in a.spines.values():
                s.set_edgecolor(c)
                s.set_linewidth(3)
            a.set_title(f"pose {k + 1}: {W}x{H}, fov {FOV:g} deg", fontsize=9)
        fig.colorbar(im, ax=[fig.axes[-1]], fraction=0.046, pad=0.02, label="depth [m]")
    fig.suptitle("tools.DepthCamera: depth (distance along the ray) cast exactly against the course; "
                 "grey: nothing within far",
                 fontsize=12)
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_dir / "depth_camera.png", bbox_inches="tight")
    print(out_dir / "depth_camera.png")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "_static" / "components")
