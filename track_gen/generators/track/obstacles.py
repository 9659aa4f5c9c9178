"""Pole obstacles on band tracks: the ``track.obstacles`` stage (``track.obstacles_elevated`` after an
elevation stage).

Poles stand *in* the band, each leaving a passage at least ``gap`` wide to one band edge and to
every other pole, clear of the start line by ``clearance`` (the exact rules below): something to drive or fly around, never a wall. The count follows the gate family's
rule: drawn in ``[lerp(count_min, hard_count_min, d), lerp(count_max, hard_count_max, d)]`` (rounded,
at most ``max_obstacles``) for the track's difficulty ``d`` (``centerline.difficulty_used``), so a
curriculum that raises the difficulty adds poles without rebuilding anything; at difficulty 0 the
defaults place none.

Outputs, as the gate family's: ``obstacles.pos`` [E, K] vec3f base centres on the ground (z = 0),
``obstacles.radius`` [E, K], ``obstacles.height`` [E, K], ``obstacles.count`` [E] (rows >= count
zero), ``obstacles.status`` (the track's TrackStatus bits plus OBSTACLE).

The rules (plan view; every test written so that a NaN fails it): the band's edges are the closed
polylines ``L_i = xy_i + hw_i n_i`` (left) and ``R_i = xy_i - hw_i n_i`` (right), as
:class:`~track_gen.tools.BandCollision` draws them; the band is the set of points inside an odd
number of the two edge polygons. A pole at plan centre ``p`` with radius ``r`` keeps

* inside: ``p`` in the band and its distance to each edge >= ``r`` (the whole pole stands in it);
* gap: the larger of the two edge distances minus ``r`` >= ``gap`` (a passage of at least ``gap``
  between the pole and one edge);
* start: distance from ``p`` to the start line (segment ``R_0 -> L_0``) >= ``r + clearance``;
* other poles: centre distance >= the sum of the radii plus ``gap`` (no two poles close a passage).

The height is drawn in ``[height_min, height_max]`` above the course at the pole's foot: on an
elevated track plus the height of the nearest centerline point (plan view, the first on a tie),
so a pole always stands above the course it blocks; the base is on the ground (z = 0). Each pole
gets ``tries`` draws (a radius, a height, then :func:`pole_spot`); the exact tests above decide. A
pole that finds no spot is left out. Tracks already invalid get no poles.
"""

from __future__ import annotations

from typing import Any, Mapping

import warp as wp

from track_gen.generators.curve import point_seg_dist
from track_gen.generators.gates.obstacles import OBSTACLE_FIELDS, OBSTACLE_ORDERED, OBSTACLE_PARAMS
from track_gen.generators.poles import (clear_obstacles, clear_of_poles, draw_obstacle_count, draw_pole_size,
                                        finish_poles, put_pole)
from track_gen.generators.track.bits import OBSTACLE
from track_gen.math import BIG
from track_gen.pipeline.registry import ArraySpec, ParamSpec

__all__ = ["TRACK_OBSTACLE_PARAMS", "TRACK_OBSTACLE_FIELDS", "OBSTACLE_ORDERED", "check_track_obstacle_ranges",
           "register_track_obstacle_stages"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


@wp.func
def band_gaps(p: wp.vec2f, xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32),
              nrm: wp.array2d(dtype=wp.vec2f), e: int, n: int) -> wp.vec3f:
    """(distance to the left edge, distance to the right edge, 1 when ``p`` is in the band else 0)
    of env ``e``'s band (even-odd rule over both edge polygons, a ray towards +x)."""
    dl = float(BIG)
    dr = float(BIG)
    crossings = int(0)
    for i in range(n):
        j = (i + 1) % n
        for side in range(2):
            sgn = 1.0 - 2.0 * float(side)
            a = xy[e, i] + nrm[e, i] * (sgn * hw[e, i])
            b = xy[e, j] + nrm[e, j] * (sgn * hw[e, j])
            d = point_seg_dist(p, a, b)
            if side == 0:
                dl = wp.min(dl, d)
            else:
                dr = wp.min(dr, d)
            if (a[1] > p[1]) != (b[1] > p[1]):
                x = a[0] + (p[1] - a[1]) * (b[0] - a[0]) / (b[1] - a[1])
                if p[0] < x:
                    crossings += 1
    return wp.vec3f(dl, dr, float(crossings % 2))


