"""Warp kernels of the layout source stages (one thread per env; inactive envs return at once).

Each env reads its layout from tables padded to capacity (``[K, G]`` gates, ``[K, N]`` points),
applies the optional randomization (a rigid transform of the whole layout about the vertical
through the course origin; per-gate jitter) and validates the result with the procedural
families' own rules (:func:`gate_kernels.gates_status`, :func:`track_kernels.track_status`).
A randomization amplitude of 0 leaves a number untouched (no ``x + 0.0``, which would turn -0.0
into 0.0), so an unrandomized env holds its layout's float32 numbers exactly.
"""

from __future__ import annotations

import warp as wp

from track_gen.generators.gate_kernels import OBSTACLE, gates_status
from track_gen.generators.gate_kernels import NONFINITE as GATE_NONFINITE
from track_gen.generators.track_kernels import GROUND as TRACK_GROUND
from track_gen.generators.track_kernels import NONFINITE as TRACK_NONFINITE
from track_gen.generators.track_kernels import track_status
from track_gen.rng import stream_state


@wp.func
def plus(a: float, b: float) -> float:
    """``a + b``, or ``a`` itself when ``b == 0`` (keeps -0.0 and the exact value)."""
    if b == 0.0:
        return a
    return a + b


@wp.func
def pick_layout(seed: int, generation: int, key_pick: int, fixed: int, assigned: int, num_layouts: int) -> int:
    """The layout index of an env: its fixed assignment, or a uniform draw keyed by its seed and generation."""
    if fixed != 0:
        return assigned
    st = stream_state(seed, generation, key_pick, 0)
    return wp.min(int(wp.randf(st) * float(num_layouts)), num_layouts - 1)


@wp.func
def rotate_xy(x: float, y: float, c: float, s: float, angle: float) -> wp.vec2f:
    if angle == 0.0:
        return wp.vec2f(x, y)
    return wp.vec2f(c * x - s * y, s * x + c * y)


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
            return GATE_NONFINITE
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
    """Every rule of a gate course from a layout: the procedural gates' (:func:`gate_kernels.gates_status`:
    spacing, crowding, turn, climb, crossings, split-S pairs, bounds, ground, opening, finite) plus poles
    clear of every frame (OBSTACLE) and a finite start pose."""
    outer_half = 0.5 * width + thickness
    if width <= 0.0:
        outer_half = 0.0  # flags OPENING
    outer_half_h = 0.5 * height + thickness
    status = gates_status(pos, yaw, e, count, closed, size, min_spacing, max_spacing, max_turn, outer_half,
                          outer_half_h, stacked, max_climb, crossing_clearance)
    if status == GATE_NONFINITE:
        return status
    if not (wp.isfinite(start[0]) and wp.isfinite(start[1]) and wp.isfinite(start[2]) and wp.isfinite(start_yaw)
            and wp.isfinite(height) and wp.isfinite(thickness)):
        return GATE_NONFINITE
    p = poles_status(pos, yaw, e, count, pole_pos, pole_radius, pole_height, pe, poles, outer_half, outer_half_h,
                     thickness)
    if p == GATE_NONFINITE:
        return p
    return status | p


@wp.kernel
def gate_tables_status_kernel(
    pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32), stacked: wp.array2d(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    width: wp.array(dtype=wp.float32), height: wp.array(dtype=wp.float32), thickness: wp.array(dtype=wp.float32),
    start_pos: wp.array(dtype=wp.vec3f), start_yaw: wp.array(dtype=wp.float32),
    pole_pos: wp.array2d(dtype=wp.vec3f), pole_radius: wp.array2d(dtype=wp.float32),
    pole_height: wp.array2d(dtype=wp.float32), pole_count: wp.array(dtype=wp.int32),
    closed: int, size: float, min_spacing: float, max_spacing: float, max_turn: float, max_climb: float,
    crossing_clearance: float, status: wp.array(dtype=wp.int32),
):
    """The status of each layout as it is (no randomization): one thread per layout."""
    k = wp.tid()
    status[k] = gate_course_status(pos, yaw, stacked, k, count[k], closed, size, min_spacing, max_spacing, max_turn,
                                   max_climb, crossing_clearance,
                                   width[k], height[k], thickness[k], pole_pos, pole_radius, pole_height, k,
                                   pole_count[k], start_pos[k], start_yaw[k])


