"""The base of every course term: the course name, its cfg (checked at construction), the course.

A term that reads the course's per-step results (observation, reward, termination) implements
one :meth:`CourseTerm.launch`: its kernel launch into an ``out`` array, next to that kernel in the
term's module. Both runtimes call it: the stable ``__call__`` into the term's own preallocated
buffer (:meth:`CourseTerm.compute`, returned as a torch copy), the warp twin
(``track_gen_isaac.experimental.mdp``) into the manager's ``out``.
"""

from __future__ import annotations

import torch
import warp as wp
from isaaclab.managers import ManagerTermBase

from track_gen.course import StepResult
from track_gen_isaac.env_course import EnvCourse, course_cfg_of, get_course

__all__ = ["CourseTerm"]


class CourseTerm(ManagerTermBase):
    """A class-based term reading the env's course ``params["course_name"]`` (``"course"`` by default).

    ``__init__`` (at manager construction; for events at their first call) checks that the env cfg
    declares that course and that its CourseCfg is valid, then :meth:`check` the term's own
    parameters, so a mistake fails when the env is built, with a message naming the term. The
    course itself is built on first use (:func:`~track_gen_isaac.env_course.get_course`).
    """

    #: course modes this term supports (None: both)
    modes: tuple[str, ...] | None = None
    #: the term reads a course of K agents per course (``CourseCfg.agents`` > 1) correctly: per-agent
    #: results per env, the course's geometry at ``env // K``. A term without it is refused on such a course
    multi_agent: bool = False
    #: dtype of the term's output (:meth:`launch`): float32, bool for terminations
    out_dtype = wp.float32

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self.course_name = cfg.params.get("course_name", "course")
        self._ec: EnvCourse | None = None
        where = f"{type(self).__name__}(course_name={self.course_name!r})"
        try:
            self.course_cfg = course_cfg_of(env.cfg, self.course_name)
            self.course_cfg.validate_config()
        except (AttributeError, TypeError, ValueError) as exc:
            raise type(exc)(f"{where}: {exc}") from None
        if self.modes is not None and self.course_cfg.mode not in self.modes:
            raise ValueError(
                f"{where}: this term supports course modes {self.modes}, but env.cfg.{self.course_name} is a "
                f"{self.course_cfg.mode!r} course"
            )
        agents = int(getattr(self.course_cfg, "agents", 1))
        if agents > 1 and not self.multi_agent:
            raise ValueError(
                f"{where}: env.cfg.{self.course_name} races {agents} agents per course (CourseCfg.agents), and this "
                f"term reads the course as one agent per env; use terms that support agents (multi_agent = True: the "
                f"progress, gate, lap, collision and termination terms, next_checkpoints / next_gates, gate_frames, "
                f"nearest_poles, regenerate_course / reset_course, and track_gen_isaac.mdp.duel)"
            )
        try:
            self.check(**{k: v for k, v in cfg.params.items() if k != "course_name"})
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{where}: {exc}") from None

    def check(self, **params) -> None:
        """Validate the term's parameters (override); raise TypeError / ValueError."""

    @property
    def ec(self) -> EnvCourse:
        if self._ec is None:
            self._ec = get_course(self._env, self.course_name)
        return self._ec

    @property
    def mode(self) -> str:
        return self.course_cfg.mode

    def read(self) -> StepResult:
        """The course's StepResult of the current env step. Stable runtime: the course is stepped by
        its first reader of the env step (:meth:`~track_gen_isaac.env_course.EnvCourse.step`); the
        warp twins override this (:meth:`~track_gen_isaac.env_course.EnvCourse.step_as`)."""
        return self.ec.step()

    def out_shape(self, **params) -> tuple[int, ...]:
        """Shape of the term's output for ``params``: [E] (rewards, terminations); observations [E, D]."""
        return (self.num_envs,)

    def launch(self, out: wp.array, **params) -> None:
        """Read the course (:meth:`read`) and write the term's value into ``out`` (one kernel launch;
        recordable). Implemented by the reader terms, used by both runtimes."""
        raise NotImplementedError(f"{type(self).__name__} does not read the course per step")

    def compute(self, **params) -> torch.Tensor:
        """Stable runtime: :meth:`launch` into the term's own preallocated buffer, as a torch copy."""
        ec = self.ec
        shape = self.out_shape(**params)
        out = ec.buffer(("out", id(self), shape), shape, self.out_dtype)
        self.launch(out, **params)
        return ec.torch(out).clone()

    def reset(self, env_ids=None) -> None:
        """Stable runtime: the first course term reset after the managers' log dict is made logs the
        resetting envs' ``Episode_Course/*`` means into it (:meth:`EnvCourse.log_episodes`)."""
        log = getattr(self._env, "extras", {}).get("log")
        if isinstance(log, dict):
            self.ec.log_episodes(env_ids)
        return None
