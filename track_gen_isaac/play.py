"""Bounded playback of a trained drone racer, and the report it writes.

``isaaclab play`` runs until killed; this runs a fixed number of env steps, counts what happened
and writes a report into the run folder (or ``--out``)::

    python -m track_gen_isaac.play --task TrackGen-Drone-Gates-Play-v0 --checkpoint logs/rsl_rl/<exp>/<run>

* ``learning_curve.png``: the run's tensorboard scalars (:func:`track_gen_isaac.report.plot_learning_curve`).
* ``trajectories.png``: each of the first envs' first episode, top down, over its own course.
* ``summary.json`` / ``summary.md``: gates (checkpoints) per episode, lap, crash and time-out
  rates, env steps per second, for the policy and (``--baselines``) a zero-action and a uniform
  random policy played on the same env for the same number of steps.

An episode counts when it ends inside the window (its gates are those passed from its start,
or from the window's start for the envs' first episodes); crash = ended by any termination
term other than ``time_out`` and ``laps``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from track_gen_isaac.policy_average import AVERAGE_NAME, run_checkpoints

__all__ = ["main", "play", "resolve_checkpoint"]

_NOT_CRASH = ("time_out", "laps")


def resolve_checkpoint(path: str | Path) -> Path:
    """A model file; for a run folder its averaged policy (``model_average.pt``, which the main job
    writes: :mod:`track_gen_isaac.policy_average`) where there is one, else its newest
    ``model_<iteration>.pt``."""
    p = Path(path)
    if p.is_file():
        return p
    if not p.is_dir():
        raise FileNotFoundError(f"checkpoint not found: {p}")
    if (p / AVERAGE_NAME).is_file():
        return p / AVERAGE_NAME
    models = run_checkpoints(p)
    if not models:
        raise FileNotFoundError(f"no model_<iteration>.pt in {p}")
    return models[-1]


def _course_snapshot(ec, e: int) -> dict:
    """Env ``e``'s current course as plain arrays (env frame) for the trajectory plot: the dict
    :func:`track_gen.plot.draw_course` draws."""
    line = ec.course.course_line.line
    n = int(line.count.numpy()[e])
    out: dict = {"line": line.points.numpy()[e, :n].copy(), "closed": bool(line.closed.numpy()[e])}
    r = ec.course.result
    if ec.mode == "gates":
        out["gates"] = {"pos": r.pos.numpy()[e].copy(), "yaw": r.yaw.numpy()[e].copy(),
                        "width": float(r.width.numpy()[e]), "count": int(r.count.numpy()[e]),
                        "closed": bool(out["closed"])}
    else:
        k = r.xy.shape[1]
        z = r.z.numpy()[e] if getattr(r, "z", None) is not None else np.zeros(k, np.float32)
        out["line"] = np.concatenate([r.xy.numpy()[e], z[:, None]], axis=1)
        out["half_width"] = r.half_width.numpy()[e].copy()
    return out


def _rollout(env, act, steps: int, record: int) -> dict:
    """Step ``env`` (an RslRlVecEnvWrapper) ``steps`` times with ``act(obs)``; count episodes, gates,
    laps and terminations; keep the first ``record`` envs' first episode (positions, course)."""
    import torch

    from track_gen_isaac.env_course import get_course

    base = env.unwrapped
    ec = get_course(base)
    tm = base.termination_manager
    names = list(tm.active_terms)
    E = base.num_envs
    robot = ec.asset
    origins = base.scene.env_origins
    gates_now = torch.zeros(E, dtype=torch.long)
    laps_now = torch.zeros(E, dtype=torch.long)
    ep_gates, ep_laps, ep_end = [], [], []
    rec = min(record, E)
    paths = [[] for _ in range(rec)]
    crashes = [None] * rec
    done_rec = [False] * rec
    courses = [_course_snapshot(ec, e) for e in range(rec)]
    obs = env.get_observations()
    t0 = time.perf_counter()
    with torch.inference_mode():
        for _ in range(steps):
            before = (robot.data.root_pos_w.torch - origins).cpu().numpy().copy()
            obs, _, dones, _ = env.step(act(obs))
            res = ec.step()
            gates_now += torch.as_tensor(res.events.passed.numpy(), dtype=torch.long)
            laps_now += torch.as_tensor(res.events.lap.numpy(), dtype=torch.long)
            d = dones.to("cpu").bool()
            term = {n: tm.get_term(n).to("cpu").bool() for n in names}
            for e in range(rec):
                if not done_rec[e]:
                    paths[e].append(before[e])
                    if d[e]:
                        done_rec[e] = True
                        if any(term[n][e] for n in names if n not in _NOT_CRASH):
                            crashes[e] = before[e][None]
            for e in torch.nonzero(d).flatten().tolist():
                ep_gates.append(int(gates_now[e]))
                ep_laps.append(int(laps_now[e]))
                ep_end.append(next((n for n in names if term[n][e] and n not in _NOT_CRASH), None)
                              or next((n for n in names if term[n][e]), "time_out"))
                gates_now[e] = 0
                laps_now[e] = 0
    wall = time.perf_counter() - t0
    n = len(ep_gates)
    crash = sum(1 for k in ep_end if k not in _NOT_CRASH)
    return {
        "steps": steps, "num_envs": E, "episodes": n,
        "gates_per_episode": float(np.mean(ep_gates)) if n else float(gates_now.float().mean()),
        "gates_per_episode_max": int(max(ep_gates)) if n else int(gates_now.max()),
        "lap_rate": float(np.mean([k > 0 for k in ep_laps])) if n else 0.0,
        "crash_rate": crash / n if n else 0.0,
        "timeout_rate": sum(1 for k in ep_end if k == "time_out") / n if n else 0.0,
        "endings": {k: ep_end.count(k) for k in sorted(set(ep_end))},
        "env_steps_per_s": E * steps / wall,
        "_paths": [np.asarray(p) for p in paths], "_courses": courses, "_crashes": crashes,
    }


