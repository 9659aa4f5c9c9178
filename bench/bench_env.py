#!/usr/bin/env python
"""Env step time of the gate-course task with and without its course terms, on the CPU.

The task is ``tests/isaac/envs.py:GatesEnvCfg`` (Newton on the CPU, a kinematic cuboid robot, a
static ground, decimation 2, no actions): 4 course observation terms, 6 course rewards, 4 course
terminations (+ ``time_out``), 2 course reset events. "without" is the same cfg with every term
whose function comes from ``track_gen_isaac`` removed (set to None) -- scene, sim, decimation,
``time_out`` and everything else kept; no course is then built.

For each runtime (``stable``: ``ManagerBasedRLEnv``; ``warp``: ``ManagerBasedRLEnvWarp`` with the
same cfg, terms swapped to their warp twins, every manager stage recorded and replayed), each E in
--envs and each variant, it builds the env, resets it, runs --warmup steps, then times --repeats
measurements of at least --min-time seconds of ``env.step(zeros)`` each and keeps the best
(mean per step); this is done --rounds times per variant, alternating without/with, and the best
build counts. In the "with" env it also times ``course.step()`` alone
(eager, on the same poses), the core of what the course terms add per env step. The robot does not move, so no env resets during timing (counted and printed).
Run from the repository root::

    PYTHONPATH=. python bench/bench_env.py                   # E = 64, 256, 1024, both runtimes
    PYTHONPATH=. python bench/bench_env.py --quick           # E = 64, short timings
    PYTHONPATH=. python bench/bench_env.py --runtimes stable --envs 256
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import warp as wp  # noqa: E402

wp.config.log_level = wp.LOG_WARNING
wp.config.log_level = wp.LOG_WARNING

from bench.bench_generate import load_avg, machine_info  # noqa: E402


def make_cfg(num_envs: int, course: bool):
    from tests.isaac.envs import GatesEnvCfg

    cfg = GatesEnvCfg()
    cfg.scene.num_envs = num_envs
    if not course:
        groups = [cfg.events, cfg.rewards, cfg.terminations, cfg.observations.policy]
        for group in groups:
            for name, term in list(vars(group).items()):
                func = getattr(term, "func", None)
                if func is not None and getattr(func, "__module__", "").startswith("track_gen_isaac"):
                    setattr(group, name, None)
    return cfg


def bench_one(runtime: str, num_envs: int, course: bool, args) -> dict:
    import torch

    if runtime == "warp":
        from isaaclab_experimental.envs import ManagerBasedRLEnvWarp as Env
    else:
        from isaaclab.envs import ManagerBasedRLEnv as Env
    t0 = time.perf_counter()
    env = Env(make_cfg(num_envs, course))
    env.reset()
    build = time.perf_counter() - t0
    act = torch.zeros(num_envs, 0, device=env.device)
    resets = 0

    def run(n):
        nonlocal resets
        for _ in range(n):
            _, _, term, trunc, _ = env.step(act)
            resets += int((term | trunc).sum())

    run(args.warmup)
    t0 = time.perf_counter()
    run(3)  # calibration, after the warm-up (the first steps compile and record)
    once = (time.perf_counter() - t0) / 3
    n = max(5, math.ceil(args.min_time / max(once, 1e-6)))
    resets = 0
    best = math.inf
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        run(n)
        best = min(best, (time.perf_counter() - t0) / n)
    courses = env.__dict__.get("track_gen_courses", {})
    core = math.nan  # course.step() alone (eager, same env, same poses), best of the repeats
    if courses:
        # the env guards course.step() against a second step per env step: time the core step itself
        core_step = courses["course"]._core_step
        k = max(20, 5 * n)
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for _ in range(k):
                core_step()
            wp.synchronize_device("cpu")
            core = min(core, (time.perf_counter() - t0) / k) if core == core else (time.perf_counter() - t0) / k
    courses = len(courses)
    env.close()
    del env
    gc.collect()
    return dict(runtime=runtime, envs=num_envs, course=course, step_s=best, steps=n, build_s=build,
                resets=resets, courses=courses, core_s=core)


def report(info: dict, rows: list[dict], args) -> str:
    lines = [
        f"machine: {info['cpu']}, {info['cores']} cores ({info['usable_cores']} usable), Python {info['python']}, "
        f"Warp {info['warp']}, git {info['git']}",
        f"date: {info['date']}; load average at start {info['load_start']}, at end {info['load_end']}",
        f"best of {args.rounds} env builds x {args.repeats} measurements of >= {args.min_time} s of env.step, "
        f"after {args.warmup} warm-up steps per build",
        "",
        "| runtime | E | without course: ms/step | env-steps/s | with course: ms/step | env-steps/s | overhead | course.step() ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    by = {(r["runtime"], r["envs"], r["course"]): r for r in rows}
    for rt in args.runtimes:
        for E in args.envs:
            a, b = by.get((rt, E, False)), by.get((rt, E, True))
            if a is None or b is None:
                continue
            lines.append(
                f"| {rt} | {E} | {a['step_s'] * 1e3:.1f} | {E / a['step_s']:,.0f} | {b['step_s'] * 1e3:.1f} | "
                f"{E / b['step_s']:,.0f} | {b['step_s'] / a['step_s']:.2f}x | {b['core_s'] * 1e3:.2f} |")
    lines.append("")
    lines.append("best build: build time, timed steps per measurement, resets during timing, courses built; "
                 "best ms/step of each build:")
    for r in rows:
        lines.append(f"  {r['runtime']:6s} E={r['envs']:5d} {'with   ' if r['course'] else 'without'}: "
                     f"build {r['build_s']:.1f} s, {r['steps']} steps, {r['resets']} resets, {r['courses']} course(s); "
                     f"{r['all_ms']} ms")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", type=int, nargs="+", default=None, help="env counts (default 64 256 1024)")
    ap.add_argument("--runtimes", nargs="+", choices=("stable", "warp"), default=("stable", "warp"))
    ap.add_argument("--quick", action="store_true", help="smoke run: E=64, short timings")
    ap.add_argument("--repeats", type=int, default=None, help="measurements per number, best kept (default 3)")
    ap.add_argument("--min-time", type=float, default=None, help="seconds per measurement at least (default 1.5)")
    ap.add_argument("--rounds", type=int, default=None, help="env builds per variant, alternating (default 2)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed steps after the reset (default 5)")
    args = ap.parse_args(argv)
    args.envs = args.envs or ([64] if args.quick else [64, 256, 1024])
    args.repeats = args.repeats or (2 if args.quick else 3)
    args.min_time = args.min_time or (0.3 if args.quick else 1.5)
    args.warmup = args.warmup or (3 if args.quick else 10)
    args.rounds = args.rounds or (1 if args.quick else 2)

    info = machine_info()
    t_start = time.perf_counter()
    print(f"track_gen env step benchmark: {info['cpu']}, {info['cores']} cores, load {info['load_start']}", flush=True)
    rows = []
    for rt in args.runtimes:
        for E in args.envs:
            best = {}
            for rnd in range(args.rounds):  # without, with, without, with, ...: drifts in load hit both alike
                for course in (False, True):
                    print(f"{rt} E={E} {'with' if course else 'without'} course (round {rnd + 1}) ...", flush=True)
                    r = bench_one(rt, E, course, args)
                    r["all_ms"] = best.get(course, {}).get("all_ms", []) + [round(r["step_s"] * 1e3, 1)]
                    if course not in best or r["step_s"] < best[course]["step_s"]:
                        best[course] = r
                    else:
                        best[course]["all_ms"] = r["all_ms"]
            rows += [best[False], best[True]]
    info["load_end"] = load_avg()
    print()
    print(report(info, rows, args))
    print(f"\n(total {time.perf_counter() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
