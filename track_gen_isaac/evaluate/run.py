"""``evaluate()``: fly a checkpoint over a suite, with a zero-action and a random policy as floors,
against the minimum-time reference; write ``eval.json``, ``eval.md`` and the pictures.

Files are written into a temporary folder and moved to ``out`` (default
``<run folder>/eval/<suite>``) only when everything succeeded, so a failure leaves the run folder
as it was.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from track_gen_isaac.device import default_device
from track_gen_isaac.evaluate.metrics import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED, aggregate, course_rows
from track_gen_isaac.evaluate.suites import Suite, get_suite, training_overlap

__all__ = ["evaluate", "evaluate_layouts", "publish", "resolve_suite", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1


def _resolve_checkpoint(path) -> Path:
    from track_gen_isaac.play import resolve_checkpoint

    return resolve_checkpoint(path)


def _fly_suite(suite: Suite, ckpt: Path | None, num_courses: int, device: str, baselines: bool,
               ds: float | None) -> tuple[dict, dict, dict]:
    """(results per policy, per-course reference columns and course snapshots, timing)."""
    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.evaluate import reference as R
    from track_gen_isaac.evaluate import rollout as F

    t0 = time.perf_counter()
    env, agent = F.build_env(suite, num_courses, device)
    try:
        base = env.unwrapped
        E, A, dev = base.num_envs, base.action_manager.total_action_dim, base.device
        actors = {}
        if ckpt is not None:
            actors["policy"] = F.load_policy(env, agent, ckpt, suite.task)
        if baselines or ckpt is None:
            actors["zero"] = F.zero_actor(E, A, dev)
            actors["random"] = F.random_actor(E, A, suite.seed, dev)
        ec = get_course(base)
        limits, how, vehicle = R.task_vehicle(base.cfg)
        t1 = time.perf_counter()
        course_refs = R.course_references(ec, limits, ds=how["ds"] if ds is None else ds, lateral=how["lateral"],
                                          ds_opt=how["ds_opt"])
        refs = [R.reference_row(r) for r in course_refs]
        t_ref = time.perf_counter() - t1
        flights = {name: F.fly(env, act, suite.laps) for name, act in actors.items()}
        courses = {e: F.course_snapshot(ec, e) for e in range(E)}
        for e, r in enumerate(course_refs):
            path = R.reference_path(r)
            if path is not None:
                courses[e]["reference_path"] = path
        step_dt = float(base.step_dt)
    finally:
        env.close()
    timing = {"total_s": time.perf_counter() - t0, "reference_s": t_ref,
              **{f"{k}_rollout_s": f.wall_s for k, f in flights.items()},
              **{f"{k}_env_steps_per_s": f.env_steps / max(f.wall_s, 1e-9) for k, f in flights.items()}}
    meta = {"refs": refs, "courses": courses, "step_dt": step_dt, "vehicle": vehicle}
    return flights, meta, timing


def _clean(x):
    """JSON-safe: NaN/inf as None, numpy scalars as Python."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(float(x)) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def resolve_suite(ckpt: Path, suite: str | Suite | None = None, *, layout=None, lsy_axis: str | None = None,
                  task: str | None = None, dynamics: str = "centre", scale: float | None = None) -> Suite:
    """The suite an evaluation of ``ckpt`` flies: with a task (``task``, else the run's own from its
    ``run.json``) the suite as that task flies it (:func:`~track_gen_isaac.evaluate.flown.flown_suite`);
    a run that names no task flies the suite's own task (a layout: the task its kind trains on)."""
    from track_gen_isaac.evaluate.flown import DYNAMICS, flown_suite, run_task

    if layout is not None and suite is not None:
        raise ValueError(f"evaluate: pass a suite ({suite!r}) or a layout ({layout!r}), not both")
    if layout is None and lsy_axis is not None:
        raise ValueError("evaluate: lsy_axis applies to a layout file; pass layout= too")
    if layout is None and scale is not None:
        raise ValueError("evaluate: scale applies to a layout file; pass layout= too")
    if dynamics not in DYNAMICS:
        raise ValueError(f"dynamics: expected one of {DYNAMICS}, got {dynamics!r}")
    task = task or run_task(ckpt.parent)
    if task is not None:
        return flown_suite(task, dynamics, suite=suite, layout=layout, lsy_axis=lsy_axis, scale=scale)
    if dynamics != "centre":
        raise ValueError(f"dynamics={dynamics!r}: {ckpt.parent} names no task (no run.json); pass task=")
    if layout is not None:
        from track_gen_isaac.evaluate.layout_suite import layout_suite

        return layout_suite(layout, lsy_axis=lsy_axis, scale=scale)
    return get_suite("gates-v1" if suite is None else suite)


