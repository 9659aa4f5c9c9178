"""Observation terms, warp runtime: ``f(env, out, **params)``; the stable twin's :meth:`launch` into ``out``."""

from __future__ import annotations

import types

from track_gen_isaac.experimental.mdp._base import ReaderTerm
from track_gen_isaac.mdp import observations as stable

__all__ = ["next_checkpoints", "next_gates", "track_frame", "track_frame_velocity", "lookahead_points",
           "lap_progress"]


class _ObsTerm(ReaderTerm):
    """Declares the term's dim to the warp observation manager (an instance attribute: dims follow params)."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        params = {k: v for k, v in cfg.params.items() if k != "course_name"}
        self._descriptor = types.SimpleNamespace(out_dim=int(self.out_shape(**params)[1]), extras={})


class next_checkpoints(_ObsTerm, stable.next_checkpoints):
    __doc__ = stable.next_checkpoints.__doc__

    def __call__(self, env, out, course_name: str = "course", num: int = 2, corners: bool = False):
        self.launch(out, num=num, corners=corners)


class next_gates(next_checkpoints):
    __doc__ = stable.next_gates.__doc__
    modes = ("gates",)

    def __call__(self, env, out, course_name: str = "course", num: int = 2, corners: bool = True):
        self.launch(out, num=num, corners=corners)


class track_frame(_ObsTerm, stable.track_frame):
    __doc__ = stable.track_frame.__doc__

    def __call__(self, env, out, course_name: str = "course", vertical: bool = False):
        self.launch(out, vertical=vertical)


class track_frame_velocity(_ObsTerm, stable.track_frame_velocity):
    __doc__ = stable.track_frame_velocity.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)


class lookahead_points(_ObsTerm, stable.lookahead_points):
    __doc__ = stable.lookahead_points.__doc__

    def __call__(self, env, out, course_name: str = "course", distances: tuple = (1.0, 2.0, 3.0)):
        self.launch(out, distances=distances)


class lap_progress(_ObsTerm, stable.lap_progress):
    __doc__ = stable.lap_progress.__doc__

    def __call__(self, env, out, course_name: str = "course", laps: float | None = None):
        self.launch(out, laps=laps)
