"""Evaluate a racer run (``TrackGen-Drone-Gates-Race-v0``) on the held-out courses of ``gates-v1``,
on one of three plants.

The main job already flies the racer on ``gates-v1`` with its ``-Play`` env, the centre plant (a
task no suite names flies its family's suite: ``evaluate.suite_of_task``): ``--dynamics centre``.
This adds the other cases on the same courses: ``--dynamics randomized`` flies the training cfg (a
plant drawn per course, observation noise), ``--dynamics ideal`` the gate task's drone (no drag, no
latency, no noise: the edge of the randomized ranges)::

    python -m track_gen_isaac.tasks.race_eval logs/rsl_rl/trackgen_drone_race/<run> --dynamics randomized

``--suite NAME`` flies another suite's courses (e.g. ``gates-hard-v1``), ``--layout FILE`` a real
layout (zero-shot, with the racer's ``-Play`` env in place of the gate task's).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from track_gen_isaac.device import default_device

__all__ = ["racer_suite", "main"]

RACE_TASK = "TrackGen-Drone-Gates-Race-v0"


DYNAMICS = ("centre", "randomized", "ideal")


def racer_suite(dynamics: str = "centre", task: str = RACE_TASK, suite: str | None = None,
                layout: str | None = None):
    """The racer's suite (``evaluate.suite_of_task``: its family's courses, the ``-Play`` env, the
    centre plant; ``suite``: that suite's courses instead, e.g. ``gates-hard-v1``; ``layout``: a
    real layout file's suite, :func:`~track_gen_isaac.evaluate.layout_suite.layout_suite`, flown
    by the racer's ``-Play`` env instead of the gate task's); ``randomized``: the same courses
    flown with the training cfg (with the body's own box, not the training's safety margin);
    ``ideal``: the ``-Play`` env without its randomization event (the model as the gate task
    flies it)."""
    from track_gen_isaac.evaluate import get_suite, suite_of_task
    from track_gen_isaac.evaluate.layout_suite import layout_suite
    from track_gen_isaac.main_job import play_task_of
    from track_gen_isaac.tasks.drone_racer import BODY_OVERRIDES, IDEAL_OVERRIDES

    if dynamics not in DYNAMICS:
        raise ValueError(f"dynamics: expected one of {DYNAMICS}, got {dynamics!r}")
    if suite is not None and layout is not None:
        raise ValueError(f"suite={suite!r} and layout={layout!r}: give one of them")
    if layout is not None:
        suite = dataclasses.replace(layout_suite(layout), task=play_task_of(task))
    elif suite is None:
        suite = suite_of_task(task)
    else:
        suite = dataclasses.replace(get_suite(suite), task=play_task_of(task))
    if dynamics == "randomized":  # the training cfg, but the body's own box (not its safety margin)
        return dataclasses.replace(suite, task=task, env_overrides={**suite.env_overrides, **BODY_OVERRIDES})
    return dataclasses.replace(suite, env_overrides=dict(IDEAL_OVERRIDES)) if dynamics == "ideal" else suite


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m track_gen_isaac.tasks.race_eval", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--task", default=RACE_TASK)
    ap.add_argument("--eval_courses", type=int, default=64)
    ap.add_argument("--dynamics", choices=DYNAMICS, default="centre")
    ap.add_argument("--suite", default=None, help="a suite's courses instead of the task family's (e.g. gates-hard-v1)")
    ap.add_argument("--layout", default=None, metavar="FILE",
                    help="a real layout file instead (e.g. track_gen/layouts/data/lsy_level0.toml), flown zero-shot")
    ap.add_argument("--no-baselines", dest="baselines", action="store_false",
                    help="skip the zero-action and random floors (the same for every policy on these courses)")
    ap.add_argument("--play_steps", type=int, default=750)
    ap.add_argument("--play_envs", type=int, default=16)
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    device = args.device or default_device()
    run_dir = Path(args.run_dir)

    from track_gen_isaac.evaluate import evaluate
    from track_gen_isaac.main_job import _ci, _num, play_task_of
    from track_gen_isaac.play import play

    suite = racer_suite(args.dynamics, task=args.task, suite=args.suite, layout=args.layout)
    if args.play_steps > 0:
        stats = play(play_task_of(args.task), run_dir, num_envs=args.play_envs, steps=args.play_steps, device=device,
                     seed=suite.seed, out=run_dir / "report")
        base = stats["baselines"]
        print(f"[race] gates per episode: policy {stats['gates_per_episode']:.2f} | zero action "
              f"{base.get('zero', {}).get('gates_per_episode', float('nan')):.2f} | random "
              f"{base.get('random', {}).get('gates_per_episode', float('nan')):.2f}; lap rate "
              f"{stats['lap_rate']:.2f}, crash rate {stats['crash_rate']:.2f}", flush=True)
    t0 = time.perf_counter()
    out = run_dir / "report" / (f"eval-{args.dynamics}" + (f"-{suite.name}" if args.suite or args.layout else ""))
    ev = evaluate(run_dir, suite, num_courses=args.eval_courses, device=device, out=out,
                  baselines=args.baselines)["suites"][suite.name]
    print(f"[race] held-out {suite.name} with {suite.task} ({args.eval_courses} courses, "
          f"{time.perf_counter() - t0:.0f} s): completion {ev['completion_rate']:.2f} {_ci(ev['completion_rate_ci95'])}, "
          f"gates per course {ev['gates_per_course']:.2f}, lap {_num(ev['lap_time_mean_s'])} s = "
          f"{_num(ev['lap_time_ratio'])} x the minimum-time reference {_ci(ev.get('lap_time_ratio_ci95'))}, "
          f"crash rate {ev['crash_rate']:.2f}; {out}", flush=True)
    (out / "race_eval.json").write_text(json.dumps({"suite": dataclasses.asdict(suite), "dynamics": args.dynamics},
                                                   indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
