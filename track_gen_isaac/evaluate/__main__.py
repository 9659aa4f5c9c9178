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
    ap.add_argument("--suite", default="gates-v1", help="suite name (--list)")
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

    try:
        res = evaluate(args.checkpoint, args.suite, num_courses=args.num_courses, out=args.out, device=args.device,
                       baselines=args.baselines)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    s = res["suites"][args.suite]
    keys = ("completion_rate", "gates_per_course", "lap_time_mean_s", "reference_lap_time_mean_s", "lap_time_ratio",
            "crash_rate")
    print(json.dumps({k: s[k] for k in keys} | {f"{k}_ci95": s[f"{k}_ci95"] for k in keys}))
    print(f"[track_gen] wrote {res['out']}/eval.json, eval.md, lap_time_ratio.png, best_worst.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
