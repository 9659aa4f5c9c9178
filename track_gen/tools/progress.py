"""Progress: checkpoint passes, misses, wrong-way crossings, laps and distance along the course.

:class:`Progress` (built-in name ``"progress"``) reads the :class:`~track_gen.tools.types.CheckpointSet`
of the component named ``"checkpoints"`` and, each step, the bound ``position`` ([E] vec3f [m]).
Its result is a :class:`~track_gen.tools.types.ProgressEvents` (``StepResult.events``).

Agents: with K agents per env (``Course(..., agents=K)``) every rule below applies to each agent
alone (agent ``a = e*K + k`` against env ``e``'s checkpoints): ``position``, the state and the
result are [E*K]; a reset resets every agent of a masked env. With K = 1, read "env" for "agent".

Frames: the checkpoints live in each env's own frame. ``position`` is env-frame, or world-frame
when the optional input ``origin`` ([E] vec3f, each env's origin in the world, e.g. Isaac Lab's
``env.scene.env_origins``) is bound: then ``position[e] - origin[e]`` is used, in every rule below
(``course.bind(position=..., origin=...)`` routes the same origins to every component that
declares them). A non-finite origin counts as a non-finite position of its env.

Rules, per env and step, on the straight segment ``a -> b`` from the previous position ``a`` to the
current one ``b``; ``d(x) = dot(x - pos[k], normal[k])`` is the signed distance to checkpoint k's plane:

* **pass**: the segment crosses the plane of ``next`` forwards (``d(a) < 0 <= d(b)``) and the
  crossing point lies in the opening: ``|lateral| <= half_width`` and ``|vertical| <= half_height``,
  lateral axis ``normalize(cross(z, normal))``, vertical axis ``cross(normal, lateral)``. ``next``
  then advances and the *following* checkpoints are tested against the same segment (at most
  ``count`` per step), so a fast body passes each checkpoint exactly once at any speed.
* **missed** = 1: the chain stops at a forward crossing of ``next``'s plane outside its opening
  (anywhere on the infinite plane: flying past a gate at any distance is a miss). ``next`` stays.
* **wrong_way** = 1: the segment crosses the plane of the checkpoint behind (``next - 1`` as at the
  start of the step; ``count - 1`` for ``next == 0`` on a loop, none on a sprint at ``next == 0``)
  backwards (``d(a) >= 0 > d(b)``) within twice its opening (``|lateral| <= 2 half_width``,
  ``|vertical| <= 2 half_height``). State does not change: flying forwards through it again is
  no event, and ``next`` is still the checkpoint to pass.
* **lap**: on a loop, passing checkpoint ``count - 1`` wraps ``next`` to 0, ``laps += 1`` and ``lap = 1``
  (a flag, also when one step completes several laps). On a sprint it finishes the course:
  ``next = count``, ``laps = 1``, ``lap = 1`` once; a finished sprint gives no further events and
  its progress stays at the finish.
* **progress** [m] = ``laps * length`` (loops only) + ``local(b) - local(first position)``, where
  ``local`` interpolates between the checkpoint behind (p) and ``next`` (n) by the position
  between their planes: ``t = 1`` when ``d_n >= 0``, ``0`` when ``d_p <= 0``, else
  ``d_p / (d_p - d_n)``; ``local = s_p + t (s_n - s_p)`` (``s_p - length`` when n = 0 on a loop).
  ``t`` is 1 on ``next``'s plane and 0 on the same plane once it is passed, so progress is
  continuous across a pass and never jumps backwards there; it is clamped to the leg between
  the two planes. Before the first checkpoint of a sprint ``local = s_0 + min(d_0, 0)`` (the signed
  distance to plane 0); on a one-checkpoint loop ``local = s_0`` (progress counts whole laps).
  ``delta`` is the change since the previous step, computed from the lap and leg differences
  (no cancellation of large lap sums).
* **first step after a reset**: the position is stored as the previous position and the origin
  of ``progress``; no events, ``progress = delta = 0``. (The sim places the robot after the
  course reset, so the course start pose is not trusted as the previous position.)
* **invalid course** (generator ``valid == 0``) or ``count == 0``: no events, ``progress = delta = 0``.
* **non-finite position** (NaN/inf in any component): no events for that env, ``progress``,
  ``next``, ``laps``, ``total`` and the stored previous position unchanged, ``delta = 0``. Other
  envs are unaffected (one thread per env).

Reset: ``next = 0``, or 1 when the course start pose (``ctx.result.start_pos``) lies on or past
checkpoint 0's plane (``d >= -1 mm``, ``count >= 2``): a course whose checkpoint 0 is the start
line begins with it behind. Gate courses start before gate 0 (``next = 0``). Counters, progress
and the previous position are cleared.

``count`` is clamped to the CheckpointSet's capacity C; rows ``>= count`` are never read.

Cost per step: one thread per env. The common step (no crossing) is two plane tests (the
checkpoint behind, ``next``) whose distances also give the progress: four dot products, one
division, no sqrt or trig; each crossing adds an opening test (one division, two dots). Measured
at E = 4096 on one CPU core: ~50 ns per env-step replayed from a graph, ~70 ns eager (CPU time).
Vertical checkpoint normals (no lateral axis) are unsupported: their opening test degenerates to
"always inside".
"""