@wp.kernel
def gate_layouts_kernel(
    active: wp.array(dtype=wp.int32), seeds: wp.array(dtype=wp.int32), generation: wp.array(dtype=wp.int32),
    key: int, key_pick: int,
    size: wp.array(dtype=wp.float32), min_spacing: wp.array(dtype=wp.float32),
    max_spacing: wp.array(dtype=wp.float32), max_turn: wp.array(dtype=wp.float32),
    max_climb: wp.array(dtype=wp.float32), crossing_clearance: wp.array(dtype=wp.float32),
    shift: wp.array(dtype=wp.float32), rotate: wp.array(dtype=wp.float32), jitter_pos: wp.array(dtype=wp.float32),
    jitter_height: wp.array(dtype=wp.float32), jitter_yaw: wp.array(dtype=wp.float32),
    t_pos: wp.array2d(dtype=wp.vec3f), t_yaw: wp.array2d(dtype=wp.float32), t_stacked: wp.array2d(dtype=wp.int32),
    t_count: wp.array(dtype=wp.int32),
    t_width: wp.array(dtype=wp.float32), t_height: wp.array(dtype=wp.float32),
    t_thickness: wp.array(dtype=wp.float32), t_start_pos: wp.array(dtype=wp.vec3f),
    t_start_yaw: wp.array(dtype=wp.float32), t_pole_pos: wp.array2d(dtype=wp.vec3f),
    t_pole_radius: wp.array2d(dtype=wp.float32), t_pole_height: wp.array2d(dtype=wp.float32),
    t_pole_count: wp.array(dtype=wp.int32), assign: wp.array(dtype=wp.int32),
    num_layouts: int, max_gates: int, max_poles: int, closed: int, fixed: int, max_attempts: int,
    # outputs
    pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32), stacked: wp.array2d(dtype=wp.int32),
    count_out: wp.array(dtype=wp.int32),
    length_out: wp.array(dtype=wp.float32), start_pos: wp.array(dtype=wp.vec3f), start_yaw: wp.array(dtype=wp.float32),
    attempts_out: wp.array(dtype=wp.int32), status_out: wp.array(dtype=wp.int32), layout_out: wp.array(dtype=wp.int32),
    width_out: wp.array(dtype=wp.float32), height_out: wp.array(dtype=wp.float32),
    thickness_out: wp.array(dtype=wp.float32), pole_pos: wp.array2d(dtype=wp.vec3f),
    pole_radius: wp.array2d(dtype=wp.float32), pole_height: wp.array2d(dtype=wp.float32),
    pole_count: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    k = pick_layout(seeds[e], generation[e], key_pick, fixed, assign[e], num_layouts)
    layout_out[e] = k
    if k < 0 or k >= num_layouts:
        # no such layout (a fixed assignment outside [0, K)): an empty, invalid course
        for g in range(max_gates):
            pos[e, g] = wp.vec3f(0.0, 0.0, 0.0)
            yaw[e, g] = 0.0
            stacked[e, g] = 0
        for j in range(max_poles):
            pole_pos[e, j] = wp.vec3f(0.0, 0.0, 0.0)
            pole_radius[e, j] = 0.0
            pole_height[e, j] = 0.0
        count_out[e] = 0
        pole_count[e] = 0
        length_out[e] = 0.0
        start_pos[e] = wp.vec3f(0.0, 0.0, 0.0)
        start_yaw[e] = 0.0
        width_out[e] = 0.0
        height_out[e] = 0.0
        thickness_out[e] = 0.0
        attempts_out[e] = 1
        status_out[e] = GATE_NONFINITE
        valid[e] = 0
        return
    n = t_count[k]
    m = t_pole_count[k]
    for g in range(max_gates):
        stacked[e, g] = t_stacked[k, g]
    randomized = (shift[e] != 0.0 or rotate[e] != 0.0 or jitter_pos[e] != 0.0 or jitter_height[e] != 0.0
                  or jitter_yaw[e] != 0.0)
    status = int(0)
    used = int(0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st = stream_state(seeds[e], generation[e], key, attempt)
        angle = rotate[e] * (2.0 * wp.randf(st) - 1.0)
        dx = shift[e] * (2.0 * wp.randf(st) - 1.0)
        dy = shift[e] * (2.0 * wp.randf(st) - 1.0)
        c = wp.cos(angle)
        s = wp.sin(angle)
        for g in range(n):
            p = t_pos[k, g]
            q = rotate_xy(p[0], p[1], c, s, angle)
            jx = jitter_pos[e] * (2.0 * wp.randf(st) - 1.0)
            jy = jitter_pos[e] * (2.0 * wp.randf(st) - 1.0)
            jz = jitter_height[e] * (2.0 * wp.randf(st) - 1.0)
            jyaw = jitter_yaw[e] * (2.0 * wp.randf(st) - 1.0)
            pos[e, g] = wp.vec3f(plus(plus(q[0], dx), jx), plus(plus(q[1], dy), jy), plus(p[2], jz))
            yaw[e, g] = plus(plus(t_yaw[k, g], angle), jyaw)
        for g in range(n, max_gates):
            pos[e, g] = wp.vec3f(0.0, 0.0, 0.0)
            yaw[e, g] = 0.0
        for j in range(max_poles):
            b = wp.vec3f(0.0, 0.0, 0.0)
            r = float(0.0)
            h = float(0.0)
            if j < m:
                b0 = t_pole_pos[k, j]
                qb = rotate_xy(b0[0], b0[1], c, s, angle)
                b = wp.vec3f(plus(qb[0], dx), plus(qb[1], dy), b0[2])
                r = t_pole_radius[k, j]
                h = t_pole_height[k, j]
            pole_pos[e, j] = b
            pole_radius[e, j] = r
            pole_height[e, j] = h
        sp = t_start_pos[k]
        qs = rotate_xy(sp[0], sp[1], c, s, angle)
        start = wp.vec3f(plus(qs[0], dx), plus(qs[1], dy), sp[2])
        syaw = plus(t_start_yaw[k], angle)
        start_pos[e] = start
        start_yaw[e] = syaw
        status = gate_course_status(pos, yaw, stacked, e, n, closed, size[e], min_spacing[e], max_spacing[e],
                                    max_turn[e], max_climb[e], crossing_clearance[e], t_width[k], t_height[k],
                                    t_thickness[k], pole_pos, pole_radius, pole_height, e, m, start, syaw)
        if status == 0 or not randomized:
            break
    total = float(0.0)
    if n > 0 and closed == 0:
        total = wp.length(pos[e, 0] - start_pos[e])
    for g in range(1, n):
        total += wp.length(pos[e, g] - pos[e, g - 1])
    if closed != 0 and n > 1:
        total += wp.length(pos[e, 0] - pos[e, n - 1])
    if not wp.isfinite(total):
        status = GATE_NONFINITE
    count_out[e] = n
    pole_count[e] = m
    length_out[e] = total
    width_out[e] = t_width[k]
    height_out[e] = t_height[k]
    thickness_out[e] = t_thickness[k]
    attempts_out[e] = used
    status_out[e] = status
    if status != 0:
        valid[e] = 0


@wp.kernel
def layout_frames_kernel(
    active: wp.array(dtype=wp.int32), yaw: wp.array2d(dtype=wp.float32), width: wp.array(dtype=wp.float32),
    height: wp.array(dtype=wp.float32), thickness: wp.array(dtype=wp.float32), max_gates: int,
    width_out: wp.array(dtype=wp.float32), height_out: wp.array(dtype=wp.float32),
    thickness_out: wp.array(dtype=wp.float32), normal: wp.array2d(dtype=wp.vec3f),
):
    e = wp.tid()
    if active[e] == 0:
        return
    width_out[e] = width[e]
    height_out[e] = height[e]
    thickness_out[e] = thickness[e]
    for g in range(max_gates):
        normal[e, g] = wp.vec3f(wp.cos(yaw[e, g]), wp.sin(yaw[e, g]), 0.0)


@wp.kernel
def layout_obstacles_kernel(
    active: wp.array(dtype=wp.int32), pos_in: wp.array2d(dtype=wp.vec3f), radius_in: wp.array2d(dtype=wp.float32),
    height_in: wp.array2d(dtype=wp.float32), count_in: wp.array(dtype=wp.int32), status_in: wp.array(dtype=wp.int32),
    max_poles: int, pos: wp.array2d(dtype=wp.vec3f), radius: wp.array2d(dtype=wp.float32),
    height: wp.array2d(dtype=wp.float32), count: wp.array(dtype=wp.int32), status: wp.array(dtype=wp.int32),
):
    """Publish the layout's poles under the obstacle stage's names (``obstacles.*``)."""
    e = wp.tid()
    if active[e] == 0:
        return
    for j in range(max_poles):
        pos[e, j] = pos_in[e, j]
        radius[e, j] = radius_in[e, j]
        height[e, j] = height_in[e, j]
    count[e] = count_in[e]
    status[e] = status_in[e]


@wp.kernel
def track_tables_status_kernel(
    xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), z: wp.array2d(dtype=wp.float32),
    num_points: int, size: float, min_turn_radius: float, clearance: float, min_length: float, max_length: float,
    status: wp.array(dtype=wp.int32),
):
    """The status of each track layout as it is: one thread per layout."""
    k = wp.tid()
    st = track_status(xy, hw, k, num_points, size, min_turn_radius, clearance, min_length, max_length)
    if st != TRACK_NONFINITE:
        for i in range(num_points):
            if not wp.isfinite(z[k, i]):
                st = TRACK_NONFINITE
        if st != TRACK_NONFINITE:
            for i in range(num_points):
                if not (z[k, i] >= 0.0):
                    st = st | TRACK_GROUND
    status[k] = st


