"""Course shapes, shared by both families: control points of the star-shaped loop, a figure-8,
thin (hairpin) loops and the shuttle (a meander of U-turns), the difficulty's shape draw, and the
split-S (stacked pair) conversion.
Warp functions the gate and band-track kernels call, one thread per env.

Every shape fits its control points in the square of half side ``inner`` (a uniform cubic
B-spline stays inside the hull of its control points, so the whole curve does), then the
validators decide whether a draw is kept. Warp passes a random state to a ``wp.func`` by value:
the draws return the advanced state, which the kernel carries on with, so the stream is the same
as with the code inlined.
"""

from __future__ import annotations

import warp as wp

from track_gen.math import PI, TWO_PI, wrap_angle

# Shape ids (``gates.shape`` / ``centerline.shape``); the docs' shape catalogue names them.
LOOP = wp.constant(0)
FIGURE8 = wp.constant(1)
HAIRPIN = wp.constant(2)
SPLIT_S = wp.constant(3)
SHUTTLE = wp.constant(4)
SHAPE_NAMES = ("loop", "figure8", "hairpin", "split_s", "shuttle")
# The shape draw uses its own random stream, attempt index beyond any max_attempts: a retried
# draw keeps its shape, so the shape mix of valid courses is the drawn mix.
SHAPE_STREAM = wp.constant(1 << 20)
# A split-S leg has its two gates at the same xy (this far apart at most, plan view [m]) ...
STACK_XY = wp.constant(0.1)
# ... and opposite headings (within this [rad]).
STACK_YAW = wp.constant(0.05)


@wp.func
def lerp(a: float, b: float, d: float) -> float:
    return a + (b - a) * d


@wp.func
def draw_shape(u: float, d: float, figure8_share: float, hairpin_share: float, split_s_share: float,
               shuttle_share: float, allow_split: int) -> int:
    """The shape of a course at difficulty ``d`` from a uniform draw ``u``: figure-8 with
    probability ``d * figure8_share``, hairpin ``d * hairpin_share``, split-S ``d * split_s_share``
    (a hairpin when ``allow_split`` is 0), shuttle ``d * shuttle_share``, else the loop (a zero
    ``shuttle_share`` leaves the other shapes' draws as they were)."""
    s = LOOP
    a = d * figure8_share
    b = a + d * hairpin_share
    c = b + d * split_s_share
    if u < a:
        s = FIGURE8
    elif u < b:
        s = HAIRPIN
    elif u < c:
        s = SPLIT_S
        if allow_split == 0:
            s = HAIRPIN
    elif u < c + d * shuttle_share:
        s = SHUTTLE
    return s


@wp.func
def draw_loop(ctrl: wp.array2d(dtype=wp.vec2f), e: int, st: wp.uint32, num_ctrl: int, angle_jitter: float,
              radius_min: float, radius_max: float, inner: float) -> wp.uint32:
    """Env ``e``'s star-shaped loop: jittered, evenly spaced angles from a random start, each point at a
    random fraction of the largest radius that keeps it in the square of half side ``inner``; a random
    direction. Returns the advanced random state."""
    a0 = TWO_PI * wp.randf(st)
    reverse = wp.randf(st) < 0.5
    for k in range(num_ctrl):
        theta = a0 + TWO_PI * (float(k) + angle_jitter * (2.0 * wp.randf(st) - 1.0)) / float(num_ctrl)
        c = wp.cos(theta)
        s = wp.sin(theta)
        frac = radius_min + (radius_max - radius_min) * wp.randf(st)
        q = wp.vec2f(c, s) * (frac * inner / wp.max(wp.abs(c), wp.abs(s)))
        idx = k
        if reverse:
            idx = num_ctrl - 1 - k
        ctrl[e, idx] = q
    return st


@wp.func
def fit_square(ctrl: wp.array2d(dtype=wp.vec2f), e: int, num_ctrl: int, inner: float, frac: float):
    """Rotate nothing, scale the control points so their largest |x|, |y| is ``frac * inner``."""
    m = float(0.0)
    for k in range(num_ctrl):
        p = ctrl[e, k]
        m = wp.max(m, wp.max(wp.abs(p[0]), wp.abs(p[1])))
    sc = float(0.0)
    if m > 0.0:
        sc = frac * inner / m
    for k in range(num_ctrl):
        ctrl[e, k] = ctrl[e, k] * sc


@wp.func
def store_rotated(ctrl: wp.array2d(dtype=wp.vec2f), e: int, k: int, num_ctrl: int, x: float, y: float,
                  c: float, s: float, reverse: int):
    idx = k
    if reverse != 0:
        idx = num_ctrl - 1 - k
    ctrl[e, idx] = wp.vec2f(c * x - s * y, s * x + c * y)


