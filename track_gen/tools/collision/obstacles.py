"""Pole obstacles (``result.obstacle_*`` of a gate course or a band track) against the body's 3D box:
:class:`ObstacleCollision`."""

from __future__ import annotations

import warp as wp

from track_gen.math import BIG
from track_gen.tools._common import real
from track_gen.tools.collision.pose import (GO, BodyBox, CollisionBase, ContactRows, open_row, prism_gap, write,
                                           write_row)
from track_gen.tools.component import check_name as _name

__all__ = ["ObstacleCollision"]


@wp.kernel
def _pole_kernel(half_height: float,
                 valid: wp.array(dtype=wp.int32), opos: wp.array2d(dtype=wp.vec3f),
                 orad: wp.array2d(dtype=wp.float32), oheight: wp.array2d(dtype=wp.float32),
                 ocount: wp.array(dtype=wp.int32), body: BodyBox,
                 contacts_out: ContactRows):
    agent = wp.tid()  # one thread per agent, against the course of its env
    e = agent // body.agents
    n = wp.clamp(ocount[e], 0, opos.shape[1])
    if valid[e] == 0:
        n = 0
    verdict, p3, c, u, v, ha, hb = open_row(agent, e, n > 0, body)
    if verdict != GO:
        write_row(agent, verdict, contacts_out)
        return
    best = float(BIG)
    bidx = int(-1)
    bn = wp.vec3f(0.0, 0.0, 0.0)
    for k in range(n):
        q = opos[e, k]
        dc = wp.vec2f(q[0], q[1]) - c
        pl = wp.vec2f(wp.dot(dc, u), wp.dot(dc, v))
        qx = wp.abs(pl[0]) - ha
        qy = wp.abs(pl[1]) - hb
        outside = wp.sqrt(wp.max(qx, 0.0) * wp.max(qx, 0.0) + wp.max(qy, 0.0) * wp.max(qy, 0.0))
        dxy = outside + wp.min(wp.max(qx, qy), 0.0) - orad[e, k]
        nb = wp.vec2f(0.0, 0.0)
        if outside > 0.0:
            cp = wp.vec2f(wp.clamp(pl[0], -ha, ha), wp.clamp(pl[1], -hb, hb))
            nb = (cp - pl) / outside
        elif qx > qy:
            nb = wp.vec2f(-wp.where(pl[0] < 0.0, -1.0, 1.0), 0.0)
        else:
            nb = wp.vec2f(0.0, -wp.where(pl[1] < 0.0, -1.0, 1.0))
        dir2 = nb[0] * u + nb[1] * v
        # height intervals: the body [z - half_height, z + half_height], the pole [q.z, q.z + height]
        mid = q[2] + 0.5 * oheight[e, k]
        dzs = p3[2] - mid
        dz = wp.abs(dzs) - (half_height + 0.5 * oheight[e, k])
        sd, nv = prism_gap(dxy, dir2, dzs, dz)
        if sd < best:
            best = sd
            bidx = k
            bn = nv
    write(agent, contacts_out, best, bn, bidx)


class ObstacleCollision(CollisionBase):
    """The body's 3D box against every pole obstacle of a gate course or a band track.

    Pole ``k < obstacle_count`` is an upright cylinder: base centre ``obstacle_pos[k]`` (on the
    ground), radius ``obstacle_radius[k]``, height ``obstacle_height[k]``. The body box is as in
    :class:`FrameCollision` (centre ``box_position``, yaw of ``orientation``, half extents
    ``(half_extents.x, half_extents.y, half_height)``). Both are upright prisms, so ``clearance``
    combines the footprints' exact signed distance ``d_xy`` (the rectangle's signed distance to
    the pole axis minus the radius) with the height intervals' ``d_z`` as FrameCollision does:
    ``|max(d_xy, 0), max(d_z, 0)|`` when apart, else ``max(d_xy, d_z)``. ``index`` is the pole
    ``k``; ``normal`` moves the body away from it. No poles (an invalid course, ``count`` 0, no
    obstacle stage): the "no obstacle" row. Cost per env-step: O(obstacle_count).

    Args:
        half_height: vertical half extent of the body box [m], >= 0.
        name: the component name (``Course.gates`` and ``Course.track`` add one named ``"obstacles"``
            when the generator has an obstacle stage).
    """

    topology = ("gates", "track")

    def __init__(self, half_height: float = 0.0, *, name: str = "obstacles"):
        half_h = real("half_height", half_height)
        if half_h < 0.0:
            raise ValueError(f"half_height: expected a vertical half extent >= 0 [m], got {half_height!r}")
        self.half_height = half_h
        self.name = _name(name)

    def attach(self, ctx) -> None:
        r = ctx.result
        if getattr(r, "obstacle_pos", None) is None:
            raise TypeError("ObstacleCollision: the generator's result has no obstacle arrays (obstacle_pos...)")
        self._attach_result(ctx)

    def step(self, ctx) -> None:
        r = ctx.result
        wp.launch(_pole_kernel, dim=ctx.num_agents, device=ctx.device,
                  inputs=[self.half_height, r.valid, r.obstacle_pos, r.obstacle_radius, r.obstacle_height,
                          r.obstacle_count, self._pose()],
                  outputs=[self._outputs()])

    def __repr__(self) -> str:
        return f"ObstacleCollision(half_height={self.half_height:g}, name={self.name!r})"