from __future__ import annotations

import warp as wp

from track_gen.math import lateral_axis
from track_gen.tools._common import ORIGIN_INPUT, env_position, no_origin, origin_args
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.types import CheckpointArrays, ProgressEvents, checkpoint_arrays
from track_gen.tools.component import check_name as _name

__all__ = ["Progress", "START_TOLERANCE"]




#: the course start counts as "on checkpoint 0's plane" within this signed distance [m]
START_TOLERANCE = 1.0e-3

# event logic has no gradient: skip the adjoint code (halves the compile time)
wp.set_module_options({"enable_backward": False})


@wp.func
def _in_opening(a: wp.vec3f, b: wp.vec3f, da: float, db: float, p: wp.vec3f, n: wp.vec3f, half_w: float,
                half_h: float) -> bool:
    """Whether the crossing of segment a->b (signed distances da != db) lies in the opening.

    Compares squares scaled by |cross(z, n)|^2, so no normalization (sqrt) is needed."""
    r = a + (b - a) * (da / (da - db)) - p
    lat_axis = lateral_axis(n)  # cross(z, n), length sqrt(q)
    q = n[0] * n[0] + n[1] * n[1]
    lat = wp.dot(r, lat_axis)
    vert = wp.dot(r, wp.cross(n, lat_axis))  # |cross(n, lat_axis)| = sqrt(q) for a unit n
    return lat * lat <= half_w * half_w * q and vert * vert <= half_h * half_h * q


@wp.struct
class ProgressState:
    """Per-env state, read and written each step: the previous position (and whether one is
    stored), the progress origin, the last within-lap progress, the next checkpoint, the laps
    and the checkpoints passed since reset (the last three are also the result's)."""

    prev_pos: wp.array(dtype=wp.vec3f)
    has_prev: wp.array(dtype=wp.int32)
    origin: wp.array(dtype=wp.float32)
    last_local: wp.array(dtype=wp.float32)
    next: wp.array(dtype=wp.int32)
    laps: wp.array(dtype=wp.int32)
    total: wp.array(dtype=wp.int32)


@wp.struct
class StepEvents:
    """This step's events and progress, per env (the result's other arrays)."""

    passed: wp.array(dtype=wp.int32)
    missed: wp.array(dtype=wp.int32)
    wrong_way: wp.array(dtype=wp.int32)
    lap: wp.array(dtype=wp.int32)
    progress: wp.array(dtype=wp.float32)
    delta: wp.array(dtype=wp.float32)


@wp.func
def _no_events(agent: int, events_out: StepEvents):
    """This step's events of an agent (row ``agent``): none, and no change of progress."""
    events_out.passed[agent] = 0
    events_out.missed[agent] = 0
    events_out.wrong_way[agent] = 0
    events_out.lap[agent] = 0
    events_out.delta[agent] = 0.0


@wp.func
def _fraction(dp: float, dn: float) -> float:
    """Position between the plane behind (signed distance dp) and the next (dn): 0 .. 1."""
    t = float(1.0)
    if dn < 0.0:
        t = 0.0
        if dp > 0.0:
            t = dp / (dp - dn)
    return t