@wp.kernel
def track_layouts_kernel(
    active: wp.array(dtype=wp.int32), seeds: wp.array(dtype=wp.int32), generation: wp.array(dtype=wp.int32),
    key: int, key_pick: int,
    size: wp.array(dtype=wp.float32), min_turn_radius: wp.array(dtype=wp.float32),
    clearance: wp.array(dtype=wp.float32), min_length: wp.array(dtype=wp.float32), max_length: float,
    shift: wp.array(dtype=wp.float32), rotate: wp.array(dtype=wp.float32),
    t_xy: wp.array2d(dtype=wp.vec2f), t_hw: wp.array2d(dtype=wp.float32), t_z: wp.array2d(dtype=wp.float32),
    assign: wp.array(dtype=wp.int32), num_layouts: int, num_points: int, fixed: int, max_attempts: int,
    # outputs
    xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), z: wp.array2d(dtype=wp.float32),
    attempts_out: wp.array(dtype=wp.int32), status_out: wp.array(dtype=wp.int32),
    layout_out: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    k = pick_layout(seeds[e], generation[e], key_pick, fixed, assign[e], num_layouts)
    layout_out[e] = k
    if k < 0 or k >= num_layouts:
        for i in range(num_points):
            xy[e, i] = wp.vec2f(0.0, 0.0)
            hw[e, i] = 0.0
            z[e, i] = 0.0
        attempts_out[e] = 1
        status_out[e] = TRACK_NONFINITE
        valid[e] = 0
        return
    randomized = shift[e] != 0.0 or rotate[e] != 0.0
    status = int(0)
    used = int(0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st = stream_state(seeds[e], generation[e], key, attempt)
        angle = rotate[e] * (2.0 * wp.randf(st) - 1.0)
        dx = shift[e] * (2.0 * wp.randf(st) - 1.0)
        dy = shift[e] * (2.0 * wp.randf(st) - 1.0)
        c = wp.cos(angle)
        s = wp.sin(angle)
        for i in range(num_points):
            p = t_xy[k, i]
            q = rotate_xy(p[0], p[1], c, s, angle)
            xy[e, i] = wp.vec2f(plus(q[0], dx), plus(q[1], dy))
            hw[e, i] = t_hw[k, i]
            z[e, i] = t_z[k, i]
        status = track_status(xy, hw, e, num_points, size[e], min_turn_radius[e], clearance[e], min_length[e],
                              max_length)
        if status == 0 or not randomized:
            break
    attempts_out[e] = used
    status_out[e] = status
    if status != 0:
        valid[e] = 0


@wp.kernel
def layout_heights_kernel(
    active: wp.array(dtype=wp.int32), xy: wp.array2d(dtype=wp.vec2f), z_in: wp.array2d(dtype=wp.float32),
    status_in: wp.array(dtype=wp.int32), num_points: int,
    z: wp.array2d(dtype=wp.float32), start_pos: wp.array(dtype=wp.vec3f), status_out: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    status = status_in[e]
    for i in range(num_points):
        z[e, i] = z_in[e, i]
        if not wp.isfinite(z_in[e, i]):
            status = TRACK_NONFINITE
    if status != TRACK_NONFINITE:
        for i in range(num_points):
            if not (z_in[e, i] >= 0.0):
                status = status | TRACK_GROUND
    p0 = xy[e, 0]
    start_pos[e] = wp.vec3f(p0[0], p0[1], z_in[e, 0])
    status_out[e] = status
    if status != 0:
        valid[e] = 0
