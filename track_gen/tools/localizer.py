"""Localizer: each env's pose in the frame of its course line (``StepResult.frame``).

Per env and step the body position is projected on the env's polyline (the nearest point over
all segments, 3D distance) and expressed as arc length, signed lateral offset, height, heading,
tangent, segment index and distance: a :class:`~track_gen.tools.types.TrackFrame`.

Frames: the line lives in each env's own frame. ``position`` is env-frame, or world-frame when
the optional input ``origin`` ([E] vec3f, each env's origin in the world, e.g. Isaac Lab's
``env.scene.env_origins``) is bound: then ``position[e] - origin[e]`` is projected (a non-finite
origin counts as a non-finite position). Every output is relative to the line, so it does not
depend on the frame.

Where the line comes from:

* ``source="centerline"`` (any name): that component's ``result``, a
  :class:`~track_gen.tools.types.CourseLine` (``count`` points in use, open or closed). The course
  runs the source first, so its ``on_generate`` has refreshed the line when ours reads it.
* ``source=None``: a band track generator's result (``xy``, ``z``, ``s``, ``length``, ``valid``:
  a closed loop of N points), copied into the localizer's own CourseLine (``localizer.line``)
  in ``on_generate``, masked envs only. Its ``s``/``length`` are the generator's; its tangent is
  the unit direction of each chord (point i to i+1), not the generator's smooth tangent.

Search, per step (one thread per env, cost in segment evaluations):

* global (``warm_window=None``, and every fallback): the exact nearest segment. Segments are
  grouped in blocks of ``B = max(4, round(sqrt(N)))`` with a bounding sphere baked in
  ``on_generate``; the block with the nearest sphere is scanned first, then every block whose
  sphere could still hold a nearer segment. Typically ``2 N / B`` sphere tests plus one to three
  blocks (about 50 segment evaluations at N = 256); ``N`` at worst.
* warm (``warm_window=w``): only the ``2w + 1`` segments ``prev - w .. prev + w`` around the
  env's previous segment (cyclic on closed lines, clamped to ``[0, m)`` on open ones), so
  ``O(w)`` per step. The window result is accepted unless a fallback rule below fires, in which
  case the step runs the global search instead (its result, never a mix).

Measured on one CPU core (Warp runs CPU kernels on one thread), E = 4096, N = 256, per env and
step, caches hot / cold: warm(8) ~0.19 / 0.33 us, global ~0.33 / 0.50 us (a graph replay; eager
adds ~7 ns/env of launch overhead). Baked data: 16 bytes per point plus 16 per block, per env.

Warm fallback rules (exact). With ``m`` segments, ``d`` the distance to the window's nearest
segment ``j`` and ``q`` the projection on it, the step searches globally when

1. there is no previous segment: after construction, regeneration, ``reset``, or a step whose
   result was invalid (segment -1);
2. the window would cover the whole line (``2w + 1 >= m`` closed; ``lo == 0 and hi == m - 1``
   open) -- the global search is then no dearer;
3. ``j`` is the first or last segment of the window and more segments lie beyond that end (the
   body may have moved past the window); an end of an open line is not such an end;
4. ``d`` exceeds the reach of the window: the arc length (the line's ``s``) from ``q`` to the
   nearer window end, infinite towards an end of an open line. A body farther from the line
   than the window extends along it may be nearer to some other part of it.

Ties are broken by the lowest segment index, in both modes, so the nearest segment is the
lexicographic minimum of (squared distance, index) over the segments searched. Hence the warm
result equals the global one, bit for bit, whenever the global nearest segment lies inside the
window (every segment is evaluated by the same code). When it does not and no rule fires --
e.g. a car drifting slowly across the infield of a hairpin towards the other leg, less than the
window's reach away from its own leg -- the warm localizer keeps following the current leg:
it tracks continuously instead of jumping (which is also what progress rewards usually want).

Outputs (``result``, [E] each), for the nearest segment ``j`` from point ``P[j]`` to ``P[j+1]``
(``P[0]`` for the closing segment of a closed line), ``t`` in [0, 1] the position on it:

* ``s = line.s[j] + t * (s_next - line.s[j])`` with ``s_next = line.s[j+1]`` (``line.length`` for
  the closing segment): in [0, length] [m];
* ``lateral``: horizontal offset from the projection, ``cross(h, offset).z`` with ``h`` the
  segment's unit horizontal direction, > 0 left of travel (0 on a vertical segment) [m];
* ``vertical``: ``offset.z``, height above the projection [m];
* ``heading``: yaw of the body's x axis (from the xyzw quaternion, any nonzero scale) minus
  the segment's yaw ``atan2(dy, dx)``, wrapped to [-pi, pi) [rad] (one ``atan2`` of the cross
  and dot products of the two horizontal directions); 0 when ``orientation`` is not bound or
  not finite, or when the body's x axis or the segment is vertical;
* ``tangent``: the segment's unit 3D direction (zero for a zero-length segment);
* ``segment``: ``j``; ``distance``: 3D distance to the projection [m].

Failure modes (never NaN, never a crash, never another env): an env whose line is unusable --
generator ``valid == 0``, fewer than 2 points, more points than capacity, a non-finite point,
``s`` or ``length``, a segment vector that overflows float32 -- or whose position is not finite
(or so large that its squared distance overflows float32) gets ``segment = -1`` and every other
field 0, and loses its warm state.
``reset`` does not touch ``result``: it keeps its last value until the next ``step``.
"""

