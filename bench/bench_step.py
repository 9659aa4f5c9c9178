#!/usr/bin/env python
"""Per-env-step cost of ``course.step()`` on the CPU, next to batched torch baselines.

For each E in --envs and each preset it builds the course of the "CPU step benchmark" section of
``bench/README.md``:

* gates: ``Course.gates(presets.gates(E, "cpu", gate_width=1.0), collision=0.05,
  localize_window=8)``: checkpoints, centerline, progress, DiscCollision, Localizer (warm 8);
* track: ``Course.track(presets.track(E, "cpu"), checkpoint_spacing=1.0, collision="segments",
  extra=[Localizer(warm_window=8)])``: checkpoints, progress, BandCollision, Localizer (warm 8);

binds [E] pose arrays and drives every env's body along its own course: a precomputed periodic
trajectory along ``course.localizer.line`` at 0.06-0.6 m per step (1-3 laps per period), with
smooth lateral / vertical / heading offsets plus jitter. Before each step the next pose is
copied into the bound arrays in place; that copy is *not* timed (each call is timed on its
own; the copy cost is printed separately). It times

* ``course.step()`` eagerly and replayed from a captured CPU graph;
* each per-step component alone (progress, collision, localizer), eager and replayed;
* ``baselines/torch_gate_pass.py`` (the Isaac Lab drone-racing gate-pass test, "idr" and
  "lsy" variants) and ``baselines/torch_projection.py`` (brute-force O(N) nearest-segment
  projection, "soa" tuned and "aos" straightforward layouts) on the same poses and lines, torch
  CPU with --threads threads (and, for reference, (b) idr and (a) soa with --ref-threads).

Every time is per env-step in ns: each measurement is the mean over at least --min-time seconds
of steps (3 at least; a run restarts the course and primes it with one untimed step), and the
best of --repeats rounds is kept. Rounds visit every item in turn, so that bursts of load from
other jobs on a shared machine hit ours and the baselines alike; the median/best ratio of each
item is printed as a noise figure. An untimed pass first checks the poses and the results
(passes, misses, contacts, warm-search share; that the torch gate pass counts agree; that the
brute-force projection finds the localizer's segment). Run from the repository root::

    PYTHONPATH=. python bench/bench_step.py            # E = 1024, 4096, 16384 (~2-3 min)
    PYTHONPATH=. python bench/bench_step.py --quick    # smoke run (E = 256, short timings)
    PYTHONPATH=. python bench/bench_step.py --envs 4096 --families gates
    PYTHONPATH=. python bench/bench_step.py --agents 1 2 4 --envs 1024   # per-agent cost of K agents per env
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

from bench.bench_generate import load_avg, machine_info  # noqa: E402

STEP_TARGET = 1.0  # course.step() / (b) per env-step, at most
PROJ_TARGET = 30.0  # (a) / localizer, at least
TARGET_E = 4096
GATE_WIDTH = 1.0
HALF_EXTENTS = {"gates": (0.12, 0.12), "track": (0.15, 0.08)}  # body box [m]: a small drone, a small car
COMPONENTS = ("progress", "collision", "localizer")


# -- machine ------------------------------------------------------------------------------------

def uptime() -> str:
    try:
        return subprocess.run(["uptime"], check=False, capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"load average: {load_avg()}"


# -- courses ------------------------------------------------------------------------------------

def build(family: str, num_envs: int, agents: int = 1, racing: bool = False):
    """The benchmark course of ``family``; ``agents`` per env, plus AgentContacts and Standings when ``racing``."""
    from track_gen import tools
    from track_gen.course import Course
    from track_gen.pipeline import presets

    extra = [tools.AgentContacts(0.1), tools.Standings()] if racing else []
    if family == "gates":
        return Course.gates(presets.gates(num_envs, "cpu", gate_width=GATE_WIDTH), collision=0.05,
                            localize_window=8, seeds=1, agents=agents, extra=extra)
    return Course.track(presets.track(num_envs, "cpu"), checkpoint_spacing=1.0, collision="segments",
                        extra=[tools.Localizer(warm_window=8), *extra], seeds=1, agents=agents)


def euler_to_quat_xyzw(roll, pitch, yaw) -> np.ndarray:
    """(x, y, z, w) quaternions of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = np.cos(0.5 * roll), np.sin(0.5 * roll)
    cp, sp = np.cos(0.5 * pitch), np.sin(0.5 * pitch)
    cy, sy = np.cos(0.5 * yaw), np.sin(0.5 * yaw)
    return np.stack([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
                     cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy], axis=-1)