@wp.func
def _local(x: wp.vec3f, e: int, nx: int, n: int, closed: int, cp_pos: wp.array2d(dtype=wp.vec3f),
           cp_normal: wp.array2d(dtype=wp.vec3f), cp_s: wp.array2d(dtype=wp.float32), length: float) -> float:
    """Within-lap progress [m] of position x with checkpoint nx next (see the module docstring)."""
    if nx >= n:  # a finished sprint
        return cp_s[e, n - 1]
    dn = wp.dot(x - cp_pos[e, nx], cp_normal[e, nx])
    sn = cp_s[e, nx]
    if nx == 0 and closed == 0:
        return sn + wp.min(dn, 0.0)
    if n == 1:  # a one-checkpoint loop: whole laps only
        return sn
    ip = nx - 1
    sp = float(0.0)
    if ip < 0:
        ip = n - 1
        sp = cp_s[e, ip] - length
    else:
        sp = cp_s[e, ip]
    dp = float(0.0)
    if dn < 0.0:
        dp = wp.dot(x - cp_pos[e, ip], cp_normal[e, ip])
    return sp + _fraction(dp, dn) * (sn - sp)


@wp.func
def _behind(e: int, nx: int, n: int, closed: int, length: float, cp_s: wp.array2d(dtype=wp.float32)):
    """The checkpoint behind next checkpoint ``nx`` (-1 before the first one of a sprint) and its
    arc length (on a loop, checkpoint n - 1 behind checkpoint 0 sits one lap back)."""
    ip = nx - 1
    sp = float(0.0)
    if ip < 0:
        if closed != 0:
            ip = n - 1
            sp = cp_s[e, ip] - length
    else:
        sp = cp_s[e, ip]
    return ip, sp


@wp.func
def _wrong_way(a: wp.vec3f, b: wp.vec3f, e: int, ip: int, cp_pos: wp.array2d(dtype=wp.vec3f),
               cp_normal: wp.array2d(dtype=wp.vec3f), cp_half_w: wp.array2d(dtype=wp.float32),
               cp_half_h: wp.array2d(dtype=wp.float32)):
    """Whether the step a -> b crossed checkpoint ``ip`` (the one behind) backwards, within twice
    its opening; and b's signed distance to that plane (0 when there is none)."""
    ww = int(0)
    dpb = float(0.0)
    if ip >= 0:
        p = cp_pos[e, ip]
        nrm = cp_normal[e, ip]
        dpa = wp.dot(a - p, nrm)
        dpb = wp.dot(b - p, nrm)
        if dpa >= 0.0 and dpb < 0.0:
            if _in_opening(a, b, dpa, dpb, p, nrm, 2.0 * cp_half_w[e, ip], 2.0 * cp_half_h[e, ip]):
                ww = 1
    return ww, dpb


@wp.func
def _pass_planes(a: wp.vec3f, b: wp.vec3f, e: int, n: int, nx: int, lp: int, closed: int,
                 cp_pos: wp.array2d(dtype=wp.vec3f), cp_normal: wp.array2d(dtype=wp.vec3f),
                 cp_half_w: wp.array2d(dtype=wp.float32), cp_half_h: wp.array2d(dtype=wp.float32)):
    """The checkpoints the step a -> b passes in order from ``nx``, each crossed forwards inside
    its opening (a crossing outside it is a miss and stops the walk). Returns ``(nx, laps,
    count, miss, lap_done, db)``; ``db`` is b's signed distance to the plane of the ``nx`` it
    started from (what the caller reuses when nothing was passed)."""
    count = int(0)
    miss = int(0)
    lap_done = int(0)
    p = cp_pos[e, nx]
    nrm = cp_normal[e, nx]
    da = wp.dot(a - p, nrm)
    db = wp.dot(b - p, nrm)
    db0 = db
    if da < 0.0 and db >= 0.0:
        for _i in range(n):
            if not _in_opening(a, b, da, db, p, nrm, cp_half_w[e, nx], cp_half_h[e, nx]):
                miss = 1
                break
            count += 1
            nx += 1
            if nx >= n:
                lp += 1
                lap_done = 1
                if closed == 0:
                    break
                nx = 0
            p = cp_pos[e, nx]
            nrm = cp_normal[e, nx]
            da = wp.dot(a - p, nrm)
            db = wp.dot(b - p, nrm)
            if da >= 0.0 or db < 0.0:
                break
    return nx, lp, count, miss, lap_done, db0


