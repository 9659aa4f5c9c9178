"""Layouts as a generator source: each env flies one of K real (or exported) layouts.

Two stage kinds fill the *same* result arrays as the procedural families, so ``GateGenerator`` /
``TrackGenerator``, ``Course.gates`` / ``Course.track`` and every component work unchanged:

* ``gates.from_layouts`` (stage ``gates``) + ``gates.layout_frames`` (stage ``gate_frames``) +
  ``gates.layout_obstacles`` (stage ``obstacles``): gate poses, count, frame sizes, start pose of
  each env's layout; ``gates.layout`` (the index of each env's layout); the layout's poles under
  the obstacle stage's names (``obstacles.pos`` [E, M] base centres, ``obstacles.radius``,
  ``obstacles.height``, ``obstacles.count``: ``result.obstacle_*``).
* ``track.from_layouts`` (stage ``centerline``) + ``track.band`` (+ ``track.layout_heights`` as
  stage ``elevation`` when a layout leaves the ground plane).

The K layouts live on device in tables padded to capacity (generator inputs
``gates.table_*`` / ``centerline.table_*``), written once, when the generator is built, from the
layouts the stage spec carries (:class:`LayoutStageSpec`, made by ``presets.gates_from_layouts``
/ ``presets.track_from_layouts``). Then each regeneration is a fixed set of launches: an env
picks its layout (a uniform draw keyed by its seed and generation, or a fixed assignment),
optionally randomizes it (dynamic parameters ``shift``, ``rotate``, ``jitter_*``: a rigid
transform about the vertical through the course origin, per-gate jitter), and is validated with
the families' own rules. Layouts that break the rules as they are get one warning at build
time (:class:`LayoutWarning`) naming them; their envs get ``valid = 0`` and the status bits.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
import numpy as np
import warp as wp

from track_gen.errors import TrackGenWarning
from track_gen.generators import layout_kernels as K
from track_gen.generators.status import GateStatus, TrackStatus
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.pipeline.spec import StageSpec
from track_gen.rng import name_key

__all__ = ["LayoutStageSpec", "LayoutWarning", "register_layout_stages"]

PI = 3.1416  # the bounds the procedural families use for angles
HALF_PI = 1.5708


class LayoutWarning(TrackGenWarning):
    """A layout breaks the course validity rules as it is: the envs that fly it get ``valid = 0``."""


@dataclass(frozen=True)
class LayoutStageSpec(StageSpec):
    """A layout source stage with its data: the layouts and, for a fixed assignment, each env's index."""

    layouts: tuple = ()
    assign: tuple[int, ...] | None = None


def _shared(dynamic: bool = True) -> dict[str, ParamSpec]:
    return {
        "shift": ParamSpec(0.0, lo=0.0, doc="largest shift of the whole layout along x and along y [m]"),
        "rotate": ParamSpec(0.0, lo=0.0, hi=PI, doc="largest rotation of the whole layout about the vertical "
                                                     "through the course origin [rad]"),
        "num_layouts": ParamSpec(1, lo=1, hi=65536, static=True, integer=True, doc="K, the layouts on device"),
        "fixed": ParamSpec(0, lo=0, hi=1, static=True, integer=True,
                           doc="1: env e flies layout assign[e]; 0: a per-env draw keyed by seed and generation"),
        "max_attempts": ParamSpec(8, lo=1, hi=1024, static=True, integer=True,
                                  doc="randomized draws per env before valid=0 (one when nothing is randomized)"),
    }


GATE_PARAMS = {
    "size": ParamSpec(10.0, lo=0.0, lo_open=True, doc="side of the square the frames must fit in [m]"),
    "min_spacing": ParamSpec(0.0, lo=0.0, doc="shortest distance between consecutive gates [m]"),
    "max_spacing": ParamSpec(1000.0, lo=0.0, lo_open=True, doc="longest distance between consecutive gates [m]"),
    "max_turn": ParamSpec(PI, lo=0.0, lo_open=True, hi=PI, doc="largest angle between a gate and its legs [rad]"),
    "max_climb": ParamSpec(HALF_PI, lo=0.0, lo_open=True, hi=HALF_PI, doc="steepest climb or dive of a leg [rad]"),
    "crossing_clearance": ParamSpec(0.0, lo=0.0, doc="height gap between two legs crossing in plan view [m]"),
    "jitter_pos": ParamSpec(0.0, lo=0.0, doc="per-gate jitter of x and y [m]"),
    "jitter_height": ParamSpec(0.0, lo=0.0, doc="per-gate jitter of z [m]"),
    "jitter_yaw": ParamSpec(0.0, lo=0.0, hi=PI, doc="per-gate jitter of the heading [rad]"),
    "max_gates": ParamSpec(10, lo=1, hi=4096, static=True, integer=True, doc="gate capacity G"),
    "max_obstacles": ParamSpec(1, lo=1, hi=4096, static=True, integer=True, doc="pole capacity M"),
    "closed": ParamSpec(1, lo=0, hi=1, static=True, integer=True, doc="1: loops; 0: one pass"),
    **_shared(),
}

