"""The base of the warp-runtime course terms."""

from __future__ import annotations

from isaaclab.managers import ObservationTermCfg, RewardTermCfg, TerminationTermCfg
from isaaclab_experimental.managers import ManagerTermBase as WarpManagerTermBase

from track_gen_isaac.env_course import register_reader
from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["WarpCourseTerm", "ReaderTerm"]

#: the manager a reader term belongs to, by its cfg type (the warp managers take the stable cfg classes)
_KINDS = ((TerminationTermCfg, "termination"), (RewardTermCfg, "reward"), (ObservationTermCfg, "observation"))


class WarpCourseTerm(CourseTerm, WarpManagerTermBase):
    """A course term for the warp managers: the stable term's checks, a warp manager term.

    Subclasses also derive from their stable twin (for its ``check``, ``launch`` and docs) and
    override ``__call__`` with the warp signature.
    """

    def reset(self, env_ids=None, env_mask=None):
        return None


class ReaderTerm(WarpCourseTerm):
    """An observation, reward or termination term: it reads the course's StepResult and, when it
    is the course's owner term (the first course term of an env step), steps the course first.

    At construction it registers with the env's course (:func:`~track_gen_isaac.env_course.register_reader`),
    which picks the owner among the registered terms."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        kind = next((k for cls, k in _KINDS if isinstance(cfg, cls)), None)
        if kind is not None:
            register_reader(env, self.course_name, kind, cfg)

    def read(self):
        return self.ec.step_as(self.cfg)

    def reset(self, env_ids=None, env_mask=None):
        """The course's stats term (its first reward term, else its first reader) reduces the
        ``Episode_Course/*`` means over ``env_mask`` here, in the recorded reset stage, and a reward
        term returns their persistent views, which the warp reward manager merges into its log
        (:meth:`~track_gen_isaac.env_course.EnvCourse.log_episodes_as`)."""
        if env_mask is None:
            return None
        return self.ec.log_episodes_as(self.cfg, env_mask)