from __future__ import annotations

import math
import numbers

import warp as wp

from track_gen.math import finite3
from track_gen.tools._common import ORIGIN_INPUT, env_position, no_origin, origin_args
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.types import CourseLine, TrackFrame
from track_gen.tools.component import check_name as _name

__all__ = ["Localizer", "SEARCH_NONE", "SEARCH_WARM", "SEARCH_GLOBAL"]

#: values of ``Localizer.search`` ([E] int32, per step): how the env's result was found
SEARCH_NONE = wp.constant(0)  # invalid line or position: no search
SEARCH_WARM = wp.constant(1)  # the warm window result was accepted
SEARCH_GLOBAL = wp.constant(2)  # global search (global mode, no previous segment, or a fallback rule fired)


# -- on_generate ----------------------------------------------------------------------------------
@wp.func
def _unit_or_zero(v: wp.vec3f):
    n = wp.length(v)
    if n > 0.0:
        return v / n
    return wp.vec3f(0.0, 0.0, 0.0)


@wp.kernel
def _copy_track(mask: wp.array(dtype=wp.int32), xy: wp.array2d(dtype=wp.vec2f),
                z: wp.array2d(dtype=wp.float32), s: wp.array2d(dtype=wp.float32),
                length: wp.array(dtype=wp.float32), num_points: int,
                points_out: wp.array2d(dtype=wp.vec3f), tangent_out: wp.array2d(dtype=wp.vec3f),
                s_out: wp.array2d(dtype=wp.float32), count_out: wp.array(dtype=wp.int32),
                length_out: wp.array(dtype=wp.float32), closed_out: wp.array(dtype=wp.int32)):
    """A band track (closed_out loop of N points_out) into a CourseLine, masked envs only."""
    e = wp.tid()
    if mask[e] == 0:
        return
    for i in range(num_points):
        p = xy[e, i]
        points_out[e, i] = wp.vec3f(p[0], p[1], z[e, i])
        s_out[e, i] = s[e, i]
    for i in range(num_points):
        nxt = i + 1
        if nxt == num_points:
            nxt = 0
        tangent_out[e, i] = _unit_or_zero(points_out[e, nxt] - points_out[e, i])
    count_out[e] = num_points
    length_out[e] = length[e]
    closed_out[e] = 1