TRACK_PARAMS = {
    "size": ParamSpec(10.0, lo=0.0, lo_open=True, doc="side of the square the band must fit in [m]"),
    "min_turn_radius": ParamSpec(0.0, lo=0.0, doc="smallest turn radius [m] (never below the half width)"),
    "clearance": ParamSpec(0.0, lo=0.0, doc="gap kept between non-adjacent parts of the band [m]"),
    "min_length": ParamSpec(0.0, lo=0.0, doc="shortest loop [m]"),
    "max_length": ParamSpec(40.0, lo=0.0, lo_open=True, static=True, doc="longest loop [m]; sizes checkpoints"),
    "num_points": ParamSpec(256, lo=16, hi=8192, static=True, integer=True, doc="centerline points N"),
    **_shared(),
}

G = ("env", "gates")
T = ("layouts", "gates")
P = ("env", "obstacles")
TP = ("layouts", "obstacles")
PTS = ("env", "points")
TPTS = ("layouts", "points")
LAY = ("layouts",)


def _layout_spec(ctx) -> LayoutStageSpec:
    st = ctx._program.spec.stage(ctx.name)
    if not isinstance(st, LayoutStageSpec) or not st.layouts:
        raise TypeError(
            f"stage {ctx.name!r}: a layout source takes its layouts from its spec; build it with "
            f"presets.gates_from_layouts(...) / presets.track_from_layouts(...)"
        )
    return st


def _upload_assign(ctx, st: LayoutStageSpec) -> None:
    k = ctx.static["num_layouts"]
    if st.assign is not None:
        ctx.input("assign").assign(np.asarray(st.assign, dtype=np.int32))
    else:
        ctx.input("assign").assign(np.arange(ctx.num_envs, dtype=np.int64) % k)


def _check_count(st: LayoutStageSpec, k: int) -> None:
    if len(st.layouts) != k:
        raise ValueError(f"num_layouts: the spec says {k} but the stage carries {len(st.layouts)} layouts; "
                         "rebuild the spec with the preset")


def _warn_bad(ctx, st, status: np.ndarray, flags) -> None:
    bad = [(lay.label(), flags(int(s))) for lay, s in zip(st.layouts, status) if s != 0]
    if bad:
        names = "; ".join(f"{n!r}: {f.name}" for n, f in bad)
        warnings.warn(
            f"stage {ctx.name!r}: {len(bad)} of {len(st.layouts)} layouts break the course rules as they are "
            f"({names}); the envs that fly them get valid = 0. Fix the layout, or relax the stage's limits",
            LayoutWarning, stacklevel=2,
        )


