"""Termination terms, warp runtime: ``f(env, out, **params)``; the stable twin's :meth:`launch` into
``out`` ([E] bool, a strided view)."""

from __future__ import annotations

from track_gen_isaac.experimental.mdp._base import ReaderTerm
from track_gen_isaac.mdp import terminations as stable

__all__ = ["collided", "off_track", "laps_done", "gate_missed", "invalid_course"]


class collided(ReaderTerm, stable.collided):
    __doc__ = stable.collided.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)


class off_track(ReaderTerm, stable.off_track):
    __doc__ = stable.off_track.__doc__

    def __call__(self, env, out, course_name: str = "course", margin: float = 0.0, max_distance: float | None = None):
        self.launch(out, margin=margin, max_distance=max_distance)


class laps_done(ReaderTerm, stable.laps_done):
    __doc__ = stable.laps_done.__doc__

    def __call__(self, env, out, course_name: str = "course", laps: int = 1):
        self.launch(out, laps=laps)


class gate_missed(ReaderTerm, stable.gate_missed):
    __doc__ = stable.gate_missed.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)


class invalid_course(ReaderTerm, stable.invalid_course):
    __doc__ = stable.invalid_course.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)
