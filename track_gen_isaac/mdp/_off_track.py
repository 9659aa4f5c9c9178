"""Off the course: the one check behind :class:`~track_gen_isaac.mdp.terminations.off_track` (bool)
and :class:`~track_gen_isaac.mdp.rewards.off_track_penalty` (1.0 / 0.0), from the localizer's frame.
"""

from __future__ import annotations

import math
import numbers

import warp as wp

from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["OffTrackTerm"]

wp.set_module_options({"enable_backward": False})


@wp.func
def _off_track(e: int, gates: int, s: wp.array(dtype=wp.float32), lateral: wp.array(dtype=wp.float32),
               distance: wp.array(dtype=wp.float32), segment: wp.array(dtype=wp.int32),
               line_s: wp.array2d(dtype=wp.float32), line_length: wp.array(dtype=wp.float32),
               half_width: wp.array2d(dtype=wp.float32), margin: float, max_distance: float):
    seg = segment[e]
    if seg < 0:
        return False
    if gates != 0:
        return distance[e] > max_distance
    N = half_width.shape[1]
    j = wp.clamp(seg, 0, N - 1)
    j1 = (j + 1) % N
    s0 = line_s[e, j]
    s1 = line_length[e]
    if j + 1 < N:
        s1 = line_s[e, j1]
    span = s1 - s0
    t = float(0.0)
    if span > 0.0:
        t = wp.clamp((s[e] - s0) / span, 0.0, 1.0)
    half = half_width[e, j] * (1.0 - t) + half_width[e, j1] * t
    return wp.abs(lateral[e]) > half + margin


@wp.kernel
def off_track_kernel(gates: int, margin: float, max_distance: float, s: wp.array(dtype=wp.float32),
                     lateral: wp.array(dtype=wp.float32), distance: wp.array(dtype=wp.float32),
                     segment: wp.array(dtype=wp.int32), line_s: wp.array2d(dtype=wp.float32),
                     line_length: wp.array(dtype=wp.float32), half_width: wp.array2d(dtype=wp.float32),
                     off_track_out: wp.array(dtype=wp.bool)):
    """Off the course: a band track: ``|lateral|`` beyond the band half width (interpolated at ``s``
    between the segment's two points) plus ``margin``; gates: ``distance > max_distance``. False
    without a frame (segment -1)."""
    e = wp.tid()
    off_track_out[e] = _off_track(e, gates, s, lateral, distance, segment, line_s, line_length, half_width, margin,
                                  max_distance)


@wp.kernel
def off_track_float_kernel(gates: int, margin: float, max_distance: float, s: wp.array(dtype=wp.float32),
                           lateral: wp.array(dtype=wp.float32), distance: wp.array(dtype=wp.float32),
                           segment: wp.array(dtype=wp.int32), line_s: wp.array2d(dtype=wp.float32),
                           line_length: wp.array(dtype=wp.float32), half_width: wp.array2d(dtype=wp.float32),
                           off_track_out: wp.array(dtype=wp.float32)):
    """:func:`off_track_kernel` as 1.0 / 0.0."""
    e = wp.tid()
    off = _off_track(e, gates, s, lateral, distance, segment, line_s, line_length, half_width, margin, max_distance)
    off_track_out[e] = wp.where(off, 1.0, 0.0)


class OffTrackTerm(CourseTerm):
    """Off the course: a band track: ``|lateral|`` beyond the band's half width (interpolated at
    ``s``) plus ``margin``; a gate course: farther than ``max_distance`` [m] from the course line.
    False without a frame (invalid course). Writes bool or float32 ``out`` (its dtype decides)."""

    multi_agent = True  # gate courses only: a band track's width is read per course (refused below)

    def check(self, margin=0.0, max_distance=None):
        if self.mode == "track" and int(getattr(self.course_cfg, "agents", 1)) > 1:
            raise ValueError("off-track on a band track reads the band per course: one agent per course only")
        if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not math.isfinite(margin):
            raise ValueError(f"margin: expected a finite number [m], got {margin!r}")
        if self.mode == "track" and not self.course_cfg.localizer:
            raise ValueError(f"env.cfg.{self.course_name}.localizer is False: off-track needs the localizer")
        if self.mode == "gates":
            if max_distance is None:
                raise ValueError("a gate course has no band: pass max_distance (distance from the course line [m])")
            if isinstance(max_distance, bool) or not isinstance(max_distance, numbers.Real) or not max_distance > 0:
                raise ValueError(f"max_distance: expected a number > 0 [m], got {max_distance!r}")

    def launch(self, out, margin=0.0, max_distance=None):
        ec = self.ec
        f = self.read().frame
        line = ec.course.course_line.line
        gates = ec.mode == "gates"
        hw = ec.course.result.half_width if not gates else ec.buffer("no_half_width", (ec.num_envs, 1))
        kernel = off_track_kernel if out.dtype == wp.bool else off_track_float_kernel
        wp.launch(kernel, dim=ec.num_envs,
                  inputs=[int(gates), float(margin), float(max_distance) if max_distance is not None else 0.0,
                          f.s, f.lateral, f.distance, f.segment, line.s, line.length, hw],
                  outputs=[out], device=ec.device)
