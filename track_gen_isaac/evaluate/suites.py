"""Benchmark suites: named, versioned sets of held-out courses.

A suite is a task id, its course config (the task's own, plus overrides) and a course seed. Its
course ``i`` is the course of global env index ``i`` drawn from that seed at generation 0 (a
course is a pure function of seed, env index and generation: ``track_gen.rng``), so the first
``N`` courses are the same whatever ``N`` and wherever the suite runs; each is flown once from
its start pose, for ``laps`` laps or ``time_limit_s``.

Seeds. Training draws its courses from the run's seed: ``CourseCfg.seed``, else ``env.cfg.seed``,
which Isaac Lab sets from ``--seed`` (the main job's default is 1, ``isaaclab train``'s the agent
cfg's 42), plus the rank in a multi-GPU run; every reset draws the next generation of the same
env indices. Suites use course seeds in :data:`RESERVED_SEEDS` = [1e9, 1e9 + 1e6), which nothing
trains on unless told to: :func:`training_overlap` reads a run's ``params/env.yaml`` and names the
suites a run trained on. (Two different seeds give different per-env seeds by a 31-bit hash; a
chance collision of one suite course with one training course has a probability of about
``num_envs / 2**31`` per course.)

A new suite version (``-v2``) is added rather than an old one changed, so numbers stay comparable.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from track_gen.pipeline.presets import REAL_MIXTURE

__all__ = ["Suite", "SUITES", "RESERVED_SEEDS", "TRAINING_SEEDS", "get_suite", "list_suites", "training_overlap",
           "training_seed", "HeldOutWarning"]

#: course seeds reserved for benchmark suites (never a training default)
RESERVED_SEEDS = range(1_000_000_000, 1_001_000_000)

#: where training seeds come from by default (documentation, shown by ``--list``)
TRAINING_SEEDS = ("training: course seed = CourseCfg.seed, else env.cfg.seed = --seed (+ rank on several GPUs); "
                  "main job default 1, isaaclab train default 42; suites use seeds in [1000000000, 1001000000)")


class HeldOutWarning(UserWarning):
    """A checkpoint was trained on the courses of the suite it is evaluated on."""


@dataclass(frozen=True)
class Suite:
    """One benchmark suite.

    Attributes:
        name: ``<family>-v<version>``, e.g. ``gates-v1``.
        task: the registered training task whose env (observations, terminations, vehicle) is flown.
        seed: the course seed (in :data:`RESERVED_SEEDS`).
        course: overrides of the task's generator fields (``{}``: the task's default difficulty).
        laps: laps to fly; completing them ends the run on that course.
        time_limit_s: the run on a course ends after this time at the latest.
        description: one line for ``--list``.
        layout: a suite of one real layout (:mod:`~track_gen_isaac.evaluate.layout_suite`): the
            layout file every course flies (``course`` then holds ``CourseCfg.layout_options``,
            e.g. the ``jitter_pos`` of its tolerance); None for a procedural suite.
        lsy_axis: the gate-pass axis of an lsy_drone_racing level file (``layout`` only).
        env_overrides: env-cfg attributes set after the task's cfg is loaded, by dotted path
            (``{"events.dynamics": None}``: fly without the randomization event); ``{}``: the
            task's cfg as registered. For variants of one vehicle, not to move the courses.
        courses_of: the task whose course generator draws the suite's courses (with ``course``
            on top), whichever task flies them: a suite's courses stay its own when a task trained
            on other courses (e.g. the generalist) flies it. None: ``task``'s own generator.
        scale: a layout suite: the factor every length of the layout file is multiplied by
            (``track_gen.layouts.load(..., scale=)``; the car flies full-size circuits at 0.1).
            None: the file's metres.
        start_jitter: ``(lateral [m], vertical [m], yaw [rad])`` half ranges of the start pose
            (``place_at_course_start``'s ``jitter``), drawn per course; None: the exact start pose.
    """

    name: str
    task: str
    seed: int
    course: dict = field(default_factory=dict)
    laps: int = 2
    time_limit_s: float = 30.0
    description: str = ""
    layout: str | None = None
    lsy_axis: str | None = None
    env_overrides: dict = field(default_factory=dict)
    courses_of: str | None = None
    scale: float | None = None
    start_jitter: tuple | None = None

    @property
    def family(self) -> str:
        """``gates`` of ``gates-v1``; a layout suite's name (it has no version)."""
        head, sep, tail = self.name.rpartition("-v")
        return head if sep and tail.isdigit() else self.name

    @property
    def version(self) -> int | None:
        head, sep, tail = self.name.rpartition("-v")
        return int(tail) if sep and tail.isdigit() else None

    def to_dict(self) -> dict:
        """The suite as JSON-safe values (``eval.json``); an override that is not plain data (an
        event cfg, a class) is recorded by its ``repr``."""
        d = asdict(replace(self, env_overrides={}))
        d["env_overrides"] = {k: _plain(v) for k, v in self.env_overrides.items()}
        return {**d, "family": self.family, "version": self.version}

    def line(self) -> str:
        """One line for ``--list``."""
        return (f"{self.name:<12} {self.task:<26} seed {self.seed}  {self.laps} laps or {self.time_limit_s:g} s  "
                f"{self.description}")


def _plain(value: object) -> object:
    """``value`` if it is JSON data (None, bool, number, string, or lists/dicts of them), else its
    ``repr``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain(v) for k, v in value.items()}
    return repr(value)


#: the car suites drive the body's own box (the car task's ``BODY_OVERRIDES``; not imported here, so that
#: listing the suites does not load the task)
_CAR_BODY_BOX = {"course.half_extents": (0.29, 0.155)}

SUITES: dict[str, Suite] = {s.name: s for s in (
    # before gates-v1: a task's default suite is the last that names it (suite_of_task), and the gate
    # tasks' stays gates-v1; the generalist flies arena-v1's courses (courses_of) with its own env
    Suite("arena-v1", "TrackGen-Drone-Gates-v0", 1_000_000_121, laps=1, time_limit_s=20.0,
          course={"mixture": {"arena": REAL_MIXTURE["arena"]}}, courses_of="TrackGen-Drone-Gates-Real-v0",
          description="lab arenas (presets.gates_real's arena entry at its own ranges: 3.5-7 m, 0.35-0.65 m "
                      "openings, poles, take-offs), one pass"),
    Suite("gates-v1", "TrackGen-Drone-Gates-v0", 1_000_000_101, courses_of="TrackGen-Drone-Gates-v0",
          description="gate loops of 6-10 gates (1 m openings) in a 10 m square, the task's default difficulty"),
    Suite("track-v1", "TrackGen-Drone-Track-v0", 1_000_000_201, courses_of="TrackGen-Drone-Track-v0",
          description="elevated band tracks (0.8 m wide) in a 12 m square, the task's default difficulty"),
    Suite("gates-hard-v1", "TrackGen-Drone-Gates-Curriculum-v0", 1_000_000_111, course={"difficulty": 1.0},
          courses_of="TrackGen-Drone-Gates-Curriculum-v0",
          description="gate courses at difficulty 1: figure-8s, hairpins, split-S, climbs to 5.5 m, 1-4 poles"),
    # before car-track-v1 (the car task's default suite is the last that names it): courses of their own
    # seed, for choosing among a run's checkpoints, so the choice never sees a car-track-v1 course
    Suite("car-val-v1", "TrackGen-Car-Track-v0", 1_000_000_411, laps=1, time_limit_s=150.0,
          courses_of="TrackGen-Car-Track-v0", env_overrides=dict(_CAR_BODY_BOX),
          description="validation band tracks (car-track-v1's generator, another seed) for choosing a checkpoint"),
    Suite("car-track-v1", "TrackGen-Car-Track-v0", 1_000_000_401, laps=1, time_limit_s=150.0,
          courses_of="TrackGen-Car-Track-v0", env_overrides=dict(_CAR_BODY_BOX),
          description="circuit-like band tracks at 1/10 scale (presets.track_car: 300-800 m, half widths "
                      "0.36-0.84 m, hairpins) for the F1TENTH car, one lap from a standing start"),
    Suite("duel-v1", "TrackGen-Drone-Gates-Duel-v0", 1_000_000_301, laps=1, time_limit_s=30.0,
          courses_of="TrackGen-Drone-Gates-Duel-v0",
          description="head to head: 2 drones side by side from a standing start on the generalist's courses, one "
                      "pass (python -m track_gen_isaac.evaluate --suite duel-v1 --opponent RUN|self)"),
)}


def suite_of_task(task: str) -> Suite:
    """The newest suite flown with ``task`` (its ``-Play`` variant counts as the task). A task no
    suite names flies the newest suite of its course family on the same held-out courses: the gate
    tasks ``gates-v1``, the band-track tasks ``track-v1``, with ``task`` in the suite's place (its
    ``-Play-`` variant: the nominal vehicle, no randomization). ValueError listing the suites otherwise."""
    base = task.replace("-Play-", "-")
    found = [s for s in SUITES.values() if s.task == base]
    if found:
        return found[-1]
    for prefix, family in (("TrackGen-Drone-Gates", "gates-v1"), ("TrackGen-Drone-Track", "track-v1"),
                           ("TrackGen-Car-Track", "car-track-v1")):
        if base.startswith(prefix):
            head, sep, ver = base.rpartition("-v")
            return replace(SUITES[family], task=f"{head}-Play-v{ver}" if sep else base)
    raise ValueError(f"no benchmark suite flies {task!r}; suites: {', '.join(SUITES)}")


def list_suites() -> list[str]:
    """One line per suite."""
    return [s.line() for s in SUITES.values()]


def get_suite(name: str | Suite) -> Suite:
    """The suite called ``name`` (a :class:`Suite` is returned as is: your own suite, e.g. a
    ``dataclasses.replace`` of one with a shorter time limit); ValueError listing the suites otherwise."""
    if isinstance(name, Suite):
        return name
    suite = SUITES.get(name)
    if suite is None:
        raise ValueError(f"unknown suite {name!r}; suites: {', '.join(SUITES)} (python -m track_gen_isaac.evaluate --list)")
    return suite


def _loose_yaml(path: Path) -> dict:
    """``params/env.yaml`` as plain data (Isaac Lab writes python tags that ``safe_load`` refuses)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def plain(loader, suffix, node):
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", plain)
    Loader.add_multi_constructor("!", plain)
    with open(path) as f:
        return yaml.load(f, Loader=Loader) or {}