def gate_tables(layouts, max_gates: int, max_poles: int) -> dict[str, np.ndarray]:
    """The padded host tables of gate layouts (errors name the layout and both numbers)."""
    k = len(layouts)
    out = {
        "pos": np.zeros((k, max_gates, 3), np.float32), "yaw": np.zeros((k, max_gates), np.float32),
        "stacked": np.zeros((k, max_gates), np.int32),
        "count": np.zeros(k, np.int32), "width": np.zeros(k, np.float32), "height": np.zeros(k, np.float32),
        "thickness": np.zeros(k, np.float32), "start_pos": np.zeros((k, 3), np.float32),
        "start_yaw": np.zeros(k, np.float32), "pole_pos": np.zeros((k, max_poles, 3), np.float32),
        "pole_radius": np.zeros((k, max_poles), np.float32), "pole_height": np.zeros((k, max_poles), np.float32),
        "pole_count": np.zeros(k, np.int32),
    }
    for i, lay in enumerate(layouts):
        n, m = lay.num_gates, len(lay.obstacles)
        if n > max_gates:
            raise ValueError(f"layout {lay.label()!r} has {n} gates, more than the capacity max_gates={max_gates}; "
                             f"pass max_gates >= {n}")
        if m > max_poles:
            raise ValueError(f"layout {lay.label()!r} has {m} poles, more than the capacity "
                             f"max_obstacles={max_poles}; pass max_obstacles >= {m}")
        out["pos"][i, :n] = lay.pos
        out["yaw"][i, :n] = lay.rpy[:, 2]
        out["count"][i] = n
        out["width"][i], out["height"][i], out["thickness"][i] = lay.width[0], lay.height[0], lay.frame_thickness[0]
        out["start_pos"][i] = lay.start_pos
        out["start_yaw"][i] = lay.start_rpy[2]
        out["pole_pos"][i, :m] = lay.obstacles.pos
        out["pole_radius"][i, :m] = lay.obstacles.radius
        out["pole_height"][i, :m] = lay.obstacles.height
        out["pole_count"][i] = m
    return out


_GATE_TABLES = ("pos", "yaw", "stacked", "count", "width", "height", "thickness", "start_pos", "start_yaw", "pole_pos",
                "pole_radius", "pole_height", "pole_count")


def _upload_gates(ctx) -> None:
    st = _layout_spec(ctx)
    s = ctx.static
    _check_count(st, s["num_layouts"])
    tables = gate_tables(st.layouts, s["max_gates"], s["max_obstacles"])
    for name in _GATE_TABLES:
        ctx.input(f"table_{name}").assign(tables[name])
    _upload_assign(ctx, st)
    prm = ctx._program.params
    status = ctx.input("table_status")
    wp.launch(K.gate_tables_status_kernel, dim=s["num_layouts"],
              inputs=[*(ctx.input(f"table_{n}") for n in _GATE_TABLES), s["closed"],
                      *(float(prm[f"{ctx.name}.{n}"]) for n in ("size", "min_spacing", "max_spacing", "max_turn",
                                                                "max_climb", "crossing_clearance"))],
              outputs=[status], device=ctx.device)
    _warn_bad(ctx, st, status.numpy(), GateStatus)


def _launch_gates(ctx) -> None:
    if not getattr(ctx, "_layouts_uploaded", False):
        _upload_gates(ctx)
        ctx._layouts_uploaded = True
    s = ctx.static
    p = ctx.param
    wp.launch(
        K.gate_layouts_kernel, dim=ctx.num_envs,
        inputs=[ctx.active, ctx.seeds, ctx.generation, ctx.key, name_key(ctx.name + ".pick"),
                *(p(n) for n in ("size", "min_spacing", "max_spacing", "max_turn", "max_climb", "crossing_clearance",
                                 "shift", "rotate", "jitter_pos", "jitter_height", "jitter_yaw")),
                *(ctx.input(f"table_{n}") for n in _GATE_TABLES), ctx.input("assign"),
                s["num_layouts"], s["max_gates"], s["max_obstacles"], s["closed"], s["fixed"], s["max_attempts"]],
        outputs=[ctx.output(n) for n in ("pos", "yaw", "stacked", "count", "length", "start_pos", "start_yaw",
                                         "attempts", "status", "layout", "width", "height", "thickness",
                                         "obstacle_pos", "obstacle_radius", "obstacle_height", "obstacle_count")]
        + [ctx.valid],
        device=ctx.device,
    )


def _launch_frames(ctx) -> None:
    wp.launch(K.layout_frames_kernel, dim=ctx.num_envs,
              inputs=[ctx.active, ctx.input("yaw"), ctx.input("width"), ctx.input("height"), ctx.input("thickness"),
                      ctx.capacity("gates")],
              outputs=[ctx.output(n) for n in ("width", "height", "thickness", "normal")], device=ctx.device)


def _launch_obstacles(ctx) -> None:
    wp.launch(K.layout_obstacles_kernel, dim=ctx.num_envs,
              inputs=[ctx.active, *(ctx.input(n) for n in ("pos_in", "radius_in", "height_in", "count_in",
                                                             "status_in")), ctx.capacity("obstacles")],
              outputs=[ctx.output(n) for n in ("pos", "radius", "height", "count", "status")], device=ctx.device)


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
    k = len(layouts)
    out = {"xy": np.zeros((k, num_points, 2), np.float32), "z": np.zeros((k, num_points), np.float32),
           "hw": np.zeros((k, num_points), np.float32)}
    for i, lay in enumerate(layouts):
        out["xy"][i], out["z"][i], out["hw"][i] = resample_closed(lay, num_points)
    return out