@wp.func
def draw_figure8(ctrl: wp.array2d(dtype=wp.vec2f), e: int, st: wp.uint32, num_ctrl: int, angle_jitter: float,
                 inner: float, closed: int) -> wp.uint32:
    """A figure-8 (lemniscate of Gerono ``x = sin t``, ``y = a sin t cos t``): control points at
    ``t_k = 2 pi (k + t0 + jitter) / n``, radial jitter, random aspect, rotation and mirror image
    (the other sense of travel). Its two passes through the crossing (``t = 0`` and ``t = pi``)
    sit at loop fractions ``(n - t0) / n`` and ``1/2`` later (:func:`figure8_phase`): with ``t0 =
    1/2`` on a loop (fractions ~0 and ~1/2), ``t0 = 1/2 + n/4`` on a sprint, so that both passes
    fall inside the first 80 % of the loop that a sprint flies."""
    aspect = 1.6 + 0.8 * wp.randf(st)
    rot = TWO_PI * wp.randf(st)
    mirror = 1.0
    if wp.randf(st) < 0.5:
        mirror = -1.0
    c = wp.cos(rot)
    s = wp.sin(rot)
    t0 = 0.5
    if closed == 0:
        t0 = 0.5 + 0.25 * float(num_ctrl)
    for k in range(num_ctrl):
        t = TWO_PI * (float(k) + t0 + 0.5 * angle_jitter * (2.0 * wp.randf(st) - 1.0)) / float(num_ctrl)
        r = 1.0 + 0.2 * (wp.randf(st) - 0.5)
        store_rotated(ctrl, e, k, num_ctrl, r * wp.sin(t), mirror * r * aspect * wp.sin(t) * wp.cos(t), c, s, 0)
    fit_square(ctrl, e, num_ctrl, inner, 0.85 + 0.15 * wp.randf(st))
    return st


@wp.func
def figure8_phase(num_ctrl: int, closed: int) -> float:
    """Phase of the height profile that puts its top on one pass of a figure-8's crossing and its
    bottom on the other (see :func:`draw_figure8`)."""
    ph = PI / float(num_ctrl)
    if closed == 0:
        ph = ph - 0.5 * PI
    return ph


@wp.func
def draw_thin_loop(ctrl: wp.array2d(dtype=wp.vec2f), e: int, st: wp.uint32, num_ctrl: int, angle_jitter: float,
                   d: float, inner: float) -> wp.uint32:
    """A thin loop with a hairpin at each end and an S-bend (chicane) along it: an ellipse of
    aspect ``b`` (0.45 at difficulty 0 down to 0.22 at 1, +-20 %), sheared by ``y += a sin(pi x
    w + phase)`` (``a`` up to 0.3 d, one or 1.5 waves), then rotated, mirrored in direction
    and fitted to the square. The shear is a bijection of the plane, so the loop stays simple
    when its control polygon is; non-star-shaped once the shear is strong."""
    b = lerp(0.45, 0.22, d) * (0.8 + 0.4 * wp.randf(st))
    amp = 0.3 * d * wp.randf(st)
    waves = 1.0
    if wp.randf(st) < 0.5:
        waves = 1.5
    ph = TWO_PI * wp.randf(st)
    rot = TWO_PI * wp.randf(st)
    reverse = int(0)
    if wp.randf(st) < 0.5:
        reverse = 1
    c = wp.cos(rot)
    s = wp.sin(rot)
    for k in range(num_ctrl):
        t = TWO_PI * (float(k) + 0.5 * angle_jitter * (2.0 * wp.randf(st) - 1.0)) / float(num_ctrl)
        x = wp.cos(t)
        y = b * wp.sin(t) + amp * wp.sin(PI * x * waves + ph)
        store_rotated(ctrl, e, k, num_ctrl, x, y, c, s, reverse)
    fit_square(ctrl, e, num_ctrl, inner, 0.85 + 0.15 * wp.randf(st))
    return st


@wp.func
def shuttle_lanes(num_ctrl: int) -> int:
    """Lanes of a shuttle with ``num_ctrl`` control points: the most whose corners
    (:func:`shuttle_corner`) fit, 0 below 5 points."""
    lanes = (num_ctrl - 2) / 2
    if lanes % 2 == 1 and 2 * lanes + 3 > num_ctrl:
        lanes = lanes - 1
    if num_ctrl < 5:
        lanes = 0
    return lanes


