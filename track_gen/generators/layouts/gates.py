"""Gate layouts as a generator source: ``gates.from_layouts`` (stage ``gates``), ``gates.layout_frames``
(stage ``gate_frames``) and ``gates.layout_obstacles`` (stage ``obstacles``).

Each env reads its layout from tables padded to capacity (``[K, G]`` gates, ``[K, M]`` poles),
applies the optional randomization (the rigid placement of :mod:`source`, per-gate jitter) and is
validated with the gate family's own rules plus its poles clear of every frame.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from track_gen.generators.gates.bits import GROUND, NONFINITE, OBSTACLE
from track_gen.generators.layouts.explain import explain_gate_layout
from track_gen.generators.gates.validity import gates_status
from track_gen.generators.layouts.source import (ASSIGN, HALF_PI, PI, check_count, draw_placement, layout_spec,
                                                 pick_layout, place_xy, plus, shared_params, table_spec,
                                                 upload_assign, warn_bad)
from track_gen.generators.status import GateStatus
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.rng import name_key

__all__ = ["GATE_PARAMS", "gate_tables", "register_gate_layout_stages"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


#: the layout stage's rule limits, in the order the status kernels take them
RULE_LIMITS = ("size", "min_spacing", "max_spacing", "max_turn", "max_climb", "crossing_clearance")

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
    **shared_params(),
}

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


_GATE_TABLES = ("pos", "yaw", "stacked", "count", "width", "height", "thickness", "start_pos", "start_yaw", "pole_pos",
                "pole_radius", "pole_height", "pole_count")


@wp.func
def pole_in_frame(base: wp.vec3f, radius: float, height: float, centre: wp.vec3f, yaw: float, outer_half: float,
                  outer_half_h: float, depth: float) -> bool:
    """Whether an upright pole (base centre, radius, height) meets an upright gate frame (the box of its
    outer size, ``depth`` thick along the normal): a pole in a gate's opening or through its frame."""
    dx = base[0] - centre[0]
    dy = base[1] - centre[1]
    c = wp.cos(yaw)
    s = wp.sin(yaw)
    along = c * dx + s * dy
    across = -s * dx + c * dy
    return (wp.abs(along) <= 0.5 * depth + radius and wp.abs(across) <= outer_half + radius
            and base[2] <= centre[2] + outer_half_h and base[2] + height >= centre[2] - outer_half_h)


@wp.func
def poles_status(pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32), e: int, count: int,
                 pole_pos: wp.array2d(dtype=wp.vec3f), pole_radius: wp.array2d(dtype=wp.float32),
                 pole_height: wp.array2d(dtype=wp.float32), pe: int, poles: int, outer_half: float,
                 outer_half_h: float, depth: float) -> int:
    """OBSTACLE when a pole of row ``pe`` meets a gate frame of row ``e``; NONFINITE for a NaN / inf pole."""
    for j in range(poles):
        b = pole_pos[pe, j]
        if not (wp.isfinite(b[0]) and wp.isfinite(b[1]) and wp.isfinite(b[2]) and wp.isfinite(pole_radius[pe, j])
                and wp.isfinite(pole_height[pe, j])):
            return NONFINITE
    status = int(0)
    for g in range(count):
        for j in range(poles):
            if pole_in_frame(pole_pos[pe, j], pole_radius[pe, j], pole_height[pe, j], pos[e, g], yaw[e, g],
                             outer_half, outer_half_h, depth):
                status = status | OBSTACLE
    return status


