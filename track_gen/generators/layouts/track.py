"""Track layouts as a generator source: ``track.from_layouts`` (stage ``centerline``) and
``track.layout_heights`` (stage ``elevation``, when a layout leaves the ground plane).

Each env reads its layout's centerline, half widths and heights from tables padded to ``[K, N]``,
applies the optional rigid placement of :mod:`source` and is validated with the band-track
family's own rules; ``track.band`` then derives the rest as for a drawn track.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from track_gen.generators.layouts.source import (ASSIGN, check_count, draw_placement, layout_spec, pick_layout,
                                                 place_xy, shared_params, table_spec, upload_assign, warn_bad)
from track_gen.generators.status import TrackStatus
from track_gen.generators.track.bits import GROUND, NONFINITE
from track_gen.generators.track.validity import track_status
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.rng import name_key

__all__ = ["TRACK_PARAMS", "register_track_layout_stages", "resample_closed", "track_tables"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


TRACK_PARAMS = {
    "size": ParamSpec(10.0, lo=0.0, lo_open=True, doc="side of the square the band must fit in [m]"),
    "min_turn_radius": ParamSpec(0.0, lo=0.0, doc="smallest turn radius [m] (never below the half width)"),
    "clearance": ParamSpec(0.0, lo=0.0, doc="gap kept between non-adjacent parts of the band [m]"),
    "min_length": ParamSpec(0.0, lo=0.0, doc="shortest loop [m]"),
    "max_length": ParamSpec(40.0, lo=0.0, lo_open=True, static=True, doc="longest loop [m]; sizes checkpoints"),
    "num_points": ParamSpec(256, lo=16, hi=8192, static=True, integer=True, doc="centerline points N"),
    **shared_params(),
}

def resample_closed(layout, num_points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(xy [N, 2], z [N], half width [N]) of a closed track layout: its own points when it has
    ``num_points`` of them, else ``num_points`` points evenly spaced in horizontal arc length along
    its closed polyline from point 0, heights and half widths interpolated linearly (float64 on the
    host, then float32)."""
    line = layout.centerline
    if line.shape[0] == num_points:
        return line[:, :2].copy(), line[:, 2].copy(), layout.half_width.copy()
    pts = np.concatenate([line, line[:1]]).astype(np.float64)
    hw = np.concatenate([layout.half_width, layout.half_width[:1]]).astype(np.float64)
    seg = np.linalg.norm(np.diff(pts[:, :2], axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    if not (np.isfinite(s[-1]) and s[-1] > 0.0):
        raise ValueError(f"layout {layout.label()!r}: its centerline has no finite length to resample "
                         f"({s[-1]!r}); check its points")
    t = s[-1] * np.arange(num_points) / num_points
    cols = [np.interp(t, s, pts[:, j]) for j in range(3)]
    return (np.stack(cols[:2], axis=1).astype(np.float32), cols[2].astype(np.float32),
            np.interp(t, s, hw).astype(np.float32))


def track_tables(layouts, num_points: int) -> dict[str, np.ndarray]:
    """The host tables (xy, z, half width) of track layouts, each resampled to ``num_points``."""
    k = len(layouts)
    out = {"xy": np.zeros((k, num_points, 2), np.float32), "z": np.zeros((k, num_points), np.float32),
           "hw": np.zeros((k, num_points), np.float32)}
    for i, lay in enumerate(layouts):
        out["xy"][i], out["z"][i], out["hw"][i] = resample_closed(lay, num_points)
    return out


@wp.func
def ground_status(z: wp.array2d(dtype=wp.float32), k: int, n: int, status: int) -> int:
    """``status`` with the heights of row ``k``: NONFINITE alone for a NaN / inf height, else GROUND
    added for a height below 0 (a status already NONFINITE stays so)."""
    st = int(status)
    if st != NONFINITE:
        for i in range(n):
            if not wp.isfinite(z[k, i]):
                st = NONFINITE
        if st != NONFINITE:
            for i in range(n):
                if not (z[k, i] >= 0.0):
                    st = st | GROUND
    return st


@wp.kernel
def track_tables_status_kernel(
    # parameters
    num_points: int, size: float, min_turn_radius: float, clearance: float, min_length: float, max_length: float,
    # inputs: the layout tables
    xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), z: wp.array2d(dtype=wp.float32),
    # outputs
    status_out: wp.array(dtype=wp.int32),
):
    """The status of each track layout as it is: one thread per layout."""
    k = wp.tid()
    st = track_status(xy, hw, k, num_points, size, min_turn_radius, clearance, min_length, max_length)
    status_out[k] = ground_status(z, k, num_points, st)


@wp.kernel
def track_layouts_kernel(
    # parameters
    key: int, key_pick: int, num_layouts: int, num_points: int, fixed: int, max_attempts: int, max_length: float,
    size: wp.array(dtype=wp.float32), min_turn_radius: wp.array(dtype=wp.float32),
    clearance: wp.array(dtype=wp.float32), min_length: wp.array(dtype=wp.float32),
    shift: wp.array(dtype=wp.float32), rotate: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32), seeds: wp.array(dtype=wp.int32), generation: wp.array(dtype=wp.int32),
    t_xy: wp.array2d(dtype=wp.vec2f), t_hw: wp.array2d(dtype=wp.float32), t_z: wp.array2d(dtype=wp.float32),
    assign: wp.array(dtype=wp.int32),
    # outputs
    xy_out: wp.array2d(dtype=wp.vec2f), hw_out: wp.array2d(dtype=wp.float32), z_out: wp.array2d(dtype=wp.float32),
    attempts_out: wp.array(dtype=wp.int32), status_out: wp.array(dtype=wp.int32),
    layout_out: wp.array(dtype=wp.int32), valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    k = pick_layout(seeds[e], generation[e], key_pick, fixed, assign[e], num_layouts)
    layout_out[e] = k
    if k < 0 or k >= num_layouts:
        for i in range(num_points):
            xy_out[e, i] = wp.vec2f(0.0, 0.0)
            hw_out[e, i] = 0.0
            z_out[e, i] = 0.0
        attempts_out[e] = 1
        status_out[e] = NONFINITE
        valid_out[e] = 0
        return
    randomized = shift[e] != 0.0 or rotate[e] != 0.0
    status = int(0)
    used = int(0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st, angle, c, s, dx, dy = draw_placement(seeds[e], generation[e], key, attempt, rotate[e], shift[e])
        for i in range(num_points):
            p = t_xy[k, i]
            xy_out[e, i] = place_xy(p[0], p[1], c, s, angle, dx, dy)
            hw_out[e, i] = t_hw[k, i]
            z_out[e, i] = t_z[k, i]
        status = track_status(xy_out, hw_out, e, num_points, size[e], min_turn_radius[e], clearance[e], min_length[e],
                              max_length)
        if status == 0 or not randomized:
            break
    attempts_out[e] = used
    status_out[e] = status
    if status != 0:
        valid_out[e] = 0


@wp.kernel
def layout_heights_kernel(
    # parameters
    num_points: int,
    # inputs
    active: wp.array(dtype=wp.int32), xy: wp.array2d(dtype=wp.vec2f), z_in: wp.array2d(dtype=wp.float32),
    status_in: wp.array(dtype=wp.int32),
    # outputs
    z_out: wp.array2d(dtype=wp.float32), start_pos_out: wp.array(dtype=wp.vec3f), status_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    for i in range(num_points):
        z_out[e, i] = z_in[e, i]
    status = ground_status(z_in, e, num_points, status_in[e])
    p0 = xy[e, 0]
    start_pos_out[e] = wp.vec3f(p0[0], p0[1], z_in[e, 0])
    status_out[e] = status
    if status != 0:
        valid_out[e] = 0


def _upload_track(ctx) -> None:
    st = layout_spec(ctx)
    s = ctx.static
    check_count(st, s["num_layouts"])
    tables = track_tables(st.layouts, s["num_points"])
    for name in ("xy", "z", "hw"):
        ctx.input(f"table_{name}").assign(tables[name])
    upload_assign(ctx, st)
    prm = ctx._program.params
    status = ctx.input("table_status")
    wp.launch(track_tables_status_kernel, dim=s["num_layouts"],
              inputs=[s["num_points"], *(float(prm[f"{ctx.name}.{n}"]) for n in ("size", "min_turn_radius",
                                                                                 "clearance", "min_length")),
                      float(s["max_length"]), ctx.input("table_xy"), ctx.input("table_hw"), ctx.input("table_z")],
              outputs=[status], device=ctx.device)
    warn_bad(ctx, st, status.numpy(), TrackStatus)


def _launch_track(ctx) -> None:
    if not getattr(ctx, "_layouts_uploaded", False):
        _upload_track(ctx)
        ctx._layouts_uploaded = True
    s = ctx.static
    p = ctx.param
    wp.launch(
        track_layouts_kernel, dim=ctx.num_envs,
        inputs=[ctx.key, name_key(ctx.name + ".pick"), s["num_layouts"], s["num_points"], s["fixed"],
                s["max_attempts"], float(s["max_length"]), p("size"), p("min_turn_radius"), p("clearance"),
                p("min_length"), p("shift"), p("rotate"), ctx.active, ctx.seeds, ctx.generation,
                ctx.input("table_xy"), ctx.input("table_hw"), ctx.input("table_z"), ctx.input("assign")],
        outputs=[ctx.output(n) for n in ("xy", "half_width", "z", "attempts", "status", "layout")] + [ctx.valid],
        device=ctx.device,
    )


def _launch_heights(ctx) -> None:
    wp.launch(layout_heights_kernel, dim=ctx.num_envs,
              inputs=[ctx.capacity("points"), ctx.active, ctx.input("xy"), ctx.input("z"), ctx.input("status")],
              outputs=[ctx.output("z"), ctx.output("start_pos"), ctx.output("status"), ctx.valid], device=ctx.device)


PTS = ("env", "points")
TPTS = ("layouts", "points")
LAY = ("layouts",)


def register_track_layout_stages(registry) -> None:
    """Register ``track.from_layouts`` and ``track.layout_heights``."""
    registry.register(
        "track.from_layouts", _launch_track, params=TRACK_PARAMS, _builtin=True,
        capacities=lambda s: {"points": s["num_points"], "layouts": s["num_layouts"]},
        inputs={
            "table_xy": table_spec(wp.vec2f, TPTS, "centerline of each layout, resampled [m]"),
            "table_z": table_spec(wp.float32, TPTS, "heights of each layout [m]"),
            "table_hw": table_spec(wp.float32, TPTS, "half widths of each layout [m]"),
            "table_status": table_spec(wp.int32, LAY, "TrackStatus bits of each layout as it is"),
            "assign": ASSIGN,
        },
        outputs={
            "xy": ArraySpec(wp.vec2f, PTS, doc="centerline, point 0 on the start line [m]"),
            "half_width": ArraySpec(wp.float32, PTS, doc="band half width [m]"),
            "z": ArraySpec(wp.float32, PTS, doc="centerline heights of the layout [m]"),
            "attempts": ArraySpec(wp.int32, doc="draws used"),
            "status": ArraySpec(wp.int32, doc="TrackStatus bits (0: valid)"),
            "layout": ArraySpec(wp.int32, doc="index of the layout this env drives"),
        },
    )
    registry.register(
        "track.layout_heights", _launch_heights, _builtin=True,
        inputs={"xy": ArraySpec(wp.vec2f, PTS, source="centerline.xy"),
                "z": ArraySpec(wp.float32, PTS, source="centerline.z"),
                "status": ArraySpec(wp.int32, source="centerline.status")},
        outputs={"z": ArraySpec(wp.float32, PTS, doc="centerline height [m]"),
                 "start_pos": ArraySpec(wp.vec3f, doc="start position with its height [m]"),
                 "status": ArraySpec(wp.int32, doc="TrackStatus bits: the centerline's plus GROUND")},
    )