@wp.kernel
def _bake(agents: int, mask: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
          points: wp.array2d(dtype=wp.vec3f), s: wp.array2d(dtype=wp.float32), count: wp.array(dtype=wp.int32),
          length: wp.array(dtype=wp.float32), closed: wp.array(dtype=wp.int32), capacity: int, block: int,
          pts_out: wp.array2d(dtype=wp.vec4f), spheres_out: wp.array2d(dtype=wp.vec4f),
          num_seg_out: wp.array(dtype=wp.int32), prev_out: wp.array(dtype=wp.int32)):
    """Vertices as ``(x, y, z, s)``, 16 bytes each, so that segment j runs from ``pts[e, j]`` to
    ``pts[e, j + 1]`` (a closed line repeats point 0 as vertex n with ``s = length``); per block of
    segments a bounding sphere ``(centre, radius)``.

    Rows past the env's last vertex are zeroed, so the baked rows are a function of the line.
    The warm state of each of the env's ``agents`` (rows ``e*agents ...``) is dropped.
    """
    e = wp.tid()
    if mask[e] == 0:
        return
    for k in range(agents):
        prev_out[e * agents + k] = -1
    n = count[e]
    ok = valid[e] != 0 and n >= 2 and n <= capacity and wp.isfinite(length[e])
    m = int(0)  # segments
    if ok:
        m = n - 1
        if closed[e] != 0:
            m = n
    for i in range(m + 1):
        if ok:
            k = i
            si = float(0.0)
            if i == n:
                k = 0
                si = length[e]
            else:
                si = s[e, i]
            p = points[e, k]
            if not (finite3(p) and wp.isfinite(si)):
                ok = False
            pts_out[e, i] = wp.vec4f(p[0], p[1], p[2], si)
    for i in range(1, m + 1):  # no segment vector may overflow float32 either
        if ok:
            a = pts_out[e, i - 1]
            b = pts_out[e, i]
            d = wp.vec3f(b[0] - a[0], b[1] - a[1], b[2] - a[2])
            if not wp.isfinite(wp.dot(d, d)):
                ok = False
    if not ok:
        m = 0
    first_unused = m + 1
    if m == 0:
        first_unused = 0
    for i in range(first_unused, capacity + 1):
        pts_out[e, i] = wp.vec4f(0.0, 0.0, 0.0, 0.0)
    for bi in range(spheres_out.shape[1]):
        lo = bi * block
        hi = wp.min(lo + block, m)  # segments lo .. hi - 1: vertices lo .. hi
        sphere = wp.vec4f(0.0, 0.0, 0.0, 0.0)
        if lo < hi:
            first = pts_out[e, lo]
            bmin = wp.vec3f(first[0], first[1], first[2])
            bmax = bmin
            for i in range(lo, hi + 1):
                v = pts_out[e, i]
                x = wp.vec3f(v[0], v[1], v[2])
                bmin = wp.min(bmin, x)
                bmax = wp.max(bmax, x)
            c = 0.5 * (bmin + bmax)
            r = float(0.0)
            for i in range(lo, hi + 1):
                v = pts_out[e, i]
                r = wp.max(r, wp.length(wp.vec3f(v[0], v[1], v[2]) - c))
            # inflate for float32 rounding: the sphere must hold every evaluated point
            r = r * 1.0001 + 1.0e-6 * (wp.length(c) + 1.0)
            sphere = wp.vec4f(c[0], c[1], c[2], r)
        spheres_out[e, bi] = sphere
    num_seg_out[e] = m


