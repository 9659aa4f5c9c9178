"""What every collision component shares: the pose inputs, the body's box read from them, the
:class:`~track_gen.tools.types.Contacts` rows written per env, and the base class.

The special rows (see the package docstring): :func:`write_none` (no obstacle, and every
masked row after a reset) and :func:`write_nan` (a non-finite pose).
"""

from __future__ import annotations

import warp as wp

from track_gen.math import finite_quat, quat_yaw_axes
from track_gen.tools._common import ORIGIN_INPUT, env_position, no_origin, origin_args
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.types import Contacts

__all__ = ["FAR", "NAN_POSE_CLEARANCE", "POSE_INPUTS", "POSE_LIMIT", "prism_gap", "CollisionBase", "body_pose", "write", "write_nan",
           "write_none"]

#: clearance reported when an env has no obstacle (invalid course, no gates) [m]
FAR = 1.0e6
#: clearance reported for a non-finite pose (with hit = 1)
NAN_POSE_CLEARANCE = 0.0
#: a box centre or half extent beyond this distance from the env origin [m] counts as a non-finite
#: pose: float32 distances and grid indices are meaningless (or overflow) that far out
POSE_LIMIT = wp.constant(1.0e6)

#: the per-step inputs of every collision component
POSE_INPUTS = {
    "box_position": InputSpec(wp.vec3f, default="position"),
    "orientation": InputSpec(wp.quatf),
    "half_extents": InputSpec(wp.vec2f),
    "origin": ORIGIN_INPUT,
}


# ------------------------------------------------------------------------------------------------
# the body's box
# ------------------------------------------------------------------------------------------------
@wp.func
def pose_finite(p: wp.vec3f, q: wp.quatf, h: wp.vec2f) -> bool:
    """True when the pose can be computed with: centre and half extents finite and within
    POSE_LIMIT of the env origin, orientation finite with a squared norm that is neither 0 nor
    beyond float32 (the yaw axes are scale-free, so any other quaternion scale is fine).
    Anything else gets the non-finite pose row, like a NaN."""
    ok = wp.isfinite(p) and wp.isfinite(h) and finite_quat(q)
    lim = wp.max(wp.max(wp.abs(p[0]), wp.abs(p[1])), wp.max(wp.abs(p[2]), wp.max(wp.abs(h[0]), wp.abs(h[1]))))
    n2 = wp.dot(q, q)
    return ok and lim <= POSE_LIMIT and wp.isfinite(n2) and n2 > 0.0


@wp.func
def body_pose(e: int, pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
              quat: wp.array(dtype=wp.quatf), ext: wp.array(dtype=wp.vec2f)):
    """Env e's box: whether its pose is finite, its env-frame centre (3D and xy), body x and y
    axes (yaw only) and absolute half extents (use them only when finite)."""
    p = env_position(pos, origin, has_origin, e)
    q = quat[e]
    h = ext[e]
    u, v = quat_yaw_axes(q)
    return pose_finite(p, q, h), p, wp.vec2f(p[0], p[1]), u, v, wp.abs(h[0]), wp.abs(h[1])


@wp.func
def prism_gap(dxy: float, dir2: wp.vec2f, dzs: float, dz: float):
    """Signed distance and outward unit normal between two upright prisms from their plan-view
    signed distance ``dxy`` (direction ``dir2``, body away from the obstacle) and their vertical gap
    ``dz`` (``dzs``: the body's centre height relative to the obstacle's middle, for the sign).
    Apart in plan or in height: the Euclidean combination of both gaps; overlapping in both: the
    shallower way out."""
    zsgn = wp.where(dzs < 0.0, -1.0, 1.0)
    sd = float(0.0)
    nv = wp.vec3f(0.0, 0.0, 0.0)
    if dxy > 0.0 or dz > 0.0:
        px = wp.max(dxy, 0.0)
        pz = wp.max(dz, 0.0)
        sd = wp.sqrt(px * px + pz * pz)
        nv = wp.vec3f(dir2[0] * px, dir2[1] * px, zsgn * pz)
        lv = wp.length(nv)
        if lv > 0.0:
            nv = nv / lv
    elif dxy >= dz:
        sd = dxy
        nv = wp.vec3f(dir2[0], dir2[1], 0.0)
    else:
        sd = dz
        nv = wp.vec3f(0.0, 0.0, zsgn)
    return sd, nv


