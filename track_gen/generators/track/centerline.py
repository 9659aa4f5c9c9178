"""The ``track.centerline`` and ``track.from_points`` stages: a closed band-track centerline per env.

One thread per env, up to ``max_attempts`` draws: control points (:func:`shapes.draw_loop`, or a
hairpin's :func:`shapes.draw_bent_loop`, or your points), a closed uniform cubic B-spline through
their hull started at its flattest knot, resampled to ``num_points`` points evenly spaced in arc
length (the shared walk of :mod:`curve`), a half-width profile, then :mod:`validity`. A failed
draw is retried with the next attempt's random stream; after ``max_attempts`` the env keeps the
last draw with ``valid = 0`` and the failure bits in ``status``.
"""

from __future__ import annotations

import math

import warp as wp

from track_gen.generators import shapes as SH
from track_gen.generators.curve import closed_length_and_tight, knot_curvature, walk_point, walk_start, walk_to
from track_gen.generators.track.bits import NONFINITE, TURN
from track_gen.generators.track.validity import finish_status, point_pass, turn_is_tight
from track_gen.math import BIG, PI, TWO_PI, left_normal
from track_gen.pipeline.registry import ArraySpec, ParamSpec
from track_gen.rng import stream_state

__all__ = ["CENTERLINE_PARAMS", "EARLY_REJECT", "SHAPE_ONLY", "register_centerline_stages"]

# courses are drawn, never differentiated: no adjoint code (which also lets the shared walk and
# checks inline into the kernels; with it, the band track regenerates ~40% slower on the CPU)
wp.set_module_options({"enable_backward": False})


# A draw whose dense spline has a turn radius below this fraction of the required one is
# redrawn before resampling (it would fail the exact TURN check anyway).
EARLY_REJECT = wp.constant(0.9)
#: most chicanes per track (the ``chicanes`` parameter's bound)
MAX_CHICANES = 8
#: the chicanes' random stream (per attempt: ``CHICANE_STREAM + attempt``), apart from the shape's
CHICANE_STREAM = wp.constant(1 << 21)
#: a chicane's curvature stays below this share of the turn radius rule's limit 1 / R
CHICANE_MARGIN = wp.constant(0.9)
#: candidate centres tried per chicane (the straightest one wins)
CHICANE_TRIES = 4


def _pos(default, doc, **kw):
    return ParamSpec(default, lo=0.0, lo_open=True, doc=doc, **kw)


CENTERLINE_PARAMS = {
    "size": _pos(10.0, "side of the square the track fits in [m]"),
    "radius_min": ParamSpec(0.35, lo=0.0, hi=1.0, doc="smallest control-point radius, fraction of the largest"),
    "radius_max": ParamSpec(1.0, lo=0.0, hi=1.0, lo_open=True, doc="largest control-point radius, fraction"),
    "angle_jitter": ParamSpec(0.3, lo=0.0, hi=0.5, hi_open=True, doc="control-point angle jitter, fraction of a slot"),
    "half_width": _pos(0.4, "band half width [m]"),
    "half_width_variation": ParamSpec(0.0, lo=0.0, hi=0.9, doc="relative half-width variation along the loop"),
    "min_turn_radius": ParamSpec(0.5, lo=0.0, doc="smallest turn radius [m] (never below the half width)"),
    "clearance": ParamSpec(0.1, lo=0.0, doc="gap kept between non-adjacent parts of the band [m]"),
    "min_length": ParamSpec(10.0, lo=0.0, doc="shortest loop [m]"),
    "max_length": _pos(40.0, "longest loop [m]; sizes checkpoint capacity", static=True),
    "control_points": ParamSpec(9, lo=4, hi=64, static=True, integer=True, doc="control points per loop"),
    "num_points": ParamSpec(256, lo=16, hi=8192, static=True, integer=True, doc="centerline points"),
    "max_attempts": ParamSpec(16, lo=1, hi=1024, static=True, integer=True, doc="draws per env before valid=0"),
    "difficulty": ParamSpec(0.0, lo=0.0, hi=1.0, doc="course difficulty in [0, 1]: the share of hairpin tracks "
                                                     "and their waviness grow with it"),
    "hairpin_share": ParamSpec(0.7, lo=0.0, hi=1.0, doc="share of hairpin/chicane tracks at difficulty 1"),
    "chicanes": ParamSpec(0.0, lo=0.0, hi=float(MAX_CHICANES), doc="chicanes per track on average: floor(chicanes + u) "
                                                                   "sideways bumps, one per equal sector of the loop"),
    "chicane_length": _pos(2.0, "longest chicane [m] along the line (each drawn in [0.6, 1] of it)"),
    "chicane_offset": ParamSpec(0.5, lo=0.0, doc="largest sideways offset of a chicane [m] (each drawn in [0.5, 1] "
                                                 "of it, capped so that it turns no tighter than the turn radius rule)"),
}
#: parameters of random shapes only (a hand-drawn centerline has none of them)
SHAPE_ONLY = ("radius_min", "radius_max", "angle_jitter", "max_attempts", "difficulty", "hairpin_share", "chicanes",
              "chicane_length", "chicane_offset")


