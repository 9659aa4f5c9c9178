"""Gate props (stable runtime): move kinematic gate bodies onto the reset envs' new courses.

The course's :class:`~track_gen.tools.Props` component (``CourseCfg.extra=[tg.tools.Props]``)
holds per-generation gate transforms in the env frame; :class:`move_gate_props` writes them,
plus each env's origin, into a :class:`~isaaclab.assets.RigidObjectCollection` with one kinematic
rigid object per gate slot (slot ``k`` = the collection's object ``k``). Slots the course does not
use, and objects beyond the Props capacity, get the parking transform
(:data:`~track_gen.tools.props.PARK_POSITION` + the env origin, identity rotation).

Declare it after :class:`~track_gen_isaac.mdp.events.regenerate_course` of the same course (it
reads the new course's Props; declared before, it is refused at its first call). The write is a
masked kernel into ``body_link_pose_w`` / ``body_com_vel_w`` plus ``NewtonManager.invalidate_fk``
(no eager writer, no host sync), so only the reset envs' props move.
"""

from __future__ import annotations

import warp as wp
from isaaclab.assets import BaseRigidObjectCollection
from isaaclab_newton.physics import NewtonManager

from track_gen.tools.props import PARK_POSITION
from track_gen_isaac.mdp._base import CourseTerm
from track_gen_isaac.mdp.events import regenerate_course, reset_course, reset_order

__all__ = ["move_gate_props"]

_PARK = wp.constant(wp.vec3f(*PARK_POSITION))


@wp.kernel
def _move_props(active: wp.array(dtype=wp.int32), origin: wp.array(dtype=wp.vec3f), pos: wp.array2d(dtype=wp.vec3f),
                quat: wp.array2d(dtype=wp.quatf), pose_out: wp.array2d(dtype=wp.transformf),
                vel_out: wp.array2d(dtype=wp.spatial_vectorf), env_mask_out: wp.array(dtype=wp.bool)):
    e, k = wp.tid()
    on = active[e] != 0
    if k == 0:
        env_mask_out[e] = on
    if not on:
        return
    p = _PARK
    q = wp.quatf(0.0, 0.0, 0.0, 1.0)
    if k < pos.shape[1]:
        p = pos[e, k]
        q = quat[e, k]
    pose_out[e, k] = wp.transformf(p + origin[e], q)
    vel_out[e, k] = wp.spatial_vectorf(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


class move_gate_props(CourseTerm):
    """Place the reset envs' gate props (a kinematic RigidObjectCollection ``props_asset``, one
    object per gate slot) at their course's gates, from the course's Props component
    (``props_component``, ``"props"`` by default); unused slots are parked. Declare after
    ``regenerate_course`` of the same course."""

    modes = ("gates",)
    _RESETTERS = (regenerate_course, reset_course)

    def check(self, props_asset: str = "gates", props_component: str = "props"):
        if not isinstance(props_asset, str) or not props_asset:
            raise TypeError(f"props_asset: expected a scene entity name, got {props_asset!r}")
        if not isinstance(props_component, str) or not props_component:
            raise TypeError(f"props_component: expected a component name, got {props_component!r}")
        self._ready = False

    def _setup(self, env, props_asset: str, props_component: str) -> None:
        where = f"{type(self).__name__}(course_name={self.course_name!r})"
        ec = self.ec
        comp = ec.course.components.get(props_component)
        if comp is None or not hasattr(comp, "result") or not hasattr(comp.result, "pos"):
            raise ValueError(
                f"{where}: the course env.cfg.{self.course_name} has no Props component {props_component!r} "
                f"(components: {list(ec.course.components)}); add it: "
                f"CourseCfg(..., extra=[track_gen.tools.Props])"
            )
        try:
            asset = env.scene[props_asset]
        except KeyError:
            raise ValueError(f"{where}: the scene has no entity {props_asset!r} (props_asset)") from None
        data = getattr(asset, "data", None)
        if data is None or not hasattr(data, "body_link_pose_w") or not isinstance(asset, BaseRigidObjectCollection):
            raise TypeError(f"{where}: props_asset {props_asset!r} is not a RigidObjectCollection")
        K, n = int(comp.capacity), int(asset.num_bodies)
        if n < K:
            raise ValueError(
                f"{where}: props_asset {props_asset!r} has {n} objects, but the course has {K} gate slots "
                f"(layout max gates): give the collection at least {K} rigid objects"
            )
        self.props, self.asset = comp.result, asset
        self.pose = data.body_link_pose_w.warp
        self.vel = data.body_com_vel_w.warp
        self.env_mask = wp.zeros(ec.num_envs, dtype=wp.bool, device=ec.device)
        self.articulation_ids = asset.root_view.articulation_ids
        NewtonManager.transforms_may_change_on_graph_replay = True
        self._check_order(env)
        self._ready = True

    def _check_order(self, env) -> None:
        """Refuse this event declared before a regeneration / reset of the same course."""
        mine, late, _ = reset_order(env, self, self.course_name, self._RESETTERS)
        if late:
            raise ValueError(
                f"reset event {mine!r} ({type(self).__name__}) is declared before {late} of the same course: "
                f"reset events run in declaration order, so the gates would be placed on the old course. "
                f"Declare {late[0]!r} first in the events cfg"
            )

    def move(self, mask: wp.array) -> None:
        """The kernel + FK invalidation for the envs flagged in ``mask`` ([E] int32)."""
        ec = self.ec
        wp.launch(_move_props, dim=(ec.num_envs, self.pose.shape[1]),
                  inputs=[mask, ec.origin, self.props.pos, self.props.quat],
                  outputs=[self.pose, self.vel, self.env_mask], device=ec.device)
        NewtonManager.invalidate_fk(env_mask=self.env_mask, articulation_ids=self.articulation_ids)

    def __call__(self, env, env_ids, course_name: str = "course", props_asset: str = "gates",
                 props_component: str = "props"):
        if not self._ready:
            self._setup(env, props_asset, props_component)
        self.move(self.ec.set_mask(env_ids))
