"""Gate props, warp runtime: the twin of :mod:`track_gen_isaac.mdp.props`, ``f(env, env_mask, **params)``.

The manager's ``env_mask`` ([E] bool) becomes the course's int32 mask with one launch, then the
same masked kernel into the collection's ``body_link_pose_w`` / ``body_com_vel_w`` plus
``NewtonManager.invalidate_fk``; all of it records into the event stage's graph.
"""

from __future__ import annotations

from track_gen_isaac.experimental.mdp import events as warp_events
from track_gen_isaac.experimental.mdp._base import WarpCourseTerm
from track_gen_isaac.mdp import events as stable_events
from track_gen_isaac.mdp import props as stable

__all__ = ["move_gate_props"]


class move_gate_props(WarpCourseTerm, stable.move_gate_props):
    __doc__ = stable.move_gate_props.__doc__
    _RESETTERS = (warp_events.regenerate_course, warp_events.reset_course,
                  stable_events.regenerate_course, stable_events.reset_course)

    def __call__(self, env, env_mask, course_name: str = "course", props_asset: str = "gates",
                 props_component: str = "props"):
        if not self._ready:  # the first (eager, warm-up) call; the recorded calls only launch
            self._setup(env, props_asset, props_component)
        self.move(self.ec.mask_from(env_mask))
