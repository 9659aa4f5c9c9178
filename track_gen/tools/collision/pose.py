"""What every collision component shares: the pose inputs, the body's box read from them, the
:class:`~track_gen.tools.types.Contacts` rows written per env, and the base class.

The special rows (see the package docstring): :func:`write_none` (no obstacle, and every
masked row after a reset) and :func:`write_nan` (a non-finite pose). :func:`open_row` is the
opening every collision kernel shares: the body's box, or which of those rows to write.
"""

from __future__ import annotations

import warp as wp

from track_gen.math import finite_quat, quat_yaw_axes
from track_gen.tools._common import ORIGIN_INPUT, env_position, no_origin, origin_args
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.types import Contacts

__all__ = ["FAR", "NAN_POSE_CLEARANCE", "POSE_INPUTS", "POSE_LIMIT", "BodyBox", "CollisionBase", "ContactRows",
           "BAD_POSE", "GO", "NO_OBSTACLE", "open_row", "prism_gap", "write", "write_nan", "write_none",
           "write_row"]

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


@wp.struct
class BodyBox:
    """The per-step pose inputs of a collision kernel, one row per agent (``agents`` per env; agent
    ``a`` races env ``a // agents``): box centres (env frame, or world frame minus ``origin[env]``
    when ``has_origin``), orientations (yaw used) and footprint half extents."""

    agents: int
    position: wp.array(dtype=wp.vec3f)
    origin: wp.array(dtype=wp.vec3f)
    has_origin: int
    orientation: wp.array(dtype=wp.quatf)
    half_extents: wp.array(dtype=wp.vec2f)


@wp.struct
class ContactRows:
    """The :class:`~track_gen.tools.types.Contacts` arrays a collision kernel writes, one row per agent."""

    hit: wp.array(dtype=wp.int32)
    depth: wp.array(dtype=wp.float32)
    clearance: wp.array(dtype=wp.float32)
    normal: wp.array(dtype=wp.vec3f)
    index: wp.array(dtype=wp.int32)


#: :func:`open_row` verdicts: go on with the body's box, or write the "no obstacle" / "non-finite
#: pose" row (:func:`write_row`) and return
GO = wp.constant(0)
NO_OBSTACLE = wp.constant(1)
BAD_POSE = wp.constant(2)


@wp.func
def open_row(a: int, e: int, has_obstacle: bool, body: BodyBox):
    """The opening every collision kernel shares: the verdict (:data:`GO`, :data:`NO_OBSTACLE`
    without an obstacle, :data:`BAD_POSE` for a non-finite pose) and agent a's box (in env e): its env-frame
    centre (3D and xy), body x and y axes (yaw only) and absolute half extents (use them only on
    GO). On any other verdict the kernel writes :func:`write_row` and returns. (The kernel writes
    the rows, not this function: Warp copies a struct argument, so the contact arrays would be
    copied once more per env.)"""
    p3 = env_position(body.position, body.origin, body.has_origin, a, e)
    q = body.orientation[a]
    h = body.half_extents[a]
    u, v = quat_yaw_axes(q)
    ok = pose_finite(p3, q, h)
    c = wp.vec2f(p3[0], p3[1])
    ha = wp.abs(h[0])
    hb = wp.abs(h[1])
    verdict = GO
    if not has_obstacle:
        verdict = NO_OBSTACLE
    elif not ok:
        verdict = BAD_POSE
    return verdict, p3, c, u, v, ha, hb


@wp.func
def write_row(a: int, verdict: int, contacts_out: ContactRows):
    """The special row of a verdict of :func:`open_row`: "no obstacle" or "non-finite pose"."""
    if verdict == NO_OBSTACLE:
        write_none(a, contacts_out)
    else:
        write_nan(a, contacts_out)


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
def write(a: int, contacts_out: ContactRows, cl: float, n: wp.vec3f, idx: int):
    """Agent a's contact row from its clearance ``cl``, normal ``n`` and obstacle index ``idx``."""
    contacts_out.hit[a] = wp.where(cl <= 0.0, 1, 0)
    contacts_out.depth[a] = wp.max(0.0 - cl, 0.0)
    contacts_out.clearance[a] = cl
    contacts_out.normal[a] = n
    contacts_out.index[a] = idx


@wp.func
def write_none(a: int, contacts_out: ContactRows):
    """The "no obstacle" row: hit 0, depth 0, clearance FAR, normal 0, index -1."""
    contacts_out.hit[a] = 0
    contacts_out.depth[a] = 0.0
    contacts_out.clearance[a] = FAR
    contacts_out.normal[a] = wp.vec3f(0.0, 0.0, 0.0)
    contacts_out.index[a] = -1


@wp.func
def write_nan(a: int, contacts_out: ContactRows):
    """The "non-finite pose" row: hit 1, depth 0, clearance NAN_POSE_CLEARANCE, normal 0, index -1."""
    contacts_out.hit[a] = 1
    contacts_out.depth[a] = 0.0
    contacts_out.clearance[a] = NAN_POSE_CLEARANCE
    contacts_out.normal[a] = wp.vec3f(0.0, 0.0, 0.0)
    contacts_out.index[a] = -1


@wp.kernel
def _reset_kernel(agents: int, mask: wp.array(dtype=wp.int32), contacts_out: ContactRows):
    a = wp.tid()
    if mask[a // agents] != 0:
        write_none(a, contacts_out)


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
    """Common parts: the inputs, the Contacts result ([E*K], one row per agent), the reset to
    "no contact". A kernel runs one thread per agent ``a`` against the course of env ``a // K``."""

    name = "collision"
    inputs = POSE_INPUTS
    multi_agent = True

    def _attach_result(self, ctx) -> None:
        self._agents = ctx.agents
        self.result = _contacts(ctx.num_agents, ctx.device)
        self._no_origin = no_origin(ctx.device)
        self.utility = self
        r = self.result
        self._rows = ContactRows()
        self._rows.hit, self._rows.depth, self._rows.clearance = r.hit, r.depth, r.clearance
        self._rows.normal, self._rows.index = r.normal, r.index
        self._box, self._box_of = BodyBox(), None

    def reset(self, ctx, mask) -> None:
        """Masked rows read "no contact" (clearance FAR, index -1) until the next step."""
        wp.launch(_reset_kernel, dim=ctx.num_agents, inputs=[self._agents, mask], device=ctx.device,
                  outputs=[self._outputs()])

    def _pose(self) -> BodyBox:
        """The pose inputs as bound (rebuilt after each ``bind``)."""
        if self._box_of is not self._bound:
            b = self._bound
            box = BodyBox()
            box.agents = self._agents
            box.position, box.orientation, box.half_extents = b["box_position"], b["orientation"], b["half_extents"]
            box.origin, box.has_origin = origin_args(b, self._no_origin)
            self._box, self._box_of = box, self._bound
        return self._box

    def _outputs(self) -> ContactRows:
        """The Contacts arrays, as the kernels' ``contacts_out``."""
        return self._rows
