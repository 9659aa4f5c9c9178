"""Observation terms (stable runtime): the course seen from the robot.

Every term reads the env's course (``course_name``, default ``"course"``), steps it when it is the
first reader of the env step (:meth:`~track_gen_isaac.env_course.EnvCourse.step`), runs one Warp
kernel (its :meth:`launch`, shared with the warp twin) into a preallocated [E, D] float32 buffer
and returns a torch copy of it. Body frame = the followed entity's root frame (``root_pos_w``,
``root_quat_w`` xyzw); positions are taken relative to the env origin, the frame the course lives
in. The kernels (one thread per env; strided pose views are indexed, never copied) write every
output row for every env, so they are stateless: a replayed graph gives the eager result.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import warp as wp

from track_gen.math import unit_lateral

from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["next_checkpoints", "next_gates", "track_frame", "track_frame_velocity", "lookahead_points",
           "lap_progress"]

wp.set_module_options({"enable_backward": False})


@wp.func
def _body(q: wp.quatf, p: wp.vec3f, c: wp.vec3f):
    """``c`` (env frame) in the body frame of pose (p, q)."""
    return wp.quat_rotate_inv(q, c - p)


@wp.func
def _put3(obs_out: wp.array2d(dtype=wp.float32), e: int, j: int, v: wp.vec3f):
    obs_out[e, j] = v[0]
    obs_out[e, j + 1] = v[1]
    obs_out[e, j + 2] = v[2]


def _count(name, value, lo=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ValueError(f"{name}: expected an int >= {lo}, got {value!r}")


@wp.func
def _block_index(nx: int, i: int, num: int, n: int, closed: int) -> int:
    """Checkpoint of output block ``i``: ``nx + i`` for the first ``num`` blocks, ``nx - 1`` (the one
    passed last) for block ``num``; on a loop modulo ``n``, on a sprint clamped to ``[0, n - 1]`` (so
    before the first pass the block after the next ones repeats checkpoint 0)."""
    k = nx + i
    if i >= num:
        k = nx - 1
    if closed != 0:
        k = ((k % n) + n) % n
    else:
        k = wp.min(k, n - 1)
    return wp.max(k, 0)


@wp.kernel
def next_checkpoints_kernel(
    num: int,
    previous: int,
    corners: int,
    agents: int,
    pos_w: wp.array(dtype=wp.vec3f),
    quat_w: wp.array(dtype=wp.quatf),
    origin: wp.array(dtype=wp.vec3f),
    valid: wp.array(dtype=wp.int32),
    cp_pos: wp.array2d(dtype=wp.vec3f),
    cp_normal: wp.array2d(dtype=wp.vec3f),
    cp_half_w: wp.array2d(dtype=wp.float32),
    cp_half_h: wp.array2d(dtype=wp.float32),
    cp_count: wp.array(dtype=wp.int32),
    cp_closed: wp.array(dtype=wp.int32),
    next_index: wp.array(dtype=wp.int32),
    obs_out: wp.array2d(dtype=wp.float32),
):
    """The next ``num`` checkpoints of each env in its body frame: per checkpoint the centre (3),
    then with ``corners`` the 4 opening corners (12): (+lat, +up), (-lat, +up), (-lat, -up), (+lat, -up);
    with ``previous`` (0 / 1) one more block: the checkpoint passed last (:func:`_block_index`).

    Checkpoint ``next + i``; on a loop modulo ``count``, on a sprint clamped to the last one. An env
    with an invalid course or no checkpoint gets zeros. One thread per agent ``a`` (its pose, origin,
    progress, output row), reading the course of its race ``a // agents`` (``agents`` = 1: a = e)."""
    a = wp.tid()
    e = a // agents
    per = 3
    if corners != 0:
        per = 15
    n = wp.min(cp_count[e], cp_pos.shape[1])
    if valid[e] == 0 or n <= 0:
        for j in range((num + previous) * per):
            obs_out[a, j] = 0.0
        return
    p = pos_w[a] - origin[a]
    q = quat_w[a]
    for i in range(num + previous):
        k = _block_index(next_index[a], i, num, n, cp_closed[e])
        c = cp_pos[e, k]
        base = i * per
        _put3(obs_out, a, base, _body(q, p, c))
        if corners != 0:
            nn = cp_normal[e, k]
            lat = wp.vec3f(-nn[1], nn[0], 0.0)
            ll = wp.length(lat)
            if ll > 0.0:
                lat = lat / ll
            up = wp.cross(nn, lat)
            half_w = cp_half_w[e, k]
            half_h = cp_half_h[e, k]
            _put3(obs_out, a, base + 3, _body(q, p, c + lat * half_w + up * half_h))
            _put3(obs_out, a, base + 6, _body(q, p, c - lat * half_w + up * half_h))
            _put3(obs_out, a, base + 9, _body(q, p, c - lat * half_w - up * half_h))
            _put3(obs_out, a, base + 12, _body(q, p, c + lat * half_w - up * half_h))


