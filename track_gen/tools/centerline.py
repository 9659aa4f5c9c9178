"""Course lines: one polyline type (:class:`~track_gen.tools.types.CourseLine`) for every course.

Two built-ins share the name ``"centerline"`` (one per generator family), refreshed once per
generation, so a localizer or a progress tracker reads any course through the same arrays:

* :class:`CenterlineFromGates` (gate courses): a smooth curve through the gate centres that
  passes every gate along its normal.
* :class:`TrackLine` (band tracks): a copy of the band's own centerline.

Both are per-generation components (no ``step``): ``on_generate`` is one launch, one thread per
env, O(N) per env. The component is its own utility (``course.course_line``); ``.line`` is the
:class:`CourseLine`. Invalid courses (``valid[e] == 0``): ``count = 0``, rows zero, ``length = 0``.
"""

from __future__ import annotations

import numbers

import warp as wp

from track_gen.tools._common import gates_in_use
from track_gen.tools.component import Component
from track_gen.tools.types import CourseLine
from track_gen.tools.component import check_name as _name

__all__ = ["CenterlineFromGates", "TrackLine", "trace_gate_line"]


def _alloc_line(E: int, N: int, device) -> CourseLine:
    return CourseLine(
        points=wp.zeros((E, N), dtype=wp.vec3f, device=device),
        tangent=wp.zeros((E, N), dtype=wp.vec3f, device=device),
        s=wp.zeros((E, N), dtype=wp.float32, device=device),
        count=wp.zeros(E, dtype=wp.int32, device=device),
        length=wp.zeros(E, dtype=wp.float32, device=device),
        closed=wp.zeros(E, dtype=wp.int32, device=device),
    )


# -- kernels --------------------------------------------------------------------------------------
@wp.func
def _leg_start(e: int, j: int, closed: int, gpos: wp.array2d(dtype=wp.vec3f), gnormal: wp.array2d(dtype=wp.vec3f),
               start_pos: wp.array(dtype=wp.vec3f), start_yaw: wp.array(dtype=wp.float32)):
    """Start point and unit direction of leg ``j`` (a sprint's leg 0 leaves the start pose)."""
    if closed != 0:
        return gpos[e, j], gnormal[e, j]
    if j == 0:
        return start_pos[e], wp.vec3f(wp.cos(start_yaw[e]), wp.sin(start_yaw[e]), 0.0)
    return gpos[e, j - 1], gnormal[e, j - 1]


@wp.func
def line_gates(valid: int, gcount: int, closed: int, max_gates: int) -> int:
    """Gates the line of an env runs through: 0 on an invalid course and on a loop of < 2 gates."""
    n = gates_in_use(valid, gcount, max_gates)
    if closed != 0 and n < 2:
        n = 0
    return n


@wp.func
def _gate_line_point(e: int, i: int, n: int, closed: int, S: int, gpos: wp.array2d(dtype=wp.vec3f),
                     gnormal: wp.array2d(dtype=wp.vec3f), start_pos: wp.array(dtype=wp.vec3f),
                     start_yaw: wp.array(dtype=wp.float32)) -> wp.vec3f:
    """Point ``i`` (0 <= i <= n * S) of the gate line of ``n >= 1`` gates: leg ``i // S`` at
    ``u = (i % S) / S`` (a cubic Hermite, end tangents = unit direction * chord length);
    ``i = n * S`` is the line's end (gate 0 again on a loop, the last gate on a sprint)."""
    j = i // S
    q = i - j * S
    if j >= n:
        if closed != 0:
            return gpos[e, 0]
        return gpos[e, n - 1]
    a, da = _leg_start(e, j, closed, gpos, gnormal, start_pos, start_yaw)
    if q == 0:
        return a
    jb = j
    if closed != 0:
        jb = (j + 1) % n
    b = gpos[e, jb]
    db = gnormal[e, jb]
    L = wp.length(b - a)
    u = float(q) / float(S)
    u2 = u * u
    u3 = u2 * u
    h00 = 2.0 * u3 - 3.0 * u2 + 1.0
    h10 = u3 - 2.0 * u2 + u
    h01 = -2.0 * u3 + 3.0 * u2
    h11 = u3 - u2
    return a * h00 + da * (h10 * L) + b * h01 + db * (h11 * L)