@wp.func
def flattest_knot(ctrl: wp.array2d(dtype=wp.vec2f), e: int, count: int) -> int:
    """The knot of least curvature of env ``e``'s closed spline (the first of equals)."""
    kbest = int(0)
    kmin = float(BIG)
    for k in range(count):
        kc = knot_curvature(ctrl, e, count, k)
        if kc < kmin:
            kmin = kc
            kbest = k
    return kbest


@wp.func
def fill_half_width(hw: wp.array2d(dtype=wp.float32), e: int, n: int, w0: float, var: float, phase1: float,
                    phase2: float) -> wp.vec2f:
    """Write env ``e``'s half-width profile (``w0``, or ``w0 (1 + var wave)`` with a two-harmonic
    wave) and return (1 if every value is finite else 0, largest value): the values
    :func:`validity.finite_length_widest` would find, before any point is drawn."""
    if var == 0.0:
        for i in range(n):
            hw[e, i] = w0
        # what the loop below finds for a constant profile (max(max(0, w0), w0) = max(0, w0))
        return wp.vec2f(wp.where(wp.isfinite(w0), 1.0, 0.0), wp.max(0.0, w0))
    ok = float(1.0)
    wmax = float(0.0)
    for i in range(n):
        w = w0
        if var != 0.0:
            x = float(i) / float(n)
            wave = 0.6 * wp.sin(TWO_PI * 2.0 * x + phase1) + 0.4 * wp.sin(TWO_PI * 3.0 * x + phase2)
            w = w0 * (1.0 + var * wave)
        hw[e, i] = w
        if not wp.isfinite(w):
            ok = 0.0
        wmax = wp.max(wmax, w)
    return wp.vec2f(ok, wmax)


@wp.func
def track_shape(seed: int, generation: int, key: int, use_points: int, level: float, hairpin_share: float):
    """(difficulty in [0, 1], whether ``level`` is finite, shape) of env's track: a hairpin with
    probability ``d * hairpin_share``, drawn once per generation from its own stream (retries keep
    the shape); hand-drawn points have difficulty 0 and the loop shape."""
    d = float(0.0)
    level_ok = bool(True)
    shape = SH.LOOP
    if use_points == 0:
        level_ok = wp.isfinite(level)
        if level_ok:
            d = wp.clamp(level, 0.0, 1.0)
        if d > 0.0:
            sst = stream_state(seed, generation, key, SH.SHAPE_STREAM)
            if wp.randf(sst) < d * hairpin_share:
                shape = SH.HAIRPIN
    return d, level_ok, shape


@wp.func
def draw_track_controls(ctrl: wp.array2d(dtype=wp.vec2f), e: int, st: wp.uint32, shape: int, use_points: int,
                        points: wp.array2d(dtype=wp.vec2f), num_ctrl: int, angle_jitter: float, radius_min: float,
                        radius_max: float, d: float, inner: float) -> wp.uint32:
    """Env ``e``'s control points for one draw: a hairpin's bent loop, your points, or the star-shaped
    loop. Every draw spends the loop's start angle and direction first (the same stream whatever the
    shape). Returns the advanced random state."""
    if shape == SH.HAIRPIN or use_points != 0:
        wp.randf(st)  # the start angle and the direction of the loop
        wp.randf(st)
        if shape == SH.HAIRPIN:
            return SH.draw_bent_loop(ctrl, e, st, num_ctrl, angle_jitter, d, inner)
        for k in range(num_ctrl):
            ctrl[e, k] = points[e, k]
        return st
    return SH.draw_loop(ctrl, e, st, num_ctrl, angle_jitter, radius_min, radius_max, inner)


