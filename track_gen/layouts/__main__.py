"""Command line of :mod:`track_gen.layouts`.

``python -m track_gen.layouts coverage FILE... [--preset NAME] [--scale S] [--set NAME=VALUE ...]``
prints, for each layout file (or every layout in a folder), the table of
:func:`track_gen.layouts.coverage`: does the preset's course distribution cover that layout, feature
by feature. Gate layouts take a gate preset (default ``gates_real``), band tracks (race circuits,
``*.csv`` or ``kind = "track"`` files) a track preset (default ``track``); ``--scale`` resizes every
layout first (``load(path, scale=S)``). Exit status 0 when every layout is covered, 1 when one is not.
"""

from __future__ import annotations

import argparse
import dataclasses
import ast
import sys

#: the presets the command line knows (``--preset``) by the layout kind they draw; ``gates`` flies 1 m
#: openings, as the gate task; ``track`` is ``presets.track`` (the default band track), ``track_hard`` at
#: difficulty 1, ``track_car`` is ``presets.track_car`` at the layouts' ``--scale`` (1 without it)
PRESETS = {"gates_real": "gates", "gates": "gates", "gates_hard": "gates", "track": "track", "track_hard": "track",
           "track_car": "track"}
#: the preset a layout of each kind gets without ``--preset``
DEFAULT_PRESET = {"gates": "gates_real", "track": "track"}


def _preset(name: str, num_envs: int, overrides: dict, scale: float | None = None):
    from track_gen.pipeline import presets

    if name == "track_car":
        return presets.track_car(num_envs, "cpu", **{"scale": 1.0 if scale is None else scale, **overrides})
    if name == "gates":
        return presets.gates(num_envs, "cpu", **{"gate_width": 1.0, **overrides})
    if name == "gates_hard":
        return presets.gates(num_envs, "cpu", **{"gate_width": 1.0, "difficulty": 1.0, **overrides})
    if name == "track":
        return presets.track(num_envs, "cpu", **overrides)
    if name == "track_hard":
        return presets.track(num_envs, "cpu", **{"difficulty": 1.0, **overrides})
    return presets.gates_real(num_envs, "cpu", **overrides)


def _value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m track_gen.layouts", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    cov = sub.add_parser("coverage", help="does a preset's course distribution cover these layouts?")
    cov.add_argument("files", nargs="+", metavar="FILE", help="layout files or folders of them")
    cov.add_argument("--preset", choices=tuple(PRESETS), default=None,
                     help="the course distribution (default: gates_real for gate layouts, track for band tracks)")
    cov.add_argument("--scale", type=float, default=None, help="multiply every length of each layout (e.g. 0.1)")
    cov.add_argument("--set", dest="overrides", action="append", default=[], metavar="NAME=VALUE",
                     help="a preset keyword override (repeatable), e.g. --set gate_width=0.8")
    cov.add_argument("--num_envs", type=int, default=4096)
    cov.add_argument("--seed", type=int, default=0)
    cov.add_argument("--min_support", type=float, default=None,
                     help="least share of the distribution's legs like each of a gate layout's legs (default 0.001)")
    cov.add_argument("--strict", action="store_true",
                     help="exit 1 unless every gate layout is also supported leg by leg (not only feature by feature)")
    cov.add_argument("--lsy_axis", choices=("x", "y"), default=None,
                     help="gate-pass axis for lsy_drone_racing level files (see docs/user-guide/real-tracks.rst)")
    args = ap.parse_args(argv)
    overrides = {}
    for item in args.overrides:
        name, eq, text = item.partition("=")
        if not eq or not name:
            ap.error(f"--set: expected NAME=VALUE, got {item!r}")
        overrides[name] = _value(text)
    if args.num_envs < 1:
        ap.error(f"--num_envs: expected >= 1, got {args.num_envs}")

    from track_gen.layouts.coverage import coverage
    from track_gen.layouts.reader import layout_files, load
    from track_gen.layouts.types import TrackLayout

    try:
        files = layout_files(args.files)
        layouts = [load(path, lsy_axis=args.lsy_axis, scale=args.scale) for path in files]
    except (FileNotFoundError, ValueError) as exc:
        raise SystemExit(f"coverage: {exc}") from None
    specs: dict[str, object] = {}
    all_covered = True
    for path, layout in zip(files, layouts):
        kind = "track" if isinstance(layout, TrackLayout) else "gates"
        name = args.preset or DEFAULT_PRESET[kind]
        if PRESETS[name] != kind:
            raise SystemExit(f"coverage: {path} is a {'band track' if kind == 'track' else 'gate layout'}; --preset "
                             f"{name} draws {'gate courses' if kind == 'track' else 'band tracks'}: use one of "
                             f"{[n for n, k in PRESETS.items() if k == kind]}")
        if name not in specs:
            specs[name] = _preset(name, args.num_envs, overrides, args.scale)
        extra = {} if args.min_support is None else {"min_support": args.min_support}
        try:
            res = coverage(layout, specs[name], num_envs=args.num_envs, seed=args.seed, **extra)
        except ValueError as exc:
            raise SystemExit(f"coverage: {exc}") from None
        res = dataclasses.replace(res, source=f"preset {name}")
        print(res, end="\n\n")
        all_covered &= res.supported if args.strict else res.covered
    return 0 if all_covered else 1


if __name__ == "__main__":
    sys.exit(main())