def play(task: str, checkpoint: str | Path | None, *, num_envs: int | None = None, steps: int = 750,
         device: str | None = None, seed: int = 0, out: str | Path | None = None, baselines: bool = True,
         record: int = 8) -> dict:
    """Build ``task``, load ``checkpoint`` (None: only the baselines), play, write the report.
    Returns the summary dict."""
    import gymnasium as gym
    import torch
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper
    from isaaclab_rl.rsl_rl.utils import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401  (registers the tasks)
    from track_gen_isaac import report
    from track_gen_isaac.evaluate.rollout import load_policy

    if steps < 1:
        raise ValueError(f"steps: expected >= 1, got {steps}")
    ckpt = resolve_checkpoint(checkpoint) if checkpoint is not None else None
    out_dir = Path(out) if out is not None else (ckpt.parent / "report" if ckpt is not None else Path("report"))
    out_dir.mkdir(parents=True, exist_ok=True)
    env_cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    agent_cfg = handle_deprecated_rsl_rl_cfg(load_cfg_from_registry(task, "rsl_rl_cfg_entry_point"),
                                             check_rsl_rl_version())
    if num_envs is not None:
        env_cfg.scene.num_envs = int(num_envs)
    if device is not None:
        env_cfg.sim.device = device
        agent_cfg.device = device
    env_cfg.seed = int(seed)
    if hasattr(env_cfg, "course"):
        env_cfg.course.debug_vis = False  # headless: nothing to draw
    env = RslRlVecEnvWrapper(gym.make(task, cfg=env_cfg), clip_actions=agent_cfg.clip_actions)
    base = env.unwrapped
    E = base.num_envs
    A = base.action_manager.total_action_dim
    dev = base.device
    results = {}
    try:
        if ckpt is not None:
            # the checkpoint's own networks (a run trained with agent.critic.hidden_dims=... plays too)
            policy = load_policy(env, agent_cfg, ckpt, task)
            print(f"[track_gen] playing {ckpt} on {task}: {E} envs x {steps} steps", flush=True)
            results["policy"] = _rollout(env, policy, steps, record)
        if baselines or ckpt is None:
            gen = torch.Generator(device="cpu").manual_seed(seed)
            for name, act in (("zero", lambda o: torch.zeros(E, A, device=dev)),
                              ("random", lambda o: (torch.rand(E, A, generator=gen) * 2 - 1).to(dev))):
                env.reset()
                print(f"[track_gen] baseline {name!r}: {E} envs x {steps} steps", flush=True)
                results[name] = _rollout(env, act, steps, 0)
    finally:
        env.close()

    main_key = "policy" if "policy" in results else "zero"
    r = results[main_key]
    stats = {"task": task, "checkpoint": str(ckpt) if ckpt else None, "step_dt": float(base.step_dt),
             **{k: v for k, v in r.items() if not k.startswith("_")}}
    stats["baselines"] = {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")}
                          for k, v in results.items() if k != main_key}
    files = list(report.write_summary(out_dir, stats))
    titles = [f"env {e}: {len(p)} steps" + (" (crash)" if r["_crashes"][e] is not None else "")
              for e, p in enumerate(r["_paths"])]
    if r["_paths"]:
        files.append(report.plot_trajectories(out_dir / "trajectories.png", r["_courses"], r["_paths"],
                                               titles=titles, crashes=r["_crashes"], dt=float(base.step_dt)))
    if ckpt is not None:
        try:
            files.append(report.plot_learning_curve(ckpt.parent, out_dir / "learning_curve.png"))
        except FileNotFoundError as exc:  # a checkpoint copied without its event files
            print(f"[track_gen] no learning curve: {exc}", flush=True)
    for f in files:
        print(f"[track_gen] wrote {f}", flush=True)
    print(json.dumps({k: stats[k] for k in ("gates_per_episode", "lap_rate", "crash_rate", "env_steps_per_s")}
                     | {"baselines": {k: round(v["gates_per_episode"], 3) for k, v in stats["baselines"].items()}}),
          flush=True)
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m track_gen_isaac.play", description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="TrackGen-Drone-Gates-Play-v0")
    ap.add_argument("--checkpoint", default=None,
                    help="model_<it>.pt or a run folder (its model_average.pt, else its newest model); omit to "
                         "play only the baselines")
    ap.add_argument("--num_envs", type=int, default=None)
    ap.add_argument("--steps", type=int, default=750, help="env steps to play (default 750 = 15 s at 50 Hz)")
    ap.add_argument("--device", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="report folder (default <run folder>/report)")
    ap.add_argument("--no-baselines", dest="baselines", action="store_false")
    args = ap.parse_args(argv)
    play(args.task, args.checkpoint, num_envs=args.num_envs, steps=args.steps, device=args.device, seed=args.seed,
         out=args.out, baselines=args.baselines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
