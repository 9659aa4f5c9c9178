"""The racing benchmark: held-out course suites, lap times, and the minimum-time reference.

::

    python -m track_gen_isaac.evaluate --list
    python -m track_gen_isaac.evaluate --checkpoint logs/rsl_rl/trackgen_drone_gates/<run> --suite gates-v1
    python -m track_gen_isaac.evaluate --checkpoint <run> --layout track_gen/layouts/data/lsy_level0.toml
    python -m track_gen_isaac.evaluate --checkpoint <run> --layout track_gen/layouts/data --dynamics randomized
    python -m track_gen_isaac.evaluate --checkpoint <duel run> --suite duel-v1 --opponent <run>|self

* :mod:`~track_gen_isaac.evaluate.suites`: the suites (task, course config, held-out seed).
* :mod:`~track_gen_isaac.evaluate.layout_suite`: a suite of one real layout file (``--layout``).
* :mod:`~track_gen_isaac.evaluate.flown`: the env that flies it: the checkpoint's own task, one of three plants.
* :mod:`~track_gen_isaac.evaluate.rollout`: the suite's env, the checkpoint's policy, one run per course.
* :mod:`~track_gen_isaac.evaluate.reference`: each course's minimum-time reference (:mod:`track_gen.reference.lap`).
* :mod:`~track_gen_isaac.evaluate.metrics`: per-course rows, aggregates, 95% bootstrap intervals.
* :mod:`~track_gen_isaac.evaluate.figures` / :mod:`~track_gen_isaac.evaluate.tables`: pictures, ``eval.md``.
* :mod:`~track_gen_isaac.evaluate.duel`: head to head (``duel-v1``): two drones per course, win rate, contacts.
* :func:`evaluate` / :func:`evaluate_layouts` (:mod:`~track_gen_isaac.evaluate.run`) tie them together;
  ``__main__`` is the CLI.

Importing this package does not import Isaac Lab.
"""

from track_gen_isaac.evaluate.suites import SUITES, Suite, get_suite, list_suites, suite_of_task

__all__ = ["evaluate", "evaluate_layouts", "evaluate_duel", "SUITES", "Suite", "get_suite", "list_suites", "suite_of_task"]


def evaluate(checkpoint, suite=None, **kwargs) -> dict:
    """See :func:`track_gen_isaac.evaluate.run.evaluate`."""
    from track_gen_isaac.evaluate.run import evaluate as _evaluate

    return _evaluate(checkpoint, suite, **kwargs)


def evaluate_layouts(checkpoint, layouts, **kwargs) -> dict:
    """See :func:`track_gen_isaac.evaluate.run.evaluate_layouts`."""
    from track_gen_isaac.evaluate.run import evaluate_layouts as _evaluate_layouts

    return _evaluate_layouts(checkpoint, layouts, **kwargs)



def evaluate_duel(checkpoint, suite="duel-v1", **kwargs) -> dict:
    """See :func:`track_gen_isaac.evaluate.duel.evaluate_duel`."""
    from track_gen_isaac.evaluate.duel import evaluate_duel as _evaluate_duel

    return _evaluate_duel(checkpoint, suite, **kwargs)