@wp.kernel
def _progress_step(
    agents: int,
    checkpoints: CheckpointArrays,
    valid: wp.array(dtype=wp.int32),
    position: wp.array(dtype=wp.vec3f),
    env_origin: wp.array(dtype=wp.vec3f),
    has_origin: int,
    state_out: ProgressState,  # read and written
    events_out: StepEvents,
):
    agent = wp.tid()  # agent e*K + k races env e = agent // K; its state and events are row `agent`
    e = agent // agents
    # the structs' arrays, passed on as arrays (a struct argument of a function is a copy)
    cp_pos = checkpoints.pos
    cp_normal = checkpoints.normal
    cp_half_w = checkpoints.half_width
    cp_half_h = checkpoints.half_height
    cp_s = checkpoints.s
    n = wp.min(checkpoints.count[e], cp_pos.shape[1])
    b = env_position(position, env_origin, has_origin, agent, e)
    if valid[e] == 0 or n <= 0 or not wp.isfinite(b):
        _no_events(agent, events_out)
        if valid[e] == 0 or n <= 0:
            events_out.progress[agent] = 0.0
        return
    closed = wp.where(checkpoints.closed[e] != 0, 1, 0)
    length = checkpoints.length[e]
    nx = state_out.next[agent]
    if nx < 0 or nx > n or (nx == n and closed != 0):
        nx = 0  # only after a checkpoint set changed without a reset
    if state_out.has_prev[agent] == 0:
        loc0 = _local(b, e, nx, n, closed, cp_pos, cp_normal, cp_s, length)
        state_out.origin[agent] = loc0
        state_out.last_local[agent] = loc0
        state_out.prev_pos[agent] = b
        state_out.has_prev[agent] = 1
        _no_events(agent, events_out)
        events_out.progress[agent] = 0.0
        return
    a = state_out.prev_pos[agent]
    lp0 = state_out.laps[agent]
    lp = lp0
    count = int(0)
    ww = int(0)
    miss = int(0)
    lap_done = int(0)
    loc = float(0.0)
    if nx < n:  # not a finished sprint
        ip, sp = _behind(e, nx, n, closed, length, cp_s)
        ww, dpb = _wrong_way(a, b, e, ip, cp_pos, cp_normal, cp_half_w, cp_half_h)
        nx, lp, count, miss, lap_done, db = _pass_planes(a, b, e, n, nx, lp, closed, cp_pos, cp_normal, cp_half_w,
                                                         cp_half_h)
        if count == 0:  # the common step: reuse the plane distances
            sn = cp_s[e, nx]
            if ip < 0:
                loc = sn + wp.min(db, 0.0)
            elif ip == nx:  # a one-checkpoint loop: whole laps only
                loc = sn
            else:
                loc = sp + _fraction(dpb, db) * (sn - sp)
        else:
            loc = _local(b, e, nx, n, closed, cp_pos, cp_normal, cp_s, length)
    else:
        loc = cp_s[e, n - 1]
    lap_len = length * float(closed)
    events_out.progress[agent] = float(lp) * lap_len + (loc - state_out.origin[agent])
    events_out.delta[agent] = float(lp - lp0) * lap_len + (loc - state_out.last_local[agent])
    state_out.last_local[agent] = loc
    state_out.prev_pos[agent] = b
    state_out.next[agent] = nx
    state_out.laps[agent] = lp
    events_out.passed[agent] = count
    events_out.missed[agent] = miss
    events_out.wrong_way[agent] = ww
    events_out.lap[agent] = lap_done
    if count != 0:
        state_out.total[agent] = state_out.total[agent] + count


@wp.kernel
def _progress_reset(
    tol: float,
    use_start: int,
    agents: int,
    mask: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
    start_pos: wp.array(dtype=wp.vec3f),
    checkpoints: CheckpointArrays,
    state_out: ProgressState,
    events_out: StepEvents,
):
    agent = wp.tid()
    e = agent // agents
    if mask[e] == 0:
        return
    nx = int(0)
    n = wp.min(checkpoints.count[e], checkpoints.pos.shape[1])
    if use_start != 0 and valid[e] != 0 and n >= 2:
        if wp.dot(start_pos[e] - checkpoints.pos[e, 0], checkpoints.normal[e, 0]) >= -tol:
            nx = 1
    state_out.next[agent] = nx
    state_out.has_prev[agent] = 0
    state_out.origin[agent] = 0.0
    state_out.last_local[agent] = 0.0
    _no_events(agent, events_out)
    state_out.laps[agent] = 0
    state_out.total[agent] = 0
    events_out.progress[agent] = 0.0


