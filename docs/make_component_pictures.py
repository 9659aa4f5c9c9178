"""Regenerate the pictures of the component reference (CPU only, a few seconds).

    PYTHONPATH=. python docs/make_component_pictures.py [out_dir]

Writes into ``docs/_static/components`` (or ``out_dir``):

* ``gate_progress.png``: a gate course, its checkpoints (the openings), its CenterlineFromGates
  line and a flown trajectory colored by Progress, with pass and miss markers;
* ``band_contact.png``: a band track, its checkpoints and edges, a localized trajectory
  (projections on the centerline, colored by lateral offset) and BandCollision contacts;
* ``band_sdf.png``: the SDF bake of BandCollision("sdf") as a heat map, and its clearance
  against the exact ("segments") one for random footprints.

Every number drawn comes from the components themselves (``course.step()`` results), so the
pictures show what the library computes, not a re-implementation.
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
DPI = 100


def _figure(w: float, h: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _quat_yaw(yaw: np.ndarray) -> np.ndarray:
    yaw = np.asarray(yaw, np.float64)
    return np.stack([np.zeros_like(yaw), np.zeros_like(yaw), np.sin(0.5 * yaw), np.cos(0.5 * yaw)], -1)


def _walk(points: np.ndarray, closed: bool):
    """Arc length of a polyline and an interpolator ``f(s) -> (point, unit tangent)``."""
    pts = np.vstack([points, points[:1]]) if closed else points
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    total = s[-1]

    def at(q):
        q = np.mod(q, total) if closed else np.clip(q, 0.0, total)
        i = np.clip(np.searchsorted(s, q, side="right") - 1, 0, len(seg) - 1)
        f = (q - s[i]) / np.maximum(seg[i], 1e-12)
        p = pts[i] + f[:, None] * (pts[i + 1] - pts[i])
        t = (pts[i + 1] - pts[i]) / np.maximum(seg[i], 1e-12)[:, None]
        return p, t

    return total, at


# -- 1. gate course: checkpoints, course line, progress --------------------------------------------
def gate_progress(out: pathlib.Path) -> pathlib.Path:
    from matplotlib.collections import LineCollection

    E, env = 4, 0
    course = Course.gates(presets.gates(E, "cpu", gate_width=1.0, min_gates=7), seeds=11)
    res = host_result(course.result)
    cps = host_result(course.checkpoints)
    line = course.course_line.line
    n = int(cps.count[env])
    m = int(line.count.numpy()[env])
    pts = line.points.numpy()[env, :m].astype(np.float64)
    total, at = _walk(pts, closed=True)

    # a flown path: the course line with a gentle lateral weave; at gate `miss` the pilot swings
    # wide (outside the opening) on lap 1; lap 2 goes on, a bit inside, until two gates after it
    miss = 3
    gs = course.checkpoints.s.numpy()[env, :n].astype(np.float64)
    start = -0.5 * (total - gs[-1])  # half the closing leg before gate 0 (where the start pose is)
    stop = total + gs[min(miss + 2, n - 1)] + 0.6
    q = np.arange(start, stop, 0.12)
    p, t = at(q)
    lateral = np.stack([-t[:, 1], t[:, 0], np.zeros(len(t))], axis=1)
    lat_axis = lateral / np.maximum(np.linalg.norm(lateral, axis=1, keepdims=True), 1e-12)
    off = 0.18 * np.sin(q * 2 * math.pi / 5.0)
    wide = np.exp(-0.5 * ((q - gs[miss]) / 0.9) ** 2) * 1.2  # lap 1 only: q < total
    off = off + wide - 0.22 * (q > total)
    path = p + off[:, None] * lat_axis
    path[:, 2] = p[:, 2] + 0.1 * np.sin(q * 2 * math.pi / 7.0)

    P = len(path)
    pos = wp.zeros(E, dtype=wp.vec3f, device="cpu")
    course.bind(position=pos)
    poses = np.repeat(path[:1], E, axis=0).astype(np.float32)
    prog = np.zeros(P)
    passed = np.zeros(P, int)
    missed = np.zeros(P, int)
    for i in range(P):
        poses[env] = path[i]
        pos.assign(poses)
        ev = course.step().events
        prog[i] = ev.progress.numpy()[env]
        passed[i] = ev.passed.numpy()[env]
        missed[i] = ev.missed.numpy()[env]

    fig = _figure(7.6, 7.2)
    ax = fig.add_subplot()
    size = float(course.generator.params["gates.size"])
    draw_gates(ax, res, env, size=size, cmap="Greys", z_range=(-10.0, 0.0), title=False)
    cp = cps.pos[env, :n].astype(np.float64)
    nr = cps.normal[env, :n].astype(np.float64)
    la = np.stack([-nr[:, 1], nr[:, 0]], 1)
    la /= np.linalg.norm(la, axis=1, keepdims=True)
    hw = cps.half_width[env, :n]
    for k in range(n):
        a, b = cp[k, :2] - hw[k] * la[k], cp[k, :2] + hw[k] * la[k]
        ax.plot([a[0], b[0]], [a[1], b[1]], color="#e67e22", lw=3.0, solid_capstyle="butt", zorder=4,
                label="checkpoint opening (2 half_width)" if k == 0 else None)
    closed_pts = np.vstack([pts, pts[:1]])
    ax.plot(closed_pts[:, 0], closed_pts[:, 1], ls="--", lw=1.0, color="#2471a3", zorder=2,
            label="CenterlineFromGates line")
    segs = np.stack([path[:-1, :2], path[1:, :2]], axis=1)
    lc = LineCollection(segs, cmap="viridis", linewidths=2.0, zorder=5)
    lc.set_array(0.5 * (prog[:-1] + prog[1:]))
    ax.add_collection(lc)
    ip, im = np.flatnonzero(passed > 0), np.flatnonzero(missed > 0)
    ax.scatter(path[ip, 0], path[ip, 1], s=46, marker="o", facecolor="none", edgecolor="#1e8449", lw=1.8,
               zorder=7, label="pass (passed > 0)")
    ax.scatter(path[im, 0], path[im, 1], s=70, marker="X", color="#c0392b", zorder=7, label="miss (missed = 1)")
    ax.plot(*path[0, :2], marker="s", color="black", ms=5, zorder=8, label="first step after reset")
    cb = fig.colorbar(lc, ax=ax, shrink=0.8, pad=0.01)
    cb.set_label("Progress: events.progress [m]", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    span = np.vstack([path[:, :2], cp[:, :2] - 1.0, cp[:, :2] + 1.0])
    lo, hi = span.min(axis=0) - 0.3, span.max(axis=0) + 0.3
    c, half = 0.5 * (lo + hi), 0.5 * float((hi - lo).max())
    ax.set_xlim(c[0] - half, c[0] + half)
    ax.set_ylim(c[1] - half, c[1] + half)
    fig.legend(loc="outside lower center", ncols=3, fontsize=7, frameon=False)
    ax.set_title(
        f"GateCheckpoints + CenterlineFromGates + Progress: gate {miss} missed on lap 1 (progress stalls "
        f"until it is passed on lap 2)\n{n} gates, line length {total:.1f} m, final progress {prog[-1]:.1f} m, "
        f"{int((passed > 0).sum())} passes", fontsize=8)
    return _save(fig, out / "gate_progress.png")


# -- 2. band track: checkpoints, edges, contacts, localizer ---------------------------------------
def band_contact(out: pathlib.Path) -> pathlib.Path:
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Polygon

    E, env = 4, 0
    course = Course.track(presets.track(E, "cpu"), checkpoint_spacing=2.5, collision="segments", seeds=42,
                          extra=[tools.Localizer(warm_window=8)])
    r = host_result(course.result)
    cps = host_result(course.checkpoints)
    n = int(cps.count[env])
    xy = r.xy[env].astype(np.float64)
    hw_line = r.half_width[env].astype(np.float64)
    total, at = _walk(xy, closed=True)

    # a localized path along the first 60 % of the lap, weaving across the band
    q = np.linspace(0.0, 0.6 * total, 70)
    p, t = at(q)
    nrm = np.stack([-t[:, 1], t[:, 0]], 1)
    hw_q = np.interp(q, r.s[env].astype(np.float64), hw_line)
    lat_true = 0.75 * hw_q * np.sin(q * 2 * math.pi / 6.0)
    path = p + lat_true[:, None] * nrm
    yaw = np.arctan2(t[:, 1], t[:, 0])

    P = len(path)
    pos = wp.zeros(E, dtype=wp.vec3f, device="cpu")
    quat = wp.array(np.tile([0, 0, 0, 1], (E, 1)).astype(np.float32), dtype=wp.quatf, device="cpu")
    ext = wp.array(np.tile([0.22, 0.12], (E, 1)).astype(np.float32), dtype=wp.vec2f, device="cpu")
    course.bind(position=pos, orientation=quat, half_extents=ext)
    loc = np.zeros((P, 4))  # lateral, tangent x, tangent y, s
    poses = np.zeros((E, 3), np.float32)
    qs = np.tile([0, 0, 0, 1], (E, 1)).astype(np.float32)
    for i in range(P):
        poses[env, :2] = path[i]
        qs[env] = _quat_yaw(yaw[i])
        pos.assign(poses)
        quat.assign(qs)
        fr = course.step().frame
        tg_ = fr.tangent.numpy()[env]
        loc[i] = fr.lateral.numpy()[env], tg_[0], tg_[1], fr.s.numpy()[env]
    h = loc[:, 1:3] / np.maximum(np.linalg.norm(loc[:, 1:3], axis=1, keepdims=True), 1e-12)
    proj = path - loc[:, :1] * np.stack([-h[:, 1], h[:, 0]], 1)

    # contacts: three footprints at three places of one turn, each placed with its own point's frame
    N = len(xy)
    k0 = int(0.78 * N)
    c0 = xy[k0]
    probes = []  # (centre, yaw, label side): clear; a corner through the right edge; centre past it
    for k, frac, extra, dyaw in ((k0 - 11, 0.25, 0.0, 0.0), (k0, -1.0, 0.06, 0.7), (k0 + 11, -1.0, -0.03, -0.25)):
        kk = k % N
        nk, tk = r.normal[env, kk].astype(np.float64), r.tangent[env, kk].astype(np.float64)
        centre = xy[kk] + (frac * hw_line[kk] + (extra if frac < 0 else 0.0)) * nk
        probes.append((centre, math.atan2(tk[1], tk[0]) + dyaw, nk))
    cont = []
    for centre, yw, nk in probes:
        poses[env, :2] = centre
        qs[env] = _quat_yaw(yw)
        pos.assign(poses)
        quat.assign(qs)
        c = course.step().contacts
        cont.append((centre, yw, float(c.clearance.numpy()[env]), int(c.hit.numpy()[env]),
                     c.normal.numpy()[env].astype(np.float64), int(c.index.numpy()[env]), nk))

    fig = _figure(12.0, 5.8)
    axl, axr = fig.subplots(1, 2, width_ratios=[1.25, 1.0])
    size = float(course.generator.params["centerline.size"])
    for ax in (axl, axr):
        draw_track(ax, r, env, size=size, title=False)
        cp = cps.pos[env, :n, :2].astype(np.float64)
        nr = cps.normal[env, :n, :2].astype(np.float64)
        nr /= np.linalg.norm(nr, axis=1, keepdims=True)
        la = np.stack([-nr[:, 1], nr[:, 0]], 1)
        hw = cps.half_width[env, :n, None]
        segs = np.stack([cp - hw * la, cp + hw * la], 1)
        ax.add_collection(LineCollection(segs, colors="#e67e22", linewidths=2.2, zorder=4))
    for k in range(n):
        axl.text(*(cps.pos[env, k, :2] + 0.55 * cps.normal[env, k, :2]), str(k), fontsize=6, color="#a04000",
                 ha="center", va="center", zorder=6)
    axl.plot([], [], color="#e67e22", lw=2.2, label=f"Checkpoints(2.5): {n} lines across the band")
    axl.plot([], [], color="0.35", lw=0.8, label="band edges (BandCollision segments)")
    segs = np.stack([path[:-1], path[1:]], 1)
    lim = float(np.abs(loc[:, 0]).max())
    lc = LineCollection(segs, cmap="coolwarm", linewidths=2.2, zorder=6)
    lc.set_array(0.5 * (loc[:-1, 0] + loc[1:, 0]))
    lc.set_clim(-lim, lim)
    axl.add_collection(lc)
    axl.add_collection(LineCollection(np.stack([path, proj], 1), colors="black", linewidths=0.6, zorder=5))
    axl.plot([], [], color="black", lw=0.6, label="projection on the centerline (Localizer)")
    cb = fig.colorbar(lc, ax=axl, shrink=0.75, pad=0.01)
    cb.set_label("frame.lateral [m] (> 0: left of travel)", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    axl.legend(loc="lower left", fontsize=7, framealpha=0.9)
    axl.set_title(f"Checkpoints, band edges and a localized path (frame.s up to {loc[-1, 3]:.1f} of "
                  f"{total:.1f} m)", fontsize=9)

    # right: zoom on the contacts
    he = np.array([0.22, 0.12])
    for centre, yw, clr, hit, nv, idx, nk in cont:
        u = np.array([math.cos(yw), math.sin(yw)])
        v = np.array([-u[1], u[0]])
        corners = np.array([centre + sx * he[0] * u + sy * he[1] * v for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))])
        col = "#c0392b" if hit else "#1e8449"
        axr.add_patch(Polygon(corners, closed=True, fc=col, alpha=0.35, ec=col, lw=1.2, zorder=7))
        if idx >= 0:
            N = len(xy)
            side, i = divmod(idx, N)
            j = (i + 1) % N
            edge = xy + (1 if side == 0 else -1) * hw_line[:, None] * r.normal[env].astype(np.float64)
            axr.plot(*np.stack([edge[i], edge[j]]).T, color="#8e44ad", lw=5, zorder=6, solid_capstyle="butt")
        axr.annotate("", xy=centre + 0.45 * nv[:2], xytext=centre,
                     arrowprops=dict(arrowstyle="-|>", color="black", lw=1.2), zorder=8)
        tx = centre - (0.95 if hit else 0.8) * nk[:2]
        axr.text(tx[0], tx[1], f"clearance {clr:+.3f} m\nhit {hit}, index {idx}",
                 fontsize=7, ha="center", va="center", zorder=9,
                 bbox=dict(boxstyle="round,pad=0.2", fc="white", ec=col, alpha=0.85))
    axr.plot([], [], color="#8e44ad", lw=5, label="contacts.index: the edge segment that set clearance")
    axr.plot([], [], color="black", lw=1.2, label="contacts.normal (pushes the body out)")
    axr.legend(loc="upper left", fontsize=7, framealpha=0.9)
    cx, cy = c0
    axr.set_xlim(cx - 1.8, cx + 1.8)
    axr.set_ylim(cy - 1.8, cy + 1.8)
    axr.set_title("BandCollision('segments'): 0.44 m x 0.24 m footprints", fontsize=9)
    return _save(fig, out / "band_contact.png")


# -- 3. the SDF bake ------------------------------------------------------------------------------
def band_sdf(out: pathlib.Path) -> pathlib.Path:
    E, env = 2, 0
    gen = tg.TrackGenerator(presets.track(E, "cpu"), seeds=42)
    sdf = tools.BandCollision("sdf", resolution=96, size_hi=12.0, name="collision")
    exact = tools.BandCollision("segments", name="exact")
    course = Course(gen, [sdf, exact])
    grid = sdf.grid.numpy()[env]
    nn = grid.shape[0]
    lo, hi = sdf.origin, sdf.origin + (nn - 1) * sdf.cell

    # random footprints: sdf clearance against the exact one
    rng = np.random.default_rng(0)
    K = 2000
    r = host_result(gen.result)
    idx = rng.integers(0, r.xy.shape[1], K)
    cen = r.xy[env, idx] + rng.uniform(-1.6, 1.6, (K, 1)) * r.half_width[env, idx, None] * r.normal[env, idx]
    yaw = rng.uniform(-math.pi, math.pi, K)
    ext = rng.uniform(0.05, 0.3, (K, 2))
    pos = wp.zeros(E, dtype=wp.vec3f, device="cpu")
    quat = wp.array(np.tile([0, 0, 0, 1], (E, 1)).astype(np.float32), dtype=wp.quatf, device="cpu")
    he = wp.array(np.tile([0.2, 0.1], (E, 1)).astype(np.float32), dtype=wp.vec2f, device="cpu")
    course.bind(position=pos, orientation=quat, half_extents=he)
    a = np.zeros(K)
    b = np.zeros(K)
    P, Q, H = np.zeros((E, 3), np.float32), np.tile([0, 0, 0, 1], (E, 1)).astype(np.float32), np.zeros((E, 2), np.float32)
    for k in range(K):
        P[env, :2], Q[env], H[env] = cen[k], _quat_yaw(yaw[k]), ext[k]
        pos.assign(P)
        quat.assign(Q)
        he.assign(H)
        res = course.step()
        a[k] = res.contacts.clearance.numpy()[env]
        b[k] = res["exact"].clearance.numpy()[env]

    fig = _figure(12.0, 5.4)
    axl, axr = fig.subplots(1, 2, width_ratios=[1.2, 1.0])
    from matplotlib.colors import TwoSlopeNorm

    norm = TwoSlopeNorm(vmin=float(grid.min()), vcenter=0.0, vmax=float(grid.max()))
    im = axl.imshow(grid, origin="lower", extent=(lo - 0.5 * sdf.cell, hi + 0.5 * sdf.cell,
                                                  lo - 0.5 * sdf.cell, hi + 0.5 * sdf.cell),
                    cmap="RdBu", norm=norm, interpolation="nearest")
    xs = lo + sdf.cell * np.arange(nn)
    axl.contour(xs, xs, grid, levels=[0.0], colors="black", linewidths=0.8)
    size = float(gen.params["centerline.size"])
    from matplotlib.patches import Rectangle

    axl.add_patch(Rectangle((-size / 2, -size / 2), size, size, fill=False, ls="--", lw=0.9, ec="0.2"))
    axl.add_patch(Rectangle((-sdf.side / 2, -sdf.side / 2), sdf.side, sdf.side, fill=False, lw=1.2, ec="#8e44ad"))
    box = dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.8)
    axl.text(sdf.side / 2 - 0.15, -sdf.side / 2 + 0.15, f"size_hi = {sdf.side:g} m: the grid square (+2 cells)",
             color="#8e44ad", fontsize=7, ha="right", va="bottom", bbox=box)
    axl.text(-size / 2 + 0.15, size / 2 - 0.15, f"centerline.size = {size:g} m", fontsize=7, color="0.2",
             va="top", bbox=box)
    axl.set_aspect("equal")
    axl.tick_params(labelsize=7)
    lo_t = int(math.ceil(float(grid.min())))
    ticks = [float(v) for v in range(lo_t, 0)] + [0.0, round(0.5 * float(grid.max()), 2), round(float(grid.max()), 2)]
    cb = fig.colorbar(im, ax=axl, shrink=0.8, pad=0.01, ticks=ticks)
    cb.set_label("baked sd [m] (> 0 inside the band; black: sd = 0)", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    axl.set_title(f"BandCollision('sdf', resolution={sdf.resolution}): grid {nn} x {nn} nodes, "
                  f"cell {sdf.cell * 100:.1f} cm", fontsize=9)

    err = (a - b) / sdf.cell
    clear = b > 0
    axr.scatter(b[clear], err[clear], s=5, alpha=0.5, color="#1e8449", label="clear (exact clearance > 0)")
    axr.scatter(b[~clear], err[~clear], s=5, alpha=0.5, color="#c0392b", label="touching / penetrating")
    axr.axhline(0.0, color="black", lw=0.6)
    axr.set_xlabel("exact clearance, mode 'segments' [m]", fontsize=8)
    axr.set_ylabel(f"sdf clearance - exact [cells of {sdf.cell * 100:.1f} cm]", fontsize=8)
    axr.tick_params(labelsize=7)
    axr.legend(loc="lower left", fontsize=7)
    axr.set_title(f"{K} random footprints, 'sdf' minus exact clearance: [{err[clear].min():+.2f}, "
                  f"{err[clear].max():+.2f}] cell\nwhen clear, [{err[~clear].min():+.2f}, {err[~clear].max():+.2f}] "
                  f"cell when touching or penetrating", fontsize=9)
    return _save(fig, out / "band_sdf.png")


def _save(fig, path: pathlib.Path) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, format="png")
    return path


def main(out_dir: str | pathlib.Path = HERE / "_static" / "components") -> list[pathlib.Path]:
    wp.config.log_level = wp.LOG_WARNING
    out = pathlib.Path(out_dir)
    return [gate_progress(out), band_contact(out), band_sdf(out)]


if __name__ == "__main__":
    for p in main(*sys.argv[1:]):
        print(p, p.stat().st_size, "bytes")