@wp.func
def gate_course_status(pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32),
                       stacked: wp.array2d(dtype=wp.int32), e: int, count: int, closed: int, size: float,
                       min_spacing: float, max_spacing: float, max_turn: float, max_climb: float,
                       crossing_clearance: float, width: float, height: float, thickness: float,
                       pole_pos: wp.array2d(dtype=wp.vec3f),
                       pole_radius: wp.array2d(dtype=wp.float32), pole_height: wp.array2d(dtype=wp.float32),
                       pe: int, poles: int, start: wp.vec3f, start_yaw: float) -> int:
    """Every rule of a gate course from a layout: the procedural gates' (:func:`gates.validity.gates_status`:
    spacing, crowding, turn, climb, crossings, split-S pairs, bounds, ground, opening, finite) plus poles
    clear of every frame (OBSTACLE) and a finite start pose. GROUND is the opening's: a real gate stands
    on the ground, so its lower frame bar may rest on it (AlphaPilot's and TII's low gates do)."""
    outer_half = 0.5 * width + thickness
    if width <= 0.0 or height <= 0.0:
        outer_half = 0.0  # flags OPENING: an opening of no width or no height cannot be passed
    outer_half_h = 0.5 * height + thickness
    status = gates_status(pos, yaw, e, count, closed, size, min_spacing, max_spacing, max_turn, outer_half,
                          outer_half_h, stacked, max_climb, crossing_clearance)
    if status == NONFINITE:
        return status
    if (status & GROUND) != 0:  # a real gate stands on the ground: its lower bar may rest on it, its opening not
        status = status - GROUND
        for k in range(count):
            if not (pos[e, k][2] - 0.5 * height >= 0.0):
                status = status | GROUND
    if not (wp.isfinite(start[0]) and wp.isfinite(start[1]) and wp.isfinite(start[2]) and wp.isfinite(start_yaw)
            and wp.isfinite(height) and wp.isfinite(thickness)):
        return NONFINITE
    p = poles_status(pos, yaw, e, count, pole_pos, pole_radius, pole_height, pe, poles, outer_half, outer_half_h,
                     thickness)
    if p == NONFINITE:
        return p
    return status | p


@wp.kernel
def gate_tables_status_kernel(
    # parameters
    closed: int, size: float, min_spacing: float, max_spacing: float, max_turn: float, max_climb: float,
    crossing_clearance: float,
    # inputs: the layout tables
    pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32), stacked: wp.array2d(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    width: wp.array(dtype=wp.float32), height: wp.array(dtype=wp.float32), thickness: wp.array(dtype=wp.float32),
    start_pos: wp.array(dtype=wp.vec3f), start_yaw: wp.array(dtype=wp.float32),
    pole_pos: wp.array2d(dtype=wp.vec3f), pole_radius: wp.array2d(dtype=wp.float32),
    pole_height: wp.array2d(dtype=wp.float32), pole_count: wp.array(dtype=wp.int32),
    # outputs
    status_out: wp.array(dtype=wp.int32),
):
    """The status of each layout as it is (no randomization): one thread per layout."""
    k = wp.tid()
    status_out[k] = gate_course_status(pos, yaw, stacked, k, count[k], closed, size, min_spacing, max_spacing,
                                       max_turn, max_climb, crossing_clearance, width[k], height[k], thickness[k],
                                       pole_pos, pole_radius, pole_height, k, pole_count[k], start_pos[k],
                                       start_yaw[k])


@wp.func
def clear_course(e: int, max_gates: int, max_poles: int, pos: wp.array2d(dtype=wp.vec3f),
                 yaw: wp.array2d(dtype=wp.float32), stacked: wp.array2d(dtype=wp.int32),
                 pole_pos: wp.array2d(dtype=wp.vec3f), pole_radius: wp.array2d(dtype=wp.float32),
                 pole_height: wp.array2d(dtype=wp.float32)):
    """Zero env ``e``'s gate and pole rows (the empty course of a layout index outside [0, K))."""
    for g in range(max_gates):
        pos[e, g] = wp.vec3f(0.0, 0.0, 0.0)
        yaw[e, g] = 0.0
        stacked[e, g] = 0
    for j in range(max_poles):
        pole_pos[e, j] = wp.vec3f(0.0, 0.0, 0.0)
        pole_radius[e, j] = 0.0
        pole_height[e, j] = 0.0


