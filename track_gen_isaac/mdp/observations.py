"""Observation terms (stable runtime): the course seen from the robot.

Every term reads the env's course (``course_name``, default ``"course"``), steps it when it is the
first reader of the env step (:meth:`~track_gen_isaac.env_course.EnvCourse.step`), runs one Warp
kernel into a preallocated [E, D] float32 buffer and returns a torch copy of it. Body frame =
the followed entity's root frame (``root_pos_w``, ``root_quat_w`` xyzw); positions are taken
relative to the env origin, the frame the course lives in.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import warp as wp

from track_gen_isaac import kernels as K
from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["next_checkpoints", "next_gates", "track_frame", "lookahead_points", "lap_progress"]


def _count(name, value, lo=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ValueError(f"{name}: expected an int >= {lo}, got {value!r}")


class next_checkpoints(CourseTerm):
    """The next ``num`` checkpoints (gates of a gate course) in the body frame.

    Per checkpoint: its centre (3 values), then with ``corners=True`` the four corners of its
    opening (12 values: (+left, +up), (-left, +up), (-left, -up), (+left, -up), ``left`` the
    opening's horizontal axis, ``up`` = normal x left). Shape ``[E, num * (15 if corners else 3)]``.

    The checkpoints are ``next, next + 1, ...`` of the progress component (the one to pass first):
    on a loop they wrap, on a sprint they repeat the last one. Invalid course: zeros.
    Corners are for gate courses (a band-track checkpoint's opening has no finite height).
    """

    def check(self, num=2, corners=False):
        _count("num", num)
        if corners and self.mode != "gates":
            raise ValueError("corners=True needs a gate course (a band track's checkpoints have no top or bottom)")

    def __call__(self, env, course_name: str = "course", num: int = 2, corners: bool = False):
        ec = self.ec
        ec.step()
        cp = ec.course.checkpoints
        per = 15 if corners else 3
        out = ec.buffer(("next_checkpoints", id(self)), (ec.num_envs, num * per))
        wp.launch(K.next_checkpoints_kernel, dim=ec.num_envs,
                  inputs=[ec.position, ec.orientation, ec.origin, ec.course.result.valid, cp.pos, cp.normal,
                          cp.half_width, cp.half_height, cp.count, cp.closed, ec.course.progress.next_index,
                          int(num), int(bool(corners))],
                  outputs=[out], device=ec.device)
        return ec.torch(out).clone()


class next_gates(next_checkpoints):
    """:class:`next_checkpoints` of a gate course, corners included by default."""

    modes = ("gates",)

    def __call__(self, env, course_name: str = "course", num: int = 2, corners: bool = True):
        return super().__call__(env, course_name=course_name, num=num, corners=corners)


class track_frame(CourseTerm):
    """The localizer's track frame: ``[s / length, lateral, sin(heading), cos(heading)]`` (+ ``vertical``).

    ``s`` is the arc length of the projection on the course line, normalized by the line's length
    (in [0, 1]); ``lateral`` [m] > 0 left of travel; ``heading`` the body yaw minus the line's.
    Shape ``[E, 4]`` (``[E, 5]`` with ``vertical=True``)."""

    def check(self, vertical=False):
        if self.mode == "track" and not self.course_cfg.localizer:
            raise ValueError(f"env.cfg.{self.course_name}.localizer is False: the course has no localizer")

    def __call__(self, env, course_name: str = "course", vertical: bool = False):
        ec = self.ec
        res = ec.step()
        f = res.frame
        line = ec.course.course_line.line
        out = ec.buffer(("track_frame", bool(vertical)), (ec.num_envs, 5 if vertical else 4))
        wp.launch(K.track_frame_kernel, dim=ec.num_envs,
                  inputs=[f.s, f.lateral, f.vertical, f.heading, line.length, int(bool(vertical))],
                  outputs=[out], device=ec.device)
        return ec.torch(out).clone()


class lookahead_points(CourseTerm):
    """Points of the course line ``distances`` [m] ahead of the robot's projection, in the body frame.

    Shape ``[E, 3 * len(distances)]``. Distances are arc lengths along the line from the localizer's
    ``s`` (negative ones look back); a loop wraps, an open line stops at its ends. No frame
    (invalid course): zeros."""

    def check(self, distances=(1.0, 2.0, 3.0)):
        try:
            d = [float(x) for x in distances]
        except (TypeError, ValueError):
            raise TypeError(f"distances: expected a sequence of numbers [m], got {distances!r}") from None
        if not d or not all(math.isfinite(x) for x in d):
            raise ValueError(f"distances: expected at least one finite distance [m], got {distances!r}")
        if self.mode == "track" and not self.course_cfg.localizer:
            raise ValueError(f"env.cfg.{self.course_name}.localizer is False: the course has no localizer")
        self._distances_host = np.asarray(d, np.float32)

    def __call__(self, env, course_name: str = "course", distances: tuple = (1.0, 2.0, 3.0)):
        ec = self.ec
        res = ec.step()
        f = res.frame
        line = ec.course.course_line.line
        key = ("lookahead", id(self))
        dist = ec._buffers.get(key + ("d",))
        if dist is None:
            dist = ec._buffers[key + ("d",)] = wp.array(self._distances_host, dtype=wp.float32, device=ec.device)
        out = ec.buffer(key, (ec.num_envs, 3 * dist.shape[0]))
        wp.launch(K.lookahead_kernel, dim=ec.num_envs,
                  inputs=[ec.position, ec.orientation, ec.origin, f.s, f.segment, line.points, line.s, line.count,
                          line.length, line.closed, dist],
                  outputs=[out], device=ec.device)
        return ec.torch(out).clone()


class lap_progress(CourseTerm):
    """Distance along the course since reset in laps (``progress / lap length``), divided by
    ``laps`` when given (1.0 = the target number of laps done). Shape ``[E, 1]``; 0 without a course."""

    def check(self, laps=None):
        if laps is not None and (isinstance(laps, bool) or not isinstance(laps, numbers.Real) or not laps > 0):
            raise ValueError(f"laps: expected None or a number > 0, got {laps!r}")

    def __call__(self, env, course_name: str = "course", laps: float | None = None):
        ec = self.ec
        res = ec.step()
        out = ec.buffer(("lap_progress", id(self)), (ec.num_envs, 1))
        scale = 1.0 if laps is None else 1.0 / float(laps)
        wp.launch(K.lap_progress_kernel, dim=ec.num_envs,
                  inputs=[res.events.progress, ec.course.checkpoints.length, scale], outputs=[out], device=ec.device)
        return ec.torch(out).clone()
