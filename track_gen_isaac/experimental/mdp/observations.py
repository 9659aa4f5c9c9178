"""Observation terms, warp runtime: ``f(env, out, **params)`` writes the stable twin's values into ``out``."""

from __future__ import annotations

import types

import warp as wp

from track_gen_isaac import kernels as K
from track_gen_isaac.experimental.mdp._base import ReaderTerm
from track_gen_isaac.mdp import observations as stable

__all__ = ["next_checkpoints", "next_gates", "track_frame", "lookahead_points", "lap_progress"]


def _descriptor(dim: int):
    """What the warp observation manager reads to size ``out`` (an instance attribute: dims follow params)."""
    return types.SimpleNamespace(out_dim=int(dim), extras={})


class next_checkpoints(ReaderTerm, stable.next_checkpoints):
    __doc__ = stable.next_checkpoints.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        p = cfg.params
        self._descriptor = _descriptor(int(p["num"]) * (15 if p["corners"] else 3))

    def __call__(self, env, out, course_name: str = "course", num: int = 2, corners: bool = False):
        ec = self.ec
        self.read()
        cp = ec.course.checkpoints
        wp.launch(K.next_checkpoints_kernel, dim=ec.num_envs,
                  inputs=[ec.position, ec.orientation, ec.origin, ec.course.result.valid, cp.pos, cp.normal,
                          cp.half_width, cp.half_height, cp.count, cp.closed, ec.course.progress.next_index,
                          int(num), int(bool(corners))],
                  outputs=[out], device=ec.device)


class next_gates(next_checkpoints):
    __doc__ = stable.next_gates.__doc__
    modes = ("gates",)

    def __call__(self, env, out, course_name: str = "course", num: int = 2, corners: bool = True):
        super().__call__(env, out, course_name=course_name, num=num, corners=corners)


class track_frame(ReaderTerm, stable.track_frame):
    __doc__ = stable.track_frame.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._descriptor = _descriptor(5 if cfg.params["vertical"] else 4)

    def __call__(self, env, out, course_name: str = "course", vertical: bool = False):
        ec = self.ec
        f = self.read().frame
        line = ec.course.course_line.line
        wp.launch(K.track_frame_kernel, dim=ec.num_envs,
                  inputs=[f.s, f.lateral, f.vertical, f.heading, line.length, int(bool(vertical))],
                  outputs=[out], device=ec.device)


class lookahead_points(ReaderTerm, stable.lookahead_points):
    __doc__ = stable.lookahead_points.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._descriptor = _descriptor(3 * len(self._distances_host))
        self._distances = None

    def __call__(self, env, out, course_name: str = "course", distances: tuple = (1.0, 2.0, 3.0)):
        ec = self.ec
        f = self.read().frame
        if self._distances is None:  # first (eager) call: allocate outside any capture
            self._distances = wp.array(self._distances_host, dtype=wp.float32, device=ec.device)
        line = ec.course.course_line.line
        wp.launch(K.lookahead_kernel, dim=ec.num_envs,
                  inputs=[ec.position, ec.orientation, ec.origin, f.s, f.segment, line.points, line.s, line.count,
                          line.length, line.closed, self._distances],
                  outputs=[out], device=ec.device)


class lap_progress(ReaderTerm, stable.lap_progress):
    __doc__ = stable.lap_progress.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._descriptor = _descriptor(1)

    def __call__(self, env, out, course_name: str = "course", laps: float | None = None):
        ec = self.ec
        res = self.read()
        scale = 1.0 if laps is None else 1.0 / float(laps)
        wp.launch(K.lap_progress_kernel, dim=ec.num_envs,
                  inputs=[res.events.progress, ec.course.checkpoints.length, scale], outputs=[out], device=ec.device)
