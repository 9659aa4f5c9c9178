"""The range rays of :class:`~track_gen.tools.depth.DepthCamera`: a ring (``ring=N``: N rays in
the body's xy plane from the camera mount) and a grid (``grid=(rows, cols)``: parallel rays from a
grid of points around the mount, a height scan when they point down), cast one thread per (env,
ray) against the same scene as the image (:func:`~track_gen.tools.depth.scene.cast_ray`)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import warp as wp

from track_gen.tools._common import real
from track_gen.tools.depth.scene import CameraPose, Scene, camera_origin, cast_ray

__all__ = ["cast_ray", "check_grid", "grid_rays", "range_kernel", "ring_rays"]


def ring_rays(n: int) -> np.ndarray:
    """``[n, 3]`` body-frame unit rays of the ring: ``(cos a_k, sin a_k, 0)``, ``a_k = 2 pi k / n``
    (ray 0 along body x, counter-clockwise seen from above, so ray n/4 points to body +y, left)."""
    a = 2.0 * math.pi * np.arange(n) / n
    return np.stack([np.cos(a), np.sin(a), np.zeros(n)], 1)


def grid_rays(rows: int, cols: int, spacing: float, direction) -> tuple[np.ndarray, np.ndarray]:
    """The grid's ray origins relative to the mount and its (shared) unit direction, body frame,
    ``[rows * cols, 3]`` each, row-major: ray ``(r, c)`` starts at ``(x_r, y_c, 0)`` with
    ``x_r = ((rows - 1) / 2 - r) spacing`` (row 0 the front-most) and ``y_c = ((cols - 1) / 2 - c)
    spacing`` (column 0 the left-most), so the grid seen from above with body x up reads like an image."""
    d = np.asarray(direction, np.float64)
    d = d / np.linalg.norm(d)
    rr, cc = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    x = (0.5 * (rows - 1) - rr.reshape(-1)) * spacing
    y = (0.5 * (cols - 1) - cc.reshape(-1)) * spacing
    origins = np.stack([x, y, np.zeros_like(x)], 1)
    return origins, np.broadcast_to(d, origins.shape).copy()


def check_grid(grid, spacing, direction) -> tuple[tuple[int, int], float, tuple[float, float, float]]:
    """``grid`` (None or (rows, cols), each 1 ... 4096), ``grid_spacing`` (> 0, finite) and
    ``grid_direction`` (3 finite numbers, not all 0), checked; errors name the field."""
    if grid is None:
        shape = (0, 0)
    else:
        try:
            g = tuple(grid)
        except TypeError:
            raise TypeError(f"grid: expected None or (rows, cols) of range rays, got {grid!r}") from None
        if len(g) != 2 or any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= int(v) <= 4096
                              for v in g):
            raise ValueError(f"grid: expected (rows, cols), two ints in 1 ... 4096, got {grid!r}")
        shape = (int(g[0]), int(g[1]))
    s = real("grid_spacing", spacing)
    if not s > 0.0:
        raise ValueError(f"grid_spacing: expected a distance > 0 [m], got {spacing!r}")
    try:
        dv = tuple(direction)
    except TypeError:
        raise TypeError(f"grid_direction: expected (x, y, z) in the body frame, got {direction!r}") from None
    if len(dv) != 3:
        raise ValueError(f"grid_direction: expected 3 numbers (x, y, z), got {direction!r}")
    dv = tuple(real(f"grid_direction[{i}]", v) for i, v in enumerate(dv))
    if not any(v != 0.0 for v in dv):
        raise ValueError(f"grid_direction: expected a non-zero direction, got {direction!r}")
    return shape, s, dv


@wp.kernel
def range_kernel(starts: wp.array(dtype=wp.vec3f), dirs: wp.array(dtype=wp.vec3f), offset: wp.vec3f, near: float,
                 far: float, scene: Scene, pose: CameraPose, ranges_out: wp.array2d(dtype=wp.float32)):
    """One thread per (agent, range ray): the distance to the first surface along ray k (from
    ``offset + starts[k]``, along ``dirs[k]``, both body frame, ``dirs`` unit), ``far`` when none
    (or for a non-finite pose); envs with ``render == 0`` (when bound) are left untouched."""
    agent, k = wp.tid()
    e = agent // pose.agents
    cast, ok, q, o = camera_origin(pose, agent, e, offset + starts[k])
    if not cast:
        return
    if not ok:
        ranges_out[agent, k] = far
        return
    best = cast_ray(o, wp.quat_rotate(q, dirs[k]), near, far, e, scene)
    ranges_out[agent, k] = wp.where(best < far, best, far)
