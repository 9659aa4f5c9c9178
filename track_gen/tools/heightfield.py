"""HeightFieldBake: a per-env height grid over the course square, baked once per generation.

One per-generation component named ``"heightfield"`` (``course.heightfield`` is the component
itself, whose :meth:`HeightFieldBake.sample` looks heights up for terrain-following
observations: at env-frame points, or at world-frame points with ``origin=`` each env's origin).
Its result is a :class:`HeightField`.

The grid: ``resolution`` x ``resolution`` nodes per env over the square of side
``extent = side + 2 * margin`` centred on the env origin (``side``: the course square, see
:class:`HeightFieldBake`). Node ``(i, j)`` (row i: y, column j: x) lies at
``(origin + j * cell, origin + i * cell)`` with ``origin = -extent / 2`` (the lower-left
corner) and ``cell = extent / (resolution - 1)``, so the first and last rows and columns lie on
the square's border.

What a node holds, per generator family:

* band tracks (flat or elevated): the nearest point of the closed centreline polyline (in the
  horizontal plane) decides. ``inside = 1`` when the node's distance to it is at most the
  half width there (linearly interpolated along the segment); ``heights`` = the centreline
  height there (linearly interpolated ``z``; 0 on a flat track). Off the band, ``heights`` is
  that same nearest height (``outside="nearest"``: no step at the band edges, so bilinear
  lookups stay smooth there; it only jumps where two parts of the course are equally near) or
  the constant you pass as ``outside`` (e.g. 0.0, the ground).
* gate courses: the ground (0) and the gate frames seen from above: ``heights`` = the top of
  the highest gate frame whose footprint covers the node, else 0; ``inside = 1`` where some
  frame covers it. A frame footprint is the rectangle of half extents ``w/2 + t`` along the
  gate's lateral axis and ``t/2`` along its normal (width w, bar thickness t) around the gate
  centre; its top is ``pos.z + h/2 + t`` (opening height h). Frames are thinner than a
  cell, so coverage is conservative: a node is covered when the footprint overlaps the node's
  cell square (side ``cell``, centred on the node).

Special rows: an invalid course (``valid == 0``) bakes ``heights 0, inside 0`` everywhere; a
node whose value would come out non-finite (non-finite layout data) gets ``heights 0,
inside 0``. Other envs are never affected.
"""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from track_gen.math import BIG, left_normal
from track_gen.tools._common import (box_dist2, chunk_box, chunking, env_position, gates_in_use, largest_size,
                                     no_origin, origin_args, real, resolution_arg, size_hi_arg, warn_uncovered)
from track_gen.tools.component import Component
from track_gen.tools.component import check_name as _name

__all__ = ["HeightField", "HeightFieldBake", "SIZE_PARAMS"]

#: generator parameters that give the side of the course square, by family (first found wins)
SIZE_PARAMS = ("centerline.size", "gates.size")


# ------------------------------------------------------------------------------------------------
# result
# ------------------------------------------------------------------------------------------------
@dataclass
class HeightField:
    """A per-env height grid (the result of :class:`HeightFieldBake`), env frame, metres.

    Node ``(i, j)`` of env ``e`` lies at ``x = origin + j * cell``, ``y = origin + i * cell``.
    """

    heights: wp.array
    """[E, R, R] float32 height at each node (row i: y, column j: x) [m]."""
    inside: wp.array
    """[E, R, R] uint8, 1 on the band (tracks) or under a gate frame (gate courses), else 0."""
    origin: float
    """x (and y) of node (0, 0), the grid's lower-left corner [m] (shared by every env)."""
    cell: float
    """distance between neighbouring nodes [m] (shared by every env)."""
    side: float
    """side of the course square the grid is sized for (``size_hi``) [m]."""
    resolution: int
    """R, nodes per side."""


# ------------------------------------------------------------------------------------------------
# kernels: band tracks
# ------------------------------------------------------------------------------------------------
@wp.kernel
def _chunks_kernel(mask: wp.array(dtype=wp.int32), xy: wp.array2d(dtype=wp.vec2f),
                   half_width: wp.array2d(dtype=wp.float32), K: int, C: int,
                   boxes_out: wp.array2d(dtype=wp.vec4f), hw_max_out: wp.array(dtype=wp.float32)):
    """Bounding box of each chunk of K centreline segments (min x, min y, max x, max y) and the
    largest half width of the env."""
    e = wp.tid()
    if mask[e] == 0:
        return
    N = xy.shape[1]
    for k in range(C):
        i0 = k * K
        boxes_out[e, k] = chunk_box(xy, e, i0, wp.min(i0 + K, N), N)
    m = float(0.0)
    for i in range(N):
        m = wp.max(m, half_width[e, i])
    hw_max_out[e] = m


