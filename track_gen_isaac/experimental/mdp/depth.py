"""Depth observation terms, warp runtime: the stable terms' launch (:mod:`track_gen_isaac.mdp.depth`) into
the manager's ``out`` ([E, H * W] row-major for both: the warp observation manager holds 2D buffers only)."""

from __future__ import annotations

from track_gen_isaac.experimental.mdp.observations import _ObsTerm
from track_gen_isaac.mdp import depth as stable

__all__ = ["depth_flat", "depth_image"]


class depth_flat(_ObsTerm, stable.depth_flat):
    __doc__ = stable.depth_flat.__doc__

    def __call__(self, env, out, course_name: str = "course", camera: str = "depth_camera"):
        self.launch(out, camera=camera)


class depth_image(_ObsTerm, stable.depth_image):
    __doc__ = stable.depth_image.__doc__

    def __call__(self, env, out, course_name: str = "course", camera: str = "depth_camera",
                 channel_first: bool = False):
        self.launch(out, camera=camera)