@wp.func
def trace_gate_line(e: int, n: int, closed: int, S: int, gpos: wp.array2d(dtype=wp.vec3f),
                    gnormal: wp.array2d(dtype=wp.vec3f), start_pos: wp.array(dtype=wp.vec3f),
                    start_yaw: wp.array(dtype=wp.float32), write: int, points_out: wp.array2d(dtype=wp.vec3f),
                    tangent_out: wp.array2d(dtype=wp.vec3f), s_out: wp.array2d(dtype=wp.float32),
                    gate_s_out: wp.array2d(dtype=wp.float32)) -> float:
    """Walk env ``e``'s gate line (``n`` gates, ``S`` samples per leg) point by point and return
    its length [m]: the float32 sum of the chord lengths, in point order.

    Writes ``gate_s_out[e, g]`` (the arc length at gate ``g``'s centre) for ``g < n``, and, when
    ``write != 0``, ``points_out`` / ``tangent_out`` / ``s_out`` of its ``n * S`` (+1 on a sprint) points
    (the arrays are not touched otherwise: pass placeholders). ``n == 0``: nothing, returns 0.

    The one definition of the line's arc length: :class:`CenterlineFromGates` and
    :class:`~track_gen.tools.checkpoints.GateCheckpoints` both call it, so their ``gate_s`` /
    ``s`` and lengths agree bit for bit. O(n * S).
    """
    if n <= 0:
        return 0.0
    npts = n * S
    off = int(0)  # point index of gate 0 (a sprint's first leg is the run-up from the start pose)
    if closed == 0:
        npts = n * S + 1
        off = S
    acc = float(0.0)
    p = _gate_line_point(e, 0, n, closed, S, gpos, gnormal, start_pos, start_yaw)
    for i in range(npts):
        q = p
        if i + 1 < npts or closed != 0:
            q = _gate_line_point(e, i + 1, n, closed, S, gpos, gnormal, start_pos, start_yaw)
        d = q - p
        seg = wp.length(d)
        if i >= off and (i - off) % S == 0:
            gate_s_out[e, (i - off) // S] = acc
        if write != 0:
            # tangent of the segment leaving the point; a zero segment falls back to the leg's
            # start direction, the open end to the last gate's normal
            a0, fallback = _leg_start(e, wp.min(i // S, n - 1), closed, gpos, gnormal, start_pos, start_yaw)
            if i + 1 >= npts and closed == 0:
                fallback = gnormal[e, n - 1]
            points_out[e, i] = p
            s_out[e, i] = acc
            if seg > 0.0:
                tangent_out[e, i] = d / seg
            else:
                tangent_out[e, i] = fallback
        acc += seg
        p = q
    return acc


@wp.kernel
def _gate_line(
    mask: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    gpos: wp.array2d(dtype=wp.vec3f),
    gnormal: wp.array2d(dtype=wp.vec3f),
    gcount: wp.array(dtype=wp.int32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    closed: int,
    samples: int,
    max_gates: int,
    cap: int,
    # outputs
    points_out: wp.array2d(dtype=wp.vec3f),
    tangent_out: wp.array2d(dtype=wp.vec3f),
    s_out: wp.array2d(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
    length_out: wp.array(dtype=wp.float32),
    closed_out: wp.array(dtype=wp.int32),
    gate_s_out: wp.array2d(dtype=wp.float32),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = line_gates(valid[e], gcount[e], closed, max_gates)
    npts = n * samples
    if closed == 0 and n > 0:
        npts = n * samples + 1
    acc = trace_gate_line(e, n, closed, samples, gpos, gnormal, start_pos, start_yaw, 1, points_out, tangent_out,
                          s_out, gate_s_out)
    for i in range(npts, cap):
        points_out[e, i] = wp.vec3f(0.0, 0.0, 0.0)
        tangent_out[e, i] = wp.vec3f(0.0, 0.0, 0.0)
        s_out[e, i] = 0.0
    for g in range(n, max_gates):
        gate_s_out[e, g] = 0.0
    count_out[e] = npts
    length_out[e] = acc
    closed_out[e] = closed


@wp.kernel
def _track_line(
    mask: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    xy: wp.array2d(dtype=wp.vec2f),
    z: wp.array2d(dtype=wp.float32),
    tan2: wp.array2d(dtype=wp.vec2f),
    s: wp.array2d(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    N: int,
    # outputs
    points_out: wp.array2d(dtype=wp.vec3f),
    tangent_out: wp.array2d(dtype=wp.vec3f),
    s_out: wp.array2d(dtype=wp.float32),
    count_out: wp.array(dtype=wp.int32),
    length_out: wp.array(dtype=wp.float32),
    closed_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    total = length[e]
    ok = valid[e] != 0 and wp.isfinite(total) and total > 0.0
    for i in range(N):
        if ok:
            p = xy[e, i]
            ip = (i + 1) % N
            q = xy[e, ip]
            a = wp.vec3f(p[0], p[1], z[e, i])
            d = wp.vec3f(q[0], q[1], z[e, ip]) - a
            seg = wp.length(d)
            t = tan2[e, i]
            tv = wp.vec3f(t[0], t[1], 0.0)
            if seg > 0.0:
                tv = d / seg
            points_out[e, i] = a
            tangent_out[e, i] = tv
            s_out[e, i] = s[e, i]
        else:
            points_out[e, i] = wp.vec3f(0.0, 0.0, 0.0)
            tangent_out[e, i] = wp.vec3f(0.0, 0.0, 0.0)
            s_out[e, i] = 0.0
    if ok:
        count_out[e] = N
        length_out[e] = total
    else:
        count_out[e] = 0
        length_out[e] = 0.0
    closed_out[e] = 1


# -- components -----------------------------------------------------------------------------------
class _LineComponent(Component):
    name = "centerline"

    @property
    def line(self) -> CourseLine:
        """The :class:`CourseLine` (the same stable arrays every generation)."""
        return self.result


class CenterlineFromGates(_LineComponent):
    """A smooth course line through the gate centres, in gate order.

    Each leg between consecutive gates is a cubic Hermite curve that leaves its first gate along
    that gate's normal and enters the next along its normal (end tangents = unit normal times the
    leg's chord length), so the line passes every gate centre exactly, crosses every gate
    perpendicular to its plane, and is C1 in direction. A loop has ``count`` legs (the last back
    to gate 0) and starts at gate 0 (``s = 0`` there). A sprint starts at the generator's start
    pose (``start_pos``, heading ``start_yaw``: the run-up to gate 0 is its first leg) and ends at
    the last gate. Each leg is sampled at ``samples_per_gate`` points (its start included), then
    ``tangent`` (of the segment leaving each point; the open end: the last gate's normal), the
    3D polyline arc length ``s`` and ``length`` are derived.

    Capacity N = ``samples_per_gate * layout.gates`` (+1 on sprints, for the end point); ``count``
    = ``samples_per_gate * gates`` (+1). Besides ``result`` it publishes ``gate_s``: [E, G]
    float32, the arc length of each gate centre on the line (rows >= gate count zero).
    :class:`~track_gen.tools.checkpoints.GateCheckpoints` gets the same values bit for bit, in
    either order, by summing with the same :func:`trace_gate_line` from this component's
    configuration (it never reads these buffers).

    Args:
        samples_per_gate: points per leg, an int >= 2 (the line is a chord polyline: the more,
            the closer ``length`` to the smooth curve's).
        name: the component's name (keyword only; default ``"centerline"``, the name
            GateCheckpoints and ``Course.gates``' localizer look for).

    ``on_generate``: one launch, O(N) per env. Invalid course: count 0, rows zero, length 0.
    """

    topology = ("gates",)

    def __init__(self, samples_per_gate: int = 8, *, name: str = "centerline"):
        self.name = _name(name)
        if isinstance(samples_per_gate, bool) or not isinstance(samples_per_gate, numbers.Integral):
            raise TypeError(f"samples_per_gate: expected an int >= 2, got {type(samples_per_gate).__name__}")
        if int(samples_per_gate) < 2:
            raise ValueError(f"samples_per_gate: must be >= 2, got {int(samples_per_gate)}")
        self.samples_per_gate = int(samples_per_gate)
        self.utility = self

    @property
    def gate_s(self) -> wp.array:
        """[E, G] float32 arc length of each gate centre along the line [m]; rows >= gate count zero."""
        return self._gate_s

    def attach(self, ctx) -> None:
        E, d = ctx.num_envs, ctx.device
        self.max_gates = int(ctx.layout.gates)
        self.closed = bool(ctx.result.closed)
        self.capacity = self.samples_per_gate * self.max_gates + (0 if self.closed else 1)
        self.result = _alloc_line(E, self.capacity, d)
        self._gate_s = wp.zeros((E, self.max_gates), dtype=wp.float32, device=d)

    def on_generate(self, ctx, mask) -> None:
        g, r = ctx.result, self.result
        wp.launch(
            _gate_line, dim=ctx.num_envs,
            inputs=[mask, g.valid, g.pos, g.normal, g.count, g.start_pos, g.start_yaw, int(self.closed),
                    self.samples_per_gate, self.max_gates, self.capacity],
            outputs=[r.points, r.tangent, r.s, r.count, r.length, r.closed, self._gate_s],
            device=ctx.device,
        )


class TrackLine(_LineComponent):
    """A band track's own centerline as a :class:`CourseLine` (its copy, refreshed per generation).

    ``points`` = (xy, z) of the N centerline points, ``tangent`` = the unit 3D direction of the
    segment leaving each point (to point 0 after the last), ``s`` / ``length`` = the band's own
    arc length and loop length (horizontal on elevated tracks, so they agree with the
    :class:`~track_gen.tools.checkpoints.Checkpoints`' ``s``; a 3D segment is longer than its ``s``
    step by at most ``sqrt(1 + grade^2) - 1``), ``count`` = N, ``closed`` = 1.

    Args:
        name: the component's name (keyword only; default ``"centerline"``).

    ``on_generate``: one launch, O(N) per env. Invalid course: count 0, rows zero, length 0.
    """

    topology = ("track",)

    def __init__(self, *, name: str = "centerline"):
        self.name = _name(name)
        self.utility = self

    def attach(self, ctx) -> None:
        E, d = ctx.num_envs, ctx.device
        self.capacity = int(ctx.result.xy.shape[1])
        self.result = _alloc_line(E, self.capacity, d)

    def on_generate(self, ctx, mask) -> None:
        g, r = ctx.result, self.result
        wp.launch(
            _track_line, dim=ctx.num_envs,
            inputs=[mask, g.valid, g.xy, g.z, g.tangent, g.s, g.length, self.capacity],
            outputs=[r.points, r.tangent, r.s, r.count, r.length, r.closed],
            device=ctx.device,
        )