@wp.func
def _seg_point2(p: wp.vec2f, a: wp.vec2f, b: wp.vec2f):
    """Squared distance from ``p`` to segment ab and the clamped parameter of the closest point."""
    d = b - a
    l2 = wp.dot(d, d)
    t = float(0.0)
    if l2 > 0.0:
        t = wp.clamp(wp.dot(p - a, d) / l2, 0.0, 1.0)
    q = p - (a + t * d)
    return wp.dot(q, q), t


@wp.kernel
def _track_bake_kernel(mask: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
                       xy: wp.array2d(dtype=wp.vec2f), z: wp.array2d(dtype=wp.float32),
                       half_width: wp.array2d(dtype=wp.float32), boxes: wp.array2d(dtype=wp.vec4f),
                       hw_max: wp.array(dtype=wp.float32), K: int, C: int, x0: float, cell: float,
                       nearest: int, outside: float,
                       heights_out: wp.array3d(dtype=wp.float32), inside_out: wp.array3d(dtype=wp.uint8)):
    e, r = wp.tid()
    if mask[e] == 0:
        return
    n = heights_out.shape[2]
    if valid[e] == 0:
        for j in range(n):
            heights_out[e, r, j] = 0.0
            inside_out[e, r, j] = wp.uint8(0)
        return
    N = xy.shape[1]
    # with a constant off-band value only segments within the widest half width matter
    limit = float(BIG)
    if nearest == 0:
        limit = hw_max[e] * hw_max[e]
    y = x0 + float(r) * cell
    warm = int(-1)
    for j in range(n):
        p = wp.vec2f(x0 + float(j) * cell, y)
        best = float(BIG)  # squared distances throughout
        bg = int(-1)
        bt = float(0.0)
        if warm >= 0:
            d, t = _seg_point2(p, xy[e, warm], xy[e, (warm + 1) % N])
            if d == d:
                best = d
                bg = warm
                bt = t
        for k in range(C):
            if box_dist2(p, boxes[e, k]) <= wp.min(best, limit):
                i0 = k * K
                i1 = wp.min(i0 + K, N)
                a = xy[e, i0]
                for i in range(i0, i1):
                    b = xy[e, (i + 1) % N]
                    d, t = _seg_point2(p, a, b)
                    if d < best:
                        best = d
                        bg = i
                        bt = t
                    a = b
        warm = bg
        best = wp.sqrt(best)
        h = float(outside)
        ins = int(0)
        if bg >= 0:
            i = bg
            i2 = (i + 1) % N
            hw = half_width[e, i] + bt * (half_width[e, i2] - half_width[e, i])
            zz = z[e, i] + bt * (z[e, i2] - z[e, i])
            if best <= hw:
                ins = 1
                h = zz
            elif nearest != 0:
                h = zz
        elif nearest != 0:
            h = 0.0
        if not wp.isfinite(h):
            h = 0.0
            ins = 0
        heights_out[e, r, j] = h
        inside_out[e, r, j] = wp.uint8(ins)