@wp.kernel
def _invalidate(agents: int, mask: wp.array(dtype=wp.int32), prev_out: wp.array(dtype=wp.int32)):
    agent = wp.tid()
    if mask[agent // agents] != 0:
        prev_out[agent] = -1


# -- step -------------------------------------------------------------------------------------
@wp.func
def _warm_window(pj: int, m: int, window: int, is_closed: bool):
    """The warm window around the previous segment ``pj``: ``(mode, start, length, open_lo,
    open_hi)``; mode ``SEARCH_WARM`` when one applies (rules 1 and 2 of the module docstring),
    else ``SEARCH_GLOBAL``. ``open_lo`` / ``open_hi``: the window's first / last segment is an
    end of an open line."""
    mode = int(SEARCH_GLOBAL)
    w_start = int(0)
    w_len = int(0)
    open_lo = False
    open_hi = False
    if window > 0 and pj >= 0 and pj < m:
        if is_closed:
            if 2 * window + 1 < m:
                mode = SEARCH_WARM
                w_start = pj - window
                if w_start < 0:
                    w_start = w_start + m
                w_len = 2 * window + 1
        else:
            lo = wp.max(pj - window, 0)
            hi = wp.min(pj + window, m - 1)
            if lo > 0 or hi < m - 1:
                mode = SEARCH_WARM
                w_start = lo
                w_len = hi - lo + 1
                open_lo = lo == 0
                open_hi = hi == m - 1
    return mode, w_start, w_len, open_lo, open_hi


@wp.func
def _sphere_gap(p: wp.vec3f, sp: wp.vec4f):
    """Distance from ``p`` to the centre of sphere ``sp`` (centre, radius)."""
    return wp.length(p - wp.vec3f(sp[0], sp[1], sp[2]))


@wp.func
def _nearest_block(p: wp.vec3f, spheres: wp.array2d(dtype=wp.vec4f), e: int, n_blocks: int) -> int:
    """The block whose bounding sphere is nearest to ``p`` (scanned first: a tight bound for
    pruning the rest)."""
    first_block = int(0)
    best_lb = float(wp.inf)
    for bi in range(n_blocks):
        sp = spheres[e, bi]
        lb = _sphere_gap(p, sp) - sp[3]
        if lb < best_lb:
            best_lb = lb
            first_block = bi
    return first_block


@wp.func
def _seg_nearest(p: wp.vec3f, sa: wp.vec4f, sb: wp.vec4f):
    """Segment ``sa -> sb`` (baked vertices ``(x, y, z, s)``) against ``p``: the squared
    distance, the closest point's parameter t in [0, 1] and the segment's arc length."""
    v = p - wp.vec3f(sa[0], sa[1], sa[2])
    d = wp.vec3f(sb[0] - sa[0], sb[1] - sa[1], sb[2] - sa[2])
    ds = sb[3] - sa[3]
    l2 = wp.dot(d, d)
    t = float(0.0)
    if l2 > 1.0e-30:
        t = wp.clamp(wp.dot(v, d) / l2, 0.0, 1.0)
    r = v - t * d
    return wp.dot(r, r), t, ds


@wp.func
def _heading(quat: wp.array(dtype=wp.quatf), has_quat: int, a: int, d: wp.vec3f) -> float:
    """Yaw of agent ``a``'s body x axis minus the segment direction ``d``'s, in [-pi, pi); 0 without
    a finite orientation."""
    heading = float(0.0)
    if has_quat != 0:
        q = quat[a]
        # body x axis, up to the positive factor |q|^2: (w^2 + x^2 - y^2 - z^2, 2 (x y + w z))
        # (this operand order, not quat_yaw_axes': Warp fuses multiply-adds, so it is part of the result)
        fx = q[3] * q[3] + q[0] * q[0] - q[1] * q[1] - q[2] * q[2]
        fy = 2.0 * (q[0] * q[1] + q[3] * q[2])
        if wp.isfinite(fx) and wp.isfinite(fy):
            # angle from the segment's horizontal direction to the body's, in (-pi, pi]
            heading = wp.atan2(d[0] * fy - d[1] * fx, d[0] * fx + d[1] * fy)
            if heading >= wp.pi:
                heading = -wp.pi
    return heading


@wp.struct
class FrameRows:
    """The :class:`~track_gen.tools.types.TrackFrame` arrays the localizer writes, and its search kind."""

    s: wp.array(dtype=wp.float32)
    lateral: wp.array(dtype=wp.float32)
    vertical: wp.array(dtype=wp.float32)
    heading: wp.array(dtype=wp.float32)
    tangent: wp.array(dtype=wp.vec3f)
    segment: wp.array(dtype=wp.int32)
    distance: wp.array(dtype=wp.float32)
    search: wp.array(dtype=wp.int32)


@wp.kernel
def _locate(window: int, block: int, agents: int,
            pts: wp.array2d(dtype=wp.vec4f), spheres: wp.array2d(dtype=wp.vec4f), num_seg: wp.array(dtype=wp.int32),
            closed: wp.array(dtype=wp.int32),
            pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
            quat: wp.array(dtype=wp.quatf), has_quat: int,
            prev_out: wp.array(dtype=wp.int32), frame_out: FrameRows):
    """``prev_out``: the warm state (each agent's previous segment, -1 when none), read and written.
    One thread per agent; agent ``a`` follows the line of env ``a // agents``."""
    a = wp.tid()
    e = a // agents
    p = env_position(pos, origin, has_origin, a, e)
    m = num_seg[e]

    best_d2 = float(wp.inf)
    best_j = int(-1)
    best_t = float(0.0)
    mode = int(SEARCH_NONE)
    w_start = int(0)
    w_len = int(0)
    open_lo = False
    open_hi = False
    if m > 0 and finite3(p):
        mode, w_start, w_len, open_lo, open_hi = _warm_window(prev_out[a], m, window, closed[e] != 0)

    # one or two searches: the warm window (mode SEARCH_WARM), or every block not pruned by its
    # sphere (SEARCH_GLOBAL, the nearest block first); a rejected warm result falls back to global.
    # The scan stays inline here: as a wp.func of its own it measured ~7% slower (bench/bench_step.py)
    n_blocks = (m + block - 1) // block
    attempt = int(0)
    while mode != SEARCH_NONE and attempt < 2:
        attempt += 1
        best_d2 = float(wp.inf)
        best_j = int(-1)
        best_t = float(0.0)
        best_k = int(-1)
        left = float(0.0)  # arc length from the window start to the nearest point
        acc = float(0.0)  # arc length of the segments scanned
        units = 1
        first_block = int(0)
        if mode == SEARCH_GLOBAL:
            units = n_blocks + 1
            first_block = _nearest_block(p, spheres, e, n_blocks)
        for u in range(units):
            start = w_start
            count = w_len
            if mode == SEARCH_GLOBAL:
                bi = first_block
                if u > 0:
                    bi = u - 1
                start = bi * block
                count = wp.min(block, m - start)
                if u > 0:
                    if bi == first_block:
                        count = 0
                    else:
                        sp = spheres[e, bi]
                        dc = _sphere_gap(p, sp)
                        if dc - sp[3] > wp.sqrt(best_d2) + 1.0e-5 * (dc + sp[3]):
                            count = 0  # no segment of this block can be as near
            for k in range(count):
                j = start + k
                if j >= m:
                    j = j - m
                d2, t, ds = _seg_nearest(p, pts[e, j], pts[e, j + 1])
                if d2 < best_d2 or (d2 == best_d2 and j < best_j):
                    best_d2 = d2
                    best_j = j
                    best_t = t
                    best_k = k
                    left = acc + t * ds
                acc = acc + ds
        if mode == SEARCH_WARM:
            right = acc - left
            if open_lo:
                left = float(wp.inf)
            if open_hi:
                right = float(wp.inf)
            edge = (best_k == 0 and not open_lo) or (best_k == w_len - 1 and not open_hi)
            if best_j < 0 or edge or wp.sqrt(best_d2) > wp.min(left, right):
                mode = SEARCH_GLOBAL  # fall back (rules 3 and 4): search again, globally
                continue
        break

    if best_j < 0:
        frame_out.s[a] = 0.0
        frame_out.lateral[a] = 0.0
        frame_out.vertical[a] = 0.0
        frame_out.heading[a] = 0.0
        frame_out.tangent[a] = wp.vec3f(0.0, 0.0, 0.0)
        frame_out.segment[a] = -1
        frame_out.distance[a] = 0.0
        frame_out.search[a] = SEARCH_NONE
        prev_out[a] = -1
        return

    sa = pts[e, best_j]
    sb = pts[e, best_j + 1]
    d = wp.vec3f(sb[0] - sa[0], sb[1] - sa[1], sb[2] - sa[2])
    off = (p - wp.vec3f(sa[0], sa[1], sa[2])) - best_t * d
    tangent = wp.vec3f(0.0, 0.0, 0.0)
    dl = wp.length(d)
    if dl > 0.0:
        tangent = d / dl
    hl = wp.sqrt(d[0] * d[0] + d[1] * d[1])
    lateral = float(0.0)
    if hl > 0.0:
        lateral = (d[0] * off[1] - d[1] * off[0]) / hl
    frame_out.s[a] = sa[3] + best_t * (sb[3] - sa[3])
    frame_out.lateral[a] = lateral
    frame_out.vertical[a] = off[2]
    frame_out.heading[a] = _heading(quat, has_quat, a, d)
    frame_out.tangent[a] = tangent
    frame_out.segment[a] = best_j
    frame_out.distance[a] = wp.sqrt(best_d2)
    frame_out.search[a] = mode
    prev_out[a] = best_j


# -- component ---------------------------------------------------------------------------------
class Localizer(Component):
    """Projects each env's position on its course line every step; ``result`` is a TrackFrame.

    Args:
        warm_window: None for the exact global search every step, or an int >= 1: search only
            ``2 * warm_window + 1`` segments around the previous one (``O(warm_window)`` per step),
            with the fallback rules of the module docstring.
        source: name of the component whose ``result`` is the CourseLine to follow (ordered
            before this one and required), or None to follow a band track generator directly.
        name: the component's name (keyword only; default ``"localizer"``, which backs
            ``course.localizer``).

    Inputs: ``position`` [E*K] vec3f (required; K agents per env, 1 by default), ``orientation``
    [E*K] quatf xyzw (optional: heading 0), ``origin`` [E] vec3f (optional): when bound, positions
    are world-frame and ``position - origin`` is projected; unbound, positions are env-frame.

    Attributes after attach: ``result`` (TrackFrame, [E*K]), ``line`` (the CourseLine followed,
    [E] rows), ``search`` ([E*K] int32, per step: :data:`SEARCH_NONE` / :data:`SEARCH_WARM` /
    :data:`SEARCH_GLOBAL`), ``last_segment`` ([E*K] int32 warm state, -1 when none). Each agent
    is located alone (its own warm state), exactly as in a one-agent course.

    Raises:
        ValueError: ``warm_window`` is not an int >= 1 (or None).
        TypeError: ``source`` is not a str; the source's result is not a CourseLine; without a
            source, the generator result is not a band track (``xy``, ``z``, ``s``, ``length``).
    """

    name = "localizer"
    inputs = {"position": InputSpec(wp.vec3f), "orientation": InputSpec(wp.quatf, required=False),
              "origin": ORIGIN_INPUT}
    multi_agent = True

    def __init__(self, warm_window: int | None = None, source: str | None = None, *, name: str = "localizer"):
        self.name = _name(name)
        if warm_window is not None and (
            isinstance(warm_window, bool) or not isinstance(warm_window, numbers.Integral) or warm_window < 1
        ):
            raise ValueError(f"warm_window must be None or an int >= 1, got {warm_window!r}")
        if source is not None and (not isinstance(source, str) or not source):
            raise TypeError(f"source must be a component name (a non-empty str) or None, got {source!r}")
        self.warm_window = None if warm_window is None else int(warm_window)
        self.source = source
        self.requires = () if source is None else (source,)
        self.utility = self

    # -- hooks ----------------------------------------------------------------------------------
    def attach(self, ctx) -> None:
        E, dev = ctx.num_envs, ctx.device
        res = ctx.result
        if self.source is not None:
            line = ctx.component(self.source).result
            if not isinstance(line, CourseLine):
                raise TypeError(
                    f"localizer: source {self.source!r} must have a CourseLine result, got {type(line).__name__}"
                )
            if line.points.ndim != 2 or line.points.shape[0] != E:
                raise ValueError(f"localizer: source {self.source!r} points must be [{E}, N], got {line.points.shape}")
            self._track = None
        else:
            if not all(hasattr(res, f) for f in ("xy", "z", "s", "length")):
                raise TypeError(
                    f"localizer: without source=, the generator must be a band track (result with xy, z, s, "
                    f"length); {type(res).__name__} is not one. For gates, add a CourseLine component (e.g. "
                    f"'centerline') and pass source='centerline'"
                )
            N = int(res.xy.shape[1])

            def z2(dtype):
                return wp.zeros((E, N), dtype=dtype, device=dev)

            line = CourseLine(points=z2(wp.vec3f), tangent=z2(wp.vec3f), s=z2(wp.float32),
                              count=wp.zeros(E, dtype=wp.int32, device=dev),
                              length=wp.zeros(E, dtype=wp.float32, device=dev),
                              closed=wp.zeros(E, dtype=wp.int32, device=dev))
            self._track = res
        self.line = line
        N = int(line.points.shape[1])
        self._capacity = N
        self._block = max(4, int(round(math.sqrt(N))))
        nb = max(1, (N + self._block - 1) // self._block)
        self._pts = wp.zeros((E, N + 1), dtype=wp.vec4f, device=dev)
        self._spheres = wp.zeros((E, nb), dtype=wp.vec4f, device=dev)
        self._num_seg = wp.zeros(E, dtype=wp.int32, device=dev)
        self._agents, A = ctx.agents, ctx.num_agents  # per agent: the warm state and the frame
        self.last_segment = wp.full(A, -1, dtype=wp.int32, device=dev)
        self.search = wp.zeros(A, dtype=wp.int32, device=dev)
        self._no_quat = wp.zeros(1, dtype=wp.quatf, device=dev)
        self._no_origin = no_origin(dev)
        self._valid = res.valid
        self.result = TrackFrame(
            s=wp.zeros(A, dtype=wp.float32, device=dev), lateral=wp.zeros(A, dtype=wp.float32, device=dev),
            vertical=wp.zeros(A, dtype=wp.float32, device=dev), heading=wp.zeros(A, dtype=wp.float32, device=dev),
            tangent=wp.zeros(A, dtype=wp.vec3f, device=dev), segment=wp.full(A, -1, dtype=wp.int32, device=dev),
            distance=wp.zeros(A, dtype=wp.float32, device=dev),
        )
        r = self.result
        rows = self._rows = FrameRows()
        rows.s, rows.lateral, rows.vertical, rows.heading = r.s, r.lateral, r.vertical, r.heading
        rows.tangent, rows.segment, rows.distance, rows.search = r.tangent, r.segment, r.distance, self.search

    def on_generate(self, ctx, mask) -> None:
        line, E, dev = self.line, ctx.num_envs, ctx.device
        if self._track is not None:
            t = self._track
            wp.launch(_copy_track, dim=E, inputs=[mask, t.xy, t.z, t.s, t.length, self._capacity],
                      outputs=[line.points, line.tangent, line.s, line.count, line.length, line.closed], device=dev)
        wp.launch(_bake, dim=E, inputs=[self._agents, mask, self._valid, line.points, line.s, line.count, line.length,
                                        line.closed, self._capacity, self._block],
                  outputs=[self._pts, self._spheres, self._num_seg, self.last_segment],
                  device=dev)

    def step(self, ctx) -> None:
        quat = (self._bound or {}).get("orientation")
        wp.launch(_locate, dim=ctx.num_agents,
                  inputs=[self.warm_window or 0, self._block, self._agents, self._pts, self._spheres, self._num_seg, self.line.closed,
                          self._bound["position"], *origin_args(self._bound, self._no_origin),
                          self._no_quat if quat is None else quat, int(quat is not None)],
                  outputs=[self.last_segment, self._rows],
                  device=ctx.device)

    def reset(self, ctx, mask) -> None:
        wp.launch(_invalidate, dim=ctx.num_agents, inputs=[self._agents, mask], outputs=[self.last_segment],
                  device=ctx.device)
