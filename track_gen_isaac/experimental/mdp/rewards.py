"""Reward terms, warp runtime: ``f(env, out, **params)``; the stable twin's :meth:`launch` into ``out``
([E] float32; the manager applies weight and dt)."""

from __future__ import annotations

from track_gen_isaac.experimental.mdp._base import ReaderTerm
from track_gen_isaac.mdp import rewards as stable

__all__ = ["progress_delta", "progress_rate", "checkpoint_passed", "lap_completed", "collision_penalty",
           "clearance_penalty", "off_track_penalty", "wrong_way_penalty"]


class progress_delta(ReaderTerm, stable.progress_delta):
    __doc__ = stable.progress_delta.__doc__

    def __call__(self, env, out, course_name: str = "course", clip: float | None = None):
        self.launch(out, clip=clip)


class progress_rate(ReaderTerm, stable.progress_rate):
    __doc__ = stable.progress_rate.__doc__

    def __call__(self, env, out, course_name: str = "course", clip: float | None = None,
                 leg_accel: float | None = None):
        self.launch(out, clip=clip, leg_accel=leg_accel)


class checkpoint_passed(ReaderTerm, stable.checkpoint_passed):
    __doc__ = stable.checkpoint_passed.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)


class lap_completed(ReaderTerm, stable.lap_completed):
    __doc__ = stable.lap_completed.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)


class collision_penalty(ReaderTerm, stable.collision_penalty):
    __doc__ = stable.collision_penalty.__doc__

    def __call__(self, env, out, course_name: str = "course", depth: bool = False):
        self.launch(out, depth=depth)


class clearance_penalty(ReaderTerm, stable.clearance_penalty):
    __doc__ = stable.clearance_penalty.__doc__

    def __call__(self, env, out, course_name: str = "course", margin: float = 0.2):
        self.launch(out, margin=margin)


class off_track_penalty(ReaderTerm, stable.off_track_penalty):
    __doc__ = stable.off_track_penalty.__doc__

    def __call__(self, env, out, course_name: str = "course", margin: float = 0.0, max_distance: float | None = None):
        self.launch(out, margin=margin, max_distance=max_distance)


class wrong_way_penalty(ReaderTerm, stable.wrong_way_penalty):
    __doc__ = stable.wrong_way_penalty.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)