@wp.func
def shuttle_corner(i: int, lanes: int, length: float, w: float) -> wp.vec2f:
    """Corner ``i`` of a shuttle's polygon: lane ``k < lanes`` runs from corner ``2k`` to ``2k + 1``
    at ``y = k w``, +x for even ``k``, -x for odd ones. An odd count ends on the right: the outer
    side at ``x = length + w`` down to a return lane at ``y = -w`` back to ``x = 0`` (3 more
    corners; a U-turn into lane 0). An even count ends on the left: the outer side at ``x = -w``
    down to lane 0 (2 more corners)."""
    top = float(lanes - 1) * w
    p = wp.vec2f(0.0, -w)
    if i < 2 * lanes:
        k = i / 2
        end = i - 2 * k                       # 0: the lane's first corner, 1: its last
        x = length * float(end)
        if k % 2 == 1:
            x = length * float(1 - end)
        p = wp.vec2f(x, float(k) * w)
    elif lanes % 2 == 1:
        if i == 2 * lanes:
            p = wp.vec2f(length + w, top)
        elif i == 2 * lanes + 1:
            p = wp.vec2f(length + w, -w)
    else:
        p = wp.vec2f(-w, top)
        if i == 2 * lanes + 1:
            p = wp.vec2f(-w, 0.0)
    return p


@wp.func
def draw_shuttle(ctrl: wp.array2d(dtype=wp.vec2f), e: int, st: wp.uint32, num_ctrl: int, angle_jitter: float,
                 d: float, inner: float):
    """A shuttle: parallel lanes joined by U-turns (a meander), closed by an outer side -- the
    back-and-forth of a small indoor track, where consecutive gates stand side by side facing
    opposite ways. :func:`shuttle_lanes` lanes (4 with 10 control points, 2 with 8; below 5
    points: a thin loop), corners by :func:`shuttle_corner`, the spare points evenly down the
    outer side. Lane spacing ``w`` is 0.3 to 0.12 of the lane length (tighter U-turns at higher
    ``d``), +-25 %; a random rotation, mirror image and sense of travel; centred and fitted to the
    square. The spline rounds a U-turn to about a third of the lane spacing. Returns (the advanced
    random state, 1 if the points run in reverse order else 0: lane ``k`` is then the spline's span
    ``num_ctrl - 2 - 2k``, else span ``2k``)."""
    lanes = shuttle_lanes(num_ctrl)
    if lanes == 0:
        return draw_thin_loop(ctrl, e, st, num_ctrl, angle_jitter, d, inner), 0
    odd = lanes % 2
    corners = 2 * lanes + 2 + odd
    spare = num_ctrl - corners
    length = 1.0
    w = lerp(0.3, 0.12, d) * (0.75 + 0.5 * wp.randf(st)) * length
    rot = TWO_PI * wp.randf(st)
    mirror = 1.0
    if wp.randf(st) < 0.5:
        mirror = -1.0
    reverse = int(0)
    if wp.randf(st) < 0.5:
        reverse = 1
    c = wp.cos(rot)
    s = wp.sin(rot)
    top = float(lanes - 1) * w
    mid = wp.vec2f(0.5 * (length - w), 0.5 * top)
    if odd == 1:
        mid = wp.vec2f(0.5 * (length + w), 0.5 * (top - w))
    k = int(0)
    for i in range(corners):
        q = shuttle_corner(i, lanes, length, w)
        store_rotated(ctrl, e, k, num_ctrl, q[0] - mid[0], mirror * (q[1] - mid[1]), c, s, reverse)
        k += 1
        if i == 2 * lanes:
            # the spare points, evenly down the outer side to the next corner
            nxt = shuttle_corner(i + 1, lanes, length, w)
            for j in range(spare):
                f = float(j + 1) / float(spare + 1)
                y = q[1] + (nxt[1] - q[1]) * f
                store_rotated(ctrl, e, k, num_ctrl, q[0] - mid[0], mirror * (y - mid[1]), c, s, reverse)
                k += 1
    fit_square(ctrl, e, num_ctrl, inner, 0.85 + 0.15 * wp.randf(st))
    return st, reverse


