"""The base of the warp-runtime course terms."""

from __future__ import annotations

from isaaclab_experimental.managers import ManagerTermBase as WarpManagerTermBase

from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["WarpCourseTerm", "ReaderTerm"]


class WarpCourseTerm(CourseTerm, WarpManagerTermBase):
    """A course term for the warp managers: the stable term's checks, a warp manager term.

    Subclasses also derive from their stable twin (for its ``check`` and docs) and override
    ``__call__`` with the warp signature.
    """

    def reset(self, env_ids=None, env_mask=None):
        return None


class ReaderTerm(WarpCourseTerm):
    """An observation, reward or termination term: it reads the course's StepResult and, when it
    is the course's owner term (the first course term of an env step), steps the course first."""

    def read(self):
        return self.ec.step_as(self.cfg)
