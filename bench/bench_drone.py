#!/usr/bin/env python
"""Env steps per second of the drone-racing tasks, in both Isaac Lab runtimes, on the CPU.

For each task (``--tasks``), each E (``--envs``) and each variant it builds the task's env from
the gym registry, resets it and steps it with seeded uniform random actions in [-0.3, 0.3]
(episodes end and reset as in training, so reset events, course regeneration and placement are
part of the cost), times ``--steps`` steps after ``--warmup`` and reports env steps per second.

Variants:

* ``stable``: ``ManagerBasedRLEnv`` (the task as registered);
* ``warp``: ``ManagerBasedRLEnvWarp`` on the same cfg (``-Warp-`` id: terms swapped to their warp
  twins, every manager stage recorded once and replayed);
* ``mjwarp-defaults``: the stable env with MuJoCo-Warp's default solver settings (contacts,
  100 iterations) instead of the task's contact-free settings -- the baseline for the solver
  choice;
* ``eager-physics``: the stable env with the physics step run eagerly (``use_cuda_graph=False``)
  instead of recorded once and replayed (:mod:`track_gen_isaac.physics_graph`) -- the baseline
  for recording it on the CPU.

Ratios are against ``stable`` of the same task and E, and (step time) against the Gates task of the
same E and variant (the cost of what a task adds, e.g. the depth image of ``Gates-Depth``), measured
in the same run. Run from the
repository root::

    PYTHONPATH=. python bench/bench_drone.py                      # gates + track, E = 256, 1024
    PYTHONPATH=. python bench/bench_drone.py --tasks Gates --envs 1024 --steps 100
    PYTHONPATH=. python bench/bench_drone.py --tasks Gates Gates-Depth --envs 256 --variants stable warp
"""

from __future__ import annotations

import argparse
import gc
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

VARIANTS = ("stable", "warp", "mjwarp-defaults", "eager-physics")
#: the task families (``TrackGen-Drone-<family>-v0``) this benchmark builds
TASKS = ("Gates", "Track", "Gates-Depth", "Gates-Race", "Gates-Real")


def bench_one(family: str, variant: str, num_envs: int, args) -> dict:
    import gymnasium as gym
    import torch
    from isaaclab_newton.physics import MJWarpSolverCfg, NewtonCfg
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401

    task = f"TrackGen-Drone-{family}{'-Warp' if variant == 'warp' else ''}-v0"
    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs = num_envs
    cfg.sim.device = "cpu"
    cfg.seed = 0
    if variant == "mjwarp-defaults":
        cfg.sim.physics = NewtonCfg(solver_cfg=MJWarpSolverCfg())
    elif variant == "eager-physics":
        cfg.sim.physics.use_cuda_graph = False
    env = gym.make(task, cfg=cfg)
    gen = torch.Generator().manual_seed(0)
    env.reset()
    acts = [torch.rand(num_envs, 4, generator=gen) * 0.6 - 0.3 for _ in range(args.warmup + args.steps)]
    resets = 0
    for a in acts[: args.warmup]:
        env.step(a)
    t0 = time.perf_counter()
    for a in acts[args.warmup:]:
        _, _, term, trunc, _ = env.step(a)
        resets += int((term | trunc).sum())
    dt = time.perf_counter() - t0
    env.close()
    del env
    gc.collect()
    return {"task": family, "variant": variant, "E": num_envs, "ms": 1e3 * dt / args.steps,
            "sps": num_envs * args.steps / dt, "resets": resets}


def report(rows: list[dict], args) -> str:
    lines = [f"# bench_drone: env steps/s of the drone tasks, CPU ({machine_info()}; load {load_avg()})",
             f"# {args.steps} timed steps after {args.warmup}, random actions in [-0.3, 0.3]",
             "| task | E | variant | ms / env step | env steps / s | x stable | step time x Gates | resets |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    base = {(r["task"], r["E"]): r["sps"] for r in rows if r["variant"] == "stable"}
    gates = {(r["E"], r["variant"]): r["ms"] for r in rows if r["task"] == "Gates"}
    for r in rows:
        b = base.get((r["task"], r["E"]))
        ratio = f"{r['sps'] / b:.2f}" if b else "-"
        g = gates.get((r["E"], r["variant"]))
        vs = f"{r['ms'] / g:.2f}" if g and r["task"] != "Gates" else "-"
        lines.append(f"| {r['task']} | {r['E']} | {r['variant']} | {r['ms']:.1f} | {r['sps']:,.0f} | {ratio} | {vs} | "
                     f"{r['resets']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=["Gates", "Track"], choices=TASKS)
    ap.add_argument("--envs", nargs="+", type=int, default=[256, 1024])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args(argv)
    rows = []
    for family in args.tasks:
        for E in args.envs:
            for variant in args.variants:
                r = bench_one(family, variant, E, args)
                print(f"# {family} E={E} {variant}: {r['ms']:.1f} ms/step, {r['sps']:,.0f} env steps/s", flush=True)
                rows.append(r)
    print(report(rows, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
