"""Termination terms, warp runtime: ``f(env, out, **params)`` writes [E] bool (``out`` is a strided view)."""

from __future__ import annotations

import warp as wp

from track_gen_isaac import kernels as K
from track_gen_isaac.experimental.mdp._base import ReaderTerm
from track_gen_isaac.mdp import rewards as stable_rewards
from track_gen_isaac.mdp import terminations as stable

__all__ = ["collided", "off_track", "laps_done", "gate_missed", "invalid_course"]


def _at_least(term, out, src, k=1):
    wp.launch(K.int_at_least_kernel, dim=term.ec.num_envs, inputs=[src, int(k)], outputs=[out], device=term.ec.device)


class collided(ReaderTerm, stable.collided):
    __doc__ = stable.collided.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        _at_least(self, out, self.read().contacts.hit)


class off_track(ReaderTerm, stable.off_track):
    __doc__ = stable.off_track.__doc__

    def __call__(self, env, out, course_name: str = "course", margin: float = 0.0, max_distance: float | None = None):
        ec = self.ec
        self.read()
        wp.launch(K.off_track_kernel, dim=ec.num_envs,
                  inputs=stable_rewards.off_track_args(ec, margin, max_distance), outputs=[out], device=ec.device)


class laps_done(ReaderTerm, stable.laps_done):
    __doc__ = stable.laps_done.__doc__

    def __call__(self, env, out, course_name: str = "course", laps: int = 1):
        _at_least(self, out, self.read().events.laps, laps)


class gate_missed(ReaderTerm, stable.gate_missed):
    __doc__ = stable.gate_missed.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        _at_least(self, out, self.read().events.missed)


class invalid_course(ReaderTerm, stable.invalid_course):
    __doc__ = stable.invalid_course.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        ec = self.ec
        wp.launch(K.int_is_zero_kernel, dim=ec.num_envs, inputs=[self.read().valid], outputs=[out], device=ec.device)
