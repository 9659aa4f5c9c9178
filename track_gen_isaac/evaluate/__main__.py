"""``python -m track_gen_isaac.evaluate``: the command line of :func:`track_gen_isaac.evaluate.evaluate`."""

from __future__ import annotations

import argparse
import json
import sys

from track_gen_isaac.evaluate.suites import TRAINING_SEEDS, list_suites


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m track_gen_isaac.evaluate",
                                 description="Fly a checkpoint over a held-out course suite; lap times against the "
                                             "minimum-time reference.")
    ap.add_argument("--checkpoint", help="model_<it>.pt or a run folder (its newest model)")
    ap.add_argument("--suite", default=None, help="suite name (--list; default gates-v1)")
    ap.add_argument("--layout", default=None, metavar="FILE",
                    help="evaluate on one real layout file instead of a suite (track_gen.layouts format or an "
                         "lsy_drone_racing config): flown --num_courses times from its start pose, gates jittered "
                         "by its tolerance; results under eval/<layout name>")
    ap.add_argument("--lsy_axis", default=None, choices=("x", "y"),
                    help="with --layout: the gate-pass axis of an lsy_drone_racing level file (x: files from "
                         "2025-10-20 on, y: older ones)")
    ap.add_argument("--num_courses", type=int, default=256)
    ap.add_argument("--out", default=None, help="output folder (default <run folder>/eval/<suite>)")
    ap.add_argument("--device", default=None, help="default: cuda:0 when a GPU is visible, else cpu")
    ap.add_argument("--no-baselines", dest="baselines", action="store_false",
                    help="skip the zero-action and random floors")
    ap.add_argument("--list", action="store_true", help="print the suites, one line each, and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(list_suites()))
        print(TRAINING_SEEDS)
        return 0
    if not args.checkpoint:
        ap.error("--checkpoint is required (or --list)")
    from track_gen_isaac.evaluate.run import evaluate

    if args.layout is not None and args.suite is not None:
        ap.error("pass --suite or --layout, not both")
    if args.lsy_axis is not None and args.layout is None:
        ap.error("--lsy_axis applies to --layout")
    try:
        res = evaluate(args.checkpoint, args.suite, layout=args.layout, lsy_axis=args.lsy_axis,
                       num_courses=args.num_courses, out=args.out, device=args.device, baselines=args.baselines)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    name, s = next(iter(res["suites"].items()))
    keys = ("completion_rate", "gates_per_course", "first_lap_time_mean_s", "reference_first_lap_time_mean_s",
            "first_lap_ratio", "lap_time_mean_s", "reference_lap_time_mean_s", "lap_time_ratio", "crash_rate")
    print(json.dumps({k: s[k] for k in keys} | {f"{k}_ci95": s[f"{k}_ci95"] for k in keys}))
    pics = "lap_time_ratio.png, best_worst.png" + (", paths.png" if s["suite"].get("layout") else "")
    print(f"[track_gen] {name}: wrote {res['out']}/eval.json, eval.md, {pics}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