def _upload_track(ctx) -> None:
    st = _layout_spec(ctx)
    s = ctx.static
    _check_count(st, s["num_layouts"])
    tables = track_tables(st.layouts, s["num_points"])
    for name in ("xy", "z", "hw"):
        ctx.input(f"table_{name}").assign(tables[name])
    _upload_assign(ctx, st)
    prm = ctx._program.params
    status = ctx.input("table_status")
    wp.launch(K.track_tables_status_kernel, dim=s["num_layouts"],
              inputs=[ctx.input("table_xy"), ctx.input("table_hw"), ctx.input("table_z"), s["num_points"],
                      *(float(prm[f"{ctx.name}.{n}"]) for n in ("size", "min_turn_radius", "clearance",
                                                                "min_length")), float(s["max_length"])],
              outputs=[status], device=ctx.device)
    _warn_bad(ctx, st, status.numpy(), TrackStatus)


def _launch_track(ctx) -> None:
    if not getattr(ctx, "_layouts_uploaded", False):
        _upload_track(ctx)
        ctx._layouts_uploaded = True
    s = ctx.static
    p = ctx.param
    wp.launch(
        K.track_layouts_kernel, dim=ctx.num_envs,
        inputs=[ctx.active, ctx.seeds, ctx.generation, ctx.key, name_key(ctx.name + ".pick"),
                p("size"), p("min_turn_radius"), p("clearance"), p("min_length"), float(s["max_length"]),
                p("shift"), p("rotate"), ctx.input("table_xy"), ctx.input("table_hw"), ctx.input("table_z"),
                ctx.input("assign"), s["num_layouts"], s["num_points"], s["fixed"], s["max_attempts"]],
        outputs=[ctx.output(n) for n in ("xy", "half_width", "z", "attempts", "status", "layout")] + [ctx.valid],
        device=ctx.device,
    )


def _launch_heights(ctx) -> None:
    wp.launch(K.layout_heights_kernel, dim=ctx.num_envs,
              inputs=[ctx.active, ctx.input("xy"), ctx.input("z"), ctx.input("status"), ctx.capacity("points")],
              outputs=[ctx.output("z"), ctx.output("start_pos"), ctx.output("status"), ctx.valid], device=ctx.device)


def _table(dtype, shape, doc) -> ArraySpec:
    return ArraySpec(dtype, shape, doc=doc + "; written when the generator is built")


_ASSIGN = ArraySpec(wp.int32, ("env",),
                    doc="layout index of each env when fixed=1; written at build (e % K by default)")


