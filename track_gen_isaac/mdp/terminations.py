"""Termination terms (stable runtime): [E] bool from the course's StepResult.

Terminations are computed first in ``ManagerBasedRLEnv.step`` (right after physics), so the
first course termination term usually steps the course for the whole env step.
"""

from __future__ import annotations

import numbers

from track_gen_isaac.mdp._base import CourseTerm
from track_gen_isaac.mdp.rewards import _check_off_track, off_track_mask

__all__ = ["collided", "off_track", "laps_done", "gate_missed", "invalid_course"]


class collided(CourseTerm):
    """The robot's box touches an obstacle of the course (``contacts.hit``). Needs ``CourseCfg.collision``."""

    def check(self):
        if self.course_cfg.collision is None:
            raise ValueError(f"env.cfg.{self.course_name}.collision is None: the course has no collision component")

    def __call__(self, env, course_name: str = "course"):
        ec = self.ec
        return ec.torch(ec.step().contacts.hit) != 0


class off_track(CourseTerm):
    """Off the band (track) or farther than ``max_distance`` from the course line (gates); see
    :class:`~track_gen_isaac.mdp.rewards.off_track_penalty`."""

    def check(self, margin=0.0, max_distance=None):
        _check_off_track(self, margin, max_distance)

    def __call__(self, env, course_name: str = "course", margin: float = 0.0, max_distance: float | None = None):
        return off_track_mask(self.ec, margin, max_distance)


class laps_done(CourseTerm):
    """``laps`` laps completed since reset (a finished sprint counts as one)."""

    def check(self, laps=1):
        if isinstance(laps, bool) or not isinstance(laps, numbers.Integral) or laps < 1:
            raise ValueError(f"laps: expected an int >= 1, got {laps!r}")

    def __call__(self, env, course_name: str = "course", laps: int = 1):
        ec = self.ec
        return ec.torch(ec.step().events.laps) >= int(laps)


class gate_missed(CourseTerm):
    """This step crossed the next checkpoint's (gate's) plane outside its opening (``events.missed``)."""

    def __call__(self, env, course_name: str = "course"):
        ec = self.ec
        return ec.torch(ec.step().events.missed) != 0


class invalid_course(CourseTerm):
    """The env's course failed validation (``valid == 0``): nothing to race on; reset to redraw it."""

    def __call__(self, env, course_name: str = "course"):
        ec = self.ec
        return ec.torch(ec.step().valid) == 0