@wp.func
def place_gates(st: wp.uint32, e: int, k: int, n: int, max_gates: int, angle: float, c: float, s: float, dx: float,
                dy: float, jitter_pos: float, jitter_height: float, jitter_yaw: float,
                t_pos: wp.array2d(dtype=wp.vec3f), t_yaw: wp.array2d(dtype=wp.float32),
                pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32)) -> wp.uint32:
    """Env ``e``'s ``n`` gates: layout ``k``'s under the attempt's placement, each jittered; rows past
    ``n`` zero. Returns the advanced random state."""
    for g in range(n):
        p = t_pos[k, g]
        q = place_xy(p[0], p[1], c, s, angle, dx, dy)
        jx = jitter_pos * (2.0 * wp.randf(st) - 1.0)
        jy = jitter_pos * (2.0 * wp.randf(st) - 1.0)
        jz = jitter_height * (2.0 * wp.randf(st) - 1.0)
        jyaw = jitter_yaw * (2.0 * wp.randf(st) - 1.0)
        pos[e, g] = wp.vec3f(plus(q[0], jx), plus(q[1], jy), plus(p[2], jz))
        yaw[e, g] = plus(plus(t_yaw[k, g], angle), jyaw)
    for g in range(n, max_gates):
        pos[e, g] = wp.vec3f(0.0, 0.0, 0.0)
        yaw[e, g] = 0.0
    return st


@wp.func
def place_poles(e: int, k: int, m: int, max_poles: int, angle: float, c: float, s: float, dx: float, dy: float,
                t_pole_pos: wp.array2d(dtype=wp.vec3f), t_pole_radius: wp.array2d(dtype=wp.float32),
                t_pole_height: wp.array2d(dtype=wp.float32), pole_pos: wp.array2d(dtype=wp.vec3f),
                pole_radius: wp.array2d(dtype=wp.float32), pole_height: wp.array2d(dtype=wp.float32)):
    """Env ``e``'s poles: layout ``k``'s ``m`` poles under the attempt's placement; rows past ``m`` zero."""
    for j in range(max_poles):
        b = wp.vec3f(0.0, 0.0, 0.0)
        r = float(0.0)
        h = float(0.0)
        if j < m:
            b0 = t_pole_pos[k, j]
            qb = place_xy(b0[0], b0[1], c, s, angle, dx, dy)
            b = wp.vec3f(qb[0], qb[1], b0[2])
            r = t_pole_radius[k, j]
            h = t_pole_height[k, j]
        pole_pos[e, j] = b
        pole_radius[e, j] = r
        pole_height[e, j] = h


@wp.func
def path_length(pos: wp.array2d(dtype=wp.vec3f), start: wp.vec3f, e: int, n: int, closed: int) -> float:
    """Length of env ``e``'s polyline start (one pass) -> gates (-> gate 0 on a loop)."""
    total = float(0.0)
    if n > 0 and closed == 0:
        total = wp.length(pos[e, 0] - start)
    for g in range(1, n):
        total += wp.length(pos[e, g] - pos[e, g - 1])
    if closed != 0 and n > 1:
        total += wp.length(pos[e, 0] - pos[e, n - 1])
    return total


