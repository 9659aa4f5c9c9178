"""Old and new commit side by side: course.step() and regeneration cost, measured in one run.

A refactor must not slow the hot paths. This script checks out ``--old`` (and ``--new``, default:
the working tree) into temporary git worktrees and times both with the same probe, through the
public API only, in interleaved rounds (old, new, old, new, ...) so load from other jobs hits both
alike; the best round of each is kept and the table prints new / old ratios.

Measured, per family (gates, track) at ``--envs`` envs, all on the CPU:

* ``step``: ``course.step()`` replayed from a CPU graph, ns per env-step, with the bodies moving
  along their courses (the pose write is timed on its own and subtracted);
* ``regen``: a full regeneration (``course.regenerate(advance=True)``), µs per course;
* ``regen 1%``: the same with a fixed 1% mask, µs per call.

Usage (from the repository root)::

    VENV="$(bash scripts/setup.sh | tail -n 1)"
    $VENV/bin/python bench/compare_commits.py --old a97bf84            # old commit vs working tree
    $VENV/bin/python bench/compare_commits.py --old a97bf84 --new HEAD --rounds 7 --envs 4096
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("gates", "track")


# ------------------------------------------------------------------------------------------------
# the probe: runs inside one checkout (PYTHONPATH) and prints one JSON line
# ------------------------------------------------------------------------------------------------
def _best_of(fn, min_time: float) -> float:
    """Mean seconds per call of ``fn`` over at least ``min_time`` seconds (3 calls at least)."""
    fn()
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        dt = time.perf_counter() - t0
        if n >= 3 and dt >= min_time:
            return dt / n


def _course(family: str, E: int):
    from track_gen import tools
    from track_gen.course import Course
    from track_gen.pipeline import presets

    if family == "gates":
        return Course.gates(presets.gates(E, "cpu", gate_width=1.0), collision=0.05, localize_window=8, seeds=1)
    return Course.track(presets.track(E, "cpu"), checkpoint_spacing=1.0, collision="segments",
                        extra=[tools.Localizer(warm_window=8)], seeds=1)


def _trajectory(course, family: str, T: int):
    """``T`` pose arrays [E] vec3f: each body walks its own course (gate to gate, or along the band)."""
    import numpy as np

    r = course.generator.result
    if family == "gates":
        pos, count = r.pos.numpy().astype(np.float64), r.count.numpy()
        E = pos.shape[0]
        out = np.zeros((T, E, 3))
        for t in range(T):
            u = t / 20.0                          # 20 steps from one gate to the next
            g = np.floor(u).astype(int)
            f = u - g
            a = pos[np.arange(E), g % count]
            b = pos[np.arange(E), (g + 1) % count]
            out[t] = a + (b - a) * f
    else:
        xy = r.xy.numpy().astype(np.float64)
        E, N = xy.shape[:2]
        idx = (np.arange(T)[:, None] * 2 + np.zeros((1, E), int)) % N
        out = np.zeros((T, E, 3))
        out[..., :2] = xy[np.arange(E)[None, :], idx]
    return out.astype(np.float32)


def probe(E: int, min_time: float, T: int = 64) -> dict:
    import numpy as np
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    res = {}
    for family in FAMILIES:
        course = _course(family, E)
        traj = _trajectory(course, family, T)
        frames = [wp.array(traj[t], dtype=wp.vec3f) for t in range(T)]
        pos = wp.array(traj[0], dtype=wp.vec3f)
        quat = wp.array(np.tile(np.array([0, 0, 0, 1], np.float32), (E, 1)), dtype=wp.quatf)
        ext = wp.full(E, wp.vec2f(0.12, 0.12), dtype=wp.vec2f)
        course.bind(position=pos, orientation=quat, half_extents=ext)
        course.step()
        with wp.ScopedCapture(device="cpu") as cap:
            course.step()
        k = [0]

        def write():
            k[0] = (k[0] + 1) % T
            wp.copy(pos, frames[k[0]])

        def write_step():
            write()
            wp.capture_launch(cap.graph)

        t_both = _best_of(write_step, min_time)
        t_write = _best_of(write, min_time)
        res[f"{family} step [ns/env-step]"] = max(t_both - t_write, 0.0) / E * 1e9
        res[f"{family} regen [us/course]"] = _best_of(lambda: course.regenerate(advance=True), min_time) / E * 1e6
        mask = wp.array((np.random.default_rng(0).random(E) < 0.01).astype(np.int32), dtype=wp.int32)
        res[f"{family} regen 1% [us/call]"] = _best_of(lambda: course.regenerate(advance=True, mask=mask),
                                                       min_time) * 1e6
    return res


# ------------------------------------------------------------------------------------------------
# the driver
# ------------------------------------------------------------------------------------------------
def _checkout(rev: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(into), rev],
                   check=True, capture_output=True)
    return into


def _run_probe(tree: Path, E: int, min_time: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--probe", "--envs", str(E),
                          "--min-time", str(min_time)], env=env, cwd=str(tree), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"probe in {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=False, help="the baseline revision (a commit, tag or branch)")
    ap.add_argument("--new", default=None, help="the revision to compare (default: the working tree)")
    ap.add_argument("--envs", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per side; the best is kept")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per measurement")
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, default=None, help="also write the raw numbers here")
    args = ap.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.envs, args.min_time)))
        return 0
    if not args.old:
        ap.error("--old is required")
    with tempfile.TemporaryDirectory(prefix="tg_compare_") as tmp:
        trees = {"old": _checkout(args.old, Path(tmp) / "old")}
        trees["new"] = _checkout(args.new, Path(tmp) / "new") if args.new else ROOT
        try:
            rounds: dict[str, list[dict]] = {"old": [], "new": []}
            for i in range(args.rounds):
                for side in ("old", "new") if i % 2 == 0 else ("new", "old"):
                    rounds[side].append(_run_probe(trees[side], args.envs, args.min_time))
                    print(f"round {i + 1}/{args.rounds} {side} done", file=sys.stderr, flush=True)
        finally:
            for side, tree in trees.items():
                if tree != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                                   capture_output=True)
    best = {side: {k: min(r[k] for r in rs) for k in rs[0]} for side, rs in rounds.items()}
    spread = {side: {k: max(r[k] for r in rs) / max(min(r[k] for r in rs), 1e-12) for k in rs[0]}
              for side, rs in rounds.items()}
    load = os.getloadavg()
    print(f"old = {args.old}, new = {args.new or 'working tree'}; E = {args.envs}, CPU, best of {args.rounds} "
          f"interleaved rounds; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("| measure | old | new | new / old | spread old / new (max/best) |")
    print("|---|---:|---:|---:|---:|")
    for k in best["old"]:
        o, n = best["old"][k], best["new"].get(k, float("nan"))
        print(f"| {k} | {o:.3g} | {n:.3g} | {n / o:.2f} | {spread['old'][k]:.2f} / {spread['new'].get(k, 0):.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"old": args.old, "new": args.new, "envs": args.envs, "rounds": rounds},
                                        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