@wp.func
def resample(ctrl: wp.array2d(dtype=wp.vec2f), e: int, num_ctrl: int, per_span: int, dense: int, kbest: int,
             total: float, num_points: int, near: wp.int64, big_r: float, stop: bool,
             xy: wp.array2d(dtype=wp.vec2f)) -> bool:
    """Write env ``e``'s ``num_points`` centerline points, evenly spaced along the dense polyline of
    length ``total`` from knot ``kbest``. With ``stop``, returns True at the first point of a
    near-tight span (bit of ``near``) whose turn is sure to fail TURN (the draw fails)."""
    inv = 1.0 / float(per_span)
    k = int(kbest)
    q8, pa, pb, seg = walk_start(ctrl, e, num_ctrl, k, inv)
    sub = int(1)
    acc = float(0.0)
    m = int(0)
    prev = wp.vec2f()  # the two points before q
    p = wp.vec2f()
    for i in range(num_points):
        target = total * float(i) / float(num_points)
        k, sub, q8, pa, pb, seg, acc, m = walk_to(ctrl, e, num_ctrl, per_span, inv, dense, target, k, sub, q8, pa,
                                                  pb, seg, acc, m)
        q = walk_point(pa, pb, seg, acc, target)
        xy[e, i] = q
        if stop and i >= 2 and (near >> wp.int64(wp.min(k, 63))) & wp.int64(1) != wp.int64(0):
            a = p - prev
            b = q - p
            la = wp.length(a)
            lb = wp.length(b)
            if turn_is_tight(a, b, la, lb, 0.5 * (la + lb), big_r):
                return True
        prev = p
        p = q
    return False


@wp.func
def chicane_bump(xy: wp.array2d(dtype=wp.vec2f), e: int, n: int, c: int, w: int, amp: float):
    """Push points ``c - w + 1 .. c + w - 1`` (indices mod ``n``) sideways along the line's left normal
    at ``c`` by ``amp (1 + cos(pi j / w)) / 2`` (``j`` the offset from ``c``): a raised-cosine bump of
    ``2 w`` point spacings ``h``, whose largest curvature on a straight line is ``2 pi^2 amp / (2 w h)^2``."""
    t = xy[e, (c + 1) % n] - xy[e, (c - 1 + n) % n]
    nrm = left_normal(t / wp.max(wp.length(t), 1.0e-30))
    for j in range(-w + 1, w):
        i = (c + j + n) % n
        xy[e, i] = xy[e, i] + nrm * (amp * 0.5 * (1.0 + wp.cos(PI * float(j) / float(w))))


@wp.func
def bend_over(xy: wp.array2d(dtype=wp.vec2f), e: int, c: int, w: int) -> float:
    """|angle| [rad] between the chords ``c - w -> c`` and ``c -> c + w`` (no index wrap)."""
    a = xy[e, c] - xy[e, c - w]
    b = xy[e, c + w] - xy[e, c]
    return wp.abs(wp.atan2(a[0] * b[1] - a[1] * b[0], wp.dot(a, b)))


@wp.func
def add_chicanes(xy: wp.array2d(dtype=wp.vec2f), e: int, n: int, total: float, mean_count: float, length: float,
                 offset: float, big_r: float, st: wp.uint32):
    """Add env ``e``'s chicanes to its resampled centerline (``total`` its length): ``floor(mean_count +
    u)`` raised-cosine bumps (:func:`chicane_bump`), one per equal sector of the loop past the start
    line's first 1/32, each on the straightest of :data:`CHICANE_TRIES` centres in its sector, of
    length ``length`` x U(0.6, 1), offset ``offset`` x U(0.5, 1) to a random side, capped so that its
    curvature stays below :data:`CHICANE_MARGIN` / ``big_r``. Bumps of fewer than 4 spacings are
    skipped (the line cannot draw them)."""
    count = wp.min(int(wp.floor(mean_count + wp.randf(st))), MAX_CHICANES)
    if count <= 0:
        return
    h = total / float(n)
    first = n / 32
    sector = (n - first) / count
    for k in range(count):
        length_k = length * (0.6 + 0.4 * wp.randf(st))
        amp = offset * (0.5 + 0.5 * wp.randf(st))
        if wp.randf(st) < 0.5:
            amp = -amp
        w = wp.min(int(0.5 * length_k / h), sector / 2 - 1)
        lo = first + k * sector + w
        span = sector - 2 * w
        best = int(-1)
        bend = float(1.0e30)
        for _t in range(CHICANE_TRIES):
            c = lo + wp.min(int(wp.randf(st) * float(span)), span - 1)
            if w >= 2 and span >= 1:
                b = bend_over(xy, e, c, w)
                if b < bend:
                    bend = b
                    best = c
        if best >= 0:
            wl = 2.0 * float(w) * h
            cap = CHICANE_MARGIN * wl * wl / (2.0 * PI * PI * big_r)
            chicane_bump(xy, e, n, best, w, wp.sign(amp) * wp.min(wp.abs(amp), cap))