@wp.kernel
def gate_layouts_kernel(
    # parameters
    key: int, key_pick: int, num_layouts: int, max_gates: int, max_poles: int, closed: int, fixed: int,
    max_attempts: int,
    size: wp.array(dtype=wp.float32), min_spacing: wp.array(dtype=wp.float32),
    max_spacing: wp.array(dtype=wp.float32), max_turn: wp.array(dtype=wp.float32),
    max_climb: wp.array(dtype=wp.float32), crossing_clearance: wp.array(dtype=wp.float32),
    shift: wp.array(dtype=wp.float32), rotate: wp.array(dtype=wp.float32), jitter_pos: wp.array(dtype=wp.float32),
    jitter_height: wp.array(dtype=wp.float32), jitter_yaw: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32), seeds: wp.array(dtype=wp.int32), generation: wp.array(dtype=wp.int32),
    t_pos: wp.array2d(dtype=wp.vec3f), t_yaw: wp.array2d(dtype=wp.float32), t_stacked: wp.array2d(dtype=wp.int32),
    t_count: wp.array(dtype=wp.int32),
    t_width: wp.array(dtype=wp.float32), t_height: wp.array(dtype=wp.float32),
    t_thickness: wp.array(dtype=wp.float32), t_start_pos: wp.array(dtype=wp.vec3f),
    t_start_yaw: wp.array(dtype=wp.float32), t_pole_pos: wp.array2d(dtype=wp.vec3f),
    t_pole_radius: wp.array2d(dtype=wp.float32), t_pole_height: wp.array2d(dtype=wp.float32),
    t_pole_count: wp.array(dtype=wp.int32), assign: wp.array(dtype=wp.int32),
    # outputs
    pos_out: wp.array2d(dtype=wp.vec3f), yaw_out: wp.array2d(dtype=wp.float32),
    stacked_out: wp.array2d(dtype=wp.int32), count_out: wp.array(dtype=wp.int32),
    length_out: wp.array(dtype=wp.float32), start_pos_out: wp.array(dtype=wp.vec3f),
    start_yaw_out: wp.array(dtype=wp.float32), attempts_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32), layout_out: wp.array(dtype=wp.int32),
    width_out: wp.array(dtype=wp.float32), height_out: wp.array(dtype=wp.float32),
    thickness_out: wp.array(dtype=wp.float32), pole_pos_out: wp.array2d(dtype=wp.vec3f),
    pole_radius_out: wp.array2d(dtype=wp.float32), pole_height_out: wp.array2d(dtype=wp.float32),
    pole_count_out: wp.array(dtype=wp.int32), valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    k = pick_layout(seeds[e], generation[e], key_pick, fixed, assign[e], num_layouts)
    layout_out[e] = k
    if k < 0 or k >= num_layouts:
        # no such layout (a fixed assignment outside [0, K)): an empty, invalid course
        clear_course(e, max_gates, max_poles, pos_out, yaw_out, stacked_out, pole_pos_out, pole_radius_out,
                     pole_height_out)
        count_out[e] = 0
        pole_count_out[e] = 0
        length_out[e] = 0.0
        start_pos_out[e] = wp.vec3f(0.0, 0.0, 0.0)
        start_yaw_out[e] = 0.0
        width_out[e] = 0.0
        height_out[e] = 0.0
        thickness_out[e] = 0.0
        attempts_out[e] = 1
        status_out[e] = NONFINITE
        valid_out[e] = 0
        return
    n = t_count[k]
    m = t_pole_count[k]
    for g in range(max_gates):
        stacked_out[e, g] = t_stacked[k, g]
    randomized = (shift[e] != 0.0 or rotate[e] != 0.0 or jitter_pos[e] != 0.0 or jitter_height[e] != 0.0
                  or jitter_yaw[e] != 0.0)
    status = int(0)
    used = int(0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st, angle, c, s, dx, dy = draw_placement(seeds[e], generation[e], key, attempt, rotate[e], shift[e])
        st = place_gates(st, e, k, n, max_gates, angle, c, s, dx, dy, jitter_pos[e], jitter_height[e],
                         jitter_yaw[e], t_pos, t_yaw, pos_out, yaw_out)
        place_poles(e, k, m, max_poles, angle, c, s, dx, dy, t_pole_pos, t_pole_radius, t_pole_height, pole_pos_out,
                    pole_radius_out, pole_height_out)
        sp = t_start_pos[k]
        qs = place_xy(sp[0], sp[1], c, s, angle, dx, dy)
        start = wp.vec3f(qs[0], qs[1], sp[2])
        syaw = plus(t_start_yaw[k], angle)
        start_pos_out[e] = start
        start_yaw_out[e] = syaw
        status = gate_course_status(pos_out, yaw_out, stacked_out, e, n, closed, size[e], min_spacing[e],
                                    max_spacing[e], max_turn[e], max_climb[e], crossing_clearance[e], t_width[k],
                                    t_height[k], t_thickness[k], pole_pos_out, pole_radius_out, pole_height_out, e,
                                    m, start, syaw)
        if status == 0 or not randomized:
            break
    total = path_length(pos_out, start_pos_out[e], e, n, closed)
    if not wp.isfinite(total):
        status = NONFINITE
    count_out[e] = n
    pole_count_out[e] = m
    length_out[e] = total
    width_out[e] = t_width[k]
    height_out[e] = t_height[k]
    thickness_out[e] = t_thickness[k]
    attempts_out[e] = used
    status_out[e] = status
    if status != 0:
        valid_out[e] = 0


@wp.kernel
def layout_frames_kernel(
    # parameters
    max_gates: int,
    # inputs
    active: wp.array(dtype=wp.int32), yaw: wp.array2d(dtype=wp.float32), width: wp.array(dtype=wp.float32),
    height: wp.array(dtype=wp.float32), thickness: wp.array(dtype=wp.float32),
    # outputs
    width_out: wp.array(dtype=wp.float32), height_out: wp.array(dtype=wp.float32),
    thickness_out: wp.array(dtype=wp.float32), normal_out: wp.array2d(dtype=wp.vec3f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    width_out[e] = width[e]
    height_out[e] = height[e]
    thickness_out[e] = thickness[e]
    for g in range(max_gates):
        normal_out[e, g] = wp.vec3f(wp.cos(yaw[e, g]), wp.sin(yaw[e, g]), 0.0)


@wp.kernel
def layout_obstacles_kernel(
    # parameters
    max_poles: int,
    # inputs
    active: wp.array(dtype=wp.int32), pos_in: wp.array2d(dtype=wp.vec3f), radius_in: wp.array2d(dtype=wp.float32),
    height_in: wp.array2d(dtype=wp.float32), count_in: wp.array(dtype=wp.int32), status_in: wp.array(dtype=wp.int32),
    # outputs
    pos_out: wp.array2d(dtype=wp.vec3f), radius_out: wp.array2d(dtype=wp.float32),
    height_out: wp.array2d(dtype=wp.float32), count_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
):
    """Publish the layout's poles under the obstacle stage's names (``obstacles.*``)."""
    e = wp.tid()
    if active[e] == 0:
        return
    for j in range(max_poles):
        pos_out[e, j] = pos_in[e, j]
        radius_out[e, j] = radius_in[e, j]
        height_out[e, j] = height_in[e, j]
    count_out[e] = count_in[e]
    status_out[e] = status_in[e]


def _upload_gates(ctx) -> None:
    st = layout_spec(ctx)
    s = ctx.static
    check_count(st, s["num_layouts"])
    tables = gate_tables(st.layouts, s["max_gates"], s["max_obstacles"])
    for name in _GATE_TABLES:
        ctx.input(f"table_{name}").assign(tables[name])
    upload_assign(ctx, st)
    prm = ctx._program.params
    limits = {n: float(prm[f"{ctx.name}.{n}"]) for n in RULE_LIMITS}
    status = ctx.input("table_status")
    wp.launch(gate_tables_status_kernel, dim=s["num_layouts"],
              inputs=[s["closed"], *limits.values(), *(ctx.input(f"table_{n}") for n in _GATE_TABLES)],
              outputs=[status], device=ctx.device)
    warn_bad(ctx, st, status.numpy(), GateStatus,
             explain=lambda lay: "; ".join(f"{r}: {w}" for r, w in explain_gate_layout(lay, **limits)))


def _launch_gates(ctx) -> None:
    if not getattr(ctx, "_layouts_uploaded", False):
        _upload_gates(ctx)
        ctx._layouts_uploaded = True
    s = ctx.static
    p = ctx.param
    wp.launch(
        gate_layouts_kernel, dim=ctx.num_envs,
        inputs=[ctx.key, name_key(ctx.name + ".pick"), s["num_layouts"], s["max_gates"], s["max_obstacles"],
                s["closed"], s["fixed"], s["max_attempts"],
                *(p(n) for n in ("size", "min_spacing", "max_spacing", "max_turn", "max_climb", "crossing_clearance",
                                 "shift", "rotate", "jitter_pos", "jitter_height", "jitter_yaw")),
                ctx.active, ctx.seeds, ctx.generation,
                *(ctx.input(f"table_{n}") for n in _GATE_TABLES), ctx.input("assign")],
        outputs=[ctx.output(n) for n in ("pos", "yaw", "stacked", "count", "length", "start_pos", "start_yaw",
                                         "attempts", "status", "layout", "width", "height", "thickness",
                                         "obstacle_pos", "obstacle_radius", "obstacle_height", "obstacle_count")]
        + [ctx.valid],
        device=ctx.device,
    )


def _launch_frames(ctx) -> None:
    wp.launch(layout_frames_kernel, dim=ctx.num_envs,
              inputs=[ctx.capacity("gates"), ctx.active, ctx.input("yaw"), ctx.input("width"), ctx.input("height"),
                      ctx.input("thickness")],
              outputs=[ctx.output(n) for n in ("width", "height", "thickness", "normal")], device=ctx.device)


def _launch_obstacles(ctx) -> None:
    wp.launch(layout_obstacles_kernel, dim=ctx.num_envs,
              inputs=[ctx.capacity("obstacles"), ctx.active,
                      *(ctx.input(n) for n in ("pos_in", "radius_in", "height_in", "count_in", "status_in"))],
              outputs=[ctx.output(n) for n in ("pos", "radius", "height", "count", "status")], device=ctx.device)


G = ("env", "gates")
T = ("layouts", "gates")
P = ("env", "obstacles")
TP = ("layouts", "obstacles")
LAY = ("layouts",)


def register_gate_layout_stages(registry) -> None:
    """Register ``gates.from_layouts``, ``gates.layout_frames`` and ``gates.layout_obstacles``."""
    registry.register(
        "gates.from_layouts", _launch_gates, params=GATE_PARAMS, _builtin=True,
        capacities=lambda s: {"gates": s["max_gates"], "layouts": s["num_layouts"], "obstacles": s["max_obstacles"]},
        inputs={
            "table_pos": table_spec(wp.vec3f, T, "gate centres of each layout [m]"),
            "table_yaw": table_spec(wp.float32, T, "gate headings of each layout [rad]"),
            "table_stacked": ArraySpec(wp.int32, T, doc="1 where leg g -> g+1 of a layout is a split-S (a stacked "
                                                        "pair); zeros: layouts declare none, write it to mark them"),
            "table_count": table_spec(wp.int32, LAY, "gates in each layout"),
            "table_width": table_spec(wp.float32, LAY, "opening width of each layout [m]"),
            "table_height": table_spec(wp.float32, LAY, "opening height of each layout [m]"),
            "table_thickness": table_spec(wp.float32, LAY, "frame bar thickness of each layout [m]"),
            "table_start_pos": table_spec(wp.vec3f, LAY, "start position of each layout [m]"),
            "table_start_yaw": table_spec(wp.float32, LAY, "start heading of each layout [rad]"),
            "table_pole_pos": table_spec(wp.vec3f, TP, "pole base centres of each layout [m]"),
            "table_pole_radius": table_spec(wp.float32, TP, "pole radii [m]"),
            "table_pole_height": table_spec(wp.float32, TP, "pole heights [m]"),
            "table_pole_count": table_spec(wp.int32, LAY, "poles in each layout"),
            "table_status": table_spec(wp.int32, LAY, "GateStatus bits of each layout as it is"),
            "assign": ASSIGN,
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
