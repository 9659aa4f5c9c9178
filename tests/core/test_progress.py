"""Progress: checkpoint events and distance along the course, against a float64 numpy reference.

The reference (:class:`RefEnv`) replays a trajectory step by step from the written rules of
``track_gen.tools.progress`` (it imports nothing from that module). It also flags steps whose
outcome float32 rounding could flip (a position within ~0.1 mm of a plane or of an opening's
edge); an env is compared only up to its first such step.

The checkpoint components here (named "checkpoints", as the course requires) are test doubles:
``GateCps`` fills a CheckpointSet from a GateGenerator's result, ``TrackCps`` from evenly spaced
centerline points of a band track, ``FixedCps`` from numpy (synthetic courses, with ``FixedGen``,
a duck-typed generator whose ``valid`` and ``start_pos`` the test writes).
"""

from __future__ import annotations

import dataclasses
import time
from types import SimpleNamespace

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen.capture import check_component, strict
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.pipeline.program import Capacities
from track_gen.tools import Component
from track_gen.tools.progress import Progress
from track_gen.tools.types import CheckpointSet, ProgressEvents

E = 16
HYP = settings(max_examples=6, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.too_slow])
EVENT_INTS = ("next", "passed", "missed", "wrong_way", "lap", "laps", "total")


# ==================================================================================================
# test checkpoint components
# ==================================================================================================
def alloc_set(E_, C, device="cpu") -> CheckpointSet:
    z2 = lambda dt: wp.zeros((E_, C), dtype=dt, device=device)  # noqa: E731
    z1 = lambda dt: wp.zeros(E_, dtype=dt, device=device)  # noqa: E731
    return CheckpointSet(pos=z2(wp.vec3f), normal=z2(wp.vec3f), half_width=z2(wp.float32),
                         half_height=z2(wp.float32), s=z2(wp.float32), count=z1(wp.int32), length=z1(wp.float32),
                         closed=z1(wp.int32))


