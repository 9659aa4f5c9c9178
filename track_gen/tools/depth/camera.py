""":class:`DepthCamera`: a per-env pinhole depth camera cast exactly against the course itself.

One thread per (env, image row) in ``step`` (:mod:`.image`; the optional range rays, a ring
and a grid, in :mod:`.ranges`); the rays meet the gate frames' bars (boxes), the gate posts and pole obstacles
(upright cylinders), the band walls (vertical quads along both band edges) and the ground plane,
with the functions of :mod:`~track_gen.tools.depth.rays`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import warp as wp

from track_gen.tools._common import ORIGIN_INPUT, chunking, no_origin, origin_args, real
from track_gen.tools.collision.edges import launch_edges
from track_gen.tools.component import Component, InputSpec
from track_gen.tools.component import check_name as _name
from track_gen.tools.depth.image import ImageRays, camera_rays, depth_kernel, row_planes
from track_gen.tools.depth.ranges import check_grid, grid_rays, range_kernel, ring_rays
from track_gen.tools.depth.scene import CameraPose, Scene

__all__ = ["DepthCamera", "DepthResult", "MAX_RESOLUTION", "camera_rays", "row_planes"]

#: the largest image side (pixels) a DepthCamera accepts
MAX_RESOLUTION = 4096
#: the conventions of ``DepthCamera(convention=...)``
CONVENTIONS = ("distance", "z")


@dataclass
class DepthResult:
    """What a :class:`DepthCamera` writes each step."""

    depth: wp.array
    """[E*K, H, W] float32 depth [m] (one image per agent; K = 1 by default): row 0 is the top of
    the image, column 0 its left."""
    ranges: wp.array = None
    """[E*K, N] float32 ranges of the ``ring=N`` rays [m] (distance along the ray); None without a ring."""
    grid: wp.array = None
    """[E*K, rows, cols] float32 ranges of the ``grid=(rows, cols)`` rays [m] (distance along the ray;
    row 0 the front-most, column 0 the left-most); None without a grid."""


# ------------------------------------------------------------------------------------------------
# the component
# ------------------------------------------------------------------------------------------------
def _int_arg(what: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what}: expected an int in {lo} ... {hi} pixels, got {value!r}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{what}: expected {lo} ... {hi} pixels, got {value!r}")
    return int(value)


class DepthCamera(Component):
    """A pinhole depth camera per env, ray cast exactly against the course (no renderer, no mesh).

    Camera: ``width`` x ``height`` pixels, horizontal field of view ``fov_deg``, square pixels,
    one ray through each pixel centre (:func:`camera_rays`). Mounted at ``offset`` in the body
    frame (x forward, y left, z up), looking along body x pitched down by ``pitch_deg``; the full
    body orientation (``orientation``, normalized) turns the mount. Image row 0 is the top,
    column 0 the left.

    Scene (env frame): the ground plane ``z = 0`` (``ground=True``); on gate courses the four bars
    of every gate frame, boxes exactly as :class:`~track_gen.tools.FrameCollision` defines them,
    and with a post radius two upright cylinders per gate at the side bars' centres from the
    ground to the frame's top (``pos.z + height / 2 + thickness``); on band tracks vertical walls
    ``wall_height`` tall standing on both band edges (the centerline ``z`` under each edge point;
    0 disables them); on either family every pole obstacle (``result.obstacle_*``, upright
    cylinders with caps). Surfaces are two-sided.

    Depth: ``convention="distance"`` (default) the Euclidean distance from the camera centre
    along the ray to the first surface; ``"z"`` its component along the optical axis (the
    z-buffer depth). Surfaces nearer than ``near`` are ignored (the ray passes through; in the
    ``"z"`` convention ``near`` and ``far`` are planes, else spheres). A pixel whose ray meets
    nothing before ``far`` reads ``far``. An env whose position, orientation or origin is
    non-finite, a zero quaternion, or a position beyond ``POSE_LIMIT`` (1e6 m) reads ``far`` in
    every pixel; other envs are unaffected.

    Range ring (``ring=N > 0``): N more rays from the mount point in the body's xy plane (turned
    by the full orientation, not pitched), ray k at ``2 pi k / N`` from body x counter-clockwise;
    ``result.ranges`` [E*K, N] holds the distance along each ray with the same scene, ``near``,
    ``far`` and special rows as the image.

    Range grid (``grid=(rows, cols)``): rows x cols parallel rays along ``grid_direction`` (body
    frame, default straight down: a height scan), starting ``grid_spacing`` apart on a grid in the
    body's xy plane centred on the mount (row 0 the front-most, column 0 the left-most), all turned
    by the full orientation; ``result.grid`` [E*K, rows, cols] holds the distance along each ray,
    with the same scene, ``near``, ``far`` and special rows as the image.

    Inputs: ``position`` [E*K] vec3f, ``orientation`` [E*K] quatf (x, y, z, w), optional ``origin``
    [E] vec3f (world-frame positions; the env frame is ``position - origin``) and ``render`` [E*K]
    int32 (when bound only agents with ``render != 0`` are drawn; the others' rows are untouched).
    K is the agents per env (1 by default): each agent gets its own image of its env's course.
    The other agents are not in the image (it is the image a one-agent course gives that pose).

    Cost: stateless, one thread per (env, image row) in ``step`` (and one per (env, range ray)).
    A row's rays share a plane through the camera centre: each gate, post or pole is tested only
    on the pixels of the row its bounding sphere (or, upright cylinders, the part of the axis
    near the plane) can cover; band walls through the edges' chunk boxes, then the segments of
    the chunks the ray crosses. ``on_generate`` bakes the band edges (tracks only); gate courses
    are read from the generator's arrays in ``step``. Regenerating needs no re-recording.

    Args:
        width, height: image size [pixels], 1 ... 4096 each.
        fov_deg: horizontal field of view, in (0, 180) degrees.
        near, far: clipping distances [m], ``0 <= near < far``.
        offset: mount position in the body frame [m].
        pitch_deg: downward pitch of the optical axis [deg], in [-90, 90].
        convention: ``"distance"`` or ``"z"``.
        wall_height: band walls' height [m] (>= 0; 0: no walls).
        post_radius: gate posts: ``"auto"`` takes the radius of the course's ``DiscCollision``
            (named "collision") if it has one, else none; a number > 0 sets it; None or 0: none.
        ground: cast against the ground plane.
        ring: number of range rays in the ring (0: none).
        grid: (rows, cols) of the range grid (None: none), each 1 ... 4096.
        grid_spacing: distance between neighbouring grid rays [m] (> 0).
        grid_direction: the grid rays' direction in the body frame (normalized; not all zero).
        cast_on_step: cast in ``step`` (default). False: ``step`` does nothing and the owner casts
            with :meth:`cast` when it needs the image (the Isaac Lab depth terms do, when the
            observations are computed, after the step's resets).
        name: component name.
    """

    name = "depth_camera"
    inputs = {"position": InputSpec(wp.vec3f), "orientation": InputSpec(wp.quatf), "origin": ORIGIN_INPUT,
              "render": InputSpec(wp.int32, required=False)}
    topology = ("gates", "track")
    multi_agent = True

    def __init__(self, width: int, height: int, fov_deg: float, near: float, far: float,
                 offset=(0.0, 0.0, 0.0), pitch_deg: float = 0.0, *, convention: str = "distance",
                 wall_height: float = 0.3, post_radius="auto", ground: bool = True, ring: int = 0,
                 grid=None, grid_spacing: float = 0.1, grid_direction=(0.0, 0.0, -1.0), cast_on_step: bool = True,
                 name: str = "depth_camera"):
        self.width = _int_arg("width", width, 1, MAX_RESOLUTION)
        self.height = _int_arg("height", height, 1, MAX_RESOLUTION)
        fov = real("fov_deg", fov_deg)
        if not 0.0 < fov < 180.0:
            raise ValueError(f"fov_deg: expected a horizontal field of view in (0, 180) degrees, got {fov_deg!r}")
        self.fov_deg = fov
        self.near = real("near", near)
        if self.near < 0.0:
            raise ValueError(f"near: expected a distance >= 0 [m], got {near!r}")
        self.far = real("far", far)
        if not self.far > self.near:
            raise ValueError(f"far: expected far > near ({self.near:g} m), got {far!r}")
        try:
            off = tuple(offset)
        except TypeError:
            raise TypeError(f"offset: expected (x, y, z) in the body frame [m], got {offset!r}") from None
        if len(off) != 3:
            raise ValueError(f"offset: expected 3 numbers (x, y, z) [m], got {offset!r}")
        self.offset = tuple(real(f"offset[{i}]", v) for i, v in enumerate(off))
        self.pitch_deg = real("pitch_deg", pitch_deg)
        if not -90.0 <= self.pitch_deg <= 90.0:
            raise ValueError(f"pitch_deg: expected -90 ... 90 degrees, got {pitch_deg!r}")
        if convention not in CONVENTIONS:
            raise ValueError(f"convention: expected one of {CONVENTIONS}, got {convention!r}")
        self.convention = convention
        self.wall_height = real("wall_height", wall_height)
        if self.wall_height < 0.0:
            raise ValueError(f"wall_height: expected a height >= 0 [m], got {wall_height!r}")
        if isinstance(post_radius, str) and post_radius != "auto":
            raise ValueError(f"post_radius: expected 'auto', None or a radius >= 0 [m], got {post_radius!r}")
        if post_radius is not None and not isinstance(post_radius, str):
            r = real("post_radius", post_radius)
            if r < 0.0:
                raise ValueError(f"post_radius: expected a radius >= 0 [m], got {post_radius!r}")
            post_radius = r
        self._post_arg = post_radius
        self.post_radius = 0.0
        self.ground = bool(ground)
        if isinstance(ring, bool) or not isinstance(ring, numbers.Integral) or not 0 <= int(ring) <= 65536:
            raise ValueError(f"ring: expected a number of range rays in 0 ... 65536, got {ring!r}")
        self.ring = int(ring)
        self.grid, self.grid_spacing, self.grid_direction = check_grid(grid, grid_spacing, grid_direction)
        if not isinstance(cast_on_step, bool):
            raise TypeError(f"cast_on_step: expected True or False, got {cast_on_step!r}")
        self.cast_on_step = cast_on_step
        self.name = _name(name)

    # -- hooks ------------------------------------------------------------------------------------
    def attach(self, ctx) -> None:
        A, dev = ctx.num_agents, ctx.device  # images and ranges: one row per agent
        self._agents = ctx.agents
        H, W = self.height, self.width
        rays, cosines = camera_rays(W, H, self.fov_deg, self.pitch_deg)
        self.rays = wp.array(rays.astype(np.float32), dtype=wp.vec3f, device=dev)
        self.cosines = wp.array(cosines.astype(np.float32), dtype=wp.float32, device=dev)
        normals, axes, lens = row_planes(W, H, self.fov_deg, self.pitch_deg)
        self.row_normals = wp.array(normals.astype(np.float32), dtype=wp.vec3f, device=dev)
        self.row_axes = wp.array(axes.astype(np.float32), dtype=wp.vec3f, device=dev)
        self.row_len = wp.array(lens.astype(np.float32), dtype=wp.float32, device=dev)
        self._focal = float(0.5 * W / math.tan(0.5 * math.radians(self.fov_deg)))
        self.result = DepthResult(depth=wp.full((A, H, W), self.far, dtype=wp.float32, device=dev))
        if self.ring > 0:
            self.ring_dirs = wp.array(ring_rays(self.ring).astype(np.float32), dtype=wp.vec3f, device=dev)
            self.ring_starts = wp.zeros(self.ring, dtype=wp.vec3f, device=dev)
            self.result.ranges = wp.full((A, self.ring), self.far, dtype=wp.float32, device=dev)
        rows, cols = self.grid
        if rows > 0:
            starts, dirs = grid_rays(rows, cols, self.grid_spacing, self.grid_direction)
            self.grid_starts = wp.array(starts.astype(np.float32), dtype=wp.vec3f, device=dev)
            self.grid_dirs = wp.array(dirs.astype(np.float32), dtype=wp.vec3f, device=dev)
            self._grid_flat = wp.full((A, rows * cols), self.far, dtype=wp.float32, device=dev)
            self.result.grid = self._grid_flat.reshape((A, rows, cols))  # a view: the kernel writes the flat rows
        self._no_origin = no_origin(dev)
        self._no_render = wp.zeros(1, dtype=wp.int32, device=dev)
        self.family = ctx.family
        if self._post_arg == "auto":
            peer = ctx.peer("collision")
            self.post_radius = float(getattr(peer, "radius", 0.0) or 0.0) if peer is not None else 0.0
        else:
            self.post_radius = float(self._post_arg or 0.0)

        self._lens = self._image_rays()
        self._scene = self._scene_of(ctx)
        self._pose, self._pose_of = CameraPose(), None

    def _image_rays(self) -> ImageRays:
        lens = ImageRays()
        lens.rays, lens.cosines = self.rays, self.cosines
        lens.row_normals, lens.row_axes, lens.row_len = self.row_normals, self.row_axes, self.row_len
        lens.focal, lens.offset = self._focal, wp.vec3f(*self.offset)
        lens.near, lens.far, lens.zdepth = self.near, self.far, 1 if self.convention == "z" else 0
        return lens

    def _scene_of(self, ctx) -> Scene:
        """The course's primitives: gates (gate courses), pole obstacles (either family, when the
        generator has an ``obstacles`` stage), band walls (tracks). Absent parts get one-element
        placeholders that are never read."""
        E, dev, r = ctx.num_envs, ctx.device, ctx.result

        def ph(dtype, ndim=2):
            return wp.zeros((1,) * ndim, dtype=dtype, device=dev)

        sc = Scene()
        sc.valid, sc.ground = r.valid, 1 if self.ground else 0
        opos = getattr(r, "obstacle_pos", None)
        if opos is not None and len(opos.shape) == 2 and opos.shape[1] > 0:
            sc.has_obstacles, sc.obstacle_pos, sc.obstacle_radius = 1, opos, r.obstacle_radius
            sc.obstacle_height, sc.obstacle_count = r.obstacle_height, r.obstacle_count
        else:
            sc.has_obstacles, sc.obstacle_pos, sc.obstacle_radius = 0, ph(wp.vec3f), ph(wp.float32)
            sc.obstacle_height, sc.obstacle_count = ph(wp.float32), ph(wp.int32, 1)
        if ctx.family == "gates":
            sc.has_gates, sc.gate_pos, sc.gate_normal, sc.gate_count = 1, r.pos, r.normal, r.count
            sc.gate_width, sc.gate_height, sc.gate_thickness = r.width, r.height, r.thickness
            sc.post_radius = self.post_radius
            sc.wall_height, sc.left, sc.right, sc.boxes, sc.ground_z = 0.0, ph(wp.vec2f), ph(wp.vec2f), ph(wp.vec4f), \
                ph(wp.float32)
            sc.chunk_len, sc.chunks = 1, 0
            return sc
        N = int(r.xy.shape[1])
        self._K, self._C = chunking(N)
        self.left = wp.zeros((E, N), dtype=wp.vec2f, device=dev)
        self.right = wp.zeros((E, N), dtype=wp.vec2f, device=dev)
        self.boxes = wp.zeros((E, 2 * self._C), dtype=wp.vec4f, device=dev)
        sc.has_gates, sc.gate_pos, sc.gate_normal, sc.gate_count = 0, ph(wp.vec3f), ph(wp.vec3f), ph(wp.int32, 1)
        sc.gate_width, sc.gate_height, sc.gate_thickness = ph(wp.float32, 1), ph(wp.float32, 1), ph(wp.float32, 1)
        sc.post_radius = 0.0
        sc.wall_height, sc.left, sc.right, sc.boxes, sc.ground_z = self.wall_height, self.left, self.right, \
            self.boxes, r.z
        sc.chunk_len, sc.chunks = self._K, self._C
        return sc

    @property
    def _obs(self) -> tuple[int]:
        """``(has_obstacles,)``: whether the image casts pole obstacles (the tests read it)."""
        return (self._scene.has_obstacles,)

    def _camera_pose(self) -> CameraPose:
        """The pose inputs as bound (rebuilt after each ``bind``)."""
        b = self._bound or {}
        if self._pose_of is not self._bound:
            pose = CameraPose()
            pose.agents = self._agents
            pose.position, pose.orientation = b["position"], b["orientation"]
            pose.origin, pose.has_origin = origin_args(b, self._no_origin)
            render = b.get("render")
            pose.render, pose.has_render = (self._no_render, 0) if render is None else (render, 1)
            self._pose, self._pose_of = pose, self._bound
        return self._pose

    def on_generate(self, ctx, mask) -> None:
        """Band tracks: the regenerated envs' edges and their chunk boxes (gate courses need no
        bake: ``step`` reads the generator's arrays)."""
        if self.family != "gates" and self.wall_height > 0.0:
            launch_edges(ctx, mask, self._K, self._C, self.left, self.right, self.boxes)

    def step(self, ctx) -> None:
        """Cast the image (and range rays) when ``cast_on_step`` (the default); else nothing."""
        if self.cast_on_step:
            self.cast(ctx)

    def cast(self, ctx) -> None:
        """Cast the image and the range rays of every agent (only ``render != 0`` ones when bound)
        into :attr:`result`: one launch over (E*K, H), one over (E*K, N) per ray pattern.
        Recordable; ``ctx`` is the course's context (``course.context``)."""
        pose = self._camera_pose()
        wp.launch(depth_kernel, dim=(ctx.num_agents, self.height), device=ctx.device,
                  inputs=[self._lens, self._scene, pose], outputs=[self.result.depth])
        patterns = []
        if self.ring > 0:
            patterns.append((self.ring_starts, self.ring_dirs, self.result.ranges))
        if self.grid[0] > 0:
            patterns.append((self.grid_starts, self.grid_dirs, self._grid_flat))
        for starts, dirs, out in patterns:
            wp.launch(range_kernel, dim=out.shape, device=ctx.device,
                      inputs=[starts, dirs, wp.vec3f(*self.offset), self.near, self.far, self._scene, pose],
                      outputs=[out])

    def __repr__(self) -> str:
        return (f"DepthCamera(width={self.width}, height={self.height}, fov_deg={self.fov_deg:g}, near={self.near:g}, "
                f"far={self.far:g}, offset={self.offset}, pitch_deg={self.pitch_deg:g}, "
                f"convention={self.convention!r}, name={self.name!r})")
