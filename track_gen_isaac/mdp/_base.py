"""The base of every course term: the course name, its cfg (checked at construction), the course."""

from __future__ import annotations

from isaaclab.managers import ManagerTermBase

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

    def reset(self, env_ids=None) -> None:
        return None
