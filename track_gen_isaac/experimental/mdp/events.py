"""Reset events, warp runtime: ``f(env, env_mask, **params)``; recorded into the event stage's graph.

The same order rules as the stable twins (:mod:`track_gen_isaac.mdp.events`). The manager's
``env_mask`` ([E] bool) becomes the course's int32 mask with one launch; the regeneration records
into the event stage's graph (``course.regenerate`` under a capture), the placement is a kernel
into the entity's ``root_link_pose_w`` / ``root_com_vel_w`` buffers plus
``NewtonManager.invalidate_fk``, and each event re-runs the localizer at its end, so the reset's
observations are in the new frame.
"""

from __future__ import annotations

from isaaclab_newton.physics import NewtonManager

from track_gen_isaac.experimental.mdp._base import WarpCourseTerm
from track_gen_isaac.mdp import events as stable

__all__ = ["regenerate_course", "reset_course", "place_at_course_start", "place_at_checkpoint",
           "place_at_start_or_checkpoint"]


class regenerate_course(WarpCourseTerm, stable.regenerate_course):
    __doc__ = stable.regenerate_course.__doc__

    def __call__(self, env, env_mask, course_name: str = "course", advance: bool = True):
        ec = self.ec
        ec.course.regenerate(mask=ec.mask_from(env_mask), advance=bool(advance))
        ec.relocalize()


class reset_course(WarpCourseTerm, stable.reset_course):
    __doc__ = stable.reset_course.__doc__

    def __call__(self, env, env_mask, course_name: str = "course"):
        ec = self.ec
        ec.course.reset(mask=ec.mask_from(env_mask))
        ec.relocalize()


class _place(WarpCourseTerm, stable._place):
    _RESETTERS = (regenerate_course, reset_course, stable.regenerate_course, stable.reset_course)

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        # Newton only honours kernel-written root poses at the next step when told so outside a CUDA
        # capture: the Python dirty flag set by invalidate_fk is not replayed by a graph
        NewtonManager.transforms_may_change_on_graph_replay = True

    def _place(self, env, z_offset):
        ec = self.ec
        data = ec.asset.data
        ec.root_poses(ec.mask, z_offset, pose=data.root_link_pose_w.warp, velocity=data.root_com_vel_w.warp)
        NewtonManager.invalidate_fk(env_mask=self._env_mask, articulation_ids=ec.asset.root_view.articulation_ids)
        ec.relocalize()


class place_at_course_start(_place, stable.place_at_course_start):
    __doc__ = stable.place_at_course_start.__doc__

    def __call__(self, env, env_mask, course_name: str = "course", jitter: tuple = (0.0, 0.0, 0.0),
                 z_offset: float | None = None):
        if not self._order_checked:
            self._check_order(env)
        self._env_mask = env_mask
        self.ec.start_poses(self.ec.mask_from(env_mask), jitter)
        self._place(env, self.z_of(z_offset))


class place_at_checkpoint(_place, stable.place_at_checkpoint):
    __doc__ = stable.place_at_checkpoint.__doc__

    def __call__(self, env, env_mask, course_name: str = "course", jitter: tuple = (0.0, 0.0, 0.0),
                 z_offset: float | None = None):
        if not self._order_checked:
            self._check_order(env)
        self._env_mask = env_mask
        self.ec.checkpoint_poses(self.ec.mask_from(env_mask), jitter)
        self._place(env, self.z_of(z_offset))


class place_at_start_or_checkpoint(_place, stable.place_at_start_or_checkpoint):
    __doc__ = stable.place_at_start_or_checkpoint.__doc__

    def __call__(self, env, env_mask, course_name: str = "course", start_share: float = 0.25,
                 jitter: tuple = (0.0, 0.0, 0.0), start_jitter: tuple = (0.0, 0.0, 0.0), z_offset: float | None = None,
                 corner_share: float = 0.0, corner_lead: tuple = (2.0, 10.0), corner_power: float | None = None,
                 corner_brake: float | None = None):
        if not self._order_checked:
            self._check_order(env)
        self._env_mask = env_mask
        self.place(self.ec.mask_from(env_mask), start_share, jitter, start_jitter, corner_share, corner_lead,
                   corner_power, corner_brake)
        self._place(env, self.z_of(z_offset))

