"""Depth without a renderer: :class:`DepthCamera`, a per-env pinhole depth camera ray cast
exactly against the course's analytic geometry (gate bars as boxes, posts and poles as
cylinders, band walls as vertical quads, the ground plane), inside the captured step.

Modules: :mod:`.rays` (the ray-primitive device functions), :mod:`.scene` (what the kernels cast
against, as Warp structs, and the per-ray casts both kernels share), :mod:`.image` (the pinhole
rays and the image kernel), :mod:`.ranges` (the range rays: a ring and a grid), :mod:`.camera`
(the component).
"""

from track_gen.tools.depth.camera import DepthCamera, DepthResult, camera_rays

__all__ = ["DepthCamera", "DepthResult", "camera_rays"]
