"""Checkpoints: the planes a course is passed through, refreshed once per generation.

Two built-ins share the name ``"checkpoints"`` (one per generator family) and the result type
:class:`~track_gen.tools.types.CheckpointSet` (E envs, C checkpoint slots):

* :class:`Checkpoints` (band tracks): checkpoints evenly spaced by arc length along the
  centerline, from the start line.
* :class:`GateCheckpoints` (gate courses): one checkpoint per gate opening.

Both are per-generation components: ``on_generate`` is one launch of one thread per env
(O(N + C) for tracks; for gates O(G), O(G * S) when it follows a CenterlineFromGates of S
samples per gate, O(G * N) when it projects gates onto another course line); they have no
``step``. Each takes a keyword-only ``name=`` (default ``"checkpoints"``). Their utility
(``course.checkpoint_sampler``) is a :class:`CheckpointSampler`, which puts a pose at a random
checkpoint (random-start resets).

Invalid courses (``valid[e] == 0``): ``count = 0``, every row zero, ``length = 0``.
"""

from __future__ import annotations

import math

import warp as wp

from track_gen.exec import check_mask, mask_to_active
from track_gen.math import BIG, jitter_position, unit_lateral, wrap_angle  # jitter_position: also imported from here
from track_gen.rng import name_key, stream_state
from track_gen.tools._common import arc_locate, capacity_arg, gates_in_use, positive, spaced_capacity, spaced_count
from track_gen.tools.centerline import CenterlineFromGates, line_gates, trace_gate_line
from track_gen.tools.component import Component
from track_gen.tools.types import CheckpointArrays, CheckpointSet, CourseLine, checkpoint_arrays
from track_gen.tools.component import check_name as _name

__all__ = ["DEFAULT_HALF_HEIGHT", "LINE_CHORDS", "LINE_PROJECT", "LINE_TRACE", "CheckpointSampler", "Checkpoints",
           "GateCheckpoints"]

#: half height [m] of a band-track checkpoint when none is given: the opening is unbounded vertically
DEFAULT_HALF_HEIGHT = 1.0e6

#: GateCheckpoints line rules (``_line_mode``; see :class:`GateCheckpoints`): 0 chords through the
#: gate centres, 1 trace the CenterlineFromGates line, 2 project the gates on another course line
LINE_CHORDS = 0
LINE_TRACE = 1
LINE_PROJECT = 2
_LINE_TRACE = wp.constant(LINE_TRACE)
_LINE_PROJECT = wp.constant(LINE_PROJECT)


# -- argument checks ------------------------------------------------------------------------------


def _names(arg: str, value) -> tuple[str, ...]:
    items = (value,) if isinstance(value, str) else value
    try:
        items = tuple(items)
    except TypeError:
        raise TypeError(f"{arg}: expected a component name or a sequence of them, got {value!r}") from None
    for v in items:
        if not isinstance(v, str) or not v:
            raise TypeError(f"{arg}: component names must be non-empty str, got {v!r}")
    return items


# -- kernels --------------------------------------------------------------------------------------
@wp.struct
class _LineArrays:
    """The arrays of a :class:`~track_gen.tools.types.CourseLine` that rule 2 projects the gates on."""

    points: wp.array2d(dtype=wp.vec3f)
    s: wp.array2d(dtype=wp.float32)
    count: wp.array(dtype=wp.int32)
    length: wp.array(dtype=wp.float32)
    closed: wp.array(dtype=wp.int32)


@wp.func
def _zero_rows(e: int, n: int, cap: int, checkpoints_out: CheckpointArrays):
    """Rows ``n .. cap - 1`` of env e: zero (a row depends on its course only)."""
    for k in range(n, cap):
        checkpoints_out.pos[e, k] = wp.vec3f(0.0, 0.0, 0.0)
        checkpoints_out.normal[e, k] = wp.vec3f(0.0, 0.0, 0.0)
        checkpoints_out.half_width[e, k] = 0.0
        checkpoints_out.half_height[e, k] = 0.0
        checkpoints_out.s[e, k] = 0.0