class Trajectory:
    """A periodic pose sequence per agent along its env's course line (``period`` steps, 1-3 laps;
    ``course.agents`` agents per env, each with its own draws).

    Arc length ``s(t) = L * (k t / P + 0.5 (sin(2 pi t / P + phi) - sin phi) / (2 pi)) mod L``
    with ``k`` laps per period (so the speed varies by +-50% around ``k L / P`` per step and
    stays positive); a smooth lateral offset (a sinusoid of 3-8 cycles per period) plus
    Gaussian jitter; a vertical offset for drones; heading = the line's plus smooth noise (plus
    a small roll and pitch for drones). Step ``P`` equals step 0, so replaying the sequence
    cyclically keeps every body moving continuously around its loop.
    """

    def __init__(self, course, family: str, period: int, seed: int = 0):
        rng = np.random.default_rng(seed)
        line = course.localizer.line
        K = course.agents  # each of an env's K agents flies its own sequence on the env's line

        def rows(x):
            return np.repeat(x, K, axis=0)
        pts = rows(line.points.numpy().astype(np.float64))
        s_line = rows(line.s.numpy().astype(np.float64))
        n = rows(line.count.numpy().astype(np.int64))
        L = rows(line.length.numpy().astype(np.float64))
        closed = rows(line.closed.numpy())
        valid = rows(course.result.valid.numpy() != 0)
        if not (closed[valid] != 0).all():
            raise ValueError("the step benchmark drives closed courses (loops) only")
        E, N = s_line.shape
        self.E, self.N, self.P = E, N, period
        # line with its closing vertex: point n = point 0 at s = L, unused rows at s = inf
        P_ext = np.zeros((E, N + 1, 3))
        P_ext[:, :N] = pts
        rows = np.arange(E)
        P_ext[rows, np.minimum(n, N)] = pts[:, 0]
        s_ext = np.full((E, N + 1), np.inf)
        s_ext[:, :N] = np.where(np.arange(N)[None, :] < n[:, None], s_line, np.inf)
        s_ext[rows, np.minimum(n, N)] = L
        laps = rng.integers(1, 4, size=E)
        phi = rng.uniform(0, 2 * np.pi, size=E)
        u0 = rng.uniform(0, 1, size=E)
        drone = family == "gates"
        amp = rng.uniform(0.0, 0.35 if drone else 0.3, size=E)
        if drone:  # one env in ten flies sloppily: wide lateral swings, so some gates are missed
            sloppy = rng.uniform(size=E) < 0.1
            amp[sloppy] = rng.uniform(0.35, 0.7, size=sloppy.sum())
        cyc = rng.integers(3, 9, size=E)
        psi = rng.uniform(0, 2 * np.pi, size=E)
        vamp = rng.uniform(0.0, 0.2, size=E) if drone else np.zeros(E)
        vcyc = rng.integers(2, 6, size=E)
        hamp = rng.uniform(0.0, 0.3, size=E)
        pos = np.zeros((period, E, 3), dtype=np.float32)
        quat = np.zeros((period, E, 4), dtype=np.float32)
        s_all = np.zeros((period, E))
        for t in range(period):
            w = 2 * np.pi * t / period
            u = laps * t / period + 0.5 * (np.sin(w + phi) - np.sin(phi)) / (2 * np.pi) + u0
            s = np.mod(u, 1.0) * L
            s_all[t] = s
            j = (s_ext <= s[:, None]).sum(axis=1) - 1
            j = np.clip(j, 0, np.maximum(n - 1, 0))
            a, b = P_ext[rows, j], P_ext[rows, j + 1]
            sa, sb = s_ext[rows, j], s_ext[rows, j + 1]
            f = np.clip((s - sa) / np.maximum(sb - sa, 1e-9), 0.0, 1.0)
            d = b - a
            hl = np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)
            lat_axis = np.stack([-d[:, 1] / hl, d[:, 0] / hl, np.zeros(E)], axis=1)
            lat = amp * np.sin(cyc * w + psi) + rng.normal(0.0, 0.02, size=E)
            vert = vamp * np.sin(vcyc * w + psi) + (rng.normal(0.0, 0.02, size=E) if drone else 0.0)
            p = a + f[:, None] * d + lat[:, None] * lat_axis
            p[:, 2] += vert
            yaw = np.arctan2(d[:, 1], d[:, 0]) + hamp * np.sin(cyc * w + 2 * psi) + rng.normal(0.0, 0.03, size=E)
            tilt = rng.normal(0.0, 0.1, size=(2, E)) if drone else np.zeros((2, E))
            pos[t] = p
            quat[t] = euler_to_quat_xyzw(tilt[0], tilt[1], yaw)
        pos[:, ~valid] = 0.0
        quat[:, ~valid] = (0.0, 0.0, 0.0, 1.0)
        step = np.linalg.norm(np.diff(pos, axis=0, append=pos[:1]), axis=2)[:, valid]
        self.speed = (float(step.mean()), float(np.percentile(step, 5)), float(np.percentile(step, 95)))
        self.pos_np, self.quat_np, self.s = pos, quat, s_all
        self.valid = valid
        he = np.tile(np.asarray(HALF_EXTENTS[family], dtype=np.float32), (E, 1))
        # warp side: the full sequence, and the [E] arrays bound to the course
        self.traj_pos = wp.array(pos, dtype=wp.vec3f, device="cpu")
        self.traj_quat = wp.array(quat, dtype=wp.quatf, device="cpu")
        self.pos = wp.zeros(E, dtype=wp.vec3f, device="cpu")
        self.quat = wp.zeros(E, dtype=wp.quatf, device="cpu")
        self.he = wp.array(he, dtype=wp.vec2f, device="cpu")
        self._rows_pos = [self.traj_pos[t] for t in range(period)]
        self._rows_quat = [self.traj_quat[t] for t in range(period)]
        import torch

        # torch views of the same poses (no copy): what the baselines read
        self._torch = [(torch.from_numpy(pos[t]), torch.from_numpy(quat[t])) for t in range(period)]

    def write(self, t: int) -> None:
        """Copy the poses of step ``t`` (mod period) into the bound arrays, in place."""
        k = t % self.P
        wp.copy(self.pos, self._rows_pos[k])
        wp.copy(self.quat, self._rows_quat[k])

    def torch_pose(self, t: int):
        """(pos [E, 3], quat [E, 4] xyzw) torch views of step ``t`` (mod period)."""
        return self._torch[t % self.P]