@wp.func
def drawn_status(xy: wp.array2d(dtype=wp.vec2f), hw: wp.array2d(dtype=wp.float32), e: int, n: int, size: float,
                 big_r: float, stop: bool, widths: wp.vec2f, total: float, min_turn_radius: float, clearance: float,
                 min_length: float, max_length: float) -> int:
    """The status of a resampled draw (``widths`` of :func:`fill_half_width`, ``total`` the spline's
    length): the point checks (with ``stop``, their first failing bits alone), then the rest of
    :func:`validity.finish_status`; a non-finite spline length is NONFINITE (its resampling walk
    stalls on finite points, which would look merely degenerate)."""
    pts = point_pass(xy, hw, e, n, size * 0.5, big_r, stop)
    if stop and pts[2] != 0.0:
        return int(pts[2])
    status = finish_status(xy, hw, e, n, wp.vec3f(wp.min(pts[0], widths[0]), pts[1], widths[1]), int(pts[2]),
                           pts[3], min_turn_radius, clearance, min_length, max_length)
    if not wp.isfinite(total):
        status = NONFINITE
    return status


@wp.kernel
def centerline_kernel(
    # parameters
    key: int,
    num_ctrl: int,
    num_points: int,
    dense: int,
    max_attempts: int,
    use_points: int,
    max_length: float,
    size: wp.array(dtype=wp.float32),
    radius_min: wp.array(dtype=wp.float32),
    radius_max: wp.array(dtype=wp.float32),
    angle_jitter: wp.array(dtype=wp.float32),
    half_width: wp.array(dtype=wp.float32),
    width_variation: wp.array(dtype=wp.float32),
    min_turn_radius: wp.array(dtype=wp.float32),
    clearance: wp.array(dtype=wp.float32),
    min_length: wp.array(dtype=wp.float32),
    difficulty: wp.array(dtype=wp.float32),
    hairpin_share: wp.array(dtype=wp.float32),
    chicanes: wp.array(dtype=wp.float32),
    chicane_length: wp.array(dtype=wp.float32),
    chicane_offset: wp.array(dtype=wp.float32),
    # inputs
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    points: wp.array2d(dtype=wp.vec2f),
    difficulty_offset: wp.array(dtype=wp.float32),
    # outputs
    ctrl_out: wp.array2d(dtype=wp.vec2f),
    xy_out: wp.array2d(dtype=wp.vec2f),
    hw_out: wp.array2d(dtype=wp.float32),
    attempts_out: wp.array(dtype=wp.int32),
    status_out: wp.array(dtype=wp.int32),
    shape_out: wp.array(dtype=wp.int32),
    difficulty_out: wp.array(dtype=wp.float32),
    valid_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    w0 = half_width[e]
    var = width_variation[e]
    inner = size[e] * 0.5 - w0 * (1.0 + var)
    d, level_ok, shape = track_shape(seeds[e], generation[e], key, use_points, difficulty[e] + difficulty_offset[e],
                                     hairpin_share[e])
    per_span = dense / num_ctrl
    status = int(0)
    used = int(0)
    for attempt in range(max_attempts):
        used = attempt + 1
        st = stream_state(seeds[e], generation[e], key, attempt)
        st = draw_track_controls(ctrl_out, e, st, shape, use_points, points, num_ctrl, angle_jitter[e], radius_min[e],
                                 radius_max[e], d, inner)
        phase1 = TWO_PI * wp.randf(st)
        phase2 = TWO_PI * wp.randf(st)
        # a draw that is not the last stops at its first failing check: any failure bit rejects it
        stop = attempt < max_attempts - 1 and use_points == 0
        # one pass over the dense curve: its length, and an early reject of draws whose spline
        # clearly turns tighter than allowed (the exact check on the resampled line still decides)
        early = float(0.0)
        if stop:
            early = EARLY_REJECT * wp.max(min_turn_radius[e], w0 * (1.0 + var))
        total, tight, near = closed_length_and_tight(ctrl_out, e, num_ctrl, per_span, early)
        if tight:
            status = TURN
            continue
        # start at the flattest knot (drawn loops), so the start line sits on the straightest part
        kbest = int(0)
        if use_points == 0:
            kbest = flattest_knot(ctrl_out, e, num_ctrl)
        # the half-width profile first: its largest value sets the turn radius bound R of the checks
        widths = fill_half_width(hw_out, e, num_points, w0, var, phase1, phase2)
        big_r = wp.max(min_turn_radius[e], widths[1])
        if resample(ctrl_out, e, num_ctrl, per_span, dense, kbest, total, num_points, near, big_r, stop, xy_out):
            status = TURN
            continue
        if use_points == 0 and chicanes[e] > 0.0:
            add_chicanes(xy_out, e, num_points, total, chicanes[e], chicane_length[e], chicane_offset[e], big_r,
                         stream_state(seeds[e], generation[e], key, CHICANE_STREAM + attempt))
        status = drawn_status(xy_out, hw_out, e, num_points, size[e], big_r, stop, widths, total, min_turn_radius[e],
                              clearance[e], min_length[e], max_length)
        if status == 0:
            break
    if not level_ok:
        status = NONFINITE  # a NaN / inf difficulty offset
    attempts_out[e] = used
    status_out[e] = status
    shape_out[e] = shape
    difficulty_out[e] = d
    if status != 0:
        valid_out[e] = 0


def _launch_centerline(ctx, use_points: bool = False):
    st = ctx.static
    n, k = st["num_points"], st["control_points"]
    p = ctx.param
    # the random-shape parameters a hand-drawn centerline has not: any [E] array stands in (unread)
    shape = (p("size"),) * 3 if use_points else (p("radius_min"), p("radius_max"), p("angle_jitter"))
    level = (p("size"), p("size")) if use_points else (p("difficulty"), p("hairpin_share"))
    chicanes = (p("size"),) * 3 if use_points else (p("chicanes"), p("chicane_length"), p("chicane_offset"))
    wp.launch(
        centerline_kernel, dim=ctx.num_envs,
        inputs=[
            ctx.key, k, n, k * max(2, math.ceil(2 * n / k)), 1 if use_points else st["max_attempts"], int(use_points),
            float(st["max_length"]), p("size"), *shape, p("half_width"), p("half_width_variation"),
            p("min_turn_radius"), p("clearance"), p("min_length"), *level, *chicanes,
            ctx.active, ctx.seeds, ctx.generation,
            ctx.input("points") if use_points else ctx.output("control"),
            p("size") if use_points else ctx.input("difficulty_offset"),
        ],
        outputs=[ctx.output("control"), ctx.output("xy"), ctx.output("half_width"), ctx.output("attempts"),
                 ctx.output("status"), ctx.output("shape"), ctx.output("difficulty_used"), ctx.valid],
        device=ctx.device,
    )


PTS = ("env", "points")
_CAPACITIES = lambda s: {"points": s["num_points"], "control_points": s["control_points"]}  # noqa: E731
_OUTPUTS = {
    "control": ArraySpec(wp.vec2f, ("env", "control_points"), doc="control points of the accepted draw [m]"),
    "xy": ArraySpec(wp.vec2f, PTS, doc="centerline, evenly spaced, point 0 on the start line [m]"),
    "half_width": ArraySpec(wp.float32, PTS, doc="band half width at each point [m]"),
    "attempts": ArraySpec(wp.int32, doc="draws used"),
    "status": ArraySpec(wp.int32, doc="TrackStatus bits of the last draw (0: valid)"),
    "shape": ArraySpec(wp.int32, doc="shape drawn: 0 loop, 2 hairpin (thin loop with hairpins and chicanes)"),
    "difficulty_used": ArraySpec(wp.float32, doc="the difficulty this track was drawn at, in [0, 1]"),
}


def register_centerline_stages(registry) -> None:
    """Register ``track.centerline`` (random shapes) and ``track.from_points`` (your control points)."""
    registry.register(
        "track.centerline", _launch_centerline, params=CENTERLINE_PARAMS, _builtin=True, capacities=_CAPACITIES,
        inputs={"difficulty_offset": ArraySpec(
            wp.float32, doc="[E] per-env difficulty offset you write in place; the env's difficulty is "
                            "clamp(centerline.difficulty + offset, 0, 1)")},
        outputs=_OUTPUTS,
    )
    drawn_params = {n: p for n, p in CENTERLINE_PARAMS.items() if n not in SHAPE_ONLY}
    registry.register(
        "track.from_points", lambda ctx: _launch_centerline(ctx, use_points=True), params=drawn_params,
        _builtin=True, capacities=_CAPACITIES,
        inputs={"points": ArraySpec(wp.vec2f, ("env", "control_points"),
                                    doc="your control points, in order around the loop [m]; written in place")},
        outputs=dict(_OUTPUTS),
    )
