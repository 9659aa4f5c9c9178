"""Reading a run's numbers: tensorboard scalars and the params rsl_rl / Isaac Lab dump.

- :func:`read_scalars`: every scalar series of a run's ``events.out.tfevents.*`` file(s).
- :func:`steps_per_iteration_from_params`: env steps per learning iteration, from ``params/*.yaml``.
- :func:`term_count_scale`: what turns a logged ``Episode_Reward/<term>`` into events per episode.
- :func:`course_scalars`: the ``Episode_Course/*`` series (course statistics per episode), derived
  from the pass-counting reward term for runs logged before those existed.

tensorboard and yaml are imported inside the functions that need them.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np

__all__ = ["read_scalars", "steps_per_iteration_from_params", "term_count_scale", "course_scalars",
           "COURSE_PREFIX", "PASS_TERMS", "PathLike"]

PathLike = str | pathlib.Path

#: the tag prefix of the course statistics track_gen_isaac logs per episode (``Episode_Course/checkpoints``,
#: ``Episode_Course/laps``, ``Episode_Course/progress_m``: means over the envs that reset)
COURSE_PREFIX = "Episode_Course/"
#: reward terms that counted passes in runs logged before ``Episode_Course/*`` (the drone tasks' names)
PASS_TERMS = ("gate", "checkpoint")


def read_scalars(run_dir: PathLike) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every scalar series of an rsl_rl (or any tensorboard) run folder.

    Reads all ``events.out.tfevents.*`` files directly in ``run_dir`` (not its subfolders) with
    tensorboard's ``EventAccumulator``, keeping every point (no down-sampling).

    Tags rsl_rl 5.5.1 writes (``rsl_rl/utils/logger.py``, once per learning iteration, step =
    iteration index, 0-based, continuing from the loaded iteration on resume):

    - ``Train/mean_reward``, ``Train/mean_episode_length``: mean return / length [env steps] over
      the last 100 finished episodes; only once an episode has finished.
    - ``Train/mean_reward/time``, ``Train/mean_episode_length/time``: the same values with the
      training wall time in whole seconds as the step (not the iteration).
    - ``Loss/value``, ``Loss/surrogate``, ``Loss/entropy`` (+ ``Loss/rnd``, ``Loss/symmetry`` when
      enabled), ``Loss/learning_rate``; ``Policy/mean_std`` (mean action std).
    - ``Perf/total_fps`` [env steps/s], ``Perf/collection_time``, ``Perf/learning_time`` [s].
    - ``Rnd/*`` with random network distillation.
    - Episode extras, the mean over the iteration's resets: keys holding a ``/`` are written as is,
      others as ``Episode/<key>``. Isaac Lab's managers fill them: ``Episode_Reward/<term>`` (a
      term's summed reward per episode divided by ``episode_length_s``), ``Episode_Termination/<term>``
      (fraction of envs whose last episode ended by that term), ``Curriculum/<term>[/<key>]``,
      ``Metrics/<command>/<metric>``; track_gen_isaac's course terms add ``Episode_Course/*``
      (:func:`course_scalars`).

    Returns:
        ``{tag: (steps int64 [K], values float64 [K])}`` in the order written.

    Raises:
        FileNotFoundError: ``run_dir`` is not a folder or holds no events file.
    """
    from tensorboard.backend.event_processing import event_accumulator as ea

    run = pathlib.Path(run_dir)
    if not run.is_dir():
        raise FileNotFoundError(f"run_dir {str(run)!r} is not a folder")
    files = sorted(run.glob("events.out.tfevents.*"))
    if not files:
        raise FileNotFoundError(
            f"no events.out.tfevents.* file in {str(run)!r} (expected an rsl_rl run folder such as "
            "logs/rsl_rl/<experiment>/<timestamp>)"
        )
    acc = ea.EventAccumulator(str(run), size_guidance={ea.SCALARS: 0})  # 0: keep every point
    acc.Reload()
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for tag in acc.Tags().get("scalars", []):
        events = acc.Scalars(tag)
        out[tag] = (
            np.array([e.step for e in events], dtype=np.int64),
            np.array([e.value for e in events], dtype=np.float64),
        )
    return out


def _params_loader():
    """A safe YAML loader that reads Isaac Lab's ``python/tuple`` (and other) tags as plain data."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def plain(loader, _suffix, node):
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", plain)
    Loader.add_multi_constructor("!", plain)
    return Loader


def steps_per_iteration_from_params(run_dir: PathLike) -> int | None:
    """Env steps per learning iteration (``num_steps_per_env * scene.num_envs``) from the run's
    ``params/agent.yaml`` and ``params/env.yaml``; None when either is missing or lacks the key.

    Counts one process's envs (multi-GPU runs collect ``world_size`` times as many).
    """
    import yaml

    params = pathlib.Path(run_dir) / "params"
    try:
        with open(params / "agent.yaml") as f:
            agent = yaml.load(f, Loader=_params_loader())
        with open(params / "env.yaml") as f:
            env = yaml.load(f, Loader=_params_loader())
        n = int(agent["num_steps_per_env"]) * int(env["scene"]["num_envs"])
    except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError):
        return None
    return n if n > 0 else None


def term_count_scale(run_dir: PathLike, term: str) -> float | None:
    """What turns ``Episode_Reward/<term>`` into events per episode (e.g. gates passed) for a
    reward term worth ``weight`` per event: Isaac Lab logs the episode sum divided by the
    episode length in seconds, and each event adds ``weight * step_dt``, so the count is the
    logged value x ``episode_length_s / (weight * sim.dt * decimation)`` (this scale). Read from
    the run's ``params/env.yaml``; None when it or the term is missing or the weight is 0."""
    import yaml

    try:
        with open(pathlib.Path(run_dir) / "params" / "env.yaml") as f:
            env = yaml.load(f, Loader=_params_loader())
        weight = float(env["rewards"][term]["weight"])
        step_dt = float(env["sim"]["dt"]) * int(env["decimation"])
        scale = float(env["episode_length_s"]) / (weight * step_dt)
    except (OSError, KeyError, TypeError, ValueError, ZeroDivisionError, yaml.YAMLError):
        return None
    return scale if math.isfinite(scale) and scale > 0 else None


def course_scalars(run_dir: PathLike, scalars: dict | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The run's ``Episode_Course/*`` series: checkpoints (gates) passed, laps and progress [m] per
    episode, as logged (means over each iteration's resets).

    A run logged before those existed gets ``Episode_Course/checkpoints`` derived from its
    pass-counting reward term (``Episode_Reward/gate`` or ``/checkpoint``, the first present) times
    :func:`term_count_scale`; nothing when neither is there or the scale is unknown.
    ``scalars``: the run's :func:`read_scalars` (read when None).
    """
    scalars = read_scalars(run_dir) if scalars is None else scalars
    out = {tag: series for tag, series in scalars.items() if tag.startswith(COURSE_PREFIX)}
    if out:
        return out
    for term in PASS_TERMS:
        series = scalars.get(f"Episode_Reward/{term}")
        scale = term_count_scale(run_dir, term) if series is not None else None
        if scale is not None:
            return {f"{COURSE_PREFIX}checkpoints": (series[0], series[1] * scale)}
    return {}
