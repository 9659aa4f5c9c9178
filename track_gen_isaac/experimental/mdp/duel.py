"""Head-to-head racing terms, warp runtime: the launches of :mod:`track_gen_isaac.mdp.duel` with the
warp managers' signatures (``out``, ``env_mask``). The placement writes the drones' root poses with
a kernel into ``root_link_pose_w`` / ``root_com_vel_w`` plus ``NewtonManager.invalidate_fk``
(recordable), as the other warp placements do."""

from __future__ import annotations

from isaaclab_experimental.managers import ManagerTermBase as WarpManagerTermBase
from isaaclab_newton.physics import NewtonManager

from track_gen_isaac.experimental.mdp._base import ReaderTerm, WarpCourseTerm
from track_gen_isaac.experimental.mdp.observations import _ObsTerm
from track_gen_isaac.mdp import duel as stable

__all__ = ["place_on_grid", "rivals", "race_reward", "race_over", "race_time_out"]


class place_on_grid(WarpCourseTerm, stable.place_on_grid):
    __doc__ = stable.place_on_grid.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        NewtonManager.transforms_may_change_on_graph_replay = True

    def __call__(self, env, env_mask, course_name: str = "course", start_share: float = 1.0, spacing: float = 0.6,
                 ahead: float = 0.4, jitter: tuple = (0.0, 0.0, 0.0), start_jitter: tuple = (0.0, 0.0, 0.0),
                 z_offset: float = 0.0):
        ec = self.ec
        data = ec.asset.data
        self._pose(ec.mask_from(env_mask), start_share, spacing, ahead, jitter, start_jitter, z_offset,
                   data.root_link_pose_w.warp, data.root_com_vel_w.warp)
        NewtonManager.invalidate_fk(env_mask=env_mask, articulation_ids=ec.asset.root_view.articulation_ids)
        ec.relocalize()


class rivals(_ObsTerm, stable.rivals):
    __doc__ = stable.rivals.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)


class race_reward(ReaderTerm, stable.race_reward):
    __doc__ = stable.race_reward.__doc__

    def __call__(self, env, out, course_name: str = "course", signal: str = "progress", clip: float = 25.0,
                 margin: float = 0.3):
        self.launch(out, signal=signal, clip=clip, margin=margin)


class race_over(ReaderTerm, stable.race_over):
    __doc__ = stable.race_over.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)


class race_time_out(stable.race_time_out, WarpManagerTermBase):
    __doc__ = stable.race_time_out.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out, env._episode_length_buf_wp)

    def reset(self, env_ids=None, env_mask=None):
        return None