# ------------------------------------------------------------------------------------------------
# contact rows
# ------------------------------------------------------------------------------------------------
@wp.func
def write(e: int, hit_out: wp.array(dtype=wp.int32), depth_out: wp.array(dtype=wp.float32),
          clearance_out: wp.array(dtype=wp.float32), normal_out: wp.array(dtype=wp.vec3f),
          index_out: wp.array(dtype=wp.int32), cl: float, n: wp.vec3f, idx: int):
    """Env e's contact row from its clearance ``cl``, normal ``n`` and obstacle index ``idx``."""
    hit_out[e] = wp.where(cl <= 0.0, 1, 0)
    depth_out[e] = wp.max(0.0 - cl, 0.0)
    clearance_out[e] = cl
    normal_out[e] = n
    index_out[e] = idx


@wp.func
def write_none(e: int, hit_out: wp.array(dtype=wp.int32), depth_out: wp.array(dtype=wp.float32),
               clearance_out: wp.array(dtype=wp.float32), normal_out: wp.array(dtype=wp.vec3f),
               index_out: wp.array(dtype=wp.int32)):
    """The "no obstacle" row: hit 0, depth 0, clearance FAR, normal 0, index -1."""
    hit_out[e] = 0
    depth_out[e] = 0.0
    clearance_out[e] = FAR
    normal_out[e] = wp.vec3f(0.0, 0.0, 0.0)
    index_out[e] = -1


@wp.func
def write_nan(e: int, hit_out: wp.array(dtype=wp.int32), depth_out: wp.array(dtype=wp.float32),
              clearance_out: wp.array(dtype=wp.float32), normal_out: wp.array(dtype=wp.vec3f),
              index_out: wp.array(dtype=wp.int32)):
    """The "non-finite pose" row: hit 1, depth 0, clearance NAN_POSE_CLEARANCE, normal 0, index -1."""
    hit_out[e] = 1
    depth_out[e] = 0.0
    clearance_out[e] = NAN_POSE_CLEARANCE
    normal_out[e] = wp.vec3f(0.0, 0.0, 0.0)
    index_out[e] = -1


@wp.kernel
def _reset_kernel(mask: wp.array(dtype=wp.int32), hit_out: wp.array(dtype=wp.int32),
                  depth_out: wp.array(dtype=wp.float32), clearance_out: wp.array(dtype=wp.float32),
                  normal_out: wp.array(dtype=wp.vec3f), index_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if mask[e] != 0:
        write_none(e, hit_out, depth_out, clearance_out, normal_out, index_out)


# ------------------------------------------------------------------------------------------------
# the base class
# ------------------------------------------------------------------------------------------------
def _contacts(E: int, device) -> Contacts:
    return Contacts(
        hit=wp.zeros(E, dtype=wp.int32, device=device),
        depth=wp.zeros(E, dtype=wp.float32, device=device),
        clearance=wp.full(E, FAR, dtype=wp.float32, device=device),
        normal=wp.zeros(E, dtype=wp.vec3f, device=device),
        index=wp.full(E, -1, dtype=wp.int32, device=device),
    )


class CollisionBase(Component):
    """Common parts: the inputs, the Contacts result, the reset to "no contact"."""

    name = "collision"
    inputs = POSE_INPUTS

    def _attach_result(self, ctx) -> None:
        self.result = _contacts(ctx.num_envs, ctx.device)
        self._no_origin = no_origin(ctx.device)
        self.utility = self

    def reset(self, ctx, mask) -> None:
        """Masked rows read "no contact" (clearance FAR, index -1) until the next step."""
        r = self.result
        wp.launch(_reset_kernel, dim=ctx.num_envs, inputs=[mask], device=ctx.device,
                  outputs=[r.hit, r.depth, r.clearance, r.normal, r.index])

    def _pose(self):
        """The pose launch arguments: ``box_position, origin, has_origin, orientation, half_extents``."""
        b = self._bound
        return [b["box_position"], *origin_args(b, self._no_origin), b["orientation"], b["half_extents"]]

    def _outputs(self):
        """The Contacts launch outputs: ``hit, depth, clearance, normal, index``."""
        r = self.result
        return [r.hit, r.depth, r.clearance, r.normal, r.index]
