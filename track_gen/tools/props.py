"""Props: per-generation transforms of the scene objects a simulator places (gates or cones).

One per-generation component named ``"props"``; its result is a :class:`PropSet` of K slots
per env, each a position and a yaw-only rotation:

* gate courses (``kind = "gate"``): slot g = gate g's frame, at the gate centre, rotated by the
  gate's yaw about z (the frame's local x axis is its normal, the direction of passage);
  ``count`` = the gate count, K = ``layout.gates``.
* band tracks (``kind = "cone"``): cone markers on both band edges, ``n`` per edge, at the
  centreline arc lengths ``s_k = k * length / n`` (``n = ceil(length / cone_spacing)``, so the
  loop closes evenly; spacing is measured along the centreline, so cones on the inside of a
  turn stand closer together). Slot ``2k`` is the left cone (``+normal``), slot ``2k + 1`` the
  right one, each at ``xy(s_k) +- (half_width(s_k) + offset) * normal(s_k)`` and height
  ``z(s_k)`` (all linearly interpolated between the two centreline points around ``s_k``, the
  normal renormalized), rotated to the heading of travel there; ``count = 2n``.

Unused slots (``k >= count``) hold the parking transform: position :data:`PARK_POSITION`
``(0, 0, -100)`` and the identity rotation, so a simulator can place every slot every
generation and the unused ones end up out of sight, below the ground. An invalid course
(``valid == 0``), or a track with a non-finite or non-positive length, has ``count = 0`` (every
slot parked); a slot whose transform would come out non-finite is parked (``count`` keeps it).

``on_generate``: one launch, one thread per env, O(G) (gates) or O(N + K) (tracks) per env. No
``step``; the component is its own utility.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import warp as wp

from track_gen.math import finite_quat, yaw_quat
from track_gen.tools._common import arc_locate, capacity_arg, gates_in_use, positive, spaced_capacity, spaced_count
from track_gen.tools.component import Component
from track_gen.tools.component import check_name

__all__ = ["PARK_POSITION", "PropSet", "Props"]

#: where unused slots are parked [m] (with the identity rotation): below the ground
PARK_POSITION = (0.0, 0.0, -100.0)

_PARK_Z = wp.constant(PARK_POSITION[2])


@dataclass
class PropSet:
    """Per-generation prop transforms (E envs, K slots), env frame [m]; quaternions (x, y, z, w)."""

    pos: wp.array
    """[E, K] vec3f position of each prop; unused slots: :data:`PARK_POSITION`."""
    quat: wp.array
    """[E, K] quatf rotation about z (yaw only); unused slots: identity (0, 0, 0, 1)."""
    count: wp.array
    """[E] int32 slots in use (slots 0 ... count-1)."""
    kind: str
    """``"gate"`` (one gate frame per slot) or ``"cone"`` (edge markers of a band track)."""


# -- kernels ----------------------------------------------------------------------------------------
@wp.func
def _put(e: int, k: int, p: wp.vec3f, q: wp.quatf, pos_out: wp.array2d(dtype=wp.vec3f),
         quat_out: wp.array2d(dtype=wp.quatf)):
    """Write slot k, or park it when the transform is not finite."""
    ok = wp.isfinite(p) and finite_quat(q)
    if ok:
        pos_out[e, k] = p
        quat_out[e, k] = q
    else:
        pos_out[e, k] = wp.vec3f(0.0, 0.0, _PARK_Z)
        quat_out[e, k] = wp.quatf(0.0, 0.0, 0.0, 1.0)


@wp.func
def _park_from(e: int, k0: int, pos_out: wp.array2d(dtype=wp.vec3f), quat_out: wp.array2d(dtype=wp.quatf)):
    for k in range(k0, pos_out.shape[1]):
        pos_out[e, k] = wp.vec3f(0.0, 0.0, _PARK_Z)
        quat_out[e, k] = wp.quatf(0.0, 0.0, 0.0, 1.0)


@wp.kernel
def _gate_props(mask: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
                gpos: wp.array2d(dtype=wp.vec3f), gyaw: wp.array2d(dtype=wp.float32),
                gcount: wp.array(dtype=wp.int32),
                pos_out: wp.array2d(dtype=wp.vec3f), quat_out: wp.array2d(dtype=wp.quatf),
                count_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if mask[e] == 0:
        return
    n = gates_in_use(valid[e], gcount[e], pos_out.shape[1])
    for g in range(n):
        _put(e, g, gpos[e, g], yaw_quat(gyaw[e, g]), pos_out, quat_out)
    _park_from(e, n, pos_out, quat_out)
    count_out[e] = n


@wp.kernel
def _cone_props(mask: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
                xy: wp.array2d(dtype=wp.vec2f), z: wp.array2d(dtype=wp.float32),
                half_width: wp.array2d(dtype=wp.float32), normal: wp.array2d(dtype=wp.vec2f),
                s: wp.array2d(dtype=wp.float32), length: wp.array(dtype=wp.float32),
                spacing: float, per_side: int, offset: float,
                pos_out: wp.array2d(dtype=wp.vec3f), quat_out: wp.array2d(dtype=wp.quatf),
                count_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if mask[e] == 0:
        return
    total = length[e]
    n = spaced_count(valid[e], total, spacing, per_side, 1)
    N = xy.shape[1]
    i = int(0)
    for k in range(n):
        sk = float(k) * total / float(n)
        i, j, f, ds = arc_locate(s, e, N, total, sk, i)
        p = xy[e, i] + (xy[e, j] - xy[e, i]) * f
        nrm = normal[e, i] * (1.0 - f) + normal[e, j] * f
        ln = wp.length(nrm)
        if ln > 1.0e-6:
            nrm = nrm / ln
        else:
            nrm = normal[e, i]
        hz = z[e, i] + (z[e, j] - z[e, i]) * f
        off = half_width[e, i] + (half_width[e, j] - half_width[e, i]) * f + offset
        q = yaw_quat(wp.atan2(-nrm[0], nrm[1]))  # travel = normal turned right: (n.y, -n.x)
        lp = p + off * nrm
        rp = p - off * nrm
        _put(e, 2 * k, wp.vec3f(lp[0], lp[1], hz), q, pos_out, quat_out)
        _put(e, 2 * k + 1, wp.vec3f(rp[0], rp[1], hz), q, pos_out, quat_out)
    _park_from(e, 2 * n, pos_out, quat_out)
    count_out[e] = 2 * n


# -- the component -----------------------------------------------------------------------------------
class Props(Component):
    """Per-generation prop transforms: gate frames on gate courses, edge cones on band tracks.

    See the module docstring for the placement rules and the parking transform of unused slots.

    Args:
        cone_spacing: target distance between consecutive cones of one edge, measured along the
            centreline [m], > 0 (band tracks only).
        max_cones: cone capacity K (both edges together; band tracks only). An even int >= 2:
            yours; a longer course gets K / 2 cones per edge (their spacing widens), silently.
            ``"auto"`` / None: ``2 * max(1, ceil(max_loop_length / cone_spacing))`` when the layout
            declares ``max_loop_length``; otherwise (elevated tracks declare none) the longest
            valid course of the construction batch decides, read back once in ``attach``: later,
            longer courses are clipped silently (pass an int to size it). When the capacity chosen
            here clips a valid course of the construction batch, one
            :class:`~track_gen.errors.CapacityWarning` says so.
        offset: extra lateral distance of the cones outside the band edges [m] (may be < 0:
            inside the band).
        name: the component name.

    Attributes (after attach): ``result`` (:class:`PropSet`), ``capacity`` (K), ``kind``,
    ``capacity_source`` (tracks: ``"max_loop_length"``, ``"readback"`` or ``"max_cones"``).
    Raises TypeError / ValueError naming the argument.
    """

    name = "props"
    topology = ("track", "gates")

    def __init__(self, cone_spacing: float = 2.0, max_cones="auto", offset: float = 0.0, *, name: str = "props"):
        self.cone_spacing = positive("cone_spacing", cone_spacing)
        self.max_cones = capacity_arg("max_cones", max_cones, 2, even=True, why=" (cones come in pairs)")
        if isinstance(offset, bool) or not isinstance(offset, numbers.Real) or not math.isfinite(float(offset)):
            raise (TypeError if isinstance(offset, bool) or not isinstance(offset, numbers.Real) else ValueError)(
                f"offset: expected a finite number [m], got {offset!r}"
            )
        self.offset = float(offset)
        self.name = check_name(name)
        self.kind = None
        self.capacity = None
        self.capacity_source = None

    def attach(self, ctx) -> None:
        E, dev = ctx.num_envs, ctx.device
        if ctx.family == "gates":
            self.kind = "gate"
            K = int(ctx.layout.gates)
        else:
            self.kind = "cone"
            if self.max_cones is not None:
                self.capacity_source = "max_cones"
                K = self.max_cones
            else:
                K = 2 * self._auto_per_side(ctx)
        self.capacity = K
        pos = wp.zeros((E, K), dtype=wp.vec3f, device=dev)
        pos.fill_(wp.vec3f(*PARK_POSITION))
        quat = wp.zeros((E, K), dtype=wp.quatf, device=dev)
        quat.fill_(wp.quatf(0.0, 0.0, 0.0, 1.0))
        self.result = PropSet(pos=pos, quat=quat, count=wp.zeros(E, dtype=wp.int32, device=dev), kind=self.kind)

    def _auto_per_side(self, ctx) -> int:
        n, self.capacity_source = spaced_capacity(ctx, self.cone_spacing, 1, owner="Props", noun="cones",
                                                  per=" per edge", spacing_arg="cone_spacing",
                                                  capacity_arg="max_cones", stacklevel=5)
        return n

    def on_generate(self, ctx, mask) -> None:
        """Transforms of masked envs (``mask`` [E] int32); other envs' rows are not written."""
        g, r = ctx.result, self.result
        if self.kind == "gate":
            wp.launch(_gate_props, dim=ctx.num_envs, device=ctx.device,
                      inputs=[mask, g.valid, g.pos, g.yaw, g.count], outputs=[r.pos, r.quat, r.count])
        else:
            wp.launch(_cone_props, dim=ctx.num_envs, device=ctx.device,
                      inputs=[mask, g.valid, g.xy, g.z, g.half_width, g.normal, g.s, g.length,
                              self.cone_spacing, self.capacity // 2, self.offset],
                      outputs=[r.pos, r.quat, r.count])

    def __repr__(self) -> str:
        return f"Props(kind={self.kind!r}, capacity={self.capacity}, name={self.name!r})"