def behind_index(cps: dict, pos: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Per env, the checkpoint just behind a body at arc length ``s`` / position ``pos``: the last
    checkpoint with ``s_k <= s`` whose plane the body is on or past (-1 where there is none)."""
    count, cs = cps["count"], cps["s"]
    E, C = cs.shape
    used = np.arange(C)[None, :] < count[:, None]
    k = (np.where(used, cs, np.inf) <= s[:, None]).sum(axis=1) - 1
    k = np.where(k < 0, count - 1, k)  # before checkpoint 0: the last one of the loop is behind
    rows = np.arange(E)
    kk = np.clip(k, 0, C - 1)
    d = np.einsum("ek,ek->e", pos - cps["pos"][rows, kk], cps["normal"][rows, kk])
    k = np.where(d < 0, k - 1, k)
    k = np.where(k < 0, count - 1, k)
    return np.where(count > 0, k, -1).astype(np.int32)


# -- timing -------------------------------------------------------------------------------------

class Clock:
    """Per-call timing of a step function on the trajectory, pose writes excluded."""

    def __init__(self, traj: Trajectory):
        self.traj = traj
        self.cursor = 0  # global position on the periodic trajectory (runs continue from here)

    def run(self, fn, steps: int, prime=None, write=None) -> float:
        """Seconds spent in ``fn`` over ``steps`` steps (after ``prime(t)``, untimed)."""
        write = write or self.traj.write
        t = self.cursor
        if prime is not None:
            prime(t)
            t += 1
        total = 0.0
        pc = time.perf_counter
        for _ in range(steps):
            write(t)
            t0 = pc()
            fn(t)
            total += pc() - t0
            t += 1
        self.cursor = t
        return total

    def measure(self, items: list[dict], repeats: int, min_time: float) -> dict:
        """Seconds per step of each item in each of ``repeats`` interleaved rounds (a list per key).

        Each item is a dict with ``fn(t)`` and optionally ``prime(t)`` (untimed, before each
        run), ``write(t)`` (untimed, before each step; default: the pose write) and
        ``max_steps``. One untimed calibration run of 2 steps sets each item's steps per run
        (enough for ``min_time`` seconds, at least 3). Rounds visit every item in turn, so a
        burst of load from other jobs hits all items alike rather than one.
        """
        steps = {}
        for it in items:
            once = self.run(it["fn"], 2, it.get("prime"), it.get("write")) / 2
            steps[it["key"]] = int(max(3, min(it.get("max_steps", 100000), math.ceil(min_time / max(once, 1e-7)))))
        runs = {it["key"]: [] for it in items}
        for _ in range(repeats):
            for it in items:
                n = steps[it["key"]]
                runs[it["key"]].append(self.run(it["fn"], n, it.get("prime"), it.get("write")) / n)
        return runs


def capture(fn):
    with wp.ScopedCapture(device="cpu") as cap:
        fn()
    return cap.graph


# -- one (family, E) ----------------------------------------------------------------------------

def bench_case(family: str, num_envs: int, args, repeats: int) -> dict:
    import torch

    from bench.baselines.torch_gate_pass import TorchGatePass
    from bench.baselines.torch_projection import TorchProjection

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    course = build(family, num_envs)
    traj = Trajectory(course, family, args.period, seed=num_envs)
    course.bind(position=traj.pos, orientation=traj.quat, half_extents=traj.he)
    setup_s = time.perf_counter() - t0
    E = num_envs
    ctx = course.context  # the context the course passes to hooks: used to step one component alone
    comps = {name: course.components[name] for name in COMPONENTS}
    cpset = course.checkpoints
    cps = {k: getattr(cpset, k).numpy() for k in ("pos", "normal", "s", "count", "half_width", "half_height")}
    all_mask = wp.ones(E, dtype=wp.int32, device="cpu")
    start_index = wp.zeros(E, dtype=wp.int32, device="cpu")
    line = course.localizer.line
    r = dict(family=family, envs=E, line_points=int(line.points.shape[1]),
             line_count=[int(line.count.numpy().min()), int(line.count.numpy().max())],
             checkpoints=[int(cps["count"].min()), int(cps["count"].max())],
             valid=float(traj.valid.mean()), speed_m_per_step=traj.speed, setup_s=setup_s)

    def behind(t):
        k = t % traj.P
        return behind_index(cps, traj.pos_np[k].astype(np.float64), traj.s[k])

    def restart(t):
        """Reset the course, count the checkpoint behind pose t as passed, write pose t."""
        course.reset()
        start_index.assign(behind(t))
        course.progress.start_at(all_mask, start_index)
        traj.write(t)

    clock = Clock(traj)

    # -- untimed check pass: realistic poses, sane results -----------------------------------
    counts = dict(steps=0, passed=0, missed=0, wrong_way=0, laps=0, hit=0, warm=0, searched=0)
    n_check = args.check_steps or traj.P
    proj = TorchProjection(line.points.numpy(), line.s.numpy(), line.count.numpy(), line.length.numpy(),
                           line.closed.numpy(), layout="soa", threads=None)
    gate_yaw = np.arctan2(cps["normal"][..., 1], cps["normal"][..., 0])
    used = np.arange(cps["s"].shape[1])[None, :] < cps["count"][:, None]
    gate_size = float(2.0 * np.median(cps["half_width"][used]))
    r["gate_size"] = gate_size
    gp = {v: TorchGatePass(cps["pos"], gate_yaw, cps["count"], gate_size, variant=v, threads=None)
          for v in ("idr", "lsy")}
    restart(0)
    result = course.step()
    for b in gp.values():
        b.reset(traj.torch_pose(0)[0], (behind(0) + 1) % np.maximum(cps["count"], 1))
    agree = dict(compared=0, same_segment=0, max_ds=0.0, max_dd=0.0)
    valid = traj.valid
    compare_every = max(1, n_check // args.compare_steps)
    for t in range(1, n_check + 1):
        traj.write(t)
        course.step()
        ev, ct, fr = result.events, result.contacts, result.frame
        counts["steps"] += int(valid.sum())
        counts["passed"] += int(ev.passed.numpy()[valid].sum())
        counts["missed"] += int(ev.missed.numpy()[valid].sum())
        counts["wrong_way"] += int(ev.wrong_way.numpy()[valid].sum())
        counts["laps"] += int(ev.lap.numpy()[valid].sum())
        counts["hit"] += int(ct.hit.numpy()[valid].sum())
        search = course.localizer.search.numpy()[valid]
        counts["warm"] += int((search == 1).sum())
        counts["searched"] += int((search > 0).sum())
        tp, tq = traj.torch_pose(t)
        for b in gp.values():
            b.count_events(*b.step(tp))
        if t % compare_every == 0:
            out = proj(tp, tq)
            seg = fr.segment.numpy()[valid]
            agree["compared"] += int(valid.sum())
            agree["same_segment"] += int((out["segment"].numpy()[valid] == seg).sum())
            ds = np.abs(out["s"].numpy()[valid] - fr.s.numpy()[valid])
            lengths = line.length.numpy()[valid]
            ds = np.minimum(ds, np.abs(lengths - ds))  # s wraps at the loop's start
            dd = np.abs(out["distance"].numpy()[valid] - fr.distance.numpy()[valid])
            agree["max_ds"] = max(agree["max_ds"], float(ds.max(initial=0.0)))
            agree["max_dd"] = max(agree["max_dd"], float(dd.max(initial=0.0)))
    r["check"] = counts
    r["check_baseline"] = {v: dict(passed=b.passes, missed=b.misses) for v, b in gp.items()}
    r["agreement"] = agree

    # -- timings ------------------------------------------------------------------------------
    def prime_with(call):
        def prime(t):
            restart(t)
            call()
        return prime

    def no_write(t):
        pass

    items = []
    step = course.step
    g_step = capture(step)

    def replay_step():
        wp.capture_launch(g_step)
    items += [dict(key="step_eager", fn=lambda t: step(), prime=prime_with(step)),
              dict(key="step_graph", fn=lambda t: replay_step(), prime=prime_with(replay_step))]
    for name, c in comps.items():
        def eager(c=c):
            c.step(ctx)
        graph = capture(eager)

        def replay(graph=graph):
            wp.capture_launch(graph)
        items += [dict(key=f"{name}_eager", fn=lambda t, f=eager: f(), prime=prime_with(eager)),
                  dict(key=f"{name}_graph", fn=lambda t, f=replay: f(), prime=prime_with(replay))]
    # the excluded pose write, measured alone
    items.append(dict(key="pose_write", fn=lambda t: traj.write(t), write=no_write))
    # baselines: torch, --threads threads (and --ref-threads for reference)
    thread_counts = [(args.threads, "")] + ([(args.ref_threads, f"_{args.ref_threads}t")] if args.ref_threads else [])
    for nt, suffix in thread_counts:
        for v, b in gp.items():
            if suffix and v != "idr":
                continue

            def prime_b(t, b=b, nt=nt):
                torch.set_num_threads(nt)
                b.reset(traj.torch_pose(t)[0], (behind(t) + 1) % np.maximum(cps["count"], 1))
            items.append(dict(key=f"gate_{v}{suffix}", fn=lambda t, b=b: b.step(traj.torch_pose(t)[0]),
                              prime=prime_b, write=no_write))
    projs = {"soa": proj}
    if not args.no_aos:
        projs["aos"] = TorchProjection(line.points.numpy(), line.s.numpy(), line.count.numpy(),
                                       line.length.numpy(), line.closed.numpy(), layout="aos", threads=None)
    for nt, suffix in thread_counts:
        for lay, pj in projs.items():
            if suffix and lay != "soa":
                continue

            def prime_p(t, nt=nt):
                torch.set_num_threads(nt)
            items.append(dict(key=f"proj_{lay}{suffix}", fn=lambda t, pj=pj: pj(*traj.torch_pose(t)),
                              prime=prime_p, write=no_write, max_steps=50))
    runs = clock.measure(items, repeats, args.min_time)
    torch.set_num_threads(args.threads)
    del projs
    times = {k: min(v) for k, v in runs.items()}
    r["spread"] = {k: float(np.median(v) / min(v)) for k, v in runs.items()}
    r["runs_ns"] = {k: [1e9 * x / E for x in v] for k, v in runs.items()}
    r["ns"] = {k: 1e9 * v / E for k, v in times.items()}
    return r



# -- K agents per env ---------------------------------------------------------------------------

AGENT_TARGET = 1.2  # course.step() per agent with K agents / with one, at most


def bench_agents(family: str, num_envs: int, args, repeats: int) -> dict:
    """``course.step()`` per agent-step with K agents per env (each in ``args.agents``, 1 always
    first: the baseline) on the same course preset, eager and replayed; with K > 1 also with
    ``AgentContacts`` + ``Standings`` added ("racing"). Every agent flies its own trajectory."""
    cases = [(1, False)] + [(k, False) for k in args.agents if k > 1] + [(k, True) for k in args.agents if k > 1]
    items, checks, clock = [], {}, None
    for k, racing in cases:
        course = build(family, num_envs, k, racing)
        traj = Trajectory(course, family, args.period, seed=num_envs)
        course.bind(position=traj.pos, orientation=traj.quat, half_extents=traj.he)
        clock = clock or Clock(traj)
        key = f"K{k}" + ("+racing" if racing else "")
        course.reset()
        passed = hit = 0
        for t in range(args.check_steps or 40):  # untimed: the agents race (passes, contacts)
            traj.write(t)
            res = course.step()
            passed += int(res.events.passed.numpy().sum())
            hit += int(res["agent_contacts"].contact.numpy().sum()) if racing else 0
        checks[key] = dict(agents=k * num_envs, passed=passed, agent_contacts=hit)
        graph = capture(course.step)

        def replay(graph=graph):
            wp.capture_launch(graph)

        def prime(t, course=course, traj=traj, call=None):
            course.reset()
            traj.write(t)
            (call or course.step)()
        items += [dict(key=f"{key}_eager", fn=lambda t, c=course: c.step(), prime=prime, write=traj.write, agents=k),
                  dict(key=f"{key}_graph", fn=lambda t, f=replay: f(), write=traj.write, agents=k,
                       prime=lambda t, p=prime, f=replay: p(t, call=f))]
    runs = clock.measure(items, repeats, args.min_time)
    ns = {it["key"]: 1e9 * min(runs[it["key"]]) / (num_envs * it["agents"]) for it in items}
    return dict(family=family, envs=num_envs, ns_per_agent=ns, check=checks,
                spread={k: float(np.median(v) / min(v)) for k, v in runs.items()})


def report_agents(info: dict, rows: list[dict], args) -> str:
    lines = [f"Machine: {info['cpu']}, {info['cores']} cores; warp {info['warp']}; track_gen {info['git']}",
             f"Load: start `{info['uptime_start']}`, end `{info['uptime_end']}`",
             f"Settings: best of {args.repeats} interleaved rounds, min-time={args.min_time}s; times per agent-step "
             f"[ns], pose writes excluded; ratio = per-agent cost / the one-agent course's (same run)", "",
             "| family | E | K | agents | step graph | ratio | step eager | ratio | passes (check) | agent contacts |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    verdicts = []
    for r in rows:
        ns, base_g, base_e = r["ns_per_agent"], r["ns_per_agent"]["K1_graph"], r["ns_per_agent"]["K1_eager"]
        for key, c in r["check"].items():
            g, e = ns[f"{key}_graph"] / base_g, ns[f"{key}_eager"] / base_e
            lines.append(f"| {r['family']} | {r['envs']} | {key[1:]} | {c['agents']} | {fmt(ns[f'{key}_graph'])} "
                         f"| {g:.2f} | {fmt(ns[f'{key}_eager'])} | {e:.2f} | {c['passed']} | {c['agent_contacts']} |")
            if "racing" not in key and key != "K1":
                ok = g <= AGENT_TARGET and e <= AGENT_TARGET
                verdicts.append(f"- {r['family']} E={r['envs']} K={key[1:]}: graph {g:.2f}, eager {e:.2f} "
                                f"{'met' if ok else 'MISSED'}")
    lines += ["", f"Target (reported, not asserted): course.step() per agent with K agents <= {AGENT_TARGET}x the "
              f"one-agent course's", *verdicts]
    return "\n".join(lines)


# -- report -------------------------------------------------------------------------------------

def fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def fx(x: float) -> str:
    return f"{x:.0f}x" if x >= 10 else f"{x:.1f}x"


def report(info: dict, rows: list[dict], args) -> str:
    lines = []
    add = lines.append
    add(f"Machine: {info['cpu']}, {info['cores']} cores ({info['usable_cores']} usable); Warp CPU kernels run "
        f"one thread per launch; torch {info['torch']} with {args.threads} threads")
    add(f"Date: {info['date']}; python {info['python']}, numpy {info['numpy']}, warp {info['warp']}; "
        f"track_gen {info['git']}")
    add(f"Load: start `{info['uptime_start']}`")
    add(f"      end   `{info['uptime_end']}`")
    add(f"Settings: best of {args.repeats} interleaved rounds ({args.repeats_big} for E > 4096), min-time="
        f"{args.min_time}s per measurement, trajectory period={args.period} steps; times per env-step [ns], "
        f"pose writes excluded")
    add("")
    ref = f"_{args.ref_threads}t" if args.ref_threads else None
    add(f"| family | E | line N | step eager | step graph | (b) idr | (b) lsy "
        f"| (b) idr {args.ref_threads or '-'}t | step/(b) graph | step/(b) eager "
        f"| localizer graph (eager) | (a) soa | (a) soa {args.ref_threads or '-'}t | (a) aos "
        f"| (a) soa / loc | (a) aos / loc | pose write |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def cell(ns, key):
        return fmt(ns[key]) if key and key in ns else "n/a"

    for r in rows:
        ns = r["ns"]
        n = r["line_points"] if r["line_count"][0] == r["line_count"][1] else \
            f"{r['line_count'][0]}-{r['line_count'][1]} (cap {r['line_points']})"
        loc = ns["localizer_graph"]
        aos = fx(ns["proj_aos"] / loc) if "proj_aos" in ns else "n/a"
        add(f"| {r['family']} | {r['envs']} | {n} | {fmt(ns['step_eager'])} | {fmt(ns['step_graph'])} "
            f"| {fmt(ns['gate_idr'])} | {fmt(ns['gate_lsy'])} | {cell(ns, ref and 'gate_idr' + ref)} "
            f"| {ns['step_graph'] / ns['gate_idr']:.2f} | {ns['step_eager'] / ns['gate_idr']:.2f} "
            f"| {fmt(loc)} ({fmt(ns['localizer_eager'])}) | {fmt(ns['proj_soa'])} "
            f"| {cell(ns, ref and 'proj_soa' + ref)} | {cell(ns, 'proj_aos')} "
            f"| {fx(ns['proj_soa'] / loc)} | {aos} | {fmt(ns['pose_write'])} |")
    add("")
    add("Where the time goes (ns per env-step; graph replay, eager in parentheses):")
    add("")
    add("| family | E | progress | collision | localizer | sum of parts | step graph | step - sum (graph) "
        "| step eager - graph |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ns = r["ns"]
        parts = [ns[f"{c}_graph"] for c in COMPONENTS]
        cells = " | ".join(f"{fmt(ns[f'{c}_graph'])} ({fmt(ns[f'{c}_eager'])})" for c in COMPONENTS)
        add(f"| {r['family']} | {r['envs']} | {cells} | {fmt(sum(parts))} | {fmt(ns['step_graph'])} "
            f"| {ns['step_graph'] - sum(parts):+.1f} | {ns['step_eager'] - ns['step_graph']:+.1f} |")
    add("")
    add("Poses and results in the untimed check pass (per 1000 env-steps, valid envs):")
    add("")
    add("| family | E | valid | m/step mean (p5-p95) | passed | missed | wrong way | laps | hit | warm search "
        "| (b) idr passed/missed | (b) lsy passed/missed | (a) same segment | max abs ds [m] | max abs d dist [m] |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        c, a, bl = r["check"], r["agreement"], r["check_baseline"]
        k = 1000.0 / max(c["steps"], 1)
        sp = r["speed_m_per_step"]
        same = 100.0 * a["same_segment"] / max(a["compared"], 1)
        add(f"| {r['family']} | {r['envs']} | {r['valid']:.3f} | {sp[0]:.2f} ({sp[1]:.2f}-{sp[2]:.2f}) "
            f"| {k * c['passed']:.1f} | {k * c['missed']:.2f} | {k * c['wrong_way']:.2f} | {k * c['laps']:.2f} "
            f"| {k * c['hit']:.1f} | {100.0 * c['warm'] / max(c['searched'], 1):.1f}% "
            f"| {k * bl['idr']['passed']:.1f}/{k * bl['idr']['missed']:.2f} "
            f"| {k * bl['lsy']['passed']:.1f}/{k * bl['lsy']['missed']:.2f} "
            f"| {same:.2f}% | {a['max_ds']:.2g} | {a['max_dd']:.2g} |")
    add("")
    add("Noise: median over rounds / best, per item (1.00 = every round alike):")
    add("")
    add("| family | E | step graph | step eager | localizer graph | (b) idr | (b) lsy | (a) soa | (a) aos |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        sp = r["spread"]
        keys = ("step_graph", "step_eager", "localizer_graph", "gate_idr", "gate_lsy", "proj_soa", "proj_aos")
        add(f"| {r['family']} | {r['envs']} | " + " | ".join(f"{sp[k]:.2f}" if k in sp else "n/a" for k in keys) + " |")
    add("")
    add(f"Targets (reported, not asserted), at E={TARGET_E} and, for reference, every E: course.step() <= "
        f"(b) idr per env-step; localizer >= {PROJ_TARGET:.0f}x faster than (a), for both torch layouts")

    def verdict(ok):
        return "met" if ok else "MISSED"

    for r in rows:
        ns = r["ns"]
        b = ns["gate_idr"]
        ge, gg = ns["step_eager"] / b, ns["step_graph"] / b
        loc, loce = ns["localizer_graph"], ns["localizer_eager"]
        tag = " (target E)" if r["envs"] == TARGET_E else ""
        parts = [f"step/(b) idr = {gg:.2f} graph {verdict(gg <= STEP_TARGET)}, {ge:.2f} eager "
                 f"{verdict(ge <= STEP_TARGET)}"]
        for lay in ("aos", "soa"):
            if f"proj_{lay}" in ns:
                x, xe = ns[f"proj_{lay}"] / loc, ns[f"proj_{lay}"] / loce
                parts.append(f"localizer vs (a) {lay}: {fx(x)} graph {verdict(x >= PROJ_TARGET)}, {fx(xe)} eager "
                             f"{verdict(xe >= PROJ_TARGET)}")
        add(f"- {r['family']} E={r['envs']}{tag}: " + "; ".join(parts))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", type=int, nargs="+", default=None, help="env counts (default 1024 4096 16384)")
    ap.add_argument("--families", nargs="+", choices=("track", "gates"), default=("gates", "track"))
    ap.add_argument("--quick", action="store_true", help="smoke run: E=256, short timings")
    ap.add_argument("--repeats", type=int, default=None,
                    help="interleaved rounds of measurements, best kept (default 9)")
    ap.add_argument("--repeats-big", type=int, default=None, help="the same for E > 4096 (default 5)")
    ap.add_argument("--min-time", type=float, default=None,
                    help="seconds of steps per measurement, at least 3 steps (default 0.05)")
    ap.add_argument("--period", type=int, default=160, help="trajectory period in steps (default 160)")
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    ap.add_argument("--ref-threads", type=int, default=1,
                    help="also time (b) idr and (a) soa with this many torch threads, for reference (0: skip)")
    ap.add_argument("--check-steps", type=int, default=None, help="steps of the untimed check pass (default: period)")
    ap.add_argument("--compare-steps", type=int, default=16,
                    help="steps of the check pass on which (a) is compared with the localizer (default 16)")
    ap.add_argument("--no-aos", action="store_true", help="skip the straightforward [E, N, 3] torch projection")
    ap.add_argument("--agents", type=int, nargs="+", default=None,
                    help="instead: course.step() per agent with K agents per env, for each K (K=1 is the baseline)")
    ap.add_argument("--json", type=Path, default=None, help="also write the raw results here")
    args = ap.parse_args(argv)
    quick = args.quick
    args.envs = args.envs or ([256] if quick else [1024, 4096, 16384])
    args.repeats = args.repeats or (2 if quick else 9)
    args.repeats_big = args.repeats_big or (2 if quick else 5)
    args.min_time = args.min_time if args.min_time is not None else (0.02 if quick else 0.05)
    if quick and args.check_steps is None:
        args.check_steps = 40

    if hasattr(wp, "LOG_WARNING"):
        wp.config.log_level = wp.LOG_WARNING
    else:
        wp.config.log_level = wp.LOG_WARNING
    wp.init()
    import torch

    torch.set_num_threads(args.threads)
    info = machine_info()
    info["torch"] = torch.__version__
    info["uptime_start"] = uptime()
    print(f"track_gen step benchmark: {info['cpu']}, {info['cores']} cores; {info['uptime_start']}", flush=True)
    t_start = time.perf_counter()
    rows = []
    for num_envs in args.envs:
        for fam in args.families:
            print(f"{fam} E={num_envs} ...", flush=True)
            t0 = time.perf_counter()
            rep = args.repeats if num_envs <= 4096 else args.repeats_big
            case = bench_agents if args.agents else bench_case
            rows.append(case(fam, num_envs, args, rep))
            print(f"  {time.perf_counter() - t0:.0f} s", flush=True)
    info["uptime_end"] = uptime()
    info["load_end"] = load_avg()
    info["wall_s"] = time.perf_counter() - t_start
    text = (report_agents if args.agents else report)(info, rows, args)
    print()
    print(text)
    print(f"\n(total {info['wall_s']:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(dict(machine=info, rows=rows,
                                             args={k: (str(v) if isinstance(v, Path) else v)
                                                   for k, v in vars(args).items()}), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
