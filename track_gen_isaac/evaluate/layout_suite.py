"""A suite of one real layout: ``evaluate(checkpoint, layout=FILE)`` / ``--layout FILE``.

The layout (a ``track_gen.layouts`` file, or an lsy_drone_racing config with ``lsy_axis``) is
flown from its start pose ``num_courses`` times, once per env: every env flies the same layout
(``CourseCfg.layouts``), each with its own draw of the gate positions within the layout's
per-gate tolerance (``jitter_pos`` = the largest ``tolerance`` of its gates, as lsy_drone_racing
randomizes its levels). A file with no tolerance (0) is jittered by :data:`DEFAULT_JITTER` (5 cm,
about what a gate's measured position is off by), so that its runs are not one run repeated. The task is the one its
kind is trained on (a gate layout: ``TrackGen-Drone-Gates-v0``; a band track:
``TrackGen-Drone-Track-v0``); a one-pass layout is flown once (1 lap: the run ends at its last
gate), a loop twice. The suite is named after the layout (its ``name``, else the file stem).

A task whose env cfg declares ``layout_suite`` (the car: :data:`~track_gen_isaac.tasks.car_track.LAYOUT_SUITE`)
flies layouts its own way: every length times its ``scale`` (``--scale`` overrides), its lap count
and time limit, the start pose jittered by its ``start_jitter``, and a band whose half width
reaches the tightest turn radius narrowed there (:func:`fit_band`).

What changes in the task's env besides the course (:func:`apply_layout`): the altitude band of
the ``altitude`` termination is widened to hold the layout -- its floor below the start height
(lsy_drone_racing starts on the ground, 1 cm up), its ceiling 1 m above the highest gate frame --
so that a run is not ended for flying where the layout's gates are; and on a gate layout the
``off_course`` tube (:data:`LAYOUT_OFF_COURSE`) is lifted. That tube -- a run ends farther than
2.5 m from the course line -- is a training device: the course line is our curve through the
gates, not part of a real track, and real tracks are flown wide of it where they turn hard
(``aigp_competition_a2rl``'s split-S after gate 4, where the curve hooks back within 2 m, is passed
3-5 m outside it by policies that then fly every remaining gate). A run on a real layout ends as a
race does: a crash (frames, poles, the ground), the altitude band, a missed gate, the last gate, or
the time limit. Nothing else (observations, vehicle, the other terminations) changes: a policy
trained on procedural courses is evaluated zero-shot.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from track_gen_isaac.evaluate.suites import Suite

__all__ = ["LAYOUT_SEED", "DEFAULT_JITTER", "LAYOUT_OFF_COURSE", "layout_suite", "apply_layout", "load_suite_layout", "fit_band"]

#: the course seed of layout suites (draws the gate jitter; in the reserved range)
LAYOUT_SEED = 1_000_000_301
#: the gate jitter [m] of a layout whose file gives no tolerance
DEFAULT_JITTER = 0.05
#: the ``off_course`` distance [m] from the course line that ends a run on a gate layout: none (see the
#: module docstring; procedural suites keep their task's tube)
LAYOUT_OFF_COURSE = math.inf

_TASKS = {"gates": "TrackGen-Drone-Gates-v0", "track": "TrackGen-Drone-Track-v0"}


def load_suite_layout(path, lsy_axis: str | None = None, scale: float | None = None):
    """The one layout of ``path`` (a file), its lengths times ``scale`` when given; ValueError for a
    folder or a file of several."""
    from track_gen.layouts import load

    p = Path(path)
    if p.is_dir():
        raise ValueError(f"layout: {p} is a folder; --layout takes one layout file (evaluate each file on its own)")
    return load(p, lsy_axis=lsy_axis, scale=scale)


def fit_band(lay, margin: float = 0.97):
    """A band-track layout whose half width never reaches its centre line's tightest turn radius:
    ``half_width = min(half_width, margin x R_min)`` (``R_min`` from the circle through each point
    and its neighbours), and the number of points narrowed. The band-track rules refuse a turn
    radius below the widest half width (the inner edge would fold over itself); the TUM circuits
    draw Spa's La Source hairpin at a 7.9 m radius on an 8.2 m half width, so a car flies Spa with
    its widest points narrowed to 0.97 of that radius (at 1/10 scale: 0.777 instead of up to 0.82 m,
    23 of its 1401 points). Other layouts come back unchanged (0 points)."""
    import dataclasses

    xy = np.asarray(lay.centerline, np.float64)[:, :2]
    a, b, c = np.roll(xy, 1, axis=0), xy, np.roll(xy, -1, axis=0)
    ab, bc, ca = (np.linalg.norm(b - a, axis=1), np.linalg.norm(c - b, axis=1), np.linalg.norm(a - c, axis=1))
    cross = np.abs((b - a)[:, 0] * (c - a)[:, 1] - (b - a)[:, 1] * (c - a)[:, 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.where(cross > 0, ab * bc * ca / (2.0 * cross), np.inf)
    cap = margin * float(np.min(radius))
    hw = np.asarray(lay.half_width, np.float64)
    narrowed = int(np.sum(hw > cap))
    if narrowed == 0:
        return lay, 0
    return dataclasses.replace(lay, half_width=np.minimum(hw, cap).astype(np.float32)), narrowed


def layout_suite(path, *, lsy_axis: str | None = None, time_limit_s: float = 30.0, laps: int | None = None,
                 jitter: float | None = None, scale: float | None = None,
                 start_jitter: tuple | None = None) -> Suite:
    """The :class:`Suite` of one layout file: named after the layout, gate positions jittered by
    its tolerance (:data:`DEFAULT_JITTER` where it has none; or ``jitter`` [m], 0 for the nominal
    gates), 1 lap for a one-pass layout and 2 for a loop (or ``laps``); every length times
    ``scale`` when given (a full-size circuit for a 1/10 car: 0.1); the start pose jittered by
    ``start_jitter`` (lateral [m], vertical [m], yaw [rad]) when given."""
    from track_gen.layouts import GateLayout

    lay = load_suite_layout(path, lsy_axis, scale)
    kind = "gates" if isinstance(lay, GateLayout) else "track"
    options: dict = {}
    if kind == "gates":
        # the shortest decimal of the float32 tolerance (0.2, not 0.20000000298...): the same float32 on device
        own = float(str(np.max(lay.tolerance)))
        tol = (own if own > 0.0 else DEFAULT_JITTER) if jitter is None else float(jitter)
        if not (np.isfinite(tol) and tol >= 0.0):
            raise ValueError(f"jitter: expected a finite number >= 0 [m], got {tol!r}")
        if tol > 0.0:
            options["jitter_pos"] = tol
        shape = f"{lay.num_gates} gates, {lay.width[0]:g} m openings"
        why = "given" if jitter is not None else ("its tolerance" if own > 0.0 else "the file gives no tolerance")
        spread = f", gates jittered by up to {tol:g} m in x and y ({why})" if tol > 0 else ", nominal gates"
    else:
        xy = np.asarray(lay.centerline, np.float64)[:, :2]
        length = float(np.linalg.norm(np.roll(xy, -1, axis=0) - xy, axis=1).sum())
        shape = f"a band track of {lay.num_points} points, {length:.0f} m" + (f" at scale {scale:g}" if scale else "")
        spread = "" if not start_jitter else (f", start jittered by up to {start_jitter[0]:g} m laterally and "
                                              f"{start_jitter[2]:g} rad in yaw")
    name = lay.name or Path(path).stem
    if kind == "gates":
        check_flyable(lay, name)
    n_laps = int(laps) if laps is not None else (2 if lay.closed else 1)
    how = "a loop" if lay.closed else "one pass"
    return Suite(name, _TASKS[kind], LAYOUT_SEED, options, laps=n_laps, time_limit_s=float(time_limit_s),
                 description=f"real layout {name!r} ({shape}, {how}) from its start pose{spread}; "
                             f"source: {lay.source or str(path)}",
                 layout=str(Path(path).resolve()), lsy_axis=lsy_axis, scale=scale,
                 start_jitter=tuple(float(j) for j in start_jitter) if start_jitter else None)


def check_flyable(lay, name: str) -> None:
    """ValueError naming each rule the gate layout ``lay`` breaks as it is, and where (gates, legs,
    poles), under the limits a course of it is built with: a layout no course can fly is refused
    before any env is built."""
    import warnings

    import track_gen as tg
    from track_gen.generators.layouts.explain import explain_gate_layout
    from track_gen.generators.layouts.gates import RULE_LIMITS
    from track_gen.pipeline import presets

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the LayoutWarning says the same; the error below says it in full
        gen = tg.GateGenerator(presets.gates_from_layouts([lay], 1, "cpu"), seeds=0)
    if int(gen.result.valid.numpy()[0]) == 1:
        return
    limits = {n: float(gen.params[f"gates.{n}"]) for n in RULE_LIMITS}
    why = explain_gate_layout(lay, **limits) or [("?", f"status {int(gen.result.status.numpy()[0])}")]
    by_rule: dict[str, list[str]] = {}
    for rule, what in why:
        by_rule.setdefault(rule, []).append(what)
    parts = [f"{rule}: " + "; ".join(items[:3]) + (f" (and {len(items) - 3} more)" if len(items) > 3 else "")
             for rule, items in by_rule.items()]
    raise ValueError(f"layout {name!r} breaks the course rules as it is, so no course of it can be flown: "
                     + " | ".join(parts))


def apply_layout(cfg, suite: Suite) -> None:
    """Make the task cfg ``cfg`` fly ``suite``'s layout (see the module docstring)."""
    lay = load_suite_layout(suite.layout, suite.lsy_axis, suite.scale)
    if hasattr(lay, "num_gates"):
        cfg.course.layouts = suite.layout if suite.scale is None else [lay]
    else:  # a band track: as loaded (scaled), its half width kept inside its tightest turn
        cfg.course.layouts = [fit_band(lay)[0]]
    options = dict(suite.course)
    if suite.lsy_axis is not None:
        options["lsy_axis"] = suite.lsy_axis
    cfg.course.layout_options = options
    cfg.course.layout_recenter = False
    off = getattr(getattr(cfg, "terminations", None), "off_course", None)
    if hasattr(lay, "num_gates") and "max_distance" in (getattr(off, "params", None) or {}):
        off.params["max_distance"] = LAYOUT_OFF_COURSE
    alt = getattr(getattr(cfg, "terminations", None), "altitude", None)
    if alt is None or not isinstance(getattr(alt, "params", None), dict):
        return
    if hasattr(lay, "num_gates"):
        top = float(np.max(lay.pos[:, 2] + 0.5 * lay.height + lay.frame_thickness))
        start = float(lay.start_pos[2])
    else:
        top, start = float(np.max(lay.centerline[:, 2])), float(np.min(lay.centerline[:, 2]))
    lo = float(alt.params.get("min_height", 0.0))
    hi = float(alt.params.get("max_height", top + 1.0))
    alt.params["min_height"] = min(lo, 0.5 * start) if start > 0 else lo
    alt.params["max_height"] = max(hi, top + 1.0)