class next_checkpoints(CourseTerm):
    """The next ``num`` checkpoints (gates of a gate course) in the body frame.

    Per checkpoint: its centre (3 values), then with ``corners=True`` the four corners of its
    opening (12 values: (+left, +up), (-left, +up), (-left, -up), (+left, -up), ``left`` the
    opening's horizontal axis, ``up`` = normal x left). Shape ``[E, num * (15 if corners else 3)]``.

    The checkpoints are ``next, next + 1, ...`` of the progress component (the one to pass first):
    on a loop they wrap, on a sprint they repeat the last one. Invalid course: zeros.
    Corners are for gate courses (a band-track checkpoint's opening has no finite height).
    Supports K agents per course (each sees its own next checkpoints).
    """

    multi_agent = True

    def check(self, num=2, corners=False):
        _count("num", num)
        if corners and self.mode != "gates":
            raise ValueError("corners=True needs a gate course (a band track's checkpoints have no top or bottom)")

    def out_shape(self, num=2, corners=False):
        return (self.num_envs, int(num) * (15 if corners else 3))

    def launch(self, out, num=2, corners=False):
        ec = self.ec
        self.read()
        cp = ec.course.checkpoints
        wp.launch(next_checkpoints_kernel, dim=ec.num_envs,
                  inputs=[int(num), 0, int(bool(corners)), ec.agents, ec.position, ec.orientation, ec.origin,
                          ec.course.result.valid,
                          cp.pos, cp.normal, cp.half_width, cp.half_height, cp.count, cp.closed,
                          ec.course.progress.next_index],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", num: int = 2, corners: bool = False):
        return self.compute(num=num, corners=corners)


class next_gates(next_checkpoints):
    """:class:`next_checkpoints` of a gate course, corners included by default."""

    modes = ("gates",)

    def __call__(self, env, course_name: str = "course", num: int = 2, corners: bool = True):
        return self.compute(num=num, corners=corners)


@wp.kernel
def track_frame_kernel(
    with_vertical: int,
    s: wp.array(dtype=wp.float32),
    lateral: wp.array(dtype=wp.float32),
    vertical: wp.array(dtype=wp.float32),
    heading: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    obs_out: wp.array2d(dtype=wp.float32),
):
    """[s / length, lateral, sin(heading), cos(heading)] (+ vertical): the localizer's frame."""
    e = wp.tid()
    L = length[e]
    sn = float(0.0)
    if L > 0.0:
        sn = s[e] / L
    obs_out[e, 0] = sn
    obs_out[e, 1] = lateral[e]
    obs_out[e, 2] = wp.sin(heading[e])
    obs_out[e, 3] = wp.cos(heading[e])
    if with_vertical != 0:
        obs_out[e, 4] = vertical[e]


class track_frame(CourseTerm):
    """The localizer's track frame: ``[s / length, lateral, sin(heading), cos(heading)]`` (+ ``vertical``).

    ``s`` is the arc length of the projection on the course line, normalized by the line's length
    (in [0, 1]); ``lateral`` [m] > 0 left of travel; ``heading`` the body yaw minus the line's.
    Shape ``[E, 4]`` (``[E, 5]`` with ``vertical=True``)."""

    def check(self, vertical=False):
        if self.mode == "track" and not self.course_cfg.localizer:
            raise ValueError(f"env.cfg.{self.course_name}.localizer is False: the course has no localizer")

    def out_shape(self, vertical=False):
        return (self.num_envs, 5 if vertical else 4)

    def launch(self, out, vertical=False):
        ec = self.ec
        f = self.read().frame
        line = ec.course.course_line.line
        wp.launch(track_frame_kernel, dim=ec.num_envs,
                  inputs=[int(bool(vertical)), f.s, f.lateral, f.vertical, f.heading, line.length],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", vertical: bool = False):
        return self.compute(vertical=vertical)


@wp.kernel
def track_velocity_kernel(
    vel_w: wp.array(dtype=wp.vec3f),
    segment: wp.array(dtype=wp.int32),
    tangent: wp.array(dtype=wp.vec3f),
    obs_out: wp.array2d(dtype=wp.float32),
):
    """[along, lateral, vertical] speed: ``v . tangent``, ``v . left`` (left = the tangent's horizontal
    direction turned +90 deg about z; 0 on a vertical segment) and ``v.z``; zeros without a frame."""
    e = wp.tid()
    if segment[e] < 0:
        obs_out[e, 0] = 0.0
        obs_out[e, 1] = 0.0
        obs_out[e, 2] = 0.0
        return
    v = vel_w[e]
    t = tangent[e]
    obs_out[e, 0] = wp.dot(v, t)
    obs_out[e, 1] = wp.dot(v, unit_lateral(t))
    obs_out[e, 2] = v[2]


class track_frame_velocity(CourseTerm):
    """The followed entity's linear velocity in the track frame [m/s]: ``[along, lateral, vertical]``.

    ``along`` is the speed along the course line's tangent at the localizer's projection (the rate
    of ``s``), ``lateral`` the horizontal speed to the left of travel (the rate of the localizer's
    ``lateral``), ``vertical`` the world-z speed. The velocity is the root's world-frame linear
    velocity (``root_lin_vel_w``, at the centre of mass). Shape ``[E, 3]``; no frame (invalid
    course): zeros."""

    def check(self):
        if self.mode == "track" and not self.course_cfg.localizer:
            raise ValueError(f"env.cfg.{self.course_name}.localizer is False: the course has no localizer")
        self._vel = None

    def out_shape(self):
        return (self.num_envs, 3)

    def launch(self, out):
        ec = self.ec
        f = self.read().frame
        if self._vel is None:  # first (eager) call: the velocity view's pointer is stable from then on
            self._vel = ec.asset.data.root_lin_vel_w.warp
        wp.launch(track_velocity_kernel, dim=ec.num_envs, inputs=[self._vel, f.segment, f.tangent],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course"):
        return self.compute()


@wp.kernel
def lookahead_kernel(
    pos_w: wp.array(dtype=wp.vec3f),
    quat_w: wp.array(dtype=wp.quatf),
    origin: wp.array(dtype=wp.vec3f),
    frame_s: wp.array(dtype=wp.float32),
    frame_segment: wp.array(dtype=wp.int32),
    points: wp.array2d(dtype=wp.vec3f),
    line_s: wp.array2d(dtype=wp.float32),
    count: wp.array(dtype=wp.int32),
    length: wp.array(dtype=wp.float32),
    closed: wp.array(dtype=wp.int32),
    distances: wp.array(dtype=wp.float32),
    obs_out: wp.array2d(dtype=wp.float32),
):
    """Points of the course line at arc length ``s + d`` for each distance ``d``, in the body frame.

    ``s`` and the starting segment are the localizer's; a loop wraps, an open line stops at its
    ends. An env whose frame is invalid (segment -1) gets zeros."""
    e = wp.tid()
    D = distances.shape[0]
    n = wp.min(count[e], points.shape[1])
    seg = frame_segment[e]
    closed_e = closed[e] != 0
    m = n - 1
    if closed_e:
        m = n
    if seg < 0 or n < 2 or seg >= m:
        for j in range(3 * D):
            obs_out[e, j] = 0.0
        return
    p = pos_w[e] - origin[e]
    q = quat_w[e]
    L = length[e]
    for i in range(D):
        target = frame_s[e] + distances[i]
        j = seg
        t = float(0.0)
        if closed_e:
            if L > 0.0:
                target = target - L * wp.floor(target / L)
            # walk forwards (cyclically) to the segment holding target
            for _k in range(n + 1):
                s0 = line_s[e, j]
                s1 = L
                if j + 1 < n:
                    s1 = line_s[e, j + 1]
                if target >= s0 and target <= s1:
                    break
                j = (j + 1) % n
        else:
            end = line_s[e, n - 1]
            target = wp.clamp(target, 0.0, end)
            while j > 0 and target < line_s[e, j]:
                j = j - 1
            while j < n - 2 and target > line_s[e, j + 1]:
                j = j + 1
        s0 = line_s[e, j]
        s1 = L
        if j + 1 < n:
            s1 = line_s[e, j + 1]
        a = points[e, j]
        b = points[e, (j + 1) % n]
        if s1 > s0:
            t = wp.clamp((target - s0) / (s1 - s0), 0.0, 1.0)
        _put3(obs_out, e, 3 * i, _body(q, p, a + (b - a) * t))


class lookahead_points(CourseTerm):
    """Points of the course line ``distances`` [m] ahead of the robot's projection, in the **body
    frame** (the followed entity's root frame: x forward, y left, z up of the body, origin at its root).

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
        self._distances = None

    def out_shape(self, distances=(1.0, 2.0, 3.0)):
        return (self.num_envs, 3 * len(self._distances_host))

    def launch(self, out, distances=(1.0, 2.0, 3.0)):
        ec = self.ec
        f = self.read().frame
        if self._distances is None:  # first (eager) call: allocate outside any capture
            self._distances = wp.array(self._distances_host, dtype=wp.float32, device=ec.device)
        line = ec.course.course_line.line
        wp.launch(lookahead_kernel, dim=ec.num_envs,
                  inputs=[ec.position, ec.orientation, ec.origin, f.s, f.segment, line.points, line.s, line.count,
                          line.length, line.closed, self._distances],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", distances: tuple = (1.0, 2.0, 3.0)):
        return self.compute(distances=distances)


@wp.kernel
def lap_progress_kernel(
    scale: float,
    progress: wp.array(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    obs_out: wp.array2d(dtype=wp.float32),
):
    """progress / lap length * scale (laps since reset, continuous); 0 without a course."""
    e = wp.tid()
    L = length[e]
    v = float(0.0)
    if L > 0.0:
        v = progress[e] / L * scale
    obs_out[e, 0] = v


class lap_progress(CourseTerm):
    """Distance along the course since reset in laps (``progress / lap length``), divided by
    ``laps`` when given (1.0 = the target number of laps done). Shape ``[E, 1]``; 0 without a course."""

    def check(self, laps=None):
        if laps is not None and (isinstance(laps, bool) or not isinstance(laps, numbers.Real) or not laps > 0):
            raise ValueError(f"laps: expected None or a number > 0, got {laps!r}")

    def out_shape(self, laps=None):
        return (self.num_envs, 1)

    def launch(self, out, laps=None):
        ec = self.ec
        res = self.read()
        scale = 1.0 if laps is None else 1.0 / float(laps)
        wp.launch(lap_progress_kernel, dim=ec.num_envs,
                  inputs=[scale, res.events.progress, ec.course.checkpoints.length], outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", laps: float | None = None):
        return self.compute(laps=laps)