@wp.func
def _project(p: wp.vec3f, line: _LineArrays, e: int, m: int, sg: float) -> float:
    """The arc length of the nearest point to ``p`` on env e's course line of ``m`` points
    (``sg`` when no distance compares below BIG)."""
    segs = m - 1
    if line.closed[e] != 0:
        segs = m
    best = float(BIG)
    for i in range(segs):
        i1 = (i + 1) % m
        a = line.points[e, i]
        d = line.points[e, i1] - a
        sa = line.s[e, i]
        sb = line.length[e]
        if i + 1 < m:
            sb = line.s[e, i + 1]
        dd = wp.dot(d, d)
        f = float(0.0)
        if dd > 0.0:
            f = wp.clamp(wp.dot(p - a, d) / dd, 0.0, 1.0)
        dist = wp.length(p - (a + d * f))
        if dist < best:
            best = dist
            sg = sa + (sb - sa) * f
    return sg


@wp.kernel
def _track_checkpoints(
    num_points: int,
    spacing: float,
    cap: int,
    half_height: float,
    mask: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    xy: wp.array2d(dtype=wp.vec2f),
    z: wp.array2d(dtype=wp.float32),
    half_width: wp.array2d(dtype=wp.float32),
    tangent: wp.array2d(dtype=wp.vec2f),
    s: wp.array2d(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    checkpoints_out: CheckpointArrays,
):
    e = wp.tid()
    if mask[e] == 0:
        return
    total = length[e]
    n = spaced_count(valid[e], total, spacing, cap, 3)
    N = num_points
    i = int(0)
    for k in range(n):
        sk = float(k + 1) * total / float(n)
        i, j, f, ds = arc_locate(s, e, N, total, sk, i)
        slope = float(0.0)
        if ds > 0.0:
            slope = (z[e, j] - z[e, i]) / ds
        p = xy[e, i] + (xy[e, j] - xy[e, i]) * f
        t = tangent[e, i] * (1.0 - f) + tangent[e, j] * f
        if wp.length(t) < 1.0e-6:
            t = xy[e, j] - xy[e, i]
        t = wp.normalize(t)
        out = checkpoints_out
        out.pos[e, k] = wp.vec3f(p[0], p[1], z[e, i] + (z[e, j] - z[e, i]) * f)
        out.normal[e, k] = wp.normalize(wp.vec3f(t[0], t[1], slope))
        out.half_width[e, k] = half_width[e, i] + (half_width[e, j] - half_width[e, i]) * f
        out.half_height[e, k] = half_height
        out.s[e, k] = sk
    _zero_rows(e, n, cap, checkpoints_out)
    checkpoints_out.count[e] = n
    if n > 0:
        checkpoints_out.length[e] = total
    else:
        checkpoints_out.length[e] = 0.0
    checkpoints_out.closed[e] = 1


@wp.kernel
def _gate_checkpoints(
    is_closed: int,
    cap: int,
    line_mode: int,  # LINE_CHORDS / LINE_TRACE / LINE_PROJECT
    samples: int,  # LINE_TRACE: the CenterlineFromGates' samples_per_gate
    mask: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    gpos: wp.array2d(dtype=wp.vec3f),
    gnormal: wp.array2d(dtype=wp.vec3f),
    gcount: wp.array(dtype=wp.int32),
    width: wp.array(dtype=wp.float32),
    height: wp.array(dtype=wp.float32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    line: _LineArrays,  # LINE_PROJECT: the course line
    scratch_points_out: wp.array2d(dtype=wp.vec3f),  # placeholders trace_gate_line does not write
    scratch_s_out: wp.array2d(dtype=wp.float32),
    checkpoints_out: CheckpointArrays,
):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = gates_in_use(valid[e], gcount[e], cap)
    traced = int(0)
    line_total = float(0.0)
    if line_mode == _LINE_TRACE:
        # the line CenterlineFromGates builds (none on a loop of < 2 gates: chords then), its
        # gate arc lengths written straight into s_out by the very function that line sums with
        if line_gates(valid[e], gcount[e], is_closed, cap) > 0:
            line_total = trace_gate_line(e, n, is_closed, samples, gpos, gnormal, start_pos, start_yaw, 0,
                                         scratch_points_out, scratch_points_out, scratch_s_out, checkpoints_out.s)
            traced = 1
    m = int(0)  # points of a projected course line (0: use the gate polyline)
    if line_mode == _LINE_PROJECT and n > 0:
        m = line.count[e]
        if m < 2:
            m = 0
    acc = float(0.0)
    for g in range(n):
        p = gpos[e, g]
        if g > 0:
            acc += wp.length(p - gpos[e, g - 1])
        sg = acc
        if m > 0:
            sg = _project(p, line, e, m, acc)
        checkpoints_out.pos[e, g] = p
        checkpoints_out.normal[e, g] = gnormal[e, g]
        checkpoints_out.half_width[e, g] = 0.5 * width[e]
        checkpoints_out.half_height[e, g] = 0.5 * height[e]
        if traced == 0:
            checkpoints_out.s[e, g] = sg
    _zero_rows(e, n, cap, checkpoints_out)
    total = acc
    if is_closed != 0 and n > 1:
        total += wp.length(gpos[e, 0] - gpos[e, n - 1])
    if m > 0:
        total = line.length[e]
    if traced != 0:
        total = line_total
    if n == 0:
        total = 0.0
    checkpoints_out.count[e] = n
    checkpoints_out.length[e] = total
    checkpoints_out.closed[e] = is_closed


@wp.func
def checkpoint_pose(
    e: int,
    k: int,
    r1: float,
    r2: float,
    r3: float,
    jitter_lateral: float,
    jitter_vertical: float,
    jitter_yaw: float,
    cp_pos: wp.array2d(dtype=wp.vec3f),
    cp_normal: wp.array2d(dtype=wp.vec3f),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    index_out: wp.array(dtype=wp.int32),
    pos_out: wp.array(dtype=wp.vec3f),
    yaw_out: wp.array(dtype=wp.float32),
):
    """Env ``e`` on its checkpoint ``k``: index, centre plus jitter (lateral along the checkpoint's
    horizontal left axis, vertical along z; uniform draws ``r1``, ``r2``) and the yaw of its normal plus
    yaw jitter (``r3``); ``k < 0`` (no checkpoint): index -1 and the start pose."""
    if k < 0:
        index_out[e] = -1
        pos_out[e] = start_pos[e]
        yaw_out[e] = start_yaw[e]
        return
    nn = cp_normal[e, k]
    index_out[e] = k
    pos_out[e] = jitter_position(cp_pos[e, k], unit_lateral(nn), r1, r2, jitter_lateral, jitter_vertical)
    yaw_out[e] = wrap_angle(wp.atan2(nn[1], nn[0]) + jitter_yaw * (2.0 * r3 - 1.0))


@wp.kernel
def _sample(
    key: int,
    jitter_lateral: float,
    jitter_vertical: float,
    jitter_yaw: float,
    mask: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    cp_pos: wp.array2d(dtype=wp.vec3f),
    cp_normal: wp.array2d(dtype=wp.vec3f),
    cp_count: wp.array(dtype=wp.int32),
    cp_closed: wp.array(dtype=wp.int32),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    counter_out: wp.array(dtype=wp.int32),  # read and written: the draws so far
    index_out: wp.array(dtype=wp.int32),
    pos_out: wp.array(dtype=wp.vec3f),
    yaw_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    if mask[e] == 0:
        return
    c = counter_out[e] + 1
    counter_out[e] = c
    st = stream_state(seeds[e], c, key, 0)
    r0 = wp.randf(st)
    r1 = wp.randf(st)
    r2 = wp.randf(st)
    r3 = wp.randf(st)
    n = cp_count[e]
    k = int(-1)
    if n > 0:
        if cp_closed[e] == 0 and n > 1:
            n = n - 1  # a sprint's last checkpoint is its finish line: a start there would fly nothing
        k = wp.min(int(r0 * float(n)), n - 1)
    checkpoint_pose(e, k, r1, r2, r3, jitter_lateral, jitter_vertical, jitter_yaw, cp_pos, cp_normal, start_pos,
                    start_yaw, index_out, pos_out, yaw_out)


@wp.kernel
def _index_seeds(seeds_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    seeds_out[e] = e


# -- the sampler ----------------------------------------------------------------------------------
class CheckpointSampler:
    """Puts a pose at a random checkpoint of each masked env (for random-start resets).

    ``sample`` draws, per masked env, a checkpoint index uniformly in ``[0, count)`` (``[0, count - 1)``
    on a sprint of two or more: its last checkpoint is the finish, nothing is left to fly) and writes
    its centre and heading (the yaw of its normal) into your arrays. Draws are counter based:
    env ``e``'s n-th draw is ``stream_state(seed[e], n, key, 0)`` with the generator's per-env
    seed and a counter per env that this sampler owns and advances on every call for masked envs
    only, so an env's draws do not depend on the other envs, the mask, or ``num_envs``.

    Recordable (one launch, two with a non-int32 mask; no allocation or sync), so it can sit in
    the same graph as ``course.regenerate(mask=...)`` (call it after: it reads the refreshed
    checkpoints). Cost: O(1) per masked env.

    Attributes:
        checkpoints: the :class:`CheckpointSet` it samples from.
        counter: [E] int32 draws made per env (yours to zero for a replayable sequence).
    """

    def __init__(self, checkpoints: CheckpointSet, start_pos: wp.array, start_yaw: wp.array,
                 seeds: wp.array | None, device, key: int | None = None):
        self.checkpoints = checkpoints
        self.device = wp.get_device(device)
        self.num_envs = int(checkpoints.count.shape[0])
        E = self.num_envs
        self._start_pos, self._start_yaw = start_pos, start_yaw
        if seeds is None:
            seeds = wp.zeros(E, dtype=wp.int32, device=self.device)
            wp.launch(_index_seeds, dim=E, outputs=[seeds], device=self.device)
        self.seeds = seeds
        self.key = name_key("checkpoints.sampler") if key is None else int(key)
        self.counter = wp.zeros(E, dtype=wp.int32, device=self.device)
        self._active = wp.zeros(E, dtype=wp.int32, device=self.device)
        self._index = wp.zeros(E, dtype=wp.int32, device=self.device)

    def _check_out(self, name, arr, dtype):
        if not isinstance(arr, wp.array):
            raise TypeError(f"sample: {name} must be a wp.array, got {type(arr).__name__}")
        if tuple(arr.shape) != (self.num_envs,) or arr.dtype != dtype:
            raise ValueError(
                f"sample: {name} must be a [{self.num_envs}] {dtype.__name__} array, got shape {tuple(arr.shape)} "
                f"dtype {getattr(arr.dtype, '__name__', arr.dtype)}"
            )
        if wp.get_device(arr.device) != self.device:
            raise ValueError(f"sample: {name} is on {arr.device}, the course on {self.device}")

    def sample(self, mask: wp.array, out_index: wp.array | None, out_pos: wp.array, out_yaw: wp.array, *,
               jitter=(0.0, 0.0, 0.0)) -> None:
        """Write a random checkpoint pose for every env of ``mask``; other envs' entries are untouched.

        Args:
            mask: [E] int32 (or bool / uint8) array, nonzero = sample this env.
            out_index: [E] int32, the checkpoint drawn (-1 when the env has none), or None.
            out_pos: [E] vec3f, the checkpoint centre plus jitter [m].
            out_yaw: [E] float32, the yaw of the checkpoint normal plus jitter, in [-pi, pi) [rad].
            jitter: (lateral [m], vertical [m], yaw [rad]) half ranges of uniform offsets: lateral
                along the checkpoint's horizontal left axis, vertical along z (not clamped to the
                opening: keep them inside it yourself).

        An env with no checkpoint (an invalid course) gets index -1 and the generator's start pose.
        """
        check_mask(mask, self.num_envs, self.device)
        if out_index is None:
            out_index = self._index
        self._check_out("out_index", out_index, wp.int32)
        self._check_out("out_pos", out_pos, wp.vec3f)
        self._check_out("out_yaw", out_yaw, wp.float32)
        try:
            jl, jv, jy = (float(j) for j in jitter)
        except (TypeError, ValueError):
            raise TypeError(f"sample: jitter must be three numbers (lateral, vertical, yaw), got {jitter!r}") from None
        if not all(math.isfinite(j) and j >= 0.0 for j in (jl, jv, jy)):
            raise ValueError(f"sample: jitter entries must be finite and >= 0, got {jitter!r}")
        active = mask
        if mask.dtype != wp.int32:
            mask_to_active(mask, self._active)
            active = self._active
        cp = self.checkpoints
        wp.launch(
            _sample, dim=self.num_envs,
            inputs=[self.key, jl, jv, jy, active, self.seeds, cp.pos, cp.normal, cp.count, cp.closed, self._start_pos,
                    self._start_yaw],
            outputs=[self.counter, out_index, out_pos, out_yaw], device=self.device,
        )

    def __repr__(self) -> str:
        return f"CheckpointSampler(num_envs={self.num_envs}, capacity={self.checkpoints.pos.shape[1]})"


# -- components -----------------------------------------------------------------------------------
def _alloc_set(E: int, C: int, device) -> CheckpointSet:
    def z2(dt):
        return wp.zeros((E, C), dtype=dt, device=device)

    return CheckpointSet(
        pos=z2(wp.vec3f), normal=z2(wp.vec3f), half_width=z2(wp.float32), half_height=z2(wp.float32),
        s=z2(wp.float32), count=wp.zeros(E, dtype=wp.int32, device=device),
        length=wp.zeros(E, dtype=wp.float32, device=device), closed=wp.zeros(E, dtype=wp.int32, device=device),
    )


class _CheckpointComponent(Component):
    name = "checkpoints"

    def _finish_attach(self, ctx, C: int) -> None:
        self.capacity = int(C)
        self.result = _alloc_set(ctx.num_envs, C, ctx.device)
        self._checkpoints_out = checkpoint_arrays(self.result)
        seeds = getattr(getattr(ctx.generator, "seeds", None), "seeds", None)
        if not isinstance(seeds, wp.array):
            seeds = None
        self.utility = CheckpointSampler(self.result, ctx.result.start_pos, ctx.result.start_yaw, seeds, ctx.device)

    @property
    def sampler(self) -> CheckpointSampler:
        """The :class:`CheckpointSampler` over this component's checkpoints (``course.checkpoint_sampler``)."""
        return self.utility


class Checkpoints(_CheckpointComponent):
    """Band-track checkpoints evenly spaced by arc length along the centerline.

    Per env, ``count = clamp(ceil(length / spacing), 3, C)`` and checkpoint ``k`` sits at arc length
    ``s_k = (k + 1) * length / count`` from the start line: the last checkpoint lies on the start
    line, so passing it completes a lap, and a robot starting on the start line heads for
    checkpoint 0 (the loop is closed: checkpoint ``count - 1`` is followed by 0). Arc length and ``length`` are the band's
    own (``result.s``, ``result.length``: horizontal on elevated tracks). At ``s_k``, linearly
    interpolated between the two centerline points around it: ``pos`` (xy and z), ``half_width``
    (the band's), ``normal`` = the unit 3D direction of travel (the interpolated band tangent with
    the segment's z slope). ``half_height`` is the given value, else :data:`DEFAULT_HALF_HEIGHT`.

    Args:
        spacing: target distance between checkpoints [m], > 0.
        max_checkpoints: capacity C. An int (>= 3): yours; a longer course gets C checkpoints
            (its spacing widens), silently. ``"auto"`` / None: ``max(3, ceil(max_loop_length /
            spacing))`` when the layout declares ``max_loop_length``; otherwise (elevated tracks
            declare none) the longest valid course of the construction batch decides, read back
            once in ``attach``: later, longer courses are clipped silently (pass an int to size it).
            When the capacity chosen here clips a valid course of the construction batch, one
            :class:`~track_gen.errors.CapacityWarning` says so.
        half_height: vertical half extent of the openings [m], > 0 (None: unbounded in practice).
        name: the component's name (keyword only; default ``"checkpoints"``, the name Progress reads).

    Raises TypeError / ValueError naming the argument. ``on_generate``: one launch, O(N + C) per
    env. Invalid course: count 0, rows zero, length 0.
    """

    topology = ("track",)

    def __init__(self, spacing, max_checkpoints="auto", half_height=None, *, name: str = "checkpoints"):
        self.name = _name(name)
        self.spacing = positive("spacing", spacing)
        self.max_checkpoints = capacity_arg("max_checkpoints", max_checkpoints, 3)
        self.half_height = DEFAULT_HALF_HEIGHT if half_height is None else positive("half_height", half_height)

    def attach(self, ctx) -> None:
        C = self.max_checkpoints
        if C is None:
            C = self._auto_capacity(ctx)
        self._finish_attach(ctx, C)

    def _auto_capacity(self, ctx) -> int:
        C, self.capacity_source = spaced_capacity(ctx, self.spacing, 3, owner="Checkpoints", noun="checkpoints",
                                                  per="", spacing_arg="spacing", capacity_arg="max_checkpoints",
                                                  stacklevel=5)
        return C

    def on_generate(self, ctx, mask) -> None:
        g = ctx.result
        wp.launch(
            _track_checkpoints, dim=ctx.num_envs,
            inputs=[int(g.xy.shape[1]), self.spacing, self.capacity, self.half_height, mask, g.valid, g.xy, g.z,
                    g.half_width, g.tangent, g.s, g.length],
            outputs=[self._checkpoints_out],
            device=ctx.device,
        )


class GateCheckpoints(_CheckpointComponent):
    """One checkpoint per gate opening of a gate course.

    Checkpoint ``g`` = gate ``g``: ``pos`` its centre, ``normal`` its normal, ``half_width`` /
    ``half_height`` half the opening's width / height; ``count`` the gate count, capacity C =
    ``layout.gates``; ``closed`` the course's (1 loop, 0 sprint).

    ``s`` (arc length of each gate [m]) and ``length`` [m] depend on the course's component
    named ``"centerline"``, by one of three rules chosen at attach (recorded as ``_line_mode``):

    * rule 1: a :class:`~track_gen.tools.centerline.CenterlineFromGates` (that exact class), in any
      order: its line's arc length at each gate and its ``length``, bit for bit equal to its
      ``gate_s`` / ``line.length``. Only its configuration (``samples_per_gate``) is read, at
      attach; ``on_generate`` walks the same line with the same
      :func:`~track_gen.tools.centerline.trace_gate_line`, so the two need no ordering.
      A loop of < 2 gates has no line: rule 0 applies to it.
    * rule 2: any other component with a :class:`~track_gen.tools.types.CourseLine` result (a subclass
      of CenterlineFromGates included: it may build another line): each gate centre is
      projected on the line (nearest point, O(G * N)); ``length`` is the line's. This reads
      the line's buffers, so that component must run first: list it before this one or pass
      ``after=("centerline",)``. If it comes later, ``attach`` raises ValueError saying so
      (rather than silently falling back to chord distances that would disagree with the line).
    * rule 0: no ``"centerline"``: the cumulative 3D distance through the gate centres from gate 0
      (``s = 0``) and that polyline's length, the closing leg included on a loop.

    Args:
        name: the component's name (keyword only; default ``"checkpoints"``, the name Progress reads).
        after: names of components to run before this one (keyword only), e.g. ``("centerline",)``
            for rule 2 with a line listed later.

    Raises TypeError (``name`` / ``after`` not names; a "centerline" whose result is no
    CourseLine) and ValueError (a rule-2 line ordered after this component) at attach.
    ``on_generate``: one launch, O(G) per env (rule 1: O(G * samples_per_gate); rule 2: O(G * N)).
    Invalid course: count 0, rows zero, length 0.
    """

    topology = ("gates",)
    optional = ("centerline",)
    #: the course line this component follows
    line_name = "centerline"

    def __init__(self, *, name: str = "checkpoints", after=()):
        self.name = _name(name)
        self.after = _names("after", after)

    def attach(self, ctx) -> None:
        E, d = ctx.num_envs, ctx.device
        self._finish_attach(ctx, int(ctx.layout.gates))
        peer = ctx.peer(self.line_name)
        if peer is self:
            peer = None
        self._samples = 1
        ph2 = (wp.zeros((E, 1), dtype=wp.vec3f, device=d), wp.zeros((E, 1), dtype=wp.float32, device=d))
        self._scratch = ph2  # trace_gate_line never writes them here (write = 0)
        placeholders = (*ph2, wp.zeros(E, dtype=wp.int32, device=d), wp.zeros(E, dtype=wp.float32, device=d),
                        wp.zeros(E, dtype=wp.int32, device=d))
        if peer is None:
            self._line_mode = LINE_CHORDS
            self._line_arrays = placeholders  # never read (rule 0)
        elif type(peer) is CenterlineFromGates:
            self._line_mode = LINE_TRACE
            self._samples = int(peer.samples_per_gate)  # configuration only: it may not be attached yet
            self._line_arrays = placeholders  # never read (rule 1)
        else:
            if not ctx.has(self.line_name):
                raise ValueError(
                    f"{self.name!r} projects the gates on the {self.line_name!r} component's course line "
                    f"({type(peer).__name__}), so that component must run first, but the course orders it later; "
                    f"list it before {self.name!r} or pass GateCheckpoints(after=({self.line_name!r},))"
                )
            res = ctx.component(self.line_name).result
            if not isinstance(res, CourseLine):
                raise TypeError(
                    f"GateCheckpoints reads the {self.line_name!r} component's CourseLine, got {type(res).__name__}"
                )
            self._line_mode = LINE_PROJECT
            self._line_arrays = (res.points, res.s, res.count, res.length, res.closed)
        line = self._line = _LineArrays()
        line.points, line.s, line.count, line.length, line.closed = self._line_arrays

    def on_generate(self, ctx, mask) -> None:
        g = ctx.result
        wp.launch(
            _gate_checkpoints, dim=ctx.num_envs,
            inputs=[int(bool(g.closed)), self.capacity, self._line_mode, self._samples, mask, g.valid, g.pos,
                    g.normal, g.count, g.width, g.height, g.start_pos, g.start_yaw, self._line],
            outputs=[*self._scratch, self._checkpoints_out],
            device=ctx.device,
        )