def training_seed(run_dir: str | Path) -> int | None:
    """The course seed a run trained on (``course.seed``, else ``seed`` of ``params/env.yaml``), or
    None when the run has no readable params."""
    path = Path(run_dir) / "params" / "env.yaml"
    if not path.is_file():
        return None
    try:
        data = _loose_yaml(path)
    except Exception:  # an unreadable file is no evidence either way
        return None
    course = data.get("course") if isinstance(data, dict) else None
    seed = course.get("seed") if isinstance(course, dict) else None
    if seed is None and isinstance(data, dict):
        seed = data.get("seed")
    try:
        return None if seed is None else int(seed)
    except (TypeError, ValueError):
        return None


def training_overlap(run_dir: str | Path, suite: Suite, ranks: int = 64) -> str | None:
    """A message when the run of ``run_dir`` trained on courses of ``suite`` (its course seed, or one
    of the next ``ranks`` seeds a multi-GPU run adds, is the suite's) or in the reserved range;
    warned as :class:`HeldOutWarning`. None when held out (or the run has no params)."""
    seed = training_seed(run_dir)
    if seed is None:
        return None
    msg = None
    if seed <= suite.seed < seed + ranks:
        msg = (f"the checkpoint's run trained on course seed {seed} ({Path(run_dir) / 'params' / 'env.yaml'}), "
               f"which covers suite {suite.name!r} (seed {suite.seed}): its courses are not held out")
    elif seed in RESERVED_SEEDS:
        names = [s.name for s in SUITES.values() if seed <= s.seed < seed + ranks]
        msg = (f"the checkpoint's run trained on course seed {seed}, inside the range reserved for suites "
               f"[{RESERVED_SEEDS.start}, {RESERVED_SEEDS.stop})" + (f" (suites {names})" if names else ""))
    if msg:
        warnings.warn(msg, HeldOutWarning, stacklevel=2)
    return msg


_NAME = re.compile(r"^[a-z][a-z0-9_-]*-v\d+$")
assert all(_NAME.match(n) and s.seed in RESERVED_SEEDS for n, s in SUITES.items())