# ------------------------------------------------------------------------------------------------
# kernels: gate courses
# ------------------------------------------------------------------------------------------------
@wp.kernel
def _gate_bake_kernel(mask: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
                      gpos: wp.array2d(dtype=wp.vec3f), gnormal: wp.array2d(dtype=wp.vec3f),
                      gcount: wp.array(dtype=wp.int32), width: wp.array(dtype=wp.float32),
                      height: wp.array(dtype=wp.float32), thickness: wp.array(dtype=wp.float32),
                      x0: float, cell: float,
                      heights_out: wp.array3d(dtype=wp.float32), inside_out: wp.array3d(dtype=wp.uint8)):
    e, r = wp.tid()
    if mask[e] == 0:
        return
    n = heights_out.shape[2]
    G = gates_in_use(valid[e], gcount[e], gpos.shape[1])
    t = thickness[e]
    a = 0.5 * width[e] + t  # half extent along the lateral axis
    b = 0.5 * t  # half extent along the normal
    top_off = 0.5 * height[e] + t
    hc = 0.5 * cell
    y = x0 + float(r) * cell
    for j in range(n):
        heights_out[e, r, j] = 0.0
        inside_out[e, r, j] = wp.uint8(0)
    for g in range(G):
        c = gpos[e, g]
        nn = gnormal[e, g]
        nrm = wp.vec2f(nn[0], nn[1])
        ln = wp.length(nrm)
        if ln > 0.0:
            nrm = nrm / ln
        lat = left_normal(nrm)
        top = c[2] + top_off
        ex = hc + a * wp.abs(lat[0]) + b * wp.abs(nrm[0])  # half extents of the x / y separating axes
        ey = hc + a * wp.abs(lat[1]) + b * wp.abs(nrm[1])
        if not (wp.isfinite(top) and wp.isfinite(ex) and wp.isfinite(ey) and wp.isfinite(c)):
            continue
        if wp.abs(c[1] - y) > ey:
            continue
        # only the columns the x axis lets through (one more on each side against rounding)
        top_j = float(n)
        j0 = wp.max(int(wp.clamp(wp.floor((c[0] - ex - x0) / cell), -1.0, top_j)) - 1, 0)
        j1 = wp.min(int(wp.clamp(wp.ceil((c[0] + ex - x0) / cell), -1.0, top_j)) + 1, n - 1)
        for j in range(j0, j1 + 1):
            d = wp.vec2f(c[0] - (x0 + float(j) * cell), c[1] - y)
            # separating axis test: the footprint rectangle against the node's cell square
            ok = wp.abs(d[0]) <= ex and wp.abs(d[1]) <= ey
            ok = ok and wp.abs(wp.dot(d, lat)) <= a + hc * (wp.abs(lat[0]) + wp.abs(lat[1]))
            ok = ok and wp.abs(wp.dot(d, nrm)) <= b + hc * (wp.abs(nrm[0]) + wp.abs(nrm[1]))
            if ok:
                inside_out[e, r, j] = wp.uint8(1)
                heights_out[e, r, j] = wp.max(heights_out[e, r, j], top)


# ------------------------------------------------------------------------------------------------
# kernels: lookups
# ------------------------------------------------------------------------------------------------
@wp.func
def _bilinear(heights: wp.array3d(dtype=wp.float32), e: int, x0: float, cell: float, p: wp.vec2f) -> float:
    if not wp.isfinite(p):
        return 0.0
    n = heights.shape[2]
    top = float(n - 1)
    cx = wp.clamp((p[0] - x0) / cell, 0.0, top)
    cy = wp.clamp((p[1] - x0) / cell, 0.0, top)
    ix = wp.min(int(wp.floor(cx)), n - 2)
    iy = wp.min(int(wp.floor(cy)), n - 2)
    tx = cx - float(ix)
    ty = cy - float(iy)
    v00 = heights[e, iy, ix]
    v01 = heights[e, iy, ix + 1]
    v10 = heights[e, iy + 1, ix]
    v11 = heights[e, iy + 1, ix + 1]
    return (1.0 - ty) * ((1.0 - tx) * v00 + tx * v01) + ty * ((1.0 - tx) * v10 + tx * v11)