@wp.kernel
def _gate_cps(active: wp.array(dtype=wp.int32), g_pos: wp.array2d(dtype=wp.vec3f),
              g_normal: wp.array2d(dtype=wp.vec3f), g_count: wp.array(dtype=wp.int32),
              g_width: wp.array(dtype=wp.float32), g_height: wp.array(dtype=wp.float32), closed: int,
              pos: wp.array2d(dtype=wp.vec3f), normal: wp.array2d(dtype=wp.vec3f),
              hw: wp.array2d(dtype=wp.float32), hh: wp.array2d(dtype=wp.float32), s: wp.array2d(dtype=wp.float32),
              count: wp.array(dtype=wp.int32), length: wp.array(dtype=wp.float32),
              closed_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if active[e] == 0:
        return
    C = g_pos.shape[1]
    n = wp.min(g_count[e], C)
    acc = float(0.0)
    for k in range(C):
        if k < n:
            if k > 0:
                acc += wp.length(g_pos[e, k] - g_pos[e, k - 1])
            pos[e, k] = g_pos[e, k]
            normal[e, k] = g_normal[e, k]
            hw[e, k] = 0.5 * g_width[e]
            hh[e, k] = 0.5 * g_height[e]
            s[e, k] = acc
        else:
            pos[e, k] = wp.vec3f(0.0, 0.0, 0.0)
            normal[e, k] = wp.vec3f(0.0, 0.0, 0.0)
            hw[e, k] = 0.0
            hh[e, k] = 0.0
            s[e, k] = 0.0
    if closed != 0 and n > 0:
        acc += wp.length(g_pos[e, 0] - g_pos[e, n - 1])
    count[e] = n
    length[e] = acc
    closed_out[e] = closed


@wp.kernel
def _track_cps(active: wp.array(dtype=wp.int32), xy: wp.array2d(dtype=wp.vec2f), z: wp.array2d(dtype=wp.float32),
               half_width: wp.array2d(dtype=wp.float32), tangent: wp.array2d(dtype=wp.vec2f),
               s_in: wp.array2d(dtype=wp.float32), length_in: wp.array(dtype=wp.float32), num: int,
               pos: wp.array2d(dtype=wp.vec3f), normal: wp.array2d(dtype=wp.vec3f),
               hw: wp.array2d(dtype=wp.float32), hh: wp.array2d(dtype=wp.float32), s: wp.array2d(dtype=wp.float32),
               count: wp.array(dtype=wp.int32), length: wp.array(dtype=wp.float32),
               closed_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if active[e] == 0:
        return
    N = xy.shape[1]
    for i in range(num):
        k = i * N // num
        p = xy[e, k]
        t = tangent[e, k]
        pos[e, i] = wp.vec3f(p[0], p[1], z[e, k])
        normal[e, i] = wp.normalize(wp.vec3f(t[0], t[1], 0.0))
        hw[e, i] = half_width[e, k]
        hh[e, i] = 1.0e6
        s[e, i] = s_in[e, k]
    count[e] = num
    length[e] = length_in[e]
    closed_out[e] = 1


class GateCps(Component):
    """'checkpoints' from a gate course: one per gate, s = cumulative gate-to-gate distance."""

    name = "checkpoints"

    def attach(self, ctx):
        self.result = alloc_set(ctx.num_envs, ctx.layout.gates, ctx.device)
        self._all = wp.ones(ctx.num_envs, dtype=wp.int32, device=ctx.device)

    def on_generate(self, ctx, mask):
        r, c = ctx.result, self.result
        wp.launch(_gate_cps, dim=ctx.num_envs,
                  inputs=[self._all if mask is None else mask, r.pos, r.normal, r.count, r.width, r.height,
                          int(r.closed)],
                  outputs=[c.pos, c.normal, c.half_width, c.half_height, c.s, c.count, c.length, c.closed],
                  device=ctx.device)


class TrackCps(Component):
    """'checkpoints' from a band track: ``num`` evenly spaced centerline points, checkpoint 0 at the start."""

    name = "checkpoints"

    def __init__(self, num=16):
        self.num = num

    def attach(self, ctx):
        self.result = alloc_set(ctx.num_envs, self.num, ctx.device)
        self._all = wp.ones(ctx.num_envs, dtype=wp.int32, device=ctx.device)

    def on_generate(self, ctx, mask):
        r, c = ctx.result, self.result
        wp.launch(_track_cps, dim=ctx.num_envs,
                  inputs=[self._all if mask is None else mask, r.xy, r.z, r.half_width, r.tangent, r.s, r.length,
                          self.num],
                  outputs=[c.pos, c.normal, c.half_width, c.half_height, c.s, c.count, c.length, c.closed],
                  device=ctx.device)


class FixedGen:
    """A duck-typed generator: ``valid`` and ``start_pos`` written by the test, no regeneration work."""

    family = "custom"

    def __init__(self, num_envs, capacity):
        self.device = "cpu"
        self.layout = Capacities(num_envs=num_envs, capacities={"checkpoints": capacity})
        self.result = SimpleNamespace(valid=wp.ones(num_envs, dtype=wp.int32),
                                      start_pos=wp.zeros(num_envs, dtype=wp.vec3f))

    def enqueue(self, ctx=None, *, advance=False, mask=None):
        pass


class FixedCps(Component):
    """'checkpoints' written from numpy by :meth:`set` (outside any capture)."""

    name = "checkpoints"

    def attach(self, ctx):
        self.result = alloc_set(ctx.num_envs, ctx.layout.checkpoints, ctx.device)

    def set(self, **arrays):
        for k, v in arrays.items():
            getattr(self.result, k).assign(np.asarray(v, dtype=np.float32 if k not in ("count", "closed")
                                                      else np.int32))


# ==================================================================================================
# float64 reference
# ==================================================================================================
EPS = 1e-4  # positions this close to a plane or an edge may round either way in float32
START_TOL = 1e-3


def cp_numpy(cps: CheckpointSet) -> dict:
    return {f.name: getattr(cps, f.name).numpy().astype(np.float64) for f in dataclasses.fields(cps)}


class RefEnv:
    """One env's progress state machine, float64."""

    def __init__(self, cp: dict, e: int, valid: bool, start):
        C = cp["pos"].shape[1]
        self.n = n = int(min(cp["count"][e], C))
        self.P = cp["pos"][e, :max(n, 1)]
        self.N = cp["normal"][e, :max(n, 1)]
        self.hw = cp["half_width"][e, :max(n, 1)]
        self.hh = cp["half_height"][e, :max(n, 1)]
        self.s = cp["s"][e, :max(n, 1)]
        self.L = float(cp["length"][e])
        self.closed = bool(cp["closed"][e])
        self.valid = bool(valid) and n > 0
        self.start = None if start is None else np.asarray(start, np.float64)
        self.ambiguous = False
        self.lat, self.up = [], []
        for k in range(self.n):
            lat = np.cross([0.0, 0.0, 1.0], self.N[k])
            lat = lat / np.linalg.norm(lat)
            self.lat.append(lat)
            self.up.append(np.cross(self.N[k], lat))
        self.reset()

    def reset(self):
        self.next = 0
        if self.valid and self.n >= 2 and self.start is not None:
            d0 = self.d(0, self.start)
            if abs(d0 + START_TOL) < EPS:
                self.ambiguous = True
            if d0 >= -START_TOL:
                self.next = 1
        self.laps = self.total = 0
        self.prev = None
        self.progress = 0.0
        self.origin = self.last = 0.0
        self.origin_tol = self.last_tol = 0.0

    def d(self, k, x):
        return float(np.dot(x - self.P[k], self.N[k]))

    def crossing(self, k, a, b, forward, scale):
        """None when the segment does not cross plane k in that direction, else whether the
        crossing lies within ``scale`` times the opening."""
        da, db = self.d(k, a), self.d(k, b)
        if abs(da) < EPS or abs(db) < EPS:
            self.ambiguous = True
        crossed = (da < 0.0 <= db) if forward else (db < 0.0 <= da)
        if not crossed:
            return None
        c = a + (b - a) * (da / (da - db))
        r = c - self.P[k]
        lat, vert = abs(np.dot(r, self.lat[k])), abs(np.dot(r, self.up[k]))
        w, h = scale * self.hw[k], scale * self.hh[k]
        slack = EPS * (1.0 + np.linalg.norm(b - a) / abs(da - db))
        if abs(lat - w) < slack or abs(vert - h) < slack:
            self.ambiguous = True
        return lat <= w and vert <= h

    def local(self, x):
        """(within-lap progress, its float32 rounding tolerance)."""
        n, nx = self.n, self.next
        if not self.closed and nx >= n:
            return self.s[n - 1], 0.0
        dn = self.d(nx, x)
        if not self.closed and nx == 0:
            return self.s[0] + min(dn, 0.0), 0.0
        if n == 1:  # one-checkpoint loop
            return self.s[0], 0.0
        p = nx - 1 if nx > 0 else n - 1
        sp = self.s[p] - (self.L if nx == 0 else 0.0)
        leg = self.s[nx] - sp
        if dn >= 0.0:
            return self.s[nx], 0.0
        dp = self.d(p, x)
        if dp <= 0.0:
            # on the far side of both planes (crossing planes): t jumps between 0 and 1 at dn = 0
            return sp, (np.inf if abs(dn) < EPS else 0.0)
        return sp + leg * dp / (dp - dn), abs(leg) * 1e-5 / (dp - dn)

    def step(self, x) -> dict:
        ev = dict(passed=0, missed=0, wrong_way=0, lap=0, delta=0.0, tol_p=0.0, tol_d=0.0)
        if not self.valid:
            self.progress = 0.0
        elif not np.all(np.isfinite(x)):
            pass
        elif self.prev is None:
            self.prev = x
            self.origin, self.origin_tol = self.local(x)
            self.last, self.last_tol = self.origin, self.origin_tol
            self.progress = 0.0
        else:
            self._move(self.prev, x, ev)
            self.prev = x
        ev.update(next=self.next, laps=self.laps, total=self.total, progress=self.progress)
        return ev

    def _move(self, a, b, ev):
        n = self.n
        laps0 = self.laps
        if self.closed or self.next < n:
            back = self.next - 1 if self.next > 0 else (n - 1 if self.closed else -1)
            if back >= 0 and self.crossing(back, a, b, forward=False, scale=2.0):
                ev["wrong_way"] = 1
            tested = 0
            while tested < n:
                tested += 1
                inside = self.crossing(self.next, a, b, forward=True, scale=1.0)
                if inside is None:
                    break
                if not inside:
                    ev["missed"] = 1
                    break
                ev["passed"] += 1
                self.total += 1
                self.next += 1
                if self.next == n:
                    self.laps += 1
                    ev["lap"] = 1
                    if not self.closed:
                        break
                    self.next = 0
        loc, tol = self.local(b)
        lap_len = self.L if self.closed else 0.0
        self.progress = self.laps * lap_len + loc - self.origin
        ev["delta"] = (self.laps - laps0) * lap_len + loc - self.last
        ev["tol_p"] = tol + self.origin_tol
        ev["tol_d"] = tol + self.last_tol
        self.last, self.last_tol = loc, tol


def run_reference(cp, valid, start, traj, resets=None):
    """Events [T, E] per field, plus the first ambiguous step of each env (T when none)."""
    T, E_ = traj.shape[:2]
    envs = [RefEnv(cp, e, valid[e], None if start is None else start[e]) for e in range(E_)]
    keys = EVENT_INTS + ("progress", "delta", "tol_p", "tol_d")
    out = {k: np.zeros((T, E_)) for k in keys}
    first_amb = np.full(E_, T)
    for t in range(T):
        for e, env in enumerate(envs):
            if resets is not None and t in resets and resets[t][e]:
                env.reset()
            ev = env.step(traj[t, e].astype(np.float64))
            for k in keys:
                out[k][t, e] = ev[k]
            if env.ambiguous and first_amb[e] == T:
                first_amb[e] = t
    return out, first_amb


# ==================================================================================================
# trajectories and the kernel run
# ==================================================================================================
def _frame(n):
    lat = np.cross([0.0, 0.0, 1.0], n)
    lat /= np.linalg.norm(lat)
    return lat, np.cross(n, lat)


def route(cp, e, start, kind, rng):
    """A polyline for one env: through the openings ("through"), partly outside ("miss"), the
    course in reverse ("backward"), or a random walk ("wander")."""
    n = int(cp["count"][e])
    # off the start pose a little: a track starts exactly on checkpoint 0's plane (a tie in float32)
    start = np.asarray(start, np.float64) + rng.normal(0.0, 0.05, 3) * np.array([1.0, 1.0, 0.2])
    if n == 0 or kind == "wander":
        steps = rng.normal(size=(40, 3)) * np.array([2.0, 2.0, 0.3])
        return np.concatenate([start[None], start + np.cumsum(steps, axis=0)])
    P, N = cp["pos"][e, :n], cp["normal"][e, :n]
    hw, hh = cp["half_width"][e, :n], np.minimum(cp["half_height"][e, :n], 1.0)
    legs = np.linalg.norm(np.diff(P, axis=0), axis=1) if n > 1 else np.ones(1)
    delta = 0.25 * min(float(legs.min()), 1.2)
    order = list(range(n)) * (3 if cp["closed"][e] else 1)
    sign = 1.0
    if kind == "backward":
        order, sign = order[::-1], -1.0
    pts = [start]
    for k in order:
        lat, up = _frame(N[k])
        u = rng.uniform(-0.7, 0.7)
        if kind == "miss" and rng.random() < 0.5:
            u = rng.choice([-1.0, 1.0]) * rng.uniform(1.2, 2.5)
        off = u * hw[k] * lat + rng.uniform(-0.7, 0.7) * hh[k] * up
        pts += [P[k] - sign * delta * N[k] + off, P[k] + sign * delta * N[k] + off]
    pts.append(pts[-1] + sign * 2.0 * N[order[-1]])
    return np.array(pts)


def sample(poly, steps):
    """Points along polyline ``poly`` at cumulative arc lengths ``cumsum(steps)`` (clamped to its end)."""
    seg = np.linalg.norm(np.diff(poly, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    d = np.minimum(np.concatenate([[0.0], np.cumsum(steps)]), cum[-1])
    return np.stack([np.interp(d, cum, poly[:, i]) for i in range(3)], axis=1)


def trajectories(cp, start, kinds, T, rng, max_speed=2.0):
    """[T, E, 3] float32: per env a route sampled at random speeds up to ``max_speed`` spacings per step."""
    E_ = len(kinds)
    out = np.zeros((T, E_, 3))
    for e, kind in enumerate(kinds):
        poly = route(cp, e, start[e], kind, rng)
        n = int(cp["count"][e])
        spacing = np.median(np.linalg.norm(np.diff(cp["pos"][e, :n], axis=0), axis=1)) if n > 1 else 1.0
        steps = rng.uniform(0.02, max_speed, size=T - 1) * spacing
        out[:, e] = sample(poly, steps)
    return out.astype(np.float32)


def state_of(course) -> dict:
    p = course.components["progress"]
    arrays = {f.name: getattr(p.result, f.name) for f in dataclasses.fields(p.result)}
    arrays.update(prev=p._prev_pos, has_prev=p._has_prev, origin=p._origin, last=p._last_local)
    return {k: v.numpy().copy() for k, v in arrays.items()}


def run_kernel(course, pos, traj, resets=None):
    T = traj.shape[0]
    rows = []
    for t in range(T):
        if resets is not None and t in resets:
            course.reset(mask=wp.array(resets[t].astype(np.int32), dtype=wp.int32))
        pos.assign(traj[t])
        course.step()
        rows.append(state_of(course))
    return {k: np.stack([r[k] for r in rows]) for k in rows[0]}


def compare(kern, ref, first_amb, min_compared=0.6):
    T, E_ = ref["next"].shape
    live = np.arange(T)[:, None] < first_amb[None, :]
    assert live.mean() >= min_compared, f"too many ambiguous steps: {live.mean():.2f} compared"
    for k in EVENT_INTS:
        bad = live & (kern[k] != ref[k])
        if bad.any():
            t, e = np.argwhere(bad)[0]
            raise AssertionError(f"{k} differs first at step {t}, env {e}: kernel {kern[k][t, e]}, reference "
                                 f"{ref[k][t, e]}\nkernel next {kern['next'][:t + 1, e]}\n"
                                 f"reference next {ref['next'][:t + 1, e]}")
    for k, tk in (("progress", "tol_p"), ("delta", "tol_d")):
        tol = 2e-3 + 2e-6 * np.abs(ref["progress"]) + ref[tk]
        bad = live & ~(np.abs(kern[k] - ref[k]) <= tol)
        if bad.any():
            t, e = np.argwhere(bad)[0]
            raise AssertionError(f"{k} differs at step {t}, env {e}: kernel {kern[k][t, e]}, reference {ref[k][t, e]}")
    return live


def pos_array(E_, value=(0.0, 0.0, 0.0)):
    return wp.full(E_, wp.vec3f(*value), dtype=wp.vec3f, device="cpu")


# ==================================================================================================
# module fixtures: one course per family, regenerated per example
# ==================================================================================================
@pytest.fixture(scope="module")
def gate_courses():
    out = {}
    for closed in (True, False):
        g = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, closed=closed), seeds=3)
        course = Course(g, [GateCps(), Progress()])
        pos = pos_array(E)
        course.bind(position=pos)
        out[closed] = (course, pos)
    return out


@pytest.fixture(scope="module")
def track_course():
    g = tg.TrackGenerator(presets.track(E, "cpu"), seeds=3)
    course = Course(g, [TrackCps(16), Progress()])
    pos = pos_array(E)
    course.bind(position=pos)
    return course, pos


KINDS = ("through", "through", "through", "miss", "miss", "backward", "wander", "through")


def _check_against_reference(course, pos, seed, max_speed, nan_frac, T=70):
    rng = np.random.default_rng(seed)
    course.generate(seeds=np.arange(E) + 1000 * seed)
    cp = cp_numpy(course.checkpoints)
    start = course.result.start_pos.numpy().astype(np.float64)
    valid = course.result.valid.numpy()
    kinds = [KINDS[i % len(KINDS)] for i in rng.permutation(E)]
    traj = trajectories(cp, start, kinds, T, rng, max_speed=max_speed)
    nan = rng.random((T, E)) < nan_frac
    traj[nan, rng.integers(0, 3)] = rng.choice([np.nan, np.inf, -np.inf])
    resets = {T // 2: rng.random(E) < 0.3}
    kern = run_kernel(course, pos, traj, resets)
    ref, first_amb = run_reference(cp, valid, start, traj, resets)
    live = compare(kern, ref, first_amb)
    return ref, live, kinds


@HYP
@given(seed=st.integers(0, 2**16), closed=st.booleans(), max_speed=st.sampled_from([0.5, 1.0, 2.0]),
       nan_frac=st.sampled_from([0.0, 0.05]))
def test_gate_courses_match_reference(gate_courses, seed, closed, max_speed, nan_frac):
    course, pos = gate_courses[closed]
    ref, live, kinds = _check_against_reference(course, pos, seed, max_speed, nan_frac)
    # the trajectories exercise every event
    assert (ref["passed"] * live).sum() > 0
    assert (ref["missed"] * live).sum() > 0
    if closed:
        assert (ref["wrong_way"] * live).sum() > 0


@HYP
@given(seed=st.integers(0, 2**16), max_speed=st.sampled_from([0.5, 2.0]), nan_frac=st.sampled_from([0.0, 0.05]))
def test_track_courses_match_reference(track_course, seed, max_speed, nan_frac):
    course, pos = track_course
    ref, live, _ = _check_against_reference(course, pos, seed, max_speed, nan_frac, T=90)
    assert (ref["passed"] * live).sum() > 0
    assert (ref["wrong_way"] * live).sum() > 0


def test_reference_events_happen_on_gate_loops(gate_courses):
    """A fixed example: laps complete on loops and missed / wrong-way both occur."""
    course, pos = gate_courses[True]
    ref, live, kinds = _check_against_reference(course, pos, seed=11, max_speed=0.5, nan_frac=0.0, T=120)
    assert (ref["lap"] * live).sum() > 0
    assert (ref["missed"] * live).sum() > 0 and (ref["wrong_way"] * live).sum() > 0


# ==================================================================================================
# synthetic courses: exact expectations
# ==================================================================================================
def fixed_course(E_, C, **cps):
    gen = FixedGen(E_, C)
    comp = FixedCps()
    course = Course(gen, [comp, Progress()])
    comp.set(**cps)
    pos = pos_array(E_)
    course.bind(position=pos)
    return course, gen, comp, pos


def circle_set(E_, C, R=10.0, hw=1.0):
    th = 2 * np.pi * np.arange(C) / C
    P = np.stack([R * np.cos(th), R * np.sin(th), np.zeros(C)], 1)
    N = np.stack([-np.sin(th), np.cos(th), np.zeros(C)], 1)
    rep = lambda a: np.repeat(a[None], E_, 0)  # noqa: E731
    return dict(pos=rep(P), normal=rep(N), half_width=np.full((E_, C), hw), half_height=np.full((E_, C), 1.0),
                s=rep(R * th), count=np.full(E_, C), length=np.full(E_, 2 * np.pi * R), closed=np.ones(E_))


def on_circle(phi, R=10.0):
    return np.stack([R * np.cos(phi), R * np.sin(phi), np.zeros_like(phi)], -1).astype(np.float32)


def test_exactly_once_at_any_speed_and_laps_on_a_loop():
    E_, C, R, T = 12, 32, 10.0, 80
    course, gen, comp, pos = fixed_course(E_, C, **circle_set(E_, C, R))
    sp = 2 * np.pi / C
    phi0 = -0.5 * sp
    gen.result.start_pos.assign(on_circle(np.full(E_, phi0)))
    course.reset()
    rng = np.random.default_rng(0)
    # env speeds from a crawl to 3 spacings per step; 2.3 laps at most
    speed = np.linspace(0.05, 3.0, E_) * sp
    steps = rng.uniform(0.2, 1.0, size=(T - 1, E_)) * speed
    phi = phi0 + np.concatenate([np.zeros((1, E_)), np.cumsum(steps, 0)])
    phi = np.minimum(phi, phi0 + 2.3 * 2 * np.pi)
    kern = run_kernel(course, pos, on_circle(phi))
    crossed = np.floor((phi - phi0) / sp + 0.5).astype(int)  # checkpoint angles k*sp in (phi0, phi]
    np.testing.assert_array_equal(kern["total"], crossed)
    np.testing.assert_array_equal(kern["passed"][1:], np.diff(crossed, axis=0))
    np.testing.assert_array_equal(kern["laps"], crossed // C)
    np.testing.assert_array_equal(kern["lap"][1:], (np.diff(crossed // C, axis=0) > 0).astype(int))
    np.testing.assert_array_equal(kern["next"], crossed % C)
    assert kern["laps"][-1].max() == 2 and (kern["laps"][-1] >= 1).sum() >= E_ // 2
    assert (kern["missed"] == 0).all() and (kern["wrong_way"] == 0).all()
    # progress follows the arc (chords between samples: within ~1 mm), delta sums to it, never negative
    np.testing.assert_allclose(kern["progress"], R * (phi - phi0), atol=5e-3)
    np.testing.assert_allclose(np.cumsum(kern["delta"], 0), kern["progress"], atol=2e-3)
    assert (kern["delta"] >= -1e-4).all()


def line_set(E_, C, n, spacing=2.0, half=0.5):
    P = np.zeros((C, 3))
    P[:n, 0] = spacing * np.arange(n)
    P[:n, 2] = 1.0
    N = np.zeros((C, 3))
    N[:n, 0] = 1.0
    rep = lambda a: np.repeat(a[None], E_, 0)  # noqa: E731
    s = np.zeros(C)
    s[:n] = P[:n, 0]
    hw = np.zeros(C)
    hw[:n] = half
    return dict(pos=rep(P), normal=rep(N), half_width=rep(hw), half_height=rep(hw), s=rep(s),
                count=np.full(E_, n), length=np.full(E_, spacing * (n - 1)), closed=np.zeros(E_))


def test_sprint_finishes_once_then_stays():
    E_, C, n, T = 6, 8, 6, 40
    course, gen, comp, pos = fixed_course(E_, C, **line_set(E_, C, n))
    gen.result.start_pos.assign(np.tile([-1.0, 0.0, 1.0], (E_, 1)).astype(np.float32))
    course.reset()
    rng = np.random.default_rng(1)
    speeds = np.array([0.3, 1.0, 2.0, 4.0, 9.0, 30.0])  # metres per step; gates 2 m apart
    x = -1.0 + np.concatenate([np.zeros((1, E_)), np.cumsum(rng.uniform(0.5, 1.0, (T - 1, E_)) * speeds, 0)])
    x = np.minimum(x, 14.0)
    traj = np.stack([x, np.zeros_like(x), np.ones_like(x)], -1).astype(np.float32)
    back = T - 5  # then fly back through the last gates (a finished sprint gives no more events)
    traj[back:, :, 0] = np.linspace(14.0, 5.0, 5)[:, None]
    kern = run_kernel(course, pos, traj)
    crossed = np.minimum(np.floor(x[:back] / 2.0).astype(int) + 1, n)
    np.testing.assert_array_equal(kern["total"][:back], crossed)
    assert (kern["lap"].sum(0) == 1).all() and (kern["laps"][-1] == 1).all() and (kern["next"][-1] == n).all()
    assert (kern["total"][-1] == n).all() and (kern["wrong_way"] == 0).all() and (kern["missed"] == 0).all()
    assert kern["passed"][1:, -1].max() == n  # 30 m in one step: all six at once
    # progress = x + 1 up to the finish at x = 10, then frozen at 11
    np.testing.assert_allclose(kern["progress"][:back], np.minimum(x[:back] + 1.0, 11.0), atol=1e-4)
    np.testing.assert_allclose(kern["progress"][back:], 11.0, atol=1e-4)
    assert (kern["delta"][back + 1:] == 0).all()  # (the slow env finishes on the jump at step back)


def test_missed_and_wrong_way_on_a_line():
    """One env, a scripted path beside and back through gate 0 (half width 0.5, at x = 0)."""
    course, gen, comp, pos = fixed_course(1, 4, **line_set(1, 4, 3))
    gen.result.start_pos.assign(np.array([[-1.0, 0.0, 1.0]], np.float32))
    course.reset()
    path = [
        ((-1.0, 0.0), dict(next=0)),                                  # first step: stored only
        ((0.5, 0.8), dict(missed=1, next=0)),                         # beside gate 0
        ((0.7, 0.8), dict(next=0)),                                   # once per crossing
        ((-0.5, 0.8), dict(next=0)),                                  # back across gate 0: next, not behind
        ((0.5, 0.0), dict(passed=1, next=1)),                         # through it
        ((-0.5, 1.5), dict(wrong_way=1, next=1)),                     # back across at y = 0.75: within 2x the opening
        ((0.5, 0.0), dict(next=1)),                                   # forward again: no second pass
        ((0.5, 1.2), dict(next=1)),
        ((-0.5, 1.2), dict(next=1)),                                  # back, outside 2x: no event
        ((2.5, 0.2), dict(passed=1, next=2)),                         # gate 1
        ((4.5, -0.49), dict(passed=1, next=3, lap=1)),                # gate 2 finishes the sprint
    ]
    for (x, y), want in path:
        pos.assign(np.array([[x, y, 1.0]], np.float32))
        r = course.step().events
        got = {k: int(getattr(r, k).numpy()[0]) for k in ("passed", "missed", "wrong_way", "lap", "next")}
        exp = dict(passed=0, missed=0, wrong_way=0, lap=0)
        exp.update(want)
        assert got == exp, (x, y)


def test_first_step_after_reset_only_stores_the_position():
    course, gen, comp, pos = fixed_course(2, 4, **line_set(2, 4, 3))
    gen.result.start_pos.assign(np.tile([-1.0, 0.0, 1.0], (2, 1)).astype(np.float32))
    pos.assign(np.array([[-1.0, 0, 1], [-1.0, 0, 1]], np.float32))
    course.reset()
    course.step()
    pos.assign(np.array([[3.0, 0, 1], [-0.5, 0, 1]], np.float32))
    course.reset(wp.array([1, 0], dtype=wp.int32))  # env 0 reset; its first step is beyond gates 0, 1
    r = course.step().events
    assert r.passed.numpy().tolist() == [0, 0] and r.progress.numpy()[0] == 0 and r.delta.numpy()[0] == 0
    assert r.next.numpy().tolist() == [0, 0]
    np.testing.assert_allclose(r.progress.numpy()[1], 0.5, atol=1e-6)  # env 1 kept its origin
    pos.assign(np.array([[3.5, 0, 1], [0.5, 0, 1]], np.float32))
    r = course.step().events
    assert r.passed.numpy().tolist() == [0, 1]  # env 0 never crossed a plane since its reset
    np.testing.assert_allclose(r.progress.numpy(), [0.0, 1.5], atol=1e-6)  # env 0: before plane 0 is next


def test_start_on_checkpoint_zero_begins_with_next_one(track_course, gate_courses):
    course, pos = track_course
    course.generate(seeds=np.arange(E) + 5)
    course.reset()
    valid = course.result.valid.numpy() != 0
    assert valid.sum() >= E // 2
    np.testing.assert_array_equal(course.progress.next_index.numpy()[valid], 1)  # the track starts on checkpoint 0
    gcourse, _ = gate_courses[True]
    gcourse.reset()
    np.testing.assert_array_equal(gcourse.progress.next_index.numpy(), 0)  # gates: the start lies before gate 0


def test_start_at_a_sampled_checkpoint():
    E_, C, R = 5, 8, 10.0
    course, gen, comp, pos = fixed_course(E_, C, **circle_set(E_, C, R))
    gen.result.start_pos.assign(on_circle(np.full(E_, -0.1)))
    course.reset()
    sp = 2 * np.pi / C
    idx = np.array([3, 7, -1, 2, 6], np.int32)
    mask = np.array([1, 1, 1, 0, 1], np.int32)
    mask_w, idx_w = wp.array(mask, dtype=wp.int32), wp.array(idx, dtype=wp.int32)
    with wp.ScopedCapture(device="cpu") as cap, strict():
        course.progress.start_at(mask_w, idx_w)
    wp.capture_launch(cap.graph)
    # 7 wraps to 0; index -1 and the unmasked env keep the reset's 0
    np.testing.assert_array_equal(course.progress.next_index.numpy(), [4, 0, 0, 0, 7])
    phi0 = np.array([3 * sp, 7 * sp, -0.1, -0.1, 6 * sp])
    traj = on_circle(phi0[None] + np.linspace(0.0, 1.6, 9)[:, None] * sp)
    kern = run_kernel(course, pos, traj)
    np.testing.assert_array_equal(kern["total"][-1], [1, 1, 2, 2, 1])
    np.testing.assert_array_equal(kern["laps"][-1], [0, 0, 0, 0, 1])  # the lap: passing the last checkpoint
    np.testing.assert_allclose(kern["progress"][-1], R * 1.6 * sp, atol=0.1)  # 45 degree legs: plane fractions


def test_invalid_course_or_no_checkpoints_gives_nothing():
    E_, C = 4, 8
    course, gen, comp, pos = fixed_course(E_, C, **line_set(E_, C, 6))
    comp.set(count=np.array([6, 6, 0, 6]))
    gen.result.valid.assign(np.array([1, 0, 1, 1], np.int32))
    gen.result.start_pos.assign(np.tile([-1.0, 0.0, 1.0], (E_, 1)).astype(np.float32))
    course.reset()
    for x in (-1.0, 0.5, 2.5, 4.5, 1.0):
        pos.assign(np.tile([x, 0.0, 1.0], (E_, 1)).astype(np.float32))
        r = course.step().events
        for f in ("passed", "total", "next", "missed", "wrong_way", "lap", "progress", "delta"):
            assert (getattr(r, f).numpy()[1:3] == 0).all(), f
    assert r.total.numpy()[0] == 3 and r.total.numpy()[3] == 3
    assert np.isfinite(r.progress.numpy()).all()


def test_one_checkpoint_loop_counts_whole_laps():
    cps = line_set(1, 2, 1)
    cps.update(closed=np.ones(1), length=np.full(1, 20.0))
    course, gen, comp, pos = fixed_course(1, 2, **cps)
    gen.result.start_pos.assign(np.array([[-1.0, 0.0, 1.0]], np.float32))
    course.reset()
    got = []
    for x in (-1.0, -0.5, 0.5, 3.0, -3.0, -0.2, 0.2, 1.0):  # through it, "around" (a jump back), through again
        pos.assign(np.array([[x, 0.0, 1.0]], np.float32))
        r = course.step().events
        got.append((int(r.passed.numpy()[0]), int(r.laps.numpy()[0]), float(r.progress.numpy()[0])))
    assert got == [(0, 0, 0.0), (0, 0, 0.0), (1, 1, 20.0), (0, 1, 20.0), (0, 1, 20.0), (0, 1, 20.0),
                   (1, 2, 40.0), (0, 2, 40.0)]


# ==================================================================================================
# contract: masks, capture, NaN isolation
# ==================================================================================================
def _gate_course(seeds=3, closed=True, E_=E):
    g = tg.GateGenerator(presets.gates(E_, "cpu", gate_width=1.0, closed=closed), seeds=seeds)
    course = Course(g, [GateCps(), Progress()])
    pos = pos_array(E_)
    course.bind(position=pos)
    return course, pos


def _flight(course, T, seed):
    rng = np.random.default_rng(seed)
    cp = cp_numpy(course.checkpoints)
    start = course.result.start_pos.numpy().astype(np.float64)
    kinds = [KINDS[i % len(KINDS)] for i in range(course.num_envs)]
    return trajectories(cp, start, kinds, T, rng, max_speed=1.0)


def _rows(state, rows):
    return {k: v[rows].tobytes() for k, v in state.items()}


def test_masked_regeneration_resets_masked_envs_only():
    A, pa = _gate_course()
    B, pb = _gate_course()  # regenerated in full
    C, pc = _gate_course()  # never regenerated
    traj = _flight(A, 30, 0)
    for t in range(25):
        for course, p in ((A, pa), (B, pb), (C, pc)):
            p.assign(traj[t])
            course.step()
    before = state_of(A)
    m = np.zeros(E, np.int32)
    m[[1, 4, 5, 11]] = 1
    A.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
    B.regenerate(advance=True)
    on, off = m != 0, m == 0
    after, full = state_of(A), state_of(B)
    assert _rows(after, off) == _rows(before, off)
    assert _rows(after, on) == _rows(full, on)
    assert (after["has_prev"][on] == 0).all() and (after["total"][on] == 0).all()
    assert (before["total"][on] > 0).any()  # the reset changed something
    for t in range(25, 30):
        for course, p in ((A, pa), (B, pb), (C, pc)):
            p.assign(traj[t])
            course.step()
        assert _rows(state_of(A), on) == _rows(state_of(B), on)
        assert _rows(state_of(A), off) == _rows(state_of(C), off)


def test_capture_replay_equals_eager_byte_for_byte():
    A, pa = _gate_course()
    B, pb = _gate_course()
    check_component(B, ["progress"])
    mask_b = wp.zeros(E, dtype=wp.int32)
    with wp.ScopedCapture(device="cpu") as cap, strict():
        B.step()
    step_graph = cap.graph
    with wp.ScopedCapture(device="cpu") as cap, strict():
        B.regenerate(mask=mask_b, advance=True)
    regen_graph = cap.graph
    traj = _flight(A, 40, 1)
    rng = np.random.default_rng(2)
    for t in range(40):
        if t in (15, 30):
            m = (rng.random(E) < 0.4).astype(np.int32)
            A.regenerate(mask=wp.array(m, dtype=wp.int32), advance=True)
            mask_b.assign(m)  # in place: the graph reads it at replay
            wp.capture_launch(regen_graph)
        pa.assign(traj[t])
        pb.assign(traj[t])
        A.step()
        wp.capture_launch(step_graph)
        sa, sb = state_of(A), state_of(B)
        assert {k: v.tobytes() for k, v in sa.items()} == {k: v.tobytes() for k, v in sb.items()}, t
    assert sa["total"].sum() > 0


def test_nan_position_isolated_and_skipped():
    T = 40
    A, pa = _gate_course()
    B, pb = _gate_course()
    traj = _flight(A, T, 3)
    bad = traj.copy()
    nan_steps = [5, 6, 12, 20]
    bad[nan_steps, 3, 0] = np.nan
    bad[[8, 21], 7, 2] = np.inf
    others = np.setdiff1d(np.arange(E), [3, 7])
    ka, kb = run_kernel(A, pa, traj), run_kernel(B, pb, bad)
    for k in ka:
        assert ka[k][:, others].tobytes() == kb[k][:, others].tobytes(), k
    for e, steps in ((3, nan_steps), (7, [8, 21])):
        keep = np.setdiff1d(np.arange(T), steps)
        C, pc = _gate_course()
        sub = traj[keep][:, :, :].copy()
        kc = run_kernel(C, pc, sub)
        for k in kb:  # finite steps: as if the bad steps never happened
            assert kb[k][keep, e].tobytes() == kc[k][:, e].tobytes(), (e, k)
        for t in steps:  # bad steps: nothing happens
            for k in ("passed", "missed", "wrong_way", "lap", "delta"):
                assert kb[k][t, e] == 0, (e, t, k)
            for k in ("next", "laps", "total", "progress", "prev", "origin", "last"):
                assert kb[k][t, e].tobytes() == kb[k][t - 1, e].tobytes(), (e, t, k)
        assert np.isfinite(kb["prev"][:, e]).all() and np.isfinite(kb["progress"][:, e]).all()


def test_utility_and_result_types(gate_courses):
    course, _ = gate_courses[True]
    p = course.progress
    assert isinstance(p, Progress) and isinstance(p.result, ProgressEvents)
    assert course.step().events is p.result
    assert p.next_index is p.result.next and p.progress is p.result.progress
    assert p.laps is p.result.laps and p.total is p.result.total
    with pytest.raises(ValueError, match="requires component 'checkpoints'"):
        Course(tg.GateGenerator(presets.gates(4, "cpu", gate_width=1.0), seeds=0), [Progress()])


def test_name_argument():
    assert Progress().name == "progress"
    prog = Progress(name="laps")
    assert prog.name == "laps"
    g = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=3)
    course = Course(g, [GateCps(), prog])
    assert list(course.components) == ["checkpoints", "laps"] and course.components["laps"] is prog
    pos = pos_array(E)
    course.bind(position=pos)
    res = course.step()
    assert res["laps"] is prog.result and res.events is None  # a per-step entry under its own name
    for bad in ("", 1, None):
        with pytest.raises(TypeError, match="name"):
            Progress(name=bad)
    with pytest.raises(TypeError):
        Progress(1e-3, "laps")  # keyword only


# ==================================================================================================
# cost
# ==================================================================================================
def test_step_cost_per_env(capsys):
    """Eager and CPU-graph replay cost of ``step()`` at E = 4096, positions moving through the gates.

    Reports the thread's CPU time (robust on a shared machine) and the wall time, per env-step,
    with the copy of the next positions subtracted."""
    E_ = 4096
    course, pos = _gate_course(E_=E_)
    traj = _flight(course, 12, 4)
    frames = [wp.array(traj[t], dtype=wp.vec3f) for t in range(len(traj))]
    p = course.components["progress"]
    reps = 100

    def timed(fn, clock):
        best = np.inf
        for _ in range(3):
            t0 = clock()
            for i in range(reps):
                wp.copy(pos, frames[i % len(frames)])
                fn()
            best = min(best, clock() - t0)
        return best / reps

    with wp.ScopedCapture(device="cpu") as cap, strict():
        p.step(course._ctx)
    graph = cap.graph
    ns = {}
    for clock in (time.thread_time, time.perf_counter):
        copy_only = timed(lambda: None, clock)
        ns[clock.__name__, "eager"] = (timed(lambda: p.step(course._ctx), clock) - copy_only) / E_ * 1e9
        ns[clock.__name__, "replay"] = (timed(lambda: wp.capture_launch(graph), clock) - copy_only) / E_ * 1e9
    with capsys.disabled():
        print(f"\nprogress step at E={E_} [ns/env]: CPU time eager {ns['thread_time', 'eager']:.0f}, replay "
              f"{ns['thread_time', 'replay']:.0f}; wall eager {ns['perf_counter', 'eager']:.0f}, replay "
              f"{ns['perf_counter', 'replay']:.0f}")
    assert ns["thread_time", "replay"] < 1000  # generous; the target is ~190 ns