def evaluate(checkpoint, suite: str | Suite | None = None, *, layout=None, lsy_axis: str | None = None,
             num_courses: int = 256, out=None, device: str | None = None, baselines: bool = True,
             ds: float | None = None,
             figures: bool = True, task: str | None = None, dynamics: str = "centre",
             scale: float | None = None) -> dict:
    """Evaluate ``checkpoint`` (a model file, or a run folder: its ``model_average.pt``, else its
    newest model) on ``suite`` (a name of :data:`~track_gen_isaac.evaluate.suites.SUITES` or a
    :class:`Suite`; default: the task's family suite, ``gates-v1`` for gate tasks), or on one real
    ``layout`` file (a suite of one layout, flown ``num_courses`` times from its start pose with the
    gates jittered by its tolerance, named after the layout:
    :func:`~track_gen_isaac.evaluate.layout_suite.layout_suite`; ``lsy_axis`` for an lsy_drone_racing
    level file; ``scale`` multiplies the layout's lengths, default the task's own: 0.1 for the car,
    whose layouts are full-size circuits). A layout suite also writes ``paths.png``: every run's path
    over the layout.

    The env flown is the checkpoint's own task (``task``, else the run's ``run.json``) on the
    plant ``dynamics`` (``centre``, ``randomized`` or ``ideal``: :mod:`~track_gen_isaac.evaluate.flown`).

    Returns the ``eval.json`` dict (``result["suites"][suite]`` holds the aggregates, their
    ``_ci95`` intervals, ``baselines`` and the per-course ``courses`` rows). Raises ValueError for
    an unknown suite (listing the suites), a checkpoint of another task (naming both shapes) or a
    layout the task cannot fly (naming both), FileNotFoundError for a missing run folder or model
    file -- all before any env is built."""
    from track_gen_isaac.evaluate import figures as P
    from track_gen_isaac.evaluate.rollout import checkpoint_shapes
    from track_gen_isaac.evaluate.tables import write_markdown

    ckpt = _resolve_checkpoint(checkpoint)
    checkpoint_shapes(ckpt)  # not a checkpoint: refused now, not after the env is built
    s = resolve_suite(ckpt, suite, layout=layout, lsy_axis=lsy_axis, task=task, dynamics=dynamics, scale=scale)
    if isinstance(num_courses, bool) or not isinstance(num_courses, int) or num_courses < 1:
        raise ValueError(f"num_courses: expected an int >= 1, got {num_courses!r}")
    tag = s.name if dynamics == "centre" else f"{s.name}-{dynamics}"
    out_dir = Path(out) if out is not None else ckpt.parent / "eval" / tag
    device = device or default_device()
    overlap = training_overlap(ckpt.parent, s)
    flights, meta, timing = _fly_suite(s, ckpt, num_courses, device, baselines, ds)
    entry: dict = {"suite": s.to_dict(), "checkpoint": str(ckpt), "num_courses": num_courses, "dynamics": dynamics}
    rows = {k: course_rows(f, meta["refs"], s.laps) for k, f in flights.items()}
    entry.update(aggregate(rows["policy"]))
    entry["baselines"] = {k: aggregate(r) for k, r in rows.items() if k != "policy"}
    entry["courses"] = rows["policy"]
    result = {
        "schema_version": SCHEMA_VERSION, "checkpoint": str(ckpt), "device": device, "step_dt": meta["step_dt"],
        "bootstrap": {"samples": BOOTSTRAP_SAMPLES, "seed": BOOTSTRAP_SEED, "level": 0.95},
        "vehicle": meta["vehicle"], "warnings": [overlap] if overlap else [],
        "suites": {s.name: entry}, "timing": {s.name: timing},
    }
    result = _clean(result)
    tmp = Path(tempfile.mkdtemp(prefix="track_gen_eval_"))
    try:
        (tmp / "eval.json").write_text(json.dumps(result, indent=1))
        write_markdown(tmp / "eval.md", result)
        if figures:
            f = flights["policy"]
            P.plot_ratio_histogram(tmp / "lap_time_ratio.png", rows["policy"],
                                   f"{s.name}: {num_courses} courses, {Path(ckpt).name}")
            P.plot_best_worst(tmp / "best_worst.png", rows["policy"], meta["courses"], f.pos, f.speed, f.steps)
            if s.layout is not None:
                P.plot_layout_paths(tmp / "paths.png", rows["policy"], meta["courses"], f.pos, f.speed, f.steps,
                                    f"{s.name}: {num_courses} runs of {Path(ckpt).name}")
        publish(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    result["out"] = str(out_dir)
    return result


def publish(tmp: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` by the finished folder ``tmp`` (written aside first, so an interrupted
    evaluation never leaves a half-written result where a finished one was)."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(tmp), str(out_dir))


def evaluate_layouts(checkpoint, layouts, *, num_courses: int = 32, out=None, lsy_axis: str | None = None,
                     **kwargs) -> dict:
    """:func:`evaluate` on each layout file of ``layouts`` (files and folders), then one table over
    them: ``<out>/layouts.json`` and ``layouts.md`` (default ``out``: ``<run folder>/eval``), each
    layout's own results in ``<out>/<layout name>[-<dynamics>]/``. Every file is read and checked
    against the task before the first env is built. Returns ``{"layouts": {name: summary}, "out": ...}``."""
    from track_gen.layouts import layout_files
    from track_gen_isaac.evaluate.tables import layout_table

    files = layout_files(layouts)
    ckpt = _resolve_checkpoint(checkpoint)
    for f in files:  # every refusal before the first flight
        resolve_suite(ckpt, layout=f, lsy_axis=lsy_axis, task=kwargs.get("task"),
                      dynamics=kwargs.get("dynamics", "centre"), scale=kwargs.get("scale"))
    root = Path(out) if out is not None else ckpt.parent / "eval"
    dyn = kwargs.get("dynamics", "centre")
    summary: dict = {}
    for f in files:
        res = evaluate(ckpt, layout=f, lsy_axis=lsy_axis, num_courses=num_courses, **kwargs,
                       out=root / (f.stem if dyn == "centre" else f"{f.stem}-{dyn}"))
        name, entry = next(iter(res["suites"].items()))
        summary[name] = {k: v for k, v in entry.items() if k != "courses"} | {"out": res["out"]}
    table = {"checkpoint": str(ckpt), "num_courses": num_courses, "dynamics": dyn, "layouts": summary}
    root.mkdir(parents=True, exist_ok=True)
    (root / "layouts.json").write_text(json.dumps(_clean(table), indent=1))
    (root / "layouts.md").write_text(layout_table(table))
    return {**table, "out": str(root)}

