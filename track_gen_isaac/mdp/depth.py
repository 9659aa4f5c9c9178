"""Depth observation terms (stable runtime; warp twins in :mod:`track_gen_isaac.experimental.mdp.depth`):
the image of the course's :class:`~track_gen.tools.DepthCamera`, cast when the observation is computed.

* :class:`depth_flat`: ``[E, H * W]``, the image row-major (row 0 on top), for an MLP.
* :class:`depth_image`: ``[E, H, W]`` (``channel_first=True``: ``[E, 1, H, W]``, the layout rsl_rl's
  ``CNNModel`` takes), for image encoders. The warp runtime's observation manager holds only
  ``[E, D]`` buffers, so there the term writes the same values row-major into an ``[E, H * W]`` slot.

Both cast the camera themselves (``DepthCamera.cast``: one launch over (E, H)) and copy the image
into the term's output (one launch), after the step's resets: a new episode's first observation
already shows its new course and start pose. The camera is ``CourseCfg.depth_camera`` (the
component ``"depth_camera"``, which the course's own step leaves alone), or any ``DepthCamera``
you add through ``CourseCfg.extra`` (``camera=<its name>``). Values are metres (``far`` where a
ray meets nothing); scale them with the term cfg's ``scale`` (e.g. ``1 / far``).
"""

from __future__ import annotations

import warp as wp

from track_gen.tools import DepthCamera
from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["depth_flat", "depth_image"]

wp.set_module_options({"enable_backward": False})


@wp.kernel
def flatten_depth_kernel(depth: wp.array3d(dtype=wp.float32), obs_out: wp.array2d(dtype=wp.float32)):
    """One thread per (env, row): ``out[e, i * W + j] = depth[e, i, j]`` (``out`` may be a strided view)."""
    e, i = wp.tid()
    W = depth.shape[2]
    for j in range(W):
        obs_out[e, i * W + j] = depth[e, i, j]


class _DepthTerm(CourseTerm):
    """The shared part: the camera (checked at construction), its cast and the copy into ``out``."""

    def check(self, camera="depth_camera", **_):
        if not isinstance(camera, str) or not camera:
            raise TypeError(f"camera: expected the name of a DepthCamera component, got {camera!r}")
        cc = self.course_cfg.depth_camera
        if camera == "depth_camera" and cc is not None:
            self.shape = (int(cc.height), int(cc.width))
            return
        if camera == "depth_camera" and not self.course_cfg.extra:
            raise ValueError("the course has no depth camera: declare one on its CourseCfg, e.g. "
                             "CourseCfg(..., depth_camera=DepthCameraCfg(width=16, height=12, far=10.0))")
        cam = self.camera(camera)  # a camera from CourseCfg.extra: the course is built now to read its size
        self.shape = (cam.height, cam.width)

    def camera(self, name: str = "depth_camera") -> DepthCamera:
        """The course's DepthCamera ``name``."""
        try:
            cam = self.ec.component(name)
        except KeyError as exc:
            raise ValueError(f"camera={name!r}: {exc.args[0]}") from None
        if not isinstance(cam, DepthCamera):
            raise TypeError(f"camera={name!r}: the component is a {type(cam).__name__}, not a track_gen DepthCamera")
        return cam

    def launch(self, out, camera="depth_camera", **_):
        """Step the course if this term is its first reader, cast the camera, copy the image into
        ``out`` ([E, H * W] row-major; recordable)."""
        ec = self.ec
        self.read()
        cam = self.camera(camera)
        cam.cast(ec.course.context)
        wp.launch(flatten_depth_kernel, dim=(ec.num_envs, cam.height), inputs=[cam.result.depth], outputs=[out],
                  device=ec.device)

    def _flat(self, camera):
        """Stable runtime: the image as an [E, H * W] torch tensor (a copy)."""
        ec = self.ec
        H, W = self.shape
        out = ec.buffer(("out", id(self), (self.num_envs, H * W)), (self.num_envs, H * W), wp.float32)
        self.launch(out, camera=camera)
        return ec.torch(out).clone()


class depth_flat(_DepthTerm):
    """The depth image of every env, flattened row-major: ``[E, H * W]`` float32 [m], value
    ``i * W + j`` the pixel in row i (from the top), column j (from the left). ``camera``: the
    DepthCamera component's name (default ``CourseCfg.depth_camera``'s)."""

    def out_shape(self, camera="depth_camera"):
        return (self.num_envs, self.shape[0] * self.shape[1])

    def __call__(self, env, course_name: str = "course", camera: str = "depth_camera"):
        return self._flat(camera)


class depth_image(_DepthTerm):
    """The depth image of every env: ``[E, H, W]`` float32 [m] (row 0 on top, column 0 on the
    left); ``channel_first=True`` adds the channel axis, ``[E, 1, H, W]``, for rsl_rl's
    ``CNNModel`` (it takes 2D groups as [B, C, H, W]). Warp runtime: ``[E, H * W]`` row-major (its
    manager holds 2D buffers only; view it as [E, H, W])."""

    def check(self, camera="depth_camera", channel_first=False):
        if not isinstance(channel_first, bool):
            raise TypeError(f"channel_first: expected True or False, got {channel_first!r}")
        super().check(camera=camera)

    def out_shape(self, camera="depth_camera", channel_first=False):
        return (self.num_envs, self.shape[0] * self.shape[1])

    def __call__(self, env, course_name: str = "course", camera: str = "depth_camera", channel_first: bool = False):
        img = self._flat(camera)
        H, W = self.shape
        return img.view(self.num_envs, 1, H, W) if channel_first else img.view(self.num_envs, H, W)