@wp.func
def nearest_point(p: wp.vec2f, xy: wp.array2d(dtype=wp.vec2f), e: int, n: int) -> int:
    """Index of env ``e``'s centerline point nearest ``p`` (plan view; the first on a tie)."""
    best = float(BIG)
    k = int(0)
    for i in range(n):
        d = wp.length(xy[e, i] - p)
        if d < best:
            best = d
            k = i
    return k


@wp.func
def pole_spot(st: wp.uint32, xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32),
              nrm: wp.array2d(dtype=wp.vec2f), e: int, n: int, r: float, g: float):
    """(spot, whether the draw has room, the advanced random state): a centerline point, the side of
    the gap and a lateral offset that leaves the gap when the band is locally straight: the pole's
    far surface at most on the far edge, its near surface at least ``g`` from the gap-side edge."""
    i = wp.min(int(wp.randf(st) * float(n)), n - 1)
    side = 1.0
    if wp.randf(st) < 0.5:
        side = -1.0
    w = hw[e, i]
    lo_o = r - w
    hi_o = w - r - g
    o = lo_o + (hi_o - lo_o) * wp.randf(st)
    return xy[e, i] + nrm[e, i] * (side * o), hi_o >= lo_o, st


@wp.kernel
def track_obstacles_kernel(
    # parameters
    key: int,
    tries: int,
    has_z: int,
    count_min: wp.array(dtype=wp.float32),
    count_max: wp.array(dtype=wp.float32),
    hard_count_min: wp.array(dtype=wp.float32),
    hard_count_max: wp.array(dtype=wp.float32),
    radius_min: wp.array(dtype=wp.float32),
    radius_max: wp.array(dtype=wp.float32),
    height_min: wp.array(dtype=wp.float32),
    height_max: wp.array(dtype=wp.float32),
    clearance: wp.array(dtype=wp.float32),
    gap: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    xy: wp.array2d(dtype=wp.vec2f),
    hw: wp.array2d(dtype=wp.float32),
    nrm: wp.array2d(dtype=wp.vec2f),
    z: wp.array2d(dtype=wp.float32),
    difficulty: wp.array(dtype=wp.float32),
    status_in: wp.array(dtype=wp.int32),
    # outputs
    opos_out: wp.array2d(dtype=wp.vec3f),
    orad_out: wp.array2d(dtype=wp.float32),
    oheight_out: wp.array2d(dtype=wp.float32),
    ocount_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    cap = opos_out.shape[1]
    clear_obstacles(opos_out, orad_out, oheight_out, e)
    status = status_in[e]
    n = xy.shape[1]
    placed = int(0)
    lo = int(0)
    if status == 0:
        lo, want, st = draw_obstacle_count(seeds[e], generation[e], key, difficulty[e], count_min[e], count_max[e],
                                           hard_count_min[e], hard_count_max[e], cap)
        g = gap[e]
        c = clearance[e]
        sl = xy[e, 0] + nrm[e, 0] * hw[e, 0]
        sr = xy[e, 0] - nrm[e, 0] * hw[e, 0]
        for k in range(want):
            for t in range(tries):
                r, h, st = draw_pole_size(st, radius_min[e], radius_max[e], height_min[e], height_max[e])
                p, room, st = pole_spot(st, xy, hw, nrm, e, n, r, g)
                if not room:
                    continue
                ok = point_seg_dist(p, sr, sl) >= r + c
                ok = ok and clear_of_poles(p, r, g, opos_out, orad_out, e, placed)
                if ok:
                    b = band_gaps(p, xy, hw, nrm, e, n)
                    ok = b[2] > 0.5 and wp.min(b[0], b[1]) >= r and wp.max(b[0], b[1]) - r >= g
                if ok:
                    foot = float(0.0)
                    if has_z != 0:
                        foot = z[e, nearest_point(p, xy, e, n)]
                    placed = put_pole(opos_out, orad_out, oheight_out, e, placed, p, r, foot + h)
                    break
    # a pole that finds no spot in ``tries`` draws is left out; fewer than the least count of this
    # difficulty makes the track invalid
    finish_poles(e, placed, lo, cap, status, OBSTACLE, ocount_out, status_out, valid_out)


#: the gate family's parameters; ``clearance`` is kept from the start line, heights count from the course,
#: ``gap`` is the passage kept beside every pole
TRACK_OBSTACLE_PARAMS = {
    **OBSTACLE_PARAMS,
    "clearance": ParamSpec(1.0, lo=0.0, doc="gap kept between a pole and the start line [m]"),
    "height_min": ParamSpec(1.5, lo=0.0, lo_open=True, doc="shortest pole above the course at its foot [m]"),
    "height_max": ParamSpec(4.0, lo=0.0, lo_open=True, doc="tallest pole above the course at its foot [m]"),
    "gap": ParamSpec(0.3, lo=0.0, lo_open=True,
                     doc="passage kept between a pole and one band edge, and between two poles [m]"),
}
#: TrackGenConfig field -> obstacle stage parameter
TRACK_OBSTACLE_FIELDS = {**OBSTACLE_FIELDS, "obstacle_gap": "gap"}


def _launch(ctx, elevated: bool = False):
    p = ctx.param
    hw = ctx.input("half_width")
    wp.launch(
        track_obstacles_kernel, dim=ctx.num_envs,
        inputs=[
            ctx.key, ctx.static["tries"], int(elevated),
            *(p(n) for n in ("count_min", "count_max", "hard_count_min", "hard_count_max", "radius_min",
                             "radius_max", "height_min", "height_max", "clearance", "gap")),
            ctx.active, ctx.seeds, ctx.generation, ctx.input("xy"), hw, ctx.input("normal"),
            ctx.input("z") if elevated else hw, ctx.input("difficulty"), ctx.input("status"),
        ],
        outputs=[ctx.output(n) for n in ("pos", "radius", "height", "count", "status")] + [ctx.valid],
        device=ctx.device,
    )


PTS = ("env", "points")
OBS = ("env", "obstacles")
_INPUTS = {
    "xy": ArraySpec(wp.vec2f, PTS, source="centerline.xy"),
    "half_width": ArraySpec(wp.float32, PTS, source="centerline.half_width"),
    "normal": ArraySpec(wp.vec2f, PTS, source="band.normal"),
    "difficulty": ArraySpec(wp.float32, source="centerline.difficulty_used"),
    "status": ArraySpec(wp.int32, source="centerline.status"),
}
_OUTPUTS = {
    "pos": ArraySpec(wp.vec3f, OBS, doc="pole base centres, on the ground (z = 0) [m]; rows >= count zero"),
    "radius": ArraySpec(wp.float32, OBS, doc="pole radii [m]"),
    "height": ArraySpec(wp.float32, OBS, doc="pole heights above the ground [m]"),
    "count": ArraySpec(wp.int32, doc="poles on this track"),
    "status": ArraySpec(wp.int32, doc="TrackStatus bits: the track's plus OBSTACLE"),
}


def register_track_obstacle_stages(registry) -> None:
    common = dict(params=TRACK_OBSTACLE_PARAMS, _builtin=True, outputs=_OUTPUTS,
                  capacities=lambda s: {"obstacles": s["max_obstacles"]})
    registry.register("track.obstacles", _launch, inputs=_INPUTS, **common)
    registry.register(
        "track.obstacles_elevated", lambda ctx: _launch(ctx, elevated=True), **common,
        inputs={**_INPUTS, "z": ArraySpec(wp.float32, PTS, source="elevation.z"),
                "status": ArraySpec(wp.int32, source="elevation.status")},
    )


def check_track_obstacle_ranges(v: Mapping[str, Any]) -> None:
    """Raise ValueError when the track's obstacle parameters ``v`` (global names) contradict each
    other: a count above the capacity, or a pole of ``radius_max`` with its ``gap`` that cannot fit
    in the narrowest band (``2 (half_width (1 - half_width_variation) - radius_max) >= gap``)."""
    if "obstacles.gap" not in v:
        return
    cap = v["obstacles.max_obstacles"]
    for n in ("count_max", "hard_count_max"):
        if v[f"obstacles.{n}"] > cap:
            raise ValueError(f"obstacles.{n}={v[f'obstacles.{n}']:g} exceeds obstacles.max_obstacles={cap}; "
                             f"keep it <= the capacity")
    narrow = v["centerline.half_width"] * (1.0 - v["centerline.half_width_variation"])
    room = 2.0 * (narrow - v["obstacles.radius_max"])
    if not room >= v["obstacles.gap"]:
        raise ValueError(
            f"obstacles.gap={v['obstacles.gap']:g} beside a pole of obstacles.radius_max={v['obstacles.radius_max']:g} "
            f"needs a band at least {v['obstacles.gap'] + 2.0 * v['obstacles.radius_max']:g} m wide, but "
            f"centerline.half_width={v['centerline.half_width']:g} with centerline.half_width_variation="
            f"{v['centerline.half_width_variation']:g} narrows it to {2.0 * narrow:g} m; lower the gap or the radius, "
            f"or widen the band"
        )
