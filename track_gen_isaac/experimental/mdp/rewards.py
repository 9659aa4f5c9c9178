"""Reward terms, warp runtime: ``f(env, out, **params)`` writes [E] float32 (the manager applies weight and dt)."""

from __future__ import annotations

import warp as wp

from track_gen_isaac import kernels as K
from track_gen_isaac.experimental.mdp._base import ReaderTerm
from track_gen_isaac.mdp import rewards as stable

__all__ = ["progress_delta", "checkpoint_passed", "lap_completed", "collision_penalty", "off_track_penalty",
           "wrong_way_penalty"]


class progress_delta(ReaderTerm, stable.progress_delta):
    __doc__ = stable.progress_delta.__doc__

    def __call__(self, env, out, course_name: str = "course", clip: float | None = None):
        ec = self.ec
        d = self.read().events.delta
        wp.launch(K.copy_float_kernel, dim=ec.num_envs, inputs=[d, float(clip or 0.0), int(clip is not None)],
                  outputs=[out], device=ec.device)


def _flag(term, out, src):
    wp.launch(K.int_to_float_kernel, dim=term.ec.num_envs, inputs=[src], outputs=[out], device=term.ec.device)


class checkpoint_passed(ReaderTerm, stable.checkpoint_passed):
    __doc__ = stable.checkpoint_passed.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        _flag(self, out, self.read().events.passed)


class lap_completed(ReaderTerm, stable.lap_completed):
    __doc__ = stable.lap_completed.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        _flag(self, out, self.read().events.lap)


class collision_penalty(ReaderTerm, stable.collision_penalty):
    __doc__ = stable.collision_penalty.__doc__

    def __call__(self, env, out, course_name: str = "course", depth: bool = False):
        c = self.read().contacts
        if depth:
            wp.launch(K.copy_float_kernel, dim=self.ec.num_envs, inputs=[c.depth, 0.0, 0], outputs=[out],
                      device=self.ec.device)
        else:
            _flag(self, out, c.hit)


class off_track_penalty(ReaderTerm, stable.off_track_penalty):
    __doc__ = stable.off_track_penalty.__doc__

    def __call__(self, env, out, course_name: str = "course", margin: float = 0.0, max_distance: float | None = None):
        ec = self.ec
        self.read()
        wp.launch(K.off_track_float_kernel, dim=ec.num_envs, inputs=stable.off_track_args(ec, margin, max_distance),
                  outputs=[out], device=ec.device)


class wrong_way_penalty(ReaderTerm, stable.wrong_way_penalty):
    __doc__ = stable.wrong_way_penalty.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        _flag(self, out, self.read().events.wrong_way)
