"""Procedural gate courses at difficulty 0 and 1 beside the shipped real layouts, one table.

For each source the script measures, per course: the arena (the larger side of the gates' bounding
box in plan view) [m], the gate spacing (3D distance between consecutive gates) [m], the turn at
each gate (the horizontal angle between the leg entering it and the leg leaving it) [deg], the
elevation range (highest minus lowest gate centre) [m], and the gate count. Procedural rows pool
``--envs`` valid courses (seed 0); each real layout is one course. Median and 5th-95th percentiles.

Run from the repository root::

    VENV="$(bash scripts/setup.sh | tail -n 1)"
    PYTHONPATH=. $VENV/bin/python bench/compare_real_layouts.py          # 4096 courses per level
"""

from __future__ import annotations

import argparse

import numpy as np


def course_stats(pos: np.ndarray, closed: bool) -> dict[str, np.ndarray]:
    """Per-course quantities of one gate course (gate centres ``pos`` [G, 3], in order)."""
    p = np.asarray(pos, np.float64)
    legs = np.diff(np.vstack([p, p[:1]]) if closed else p, axis=0)
    heading = np.arctan2(legs[:, 1], legs[:, 0])
    turn = np.diff(np.concatenate([heading, heading[:1]]) if closed else heading)
    turn = np.degrees(np.abs((turn + np.pi) % (2 * np.pi) - np.pi))
    span = p[:, :2].max(0) - p[:, :2].min(0)
    return {"arena [m]": np.array([span.max()]), "spacing [m]": np.linalg.norm(legs, axis=1), "turn [deg]": turn,
            "elevation range [m]": np.array([np.ptp(p[:, 2])]), "gates": np.array([len(p)], np.float64)}


def pooled(courses: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([c[k] for c in courses]) for k in courses[0]}


def cell(v: np.ndarray) -> str:
    if len(v) == 1:
        return f"{v[0]:.3g}"
    lo, med, hi = np.percentile(v, [5, 50, 95])
    return f"{med:.3g} [{lo:.3g}, {hi:.3g}]"


def procedural(difficulty: float, envs: int) -> list[dict[str, np.ndarray]]:
    import track_gen as tg
    from track_gen.pipeline import presets

    g = tg.GateGenerator(presets.gates(envs, "cpu", gate_width=1.0, difficulty=difficulty, max_obstacles=4), seeds=0)
    r = g.result
    pos, count, valid = r.pos.numpy(), r.count.numpy(), r.valid.numpy()
    return [course_stats(pos[e, :count[e]], True) for e in range(envs) if valid[e]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=4096)
    args = ap.parse_args(argv)
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    from track_gen import layouts

    rows = {f"procedural, difficulty {d:g} ({args.envs} courses)": pooled(procedural(d, args.envs)) for d in (0.0, 1.0)}
    for name, path in layouts.shipped().items():
        lay = layouts.load(path)
        rows[f"real: {name}"] = course_stats(lay.pos, bool(lay.closed))
    keys = list(next(iter(rows.values())))
    print("| source | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name, stats in rows.items():
        print(f"| {name} | " + " | ".join(cell(stats[k]) for k in keys) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
