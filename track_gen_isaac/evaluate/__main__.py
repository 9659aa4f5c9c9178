"""``python -m track_gen_isaac.evaluate``: the command line of :func:`track_gen_isaac.evaluate.evaluate`.

One command for every task: the checkpoint's own task (from its run's ``run.json``, or ``--task``)
flies a held-out suite (``--suite``, default its family's) or real layouts (``--layout`` FILE or
folder, several allowed: one table over them), on the plant ``--dynamics centre|randomized|ideal``.
A head-to-head suite (``--suite duel-v1``) races the checkpoint against ``--opponent RUN|self``
(:mod:`~track_gen_isaac.evaluate.duel`).
"""

from __future__ import annotations

import argparse
import json
import sys

from track_gen_isaac.evaluate.flown import DYNAMICS
from track_gen_isaac.evaluate.suites import TRAINING_SEEDS, list_suites

_KEYS = ("completion_rate", "gates_per_course", "first_lap_time_mean_s", "reference_first_lap_time_mean_s",
         "first_lap_ratio", "lap_time_mean_s", "reference_lap_time_mean_s", "lap_time_ratio", "crash_rate")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m track_gen_isaac.evaluate",
                                 description="Fly a checkpoint's own task over a held-out course suite or real "
                                             "layouts; lap times against the minimum-time reference.")
    ap.add_argument("--checkpoint", help="model_<it>.pt or a run folder (its model_average.pt where the main job "
                                         "wrote one, else its newest model)")
    ap.add_argument("--suite", default=None, help="suite name (--list; default: the task's family suite)")
    ap.add_argument("--layout", nargs="+", default=None, metavar="FILE",
                    help="real layout files or folders of them instead of a suite (track_gen.layouts format or "
                         "lsy_drone_racing configs): each flown --num_courses times from its start pose, gates "
                         "jittered by its tolerance (5 cm where the file gives none); results under "
                         "eval/<layout name>, one table in eval/layouts.md")
    ap.add_argument("--task", default=None,
                    help="the task whose env flies the checkpoint (default: the run's own, from its run.json)")
    ap.add_argument("--dynamics", choices=DYNAMICS, default="centre",
                    help="centre: the task's -Play env; randomized: the training cfg (body's own box); ideal: the "
                         "-Play env without its randomization event")
    ap.add_argument("--lsy_axis", default=None, choices=("x", "y"),
                    help="with --layout: the gate-pass axis of an lsy_drone_racing level file (x: files from "
                         "2025-10-20 on, y: older ones)")
    ap.add_argument("--scale", type=float, default=None,
                    help="with --layout: multiply every length of the layout (a TUM circuit CSV or a shipped circuit "
                         "is full size); default: the task's own scale (0.1 for the car task), else 1")
    ap.add_argument("--num_courses", type=int, default=None, help="courses of a suite (default 256) or runs of "
                                                                  "each layout (default 32)")
    ap.add_argument("--out", default=None, help="output folder (default <run folder>/eval/<suite>)")
    ap.add_argument("--device", default=None, help="default: cuda:0 when a GPU is visible, else cpu")
    ap.add_argument("--no-baselines", dest="baselines", action="store_false",
                    help="skip the zero-action and random floors")
    ap.add_argument("--opponent", default=None, metavar="RUN|self",
                    help="head-to-head suites (duel-v1): the other drone, 'self' (default) or a run folder / model "
                         "file; a one-drone checkpoint flies on its own observations and does not see the other drone")
    ap.add_argument("--list", action="store_true", help="print the suites, one line each, and exit")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(list_suites()))
        print(TRAINING_SEEDS)
        return 0
    if not args.checkpoint:
        ap.error("--checkpoint is required (or --list)")
    if args.layout is not None and args.suite is not None:
        ap.error("pass --suite or --layout, not both")
    if args.lsy_axis is not None and args.layout is None:
        ap.error("--lsy_axis applies to --layout")
    if args.scale is not None and args.layout is None:
        ap.error("--scale applies to --layout")
    if args.scale is not None and not args.scale > 0:
        ap.error(f"--scale: expected a length factor > 0, got {args.scale}")
    if args.num_courses is not None and args.num_courses < 1:
        ap.error(f"--num_courses: expected an integer >= 1, got {args.num_courses}")
    from track_gen.layouts import layout_files
    from track_gen_isaac.evaluate.duel import evaluate_duel, is_duel_suite
    from track_gen_isaac.evaluate.run import evaluate, evaluate_layouts

    try:
        duel = is_duel_suite(args.suite)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.opponent is not None and not duel:
        ap.error("--opponent races two drones: pass a head-to-head suite (--suite duel-v1)")
    if duel:
        try:
            res = evaluate_duel(args.checkpoint, args.suite, opponent=args.opponent or "self",
                                num_courses=args.num_courses or 64, out=args.out, device=args.device)
        except (ValueError, FileNotFoundError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        name, s = next(iter(res["suites"].items()))
        keys = ("win_rate", "loss_rate", "agent_collision_rate", "completion_rate", "crash_rate", "first_lap_ratio")
        print(json.dumps({k: s[k] for k in keys} | {f"{k}_ci95": s[f"{k}_ci95"] for k in keys}
                         | {"opponent_completion_rate": s["opponent"]["completion_rate"]}))
        print(f"[track_gen] {name}: {res['checkpoint']} vs {res['opponent']}: wrote {res['out']}/eval.json, eval.md, "
              f"best_worst.png")
        return 0

    common = {"out": args.out, "device": args.device, "baselines": args.baselines, "task": args.task,
              "dynamics": args.dynamics}
    try:
        if args.layout is not None:
            files = layout_files(args.layout)
            n = args.num_courses or 32
            common["scale"] = args.scale
            if len(files) == 1:
                res = evaluate(args.checkpoint, layout=files[0], lsy_axis=args.lsy_axis, num_courses=n, **common)
            else:
                res = evaluate_layouts(args.checkpoint, files, lsy_axis=args.lsy_axis, num_courses=n, **common)
                for name, s in res["layouts"].items():
                    print(json.dumps({"layout": name} | {k: s.get(k) for k in _KEYS}))
                print(f"[track_gen] {len(res['layouts'])} layouts: wrote {res['out']}/layouts.json, layouts.md")
                return 0
        else:
            res = evaluate(args.checkpoint, args.suite, num_courses=args.num_courses or 256, **common)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    name, s = next(iter(res["suites"].items()))
    print(json.dumps({k: s[k] for k in _KEYS} | {f"{k}_ci95": s[f"{k}_ci95"] for k in _KEYS}))
    pics = "lap_time_ratio.png, best_worst.png" + (", paths.png" if s["suite"].get("layout") else "")
    print(f"[track_gen] {name} flown by {s['suite']['task']}: wrote {res['out']}/eval.json, eval.md, {pics}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