@wp.kernel
def _progress_start_at(
    cp_cap: int,
    agents: int,
    index_per_agent: int,
    mask: wp.array(dtype=wp.int32),
    index: wp.array(dtype=wp.int32),
    cp_count: wp.array(dtype=wp.int32),
    cp_closed: wp.array(dtype=wp.int32),
    next_cp_out: wp.array(dtype=wp.int32),
):
    """``index`` holds one row per agent (``index_per_agent``) or one per env."""
    agent = wp.tid()
    e = agent // agents
    if mask[e] == 0:
        return
    n = wp.min(cp_count[e], cp_cap)
    k = index[e]
    if index_per_agent != 0:
        k = index[agent]
    if k < 0 or k >= n:
        return
    k += 1
    if k == n and cp_closed[e] != 0:
        k = 0
    next_cp_out[agent] = k


_CP_FIELDS = ("pos", "normal", "half_width", "half_height", "s", "count", "length", "closed")


class Progress(Component):
    """Checkpoint events and distance along the course, per agent and step (see the module docstring).

    Reads the ``"checkpoints"`` component's CheckpointSet ([E, C] slots) and the bound
    ``position`` ([E*K] vec3f, K agents per env, K = 1 by default; world-frame when the optional
    ``origin`` ([E] vec3f, each env's origin) is bound: ``position - origin`` is used, else
    env-frame). ``result`` is a :class:`ProgressEvents` of [E*K] arrays; ``utility``
    (``course.progress``) is the component itself, with ``next_index``, ``progress``, ``laps``,
    ``total``, ``lap_position`` shortcuts and :meth:`start_at` for random-start resets. Each agent
    is tracked alone, exactly as in a one-agent course flown with its poses.

    State besides the result: the previous position, whether one is stored, the progress origin
    and the last within-lap progress ([E*K] each, 24 bytes per agent).

    Args:
        start_tolerance: signed distance [m] within which the course start counts as on
            checkpoint 0's plane (:data:`START_TOLERANCE`).
        name: the component's name (keyword only; default ``"progress"``, which backs
            ``course.progress``). It always reads the component named ``"checkpoints"``.
    """

    name = "progress"
    requires = ("checkpoints",)
    inputs = {"position": InputSpec(wp.vec3f), "origin": ORIGIN_INPUT}
    multi_agent = True

    def __init__(self, start_tolerance: float = START_TOLERANCE, *, name: str = "progress"):
        self.name = _name(name)
        self.start_tolerance = float(start_tolerance)
        self.utility = self

    # -- hooks ----------------------------------------------------------------------------------
    def attach(self, ctx) -> None:
        E, dev = ctx.num_envs, ctx.device
        cps = ctx.component("checkpoints").result
        missing = [f for f in _CP_FIELDS if not isinstance(getattr(cps, f, None), wp.array)]
        if missing:
            raise TypeError(f"progress: the 'checkpoints' result lacks CheckpointSet arrays {missing}")
        C = cps.pos.shape[1] if cps.pos.ndim == 2 else -1
        for f in ("pos", "normal", "half_width", "half_height", "s"):
            if tuple(getattr(cps, f).shape) != (E, C):
                raise ValueError(f"progress: checkpoints.{f} must have shape ({E}, C), got {getattr(cps, f).shape}")
        for f in ("count", "length", "closed"):
            if tuple(getattr(cps, f).shape) != (E,):
                raise ValueError(f"progress: checkpoints.{f} must have shape ({E},), got {getattr(cps, f).shape}")
        self._cps = cps
        self._valid = ctx.result.valid
        start = getattr(ctx.result, "start_pos", None)
        self._use_start = int(isinstance(start, wp.array) and tuple(start.shape) == (E,) and start.dtype == wp.vec3f)
        self._start = start if self._use_start else wp.zeros(E, dtype=wp.vec3f, device=dev)
        self._agents, A = ctx.agents, ctx.num_agents

        def i32():
            return wp.zeros(A, dtype=wp.int32, device=dev)

        def f32():
            return wp.zeros(A, dtype=wp.float32, device=dev)

        self.result = ProgressEvents(next=i32(), passed=i32(), missed=i32(), wrong_way=i32(), lap=i32(),
                                     laps=i32(), total=i32(), progress=f32(), delta=f32())
        self._prev_pos = wp.zeros(A, dtype=wp.vec3f, device=dev)
        self._has_prev = i32()
        self._origin = f32()
        self._last_local = f32()
        self._no_origin = no_origin(dev)
        self._structs()

    def _structs(self) -> None:
        """The kernels' struct arguments over the buffers above (built once: they never change)."""
        r = self.result
        self._checkpoints = checkpoint_arrays(self._cps)
        st = self._state = ProgressState()
        st.prev_pos, st.has_prev, st.origin, st.last_local = self._prev_pos, self._has_prev, self._origin, \
            self._last_local
        st.next, st.laps, st.total = r.next, r.laps, r.total
        ev = self._step_events = StepEvents()
        ev.passed, ev.missed, ev.wrong_way, ev.lap, ev.progress, ev.delta = r.passed, r.missed, r.wrong_way, r.lap, \
            r.progress, r.delta

    def step(self, ctx) -> None:
        wp.launch(
            _progress_step, dim=ctx.num_agents,
            inputs=[self._agents, self._checkpoints, self._valid, self._bound["position"],
                    *origin_args(self._bound, self._no_origin)],
            outputs=[self._state, self._step_events], device=ctx.device,
        )

    def reset(self, ctx, mask) -> None:
        wp.launch(
            _progress_reset, dim=ctx.num_agents,
            inputs=[self.start_tolerance, self._use_start, self._agents, mask, self._valid, self._start,
                    self._checkpoints],
            outputs=[self._state, self._step_events], device=ctx.device,
        )

    # -- utility --------------------------------------------------------------------------------
    def start_at(self, mask: wp.array, index: wp.array) -> None:
        """Count checkpoint ``index`` as behind for each agent of each masked env (a random-start reset).

        Call it after the course reset, when the robot is put on that checkpoint's plane (e.g. by
        ``CheckpointSampler.sample``, whose ``out_index`` it takes): ``next = index + 1`` (0 after
        the last of a loop, ``count`` on a sprint). Agents whose index is outside ``[0, count)``
        (-1: no checkpoint) keep the reset's ``next``. Laps still count at the wrap after the last
        checkpoint. One launch, recordable; ``mask`` is [E] int32, ``index`` [E*K] int32 (one per
        agent) or [E] int32 (every agent of env e on checkpoint ``index[e]``).
        """
        E = self._cps.count.shape[0]
        A = self.result.next.shape[0]
        if not isinstance(mask, wp.array) or tuple(mask.shape) != (E,) or mask.dtype != wp.int32:
            raise TypeError(f"start_at: mask must be a [{E}] int32 wp.array, got {mask!r}")
        rows = (A,) if A == E else (A, E)
        if not isinstance(index, wp.array) or index.ndim != 1 or index.shape[0] not in rows or index.dtype != wp.int32:
            want = f"[{E}]" if A == E else f"[{A}] (one per agent) or [{E}] (one per env)"
            raise TypeError(f"start_at: index must be a {want} int32 wp.array, got {index!r}")
        c = self._cps
        wp.launch(_progress_start_at, dim=A,
                  inputs=[c.pos.shape[1], self._agents, int(index.shape[0] == A), mask, index, c.count, c.closed],
                  outputs=[self.result.next], device=self.result.next.device)

    @property
    def next_index(self) -> wp.array:
        """[E*K] int32 index of the next checkpoint to pass (``count`` on a finished sprint)."""
        return self.result.next

    @property
    def progress(self) -> wp.array:
        """[E*K] float32 distance along the course since reset [m]."""
        return self.result.progress

    @property
    def laps(self) -> wp.array:
        """[E*K] int32 laps completed since reset."""
        return self.result.laps

    @property
    def total(self) -> wp.array:
        """[E*K] int32 checkpoints passed since reset."""
        return self.result.total

    @property
    def lap_position(self) -> wp.array:
        """[E*K] float32 arc length along the course line within the current lap at the last step
        [m]: ``local`` of the module docstring (slightly below 0 just after a lap's last
        checkpoint, ``s`` of the finish on a finished sprint); 0 after a reset until the first
        step. ``laps * length + lap_position`` is where the agent is along the whole race."""
        return self._last_local

    @property
    def checkpoint_set(self):
        """The :class:`~track_gen.tools.types.CheckpointSet` it reads ([E] lap lengths, [E, C] planes)."""
        return self._cps
