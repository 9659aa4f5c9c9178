"""Which env flies an evaluation: the checkpoint's own task, on a suite's courses or a real layout,
with one of three plants.

A run knows its task (``<run>/run.json``, written by ``isaaclab train``); :func:`flown_suite`
turns a suite (or a layout file) into the :class:`~track_gen_isaac.evaluate.suites.Suite` that
task flies:

* ``centre`` (default): the task's ``-Play`` env (its nominal or centre plant, no observation
  noise, the body's own box) -- a suite that names the task itself keeps its own env;
* ``randomized``: the training cfg (a plant drawn per course, observation noise) flying the body's
  own box (:data:`~track_gen_isaac.tasks.drone_racer.BODY_OVERRIDES`, not the training's margin);
* ``ideal``: the ``-Play`` env without its randomization event (the model with no drag and no
  latency: :data:`~track_gen_isaac.tasks.drone_racer.IDEAL_OVERRIDES`).

The suite's courses stay its own whichever task flies them (``Suite.courses_of``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from track_gen_isaac.evaluate.suites import Suite, get_suite, suite_of_task
from track_gen_isaac.task_ids import play_task_of

__all__ = ["DYNAMICS", "flown_suite", "run_task", "racer_suite", "task_course_mode"]

DYNAMICS = ("centre", "randomized", "ideal")


def run_task(run_dir: str | Path) -> str | None:
    """The task id a run was trained on (``run.json``'s ``task``), or None when the run does not say."""
    path = Path(run_dir) / "run.json"
    try:
        task = json.loads(path.read_text()).get("task")
    except (OSError, ValueError, AttributeError):
        return None
    return task if isinstance(task, str) and task else None


def _env_cfg(task: str):
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401  (registers the tasks)

    try:
        return load_cfg_from_registry(task, "env_cfg_entry_point")
    except Exception as exc:  # gymnasium's NameNotFound, a missing entry point...
        raise ValueError(f"task {task!r} is not a registered task ({exc})") from None


def task_course_mode(task: str) -> str | None:
    """``"gates"`` or ``"track"``: the kind of course ``task`` races (None: it has no course)."""
    course = getattr(_env_cfg(task), "course", None)
    return getattr(course, "mode", None)


def _kind(mode: str | None) -> str:
    return {"gates": "gate", "track": "band-track"}.get(mode, str(mode))


def flown_suite(task: str, dynamics: str = "centre", suite: str | Suite | None = None, layout=None,
                lsy_axis: str | None = None, scale: float | None = None) -> Suite:
    """The suite ``task`` flies: ``suite``'s courses (default: its family's suite,
    :func:`~track_gen_isaac.evaluate.suites.suite_of_task`) or the suite of one ``layout`` file
    (its lengths times ``scale``, default the task's own layout scale: 0.1 for the car, else the
    file's metres), with the plant ``dynamics`` (module docstring). ValueError naming both when
    ``task`` cannot fly the layout (a band-track task on a gate layout) or has no randomization
    to switch off."""
    from track_gen_isaac.tasks.drone_racer import BODY_OVERRIDES, IDEAL_OVERRIDES

    if dynamics not in DYNAMICS:
        raise ValueError(f"dynamics: expected one of {DYNAMICS}, got {dynamics!r}")
    if suite is not None and layout is not None:
        raise ValueError(f"suite={suite!r} and layout={layout!r}: give one of them")
    if scale is not None and layout is None:
        raise ValueError(f"scale={scale!r} applies to a layout file; pass layout= too")
    base = task.replace("-Play-", "-")
    if layout is not None:
        from track_gen_isaac.evaluate.layout_suite import layout_suite

        own = dict(getattr(_env_cfg(base), "layout_suite", None) or {})  # the task's way to fly layouts
        if scale is not None:
            own["scale"] = scale
        s = layout_suite(layout, lsy_axis=lsy_axis, **own)
        mode = task_course_mode(base)
        kind = task_course_mode(s.task)
        if mode != kind:
            raise ValueError(f"layout {s.name!r} is a {_kind(kind)} layout, but task {base!r} races {_kind(mode)} "
                             f"courses: fly it with a checkpoint of a {_kind(kind)} task")
        s = dataclasses.replace(s, task=play_task_of(base))
    elif suite is None:
        s = suite_of_task(base)
    else:
        s = get_suite(suite)
        if s.task != base:
            own, mine = task_course_mode(s.courses_of or s.task), task_course_mode(base)
            if own != mine:
                raise ValueError(f"suite {s.name!r} holds {_kind(own)} courses, but task {base!r} races {_kind(mine)} "
                                 f"courses: fly it with a checkpoint of a {_kind(own)} task")
            s = dataclasses.replace(s, task=play_task_of(base))
    if dynamics != "centre" and getattr(getattr(_env_cfg(s.task), "actions", None), "rotors", None) is None:
        raise ValueError(f"dynamics={dynamics!r}: task {s.task!r} has no randomized plant (its vehicle is the "
                         "model); use dynamics='centre'")
    if dynamics == "randomized":  # the training cfg, but the body's own box (not its safety margin)
        return dataclasses.replace(s, task=base, env_overrides={**s.env_overrides, **BODY_OVERRIDES})
    if dynamics == "ideal":
        if getattr(getattr(_env_cfg(s.task), "events", None), "dynamics", None) is None:
            raise ValueError(f"dynamics='ideal': task {s.task!r} has no randomization event to switch off (its "
                             "plant is the model already); use dynamics='centre'")
        return dataclasses.replace(s, env_overrides={**s.env_overrides, **IDEAL_OVERRIDES})
    return s


def racer_suite(dynamics: str = "centre", task: str = "TrackGen-Drone-Gates-Race-v0", suite: str | None = None,
                layout: str | None = None) -> Suite:
    """:func:`flown_suite` with the racer's task by default (the old ``tasks.race_eval`` name)."""
    return flown_suite(task, dynamics, suite=suite, layout=layout)
