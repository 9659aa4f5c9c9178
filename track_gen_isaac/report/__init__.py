"""Training and playback reports: learning curves, top-down flight paths, a summary table.

Independent of any task and of Isaac Lab (nothing here imports it): the inputs are an rsl_rl run
folder, numpy arrays and a dict of numbers. matplotlib, tensorboard and ``track_gen.plot`` are
imported inside the functions that need them, so importing this package switches no global backend.

One module per step, read in this order:

- ``scalars.py``: :func:`read_scalars` (every scalar series of a run's ``events.out.tfevents.*``
  file(s)), :func:`steps_per_iteration_from_params`, :func:`term_count_scale` (from ``params/*.yaml``),
  :func:`course_scalars` (``Episode_Course/*``, derived for runs logged before them).
- ``figures.py``: :func:`plot_learning_curve` (reward, episode length and per-term panels vs
  iteration) and :func:`plot_trajectories` (flight paths over their courses, one panel per env, at
  most 8; the courses are drawn by :func:`track_gen.plot.draw_course`).
- ``summary.py``: :func:`write_summary` (``summary.json`` + ``summary.md`` of a playback).
- ``cli.py`` / ``__main__.py``: ``python -m track_gen_isaac.report curve <run_dir> [--out PNG]``.
"""

from track_gen_isaac.report.cli import main
from track_gen_isaac.report.figures import (
    DEFAULT_CURVE_TAGS,
    MAX_TRAJECTORY_PANELS,
    plot_learning_curve,
    plot_trajectories,
)
from track_gen_isaac.report.scalars import (
    course_scalars,
    read_scalars,
    steps_per_iteration_from_params,
    term_count_scale,
)
from track_gen_isaac.report.summary import SUMMARY_KEYS, write_summary

__all__ = [
    "read_scalars",
    "steps_per_iteration_from_params",
    "term_count_scale",
    "course_scalars",
    "plot_learning_curve",
    "plot_trajectories",
    "write_summary",
    "main",
    "SUMMARY_KEYS",
    "DEFAULT_CURVE_TAGS",
    "MAX_TRAJECTORY_PANELS",
]