@wp.kernel
def _sample2_kernel(heights: wp.array3d(dtype=wp.float32), x0: float, cell: float, per_env: int,
                    points: wp.array(dtype=wp.vec2f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
                    heights_out: wp.array(dtype=wp.float32)):
    """Point ``a`` (``per_env`` points per env) in the grid of env ``a // per_env``."""
    a = wp.tid()
    e = a // per_env
    p = points[a]
    if has_origin != 0:
        o = origin[e]
        p = p - wp.vec2f(o[0], o[1])
    heights_out[a] = _bilinear(heights, e, x0, cell, p)


@wp.kernel
def _sample3_kernel(heights: wp.array3d(dtype=wp.float32), x0: float, cell: float, per_env: int,
                    points: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
                    heights_out: wp.array(dtype=wp.float32)):
    """As :func:`_sample2_kernel`, from 3D points (z ignored)."""
    a = wp.tid()
    e = a // per_env
    p = env_position(points, origin, has_origin, a, e)
    heights_out[a] = _bilinear(heights, e, x0, cell, wp.vec2f(p[0], p[1]))


# ------------------------------------------------------------------------------------------------
# the component
# ------------------------------------------------------------------------------------------------
class HeightFieldBake(Component):
    """Bakes a :class:`HeightField` per env once per generation (see the module docstring for
    what a node holds on tracks and gate courses).

    Args:
        resolution: R, grid nodes per side, 2 ... 4096.
        size_hi: side of the course square the grid covers [m]; default: the largest course the
            generator can draw (``centerline.size`` / ``gates.size``, or its randomizer's hi).
            Pass it when a curriculum will grow the size later. A grid that does not cover the
            largest size warns :class:`~track_gen.errors.ResolutionWarning` once (at construction,
            or at a later ``on_generate`` after the size grew); outside the grid, lookups clamp to
            its border.
        margin: extra border around the course square on every side [m], >= 0 (default 0.5).
        outside: band tracks only: the height of nodes off the band, ``"nearest"`` (the nearest
            centreline height, the default) or a number [m] (e.g. 0.0 for the ground).
        name: the component name.

    Cost per regenerated env, ``on_generate`` (tracks: one launch of one thread per env for
    the chunk boxes, then one thread per env and grid row; gates: one thread per env and grid
    row): tracks, one nearest-segment search per node, R^2 of them, pruned by the bounding boxes
    of ceil(N / ceil(sqrt N)) chunks of segments and warm started from the previous node (about
    0.15 - 0.2 us per node on one CPU core, so ~3 ms per env at R = 128, N = 256); with a
    constant ``outside`` only chunks within the widest half width are searched (~ 2.5x cheaper).
    Gate courses: O(R^2 + R * G) plus the few nodes near each frame (~ 40 us per env at R = 128).
    No ``step``. Memory: 5 bytes per node per env.

    Attributes (after attach): ``result`` (the :class:`HeightField`), ``side``, ``extent``,
    ``cell``, ``origin`` [m].
    """

    name = "heightfield"
    topology = ("track", "gates")

    def __init__(self, resolution: int = 128, size_hi: float | None = None, margin: float = 0.5, *,
                 outside: str | float = "nearest", name: str = "heightfield"):
        resolution = resolution_arg(resolution, "grid nodes per side", "nodes per side")
        size_hi = size_hi_arg(size_hi)
        margin = real("margin", margin)
        if margin < 0.0:
            raise ValueError(f"margin: expected a border >= 0 [m], got {margin!r}")
        if isinstance(outside, str):
            if outside != "nearest":
                raise ValueError(f"outside: expected 'nearest' or a height [m], got {outside!r}")
        else:
            outside = real("outside", outside)
        self.resolution = resolution
        self.size_hi = size_hi
        self.margin = margin
        self.outside = outside
        self.name = _name(name)
        self._warned = False
        self.side = None
        self.extent = None
        self.cell = None
        self.origin = None

    # -- sizes ------------------------------------------------------------------------------------
    def _check_cover(self, generator, stacklevel: int) -> None:
        if self._warned:
            return
        self._warned = warn_uncovered(self.name, "height grid", self.side, generator, SIZE_PARAMS,
                                      "heights are clamped to its border", stacklevel)

    # -- hooks --------------------------------------------------------------------------------------
    def attach(self, ctx) -> None:
        E, dev = ctx.num_envs, ctx.device
        self._family = "gates" if ctx.family == "gates" else "track"
        side = self.size_hi
        if side is None:
            found = largest_size(ctx.generator, SIZE_PARAMS)
            if found is None:
                raise ValueError(
                    f"{self.name!r}: the generator has no {' / '.join(SIZE_PARAMS)} parameter; pass size_hi= (the "
                    f"side of the square the height grid covers, in metres)"
                )
            side = found[1]
        self.side = float(side)
        self.extent = self.side + 2.0 * self.margin
        R = self.resolution
        self.cell = self.extent / (R - 1)
        self.origin = -0.5 * self.extent
        r = ctx.result
        if self._family == "track":
            N = int(r.xy.shape[1])
            self._K, self._C = chunking(N)
            self._boxes = wp.zeros((E, self._C), dtype=wp.vec4f, device=dev)
            self._hw_max = wp.zeros(E, dtype=wp.float32, device=dev)
        self.result = HeightField(
            heights=wp.zeros((E, R, R), dtype=wp.float32, device=dev),
            inside=wp.zeros((E, R, R), dtype=wp.uint8, device=dev),
            origin=self.origin, cell=self.cell, side=self.side, resolution=R,
        )
        self._E, self._device = E, wp.get_device(dev)
        self._agents = ctx.agents
        self._no_origin = no_origin(dev)
        self._check_cover(ctx.generator, stacklevel=5)

    @property
    def heights(self) -> wp.array:
        """[E, R, R] float32 baked heights (``result.heights``)."""
        return self.result.heights

    @property
    def inside(self) -> wp.array:
        """[E, R, R] uint8 band / frame mask (``result.inside``)."""
        return self.result.inside

    def on_generate(self, ctx, mask) -> None:
        """Bake masked envs (``mask`` [E] int32); other envs' rows are not written."""
        r = ctx.result
        E, dev = ctx.num_envs, ctx.device
        self._check_cover(ctx.generator, stacklevel=4)
        out = [self.result.heights, self.result.inside]
        R = self.resolution
        if self._family == "track":
            wp.launch(_chunks_kernel, dim=E, device=dev,
                      inputs=[mask, r.xy, r.half_width, self._K, self._C],
                      outputs=[self._boxes, self._hw_max])
            nearest = 1 if isinstance(self.outside, str) else 0
            value = 0.0 if nearest else float(self.outside)
            wp.launch(_track_bake_kernel, dim=(E, R), device=dev,
                      inputs=[mask, r.valid, r.xy, r.z, r.half_width, self._boxes, self._hw_max, self._K,
                              self._C, self.origin, self.cell, nearest, value],
                      outputs=out)
        else:
            wp.launch(_gate_bake_kernel, dim=(E, R), device=dev,
                      inputs=[mask, r.valid, r.pos, r.normal, r.count, r.width, r.height, r.thickness,
                              self.origin, self.cell],
                      outputs=out)

    # -- utility ------------------------------------------------------------------------------------
    def sample(self, points, out, origin=None) -> None:
        """Bilinear height at one point per env, or per agent: ``out[a] = heights_e(points[a].xy)``
        [m] with ``e = a // P``, P the points per env (1, or K on a course of K agents per env).

        Args:
            points: [E] or [E*K] vec2f (x, y), or vec3f (its z is ignored: pass the bound position).
                Env-frame, or world-frame when ``origin`` is given.
            out: float32, as many rows as ``points``, written for every row.
            origin: None, or [E] vec3f, each env's origin in the world (e.g. Isaac Lab's
                ``env.scene.env_origins``, the array bound as ``origin``): the points are then
                world-frame and ``points[a].xy - origin[e].xy`` is looked up.

        Outside the grid the point is clamped to its border; a non-finite point (or origin)
        reads 0.0. Recordable (one launch, no allocation or sync); O(1) per point. It reads the
        current bake, so call it after ``course.regenerate`` in the same graph.
        """
        if self.result is None:
            raise RuntimeError(f"{self.name!r}: sample() needs the component attached to a course")
        E, A = self._E, self._E * self._agents
        rows = (A,) if isinstance(points, wp.array) and tuple(points.shape) == (A,) else (E,)
        checked = (("points", points, rows), ("out", out, rows)) + (
            (("origin", origin, (E,)),) if origin is not None else ())
        for what, arr, shape in checked:
            if not isinstance(arr, wp.array):
                raise TypeError(f"sample: {what} must be a wp.array, got {type(arr).__name__}")
            if tuple(arr.shape) != shape:
                also = f" or ({A},) (one per agent)" if what != "origin" and A != E else ""
                raise ValueError(f"sample: {what} must have shape {shape}{also}, got {tuple(arr.shape)}")
            if wp.get_device(arr.device) != self._device:
                raise ValueError(f"sample: {what} is on {arr.device}, the course on {self._device}")
        if out.dtype != wp.float32:
            raise TypeError(f"sample: out must be float32, got {getattr(out.dtype, '__name__', out.dtype)}")
        if origin is not None and origin.dtype != wp.vec3f:
            raise TypeError(f"sample: origin must be vec3f, got {getattr(origin.dtype, '__name__', origin.dtype)}")
        if points.dtype == wp.vec2f:
            kernel = _sample2_kernel
        elif points.dtype == wp.vec3f:
            kernel = _sample3_kernel
        else:
            raise TypeError(
                f"sample: points must be vec2f or vec3f, got {getattr(points.dtype, '__name__', points.dtype)}"
            )
        wp.launch(kernel, dim=rows[0], device=self._device,
                  inputs=[self.result.heights, self.origin, self.cell, rows[0] // E, points,
                          *origin_args({"origin": origin}, self._no_origin)], outputs=[out])

    def __repr__(self) -> str:
        return f"HeightFieldBake(resolution={self.resolution}, name={self.name!r})"
