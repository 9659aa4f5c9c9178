"""``python -m track_gen_isaac.report curve <run_dir> [--out PNG] [--tags ...]``: a run's learning curve."""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Sequence

from track_gen_isaac.report.figures import plot_learning_curve
from track_gen_isaac.report.scalars import read_scalars, steps_per_iteration_from_params

__all__ = ["main"]

DESCRIPTION = "Training and playback reports: learning curves, top-down flight paths, a summary table."


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m track_gen_isaac.report curve <run_dir> [--out PNG] [--tags ...]``."""
    parser = argparse.ArgumentParser(prog="python -m track_gen_isaac.report", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="cmd", required=True)
    curve = sub.add_parser("curve", help="learning curve PNG of an rsl_rl run folder")
    curve.add_argument("run_dir", type=pathlib.Path, help="logs/rsl_rl/<experiment>/<timestamp>")
    curve.add_argument("--out", type=pathlib.Path, default=None, help="PNG (default <run_dir>/learning_curve.png)")
    curve.add_argument("--tags", nargs="+", default=None, help="tags or fnmatch patterns, one panel each")
    curve.add_argument("--steps-per-iteration", type=int, default=None,
                       help="env steps per iteration for the top axis (default: from params/*.yaml; 0: none)")
    curve.add_argument("--list", action="store_true", help="also print every scalar tag and its last value")
    args = parser.parse_args(argv)

    try:
        spi = args.steps_per_iteration
        if spi is None:
            spi = steps_per_iteration_from_params(args.run_dir)
        out = plot_learning_curve(args.run_dir, args.out, args.tags, steps_per_iteration=spi or None)
        if args.list:
            for tag, (steps, values) in read_scalars(args.run_dir).items():
                print(f"{tag}: {len(steps)} points, last step {steps[-1]} = {values[-1]:.6g}")
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0