def register_layout_stages(registry) -> None:
    """Register ``gates.from_layouts``, ``gates.layout_frames``, ``gates.layout_obstacles``,
    ``track.from_layouts`` and ``track.layout_heights``."""
    registry.register(
        "gates.from_layouts", _launch_gates, params=GATE_PARAMS, _builtin=True,
        capacities=lambda s: {"gates": s["max_gates"], "layouts": s["num_layouts"], "obstacles": s["max_obstacles"]},
        inputs={
            "table_pos": _table(wp.vec3f, T, "gate centres of each layout [m]"),
            "table_yaw": _table(wp.float32, T, "gate headings of each layout [rad]"),
            "table_stacked": ArraySpec(wp.int32, T, doc="1 where leg g -> g+1 of a layout is a split-S (a stacked "
                                                        "pair); zeros: layouts declare none, write it to mark them"),
            "table_count": _table(wp.int32, LAY, "gates in each layout"),
            "table_width": _table(wp.float32, LAY, "opening width of each layout [m]"),
            "table_height": _table(wp.float32, LAY, "opening height of each layout [m]"),
            "table_thickness": _table(wp.float32, LAY, "frame bar thickness of each layout [m]"),
            "table_start_pos": _table(wp.vec3f, LAY, "start position of each layout [m]"),
            "table_start_yaw": _table(wp.float32, LAY, "start heading of each layout [rad]"),
            "table_pole_pos": _table(wp.vec3f, TP, "pole base centres of each layout [m]"),
            "table_pole_radius": _table(wp.float32, TP, "pole radii [m]"),
            "table_pole_height": _table(wp.float32, TP, "pole heights [m]"),
            "table_pole_count": _table(wp.int32, LAY, "poles in each layout"),
            "table_status": _table(wp.int32, LAY, "GateStatus bits of each layout as it is"),
            "assign": _ASSIGN,
        },
        outputs={
            "pos": ArraySpec(wp.vec3f, G, doc="gate centres [m]; rows >= count are zero"),
            "yaw": ArraySpec(wp.float32, G, doc="gate headings (direction of passage) [rad]"),
            "stacked": ArraySpec(wp.int32, G, doc="1 where leg g -> g+1 is a split-S (from table_stacked)"),
            "count": ArraySpec(wp.int32, doc="gates in this course"),
            "length": ArraySpec(wp.float32,
                                doc="length of the polyline start (one pass) -> gates (-> gate 0 on a loop) [m]"),
            "start_pos": ArraySpec(wp.vec3f, doc="start position [m]"),
            "start_yaw": ArraySpec(wp.float32, doc="start heading [rad]"),
            "attempts": ArraySpec(wp.int32, doc="draws used"),
            "status": ArraySpec(wp.int32, doc="GateStatus bits (0: valid)"),
            "layout": ArraySpec(wp.int32, doc="index of the layout this env flies"),
            "width": ArraySpec(wp.float32, doc="opening width of this env's layout [m]"),
            "height": ArraySpec(wp.float32, doc="opening height [m]"),
            "thickness": ArraySpec(wp.float32, doc="frame bar thickness [m]"),
            "obstacle_pos": ArraySpec(wp.vec3f, P, doc="pole base centres (on the ground) [m]; rows >= count zero"),
            "obstacle_radius": ArraySpec(wp.float32, P, doc="pole radii [m]"),
            "obstacle_height": ArraySpec(wp.float32, P, doc="pole heights from the base [m]"),
            "obstacle_count": ArraySpec(wp.int32, doc="poles in this course"),
        },
    )
    registry.register(
        "gates.layout_frames", _launch_frames, _builtin=True,
        inputs={n: ArraySpec(wp.float32, G if n == "yaw" else ("env",), source=f"gates.{n}")
                for n in ("yaw", "width", "height", "thickness")},
        outputs={
            "width": ArraySpec(wp.float32, doc="opening width of this env's gates [m]"),
            "height": ArraySpec(wp.float32, doc="opening height [m]"),
            "thickness": ArraySpec(wp.float32, doc="frame bar thickness [m]"),
            "normal": ArraySpec(wp.vec3f, G, doc="unit normal of each gate (direction of passage)"),
        },
    )
    registry.register(
        "gates.layout_obstacles", _launch_obstacles, _builtin=True,
        inputs={"pos_in": ArraySpec(wp.vec3f, P, source="gates.obstacle_pos"),
                "radius_in": ArraySpec(wp.float32, P, source="gates.obstacle_radius"),
                "height_in": ArraySpec(wp.float32, P, source="gates.obstacle_height"),
                "count_in": ArraySpec(wp.int32, source="gates.obstacle_count"),
                "status_in": ArraySpec(wp.int32, source="gates.status")},
        outputs={"pos": ArraySpec(wp.vec3f, P, doc="pole base centres, on the ground [m]; rows >= count zero"),
                 "radius": ArraySpec(wp.float32, P, doc="pole radii [m]"),
                 "height": ArraySpec(wp.float32, P, doc="pole heights above their base [m]"),
                 "count": ArraySpec(wp.int32, doc="poles in this course"),
                 "status": ArraySpec(wp.int32, doc="GateStatus bits of the course (the gates stage's)")},
    )
    registry.register(
        "track.from_layouts", _launch_track, params=TRACK_PARAMS, _builtin=True,
        capacities=lambda s: {"points": s["num_points"], "layouts": s["num_layouts"]},
        inputs={
            "table_xy": _table(wp.vec2f, TPTS, "centerline of each layout, resampled [m]"),
            "table_z": _table(wp.float32, TPTS, "heights of each layout [m]"),
            "table_hw": _table(wp.float32, TPTS, "half widths of each layout [m]"),
            "table_status": _table(wp.int32, LAY, "TrackStatus bits of each layout as it is"),
            "assign": _ASSIGN,
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