@wp.func
def draw_bent_loop(ctrl: wp.array2d(dtype=wp.vec2f), e: int, st: wp.uint32, num_ctrl: int, angle_jitter: float,
                   d: float, inner: float) -> wp.uint32:
    """A thin band bent into a C (a horseshoe): the flattened loop ``x = cos t``, ``y = b sgn(sin t)
    |sin t|^(1/2)`` (flat sides, round ends: the hairpins) mapped by the bend ``(x, y) -> ((R + y)
    sin(x beta / 2), R - (R + y) cos(x beta / 2))`` with ``R = 2 / beta``. The bend is injective
    for ``|y| < R`` and ``beta < 2 pi``, so the loop stays simple; past ``beta = pi`` the C is
    not star-shaped. A wave ``a sin(2 pi x + phase)`` added to ``y`` (``a`` up to 0.07 d) puts an
    S-bend (a chicane) along the band. ``beta`` grows from 0.6 pi (difficulty 0) to 1.4 pi (1), +-15 %; ``b`` from
    0.35 to 0.25 (at most 0.8 R). Centred on its bounding box, rotated, fitted to the square."""
    b = lerp(0.35, 0.25, d) * (0.9 + 0.2 * wp.randf(st))
    beta = lerp(0.6, 1.4, d) * PI * (0.85 + 0.3 * wp.randf(st))
    big_r = 2.0 / beta
    b = wp.min(b, 0.8 * big_r)
    amp = wp.min(0.07 * d * wp.randf(st), 0.5 * big_r - 0.5 * b)  # the chicane: an S-bend along the band
    ph = TWO_PI * wp.randf(st)
    rot = TWO_PI * wp.randf(st)
    reverse = int(0)
    if wp.randf(st) < 0.5:
        reverse = 1
    c = wp.cos(rot)
    s = wp.sin(rot)
    lo = wp.vec2f(1.0e30, 1.0e30)
    hi = wp.vec2f(-1.0e30, -1.0e30)
    for k in range(num_ctrl):
        t = TWO_PI * (float(k) + 0.5 * angle_jitter * (2.0 * wp.randf(st) - 1.0)) / float(num_ctrl)
        x = wp.cos(t)
        sn = wp.sin(t)
        y = b * wp.sign(sn) * wp.sqrt(wp.abs(sn)) + amp * wp.sin(TWO_PI * x + ph)
        th = 0.5 * x * beta
        r = big_r + y
        q = wp.vec2f(r * wp.sin(th), big_r - r * wp.cos(th))
        lo = wp.min(lo, q)
        hi = wp.max(hi, q)
        ctrl[e, k] = q
    mid = (lo + hi) * 0.5
    for k in range(num_ctrl):
        q = ctrl[e, k] - mid
        ctrl[e, k] = q
    # rotate (and reverse the order) in place: rotation first, then the order swap
    for k in range(num_ctrl):
        q = ctrl[e, k]
        ctrl[e, k] = wp.vec2f(c * q[0] - s * q[1], s * q[0] + c * q[1])
    if reverse != 0:
        for k in range(num_ctrl / 2):
            a = ctrl[e, k]
            ctrl[e, k] = ctrl[e, num_ctrl - 1 - k]
            ctrl[e, num_ctrl - 1 - k] = a
    fit_square(ctrl, e, num_ctrl, inner, 0.85 + 0.15 * wp.randf(st))
    return st


@wp.func
def height_of(u: float, lam: float, f: float, phase: float) -> float:
    """Height fraction in [0, 1] of a gate at loop fraction ``f``: ``(1 - lam) u + lam (1 + cos(2 pi f
    + phase)) / 2`` (``u`` uniform; ``lam = 0`` gives today's uniform heights exactly)."""
    return (1.0 - lam) * u + lam * (0.5 + 0.5 * wp.cos(TWO_PI * f + phase))


@wp.func
def make_split_s(pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32),
                 stacked: wp.array2d(dtype=wp.int32), e: int, st: wp.uint32, count: int, closed: int,
                 gap: float, height_min: float, height_max: float) -> wp.uint32:
    """Turn the sharpest heading reversal of env ``e``'s gates into a split-S: the consecutive
    pair ``(g, g + 1)`` whose headings differ most is moved to the midpoint of the two (plan
    view), gate ``g`` heading along the leg that arrives there, gate ``g + 1`` the opposite way,
    stacked ``gap`` apart in height (which one on top: random) within [height_min, height_max]
    (widened to fit the gap); ``stacked[e, g] = 1``. A sprint never stacks gate 0."""
    best = float(-1.0)
    g = int(-1)
    legs = count - 1
    if closed != 0:
        legs = count
    first = int(0)
    if closed == 0:
        first = 1
    for k in range(first, legs):
        k1 = (k + 1) % count
        dy = wp.abs(wrap_angle(yaw[e, k1] - yaw[e, k]))
        if dy > best:
            best = dy
            g = k
    up = wp.randf(st)
    if g < 0:
        return st
    g1 = (g + 1) % count
    gp = (g + count - 1) % count
    a = pos[e, g]
    b = pos[e, g1]
    mx = 0.5 * (a[0] + b[0])
    my = 0.5 * (a[1] + b[1])
    prev = pos[e, gp]
    head = wp.atan2(my - prev[1], mx - prev[0])
    zc = 0.5 * (a[2] + b[2])
    top = wp.max(height_max, height_min + gap)
    zc = wp.clamp(zc, height_min + 0.5 * gap, top - 0.5 * gap)
    za = zc + 0.5 * gap
    zb = zc - 0.5 * gap
    if up < 0.5:
        za = zc - 0.5 * gap
        zb = zc + 0.5 * gap
    pos[e, g] = wp.vec3f(mx, my, za)
    pos[e, g1] = wp.vec3f(mx, my, zb)
    yaw[e, g] = wrap_angle(head)
    yaw[e, g1] = wrap_angle(head + PI)
    stacked[e, g] = 1
    return st
