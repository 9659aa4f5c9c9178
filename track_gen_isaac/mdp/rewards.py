"""Reward terms (stable runtime): the course's per-step events as [E] float32.

Each returns a non-negative magnitude (or the signed progress); give penalties a negative
``weight``. Isaac Lab multiplies by ``weight * step_dt``. They read the StepResult of the current
env step (the course is stepped by its first reader, see :mod:`track_gen_isaac.env_course`); each
term's :meth:`launch` (one kernel, shared with the warp twin) writes its value.
"""

from __future__ import annotations

import numbers

import warp as wp

from track_gen_isaac.mdp._base import CourseTerm
from track_gen_isaac.mdp._off_track import OffTrackTerm

__all__ = ["progress_delta", "progress_rate", "checkpoint_passed", "lap_completed", "collision_penalty",
           "clearance_penalty", "off_track_penalty", "wrong_way_penalty"]

wp.set_module_options({"enable_backward": False})


@wp.kernel
def copy_float_kernel(clip: float, use_clip: int, src: wp.array(dtype=wp.float32),
                      reward_out: wp.array(dtype=wp.float32)):
    """out = src, clamped to [-clip, clip] with ``use_clip`` (NaN stays NaN, as ``torch.clamp``)."""
    e = wp.tid()
    v = src[e]
    if use_clip != 0 and not wp.isnan(v):
        v = wp.clamp(v, -clip, clip)
    reward_out[e] = v


class progress_delta(CourseTerm):
    """Distance gained along the course this step [m] (``events.delta``; negative when going back),
    clipped to ``[-clip, clip]`` when ``clip`` is given."""

    multi_agent = True  # per-agent results only

    def check(self, clip=None):
        if clip is not None and (isinstance(clip, bool) or not isinstance(clip, numbers.Real) or not clip > 0):
            raise ValueError(f"clip: expected None or a number > 0 [m], got {clip!r}")

    def launch(self, out, clip=None):
        ec = self.ec
        wp.launch(copy_float_kernel, dim=ec.num_envs,
                  inputs=[float(clip or 0.0), int(clip is not None), self.read().events.delta],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", clip: float | None = None):
        return self.compute(clip=clip)


@wp.kernel
def rate_kernel(inv_dt: float, clip: float, use_clip: int, src: wp.array(dtype=wp.float32),
                reward_out: wp.array(dtype=wp.float32)):
    """out = src / dt, clamped to [-clip, clip] with ``use_clip`` (NaN stays NaN)."""
    e = wp.tid()
    v = src[e] * inv_dt
    if use_clip != 0 and not wp.isnan(v):
        v = wp.clamp(v, -clip, clip)
    reward_out[e] = v


@wp.kernel
def rate_leg_kernel(inv_dt: float, clip: float, use_clip: int, leg_accel: float, agents: int,
                    valid: wp.array(dtype=wp.int32), cp_pos: wp.array2d(dtype=wp.vec3f),
                    cp_count: wp.array(dtype=wp.int32), cp_closed: wp.array(dtype=wp.int32),
                    next_index: wp.array(dtype=wp.int32), src: wp.array(dtype=wp.float32),
                    reward_out: wp.array(dtype=wp.float32)):
    """out = src / dt clamped to [-cap, cap]: cap = sqrt(leg_accel * leg), ``leg`` the distance from
    the next checkpoint to the one after it (on a loop the one after wraps; on a one-pass course
    the last checkpoint has none), and at most ``clip`` with ``use_clip``. No leg and no clip: not
    clamped. One thread per agent, reading its race's course (``a // agents``)."""
    a = wp.tid()
    e = a // agents
    v = src[a] * inv_dt
    cap = float(0.0)
    capped = int(0)
    if use_clip != 0:
        cap = clip
        capped = 1
    n = wp.min(cp_count[e], cp_pos.shape[1])
    k = next_index[a]
    if valid[e] != 0 and n >= 2 and k >= 0 and k < n:
        k2 = k + 1
        if cp_closed[e] != 0:
            k2 = k2 % n
        if k2 < n:
            c = wp.sqrt(leg_accel * wp.length(cp_pos[e, k2] - cp_pos[e, k]))
            if capped == 0 or c < cap:
                cap = c
            capped = 1
    if capped != 0 and not wp.isnan(v):
        v = wp.clamp(v, -cap, cap)
    reward_out[a] = v


class progress_rate(CourseTerm):
    """Speed along the course [m/s]: the distance gained this step (``events.delta``) divided by the
    env step ``env.step_dt`` (``sim.dt * decimation``); negative when going back, clipped to
    ``[-clip, clip]`` [m/s] when ``clip`` is given. Isaac Lab multiplies a reward by ``weight * dt``,
    so an episode's sum is ``weight`` per metre whatever the control dt (with
    :class:`progress_delta` it is ``weight * dt`` per metre).

    ``leg_accel`` [m/s^2] also caps the rate by the course ahead: at ``sqrt(leg_accel * leg)``, ``leg``
    the distance from the next checkpoint to the one after it -- the speed of a turn of radius ``leg``
    at lateral acceleration ``leg_accel``. Where the gates after the next one are close (a lab
    arena's hairpin half a metre behind a gate) flying faster earns nothing, so the policy is not
    paid to arrive at a gate too fast to make the turn behind it; long legs (a sprint) keep their
    speed. A heuristic of the reward, not a limit of the vehicle: the time-optimal objective holds
    where the cap is above the speed flown."""

    multi_agent = True  # per-agent results only

    def check(self, clip=None, leg_accel=None):
        if clip is not None and (isinstance(clip, bool) or not isinstance(clip, numbers.Real) or not clip > 0):
            raise ValueError(f"clip: expected None or a number > 0 [m/s], got {clip!r}")
        if leg_accel is not None and (isinstance(leg_accel, bool) or not isinstance(leg_accel, numbers.Real)
                                      or not leg_accel > 0):
            raise ValueError(f"leg_accel: expected None or a number > 0 [m/s^2], got {leg_accel!r}")
        dt = float(self._env.step_dt)
        if not dt > 0:
            raise ValueError(f"the env step dt (sim.dt * decimation) is {dt!r}; progress_rate needs it > 0")
        self._inv_dt = 1.0 / dt

    def launch(self, out, clip=None, leg_accel=None):
        ec = self.ec
        delta = self.read().events.delta
        if leg_accel is None:
            wp.launch(rate_kernel, dim=ec.num_envs, inputs=[self._inv_dt, float(clip or 0.0), int(clip is not None), delta],
                      outputs=[out], device=ec.device)
            return
        cp = ec.course.checkpoints
        wp.launch(rate_leg_kernel, dim=ec.num_envs,
                  inputs=[self._inv_dt, float(clip or 0.0), int(clip is not None), float(leg_accel), ec.agents,
                          ec.course.result.valid, cp.pos, cp.count, cp.closed, ec.course.progress.next_index, delta],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", clip: float | None = None, leg_accel: float | None = None):
        return self.compute(clip=clip, leg_accel=leg_accel)


@wp.kernel
def int_to_float_kernel(src: wp.array(dtype=wp.int32), reward_out: wp.array(dtype=wp.float32)):
    e = wp.tid()
    reward_out[e] = float(src[e])


class _event_count(CourseTerm):
    """An int per-step event of the course (``events.<event>``) as float32."""

    multi_agent = True  # per-agent results only

    event = ""

    def launch(self, out):
        ec = self.ec
        wp.launch(int_to_float_kernel, dim=ec.num_envs, inputs=[getattr(self.read().events, self.event)],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course"):
        return self.compute()


class checkpoint_passed(_event_count):
    """Checkpoints (gates) passed this step (``events.passed``; a fast body may pass several)."""

    event = "passed"


class lap_completed(_event_count):
    """1 on the step that completes a lap (or finishes a sprint) (``events.lap``)."""

    event = "lap"


class collision_penalty(CourseTerm):
    """1 while the robot's box touches an obstacle of the course (``contacts.hit``), or the
    penetration depth [m] with ``depth=True``. Needs ``CourseCfg.collision``."""

    multi_agent = True  # per-agent results only

    def check(self, depth=False):
        if self.course_cfg.collision is None:
            raise ValueError(f"env.cfg.{self.course_name}.collision is None: the course has no collision component")

    def launch(self, out, depth=False):
        ec = self.ec
        c = self.read().contacts
        if depth:
            wp.launch(copy_float_kernel, dim=ec.num_envs, inputs=[0.0, 0, c.depth], outputs=[out], device=ec.device)
        else:
            wp.launch(int_to_float_kernel, dim=ec.num_envs, inputs=[c.hit], outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", depth: bool = False):
        return self.compute(depth=depth)


@wp.kernel
def clearance_kernel(inv_margin: float, clearance: wp.array(dtype=wp.float32), reward_out: wp.array(dtype=wp.float32)):
    """out = clamp(1 - clearance / margin, 0, 1); a non-finite clearance (non-finite pose) reads 1."""
    e = wp.tid()
    v = 1.0 - clearance[e] * inv_margin
    if wp.isnan(v):
        v = 1.0
    reward_out[e] = wp.clamp(v, 0.0, 1.0)


class clearance_penalty(CourseTerm):
    """How far inside a safety margin of the nearest obstacle the robot's box is: ``clamp(1 -
    clearance / margin, 0, 1)`` (``contacts.clearance``, the exact signed distance to the nearest
    gate bar / obstacle): 0 beyond ``margin`` [m], rising linearly to 1 at contact (and 1 while
    touching, or for a non-finite pose). A shaping term: it asks the policy to pass gates with room
    to spare, so a small error in the plant (or the nominal plant at the edge of the randomized
    ones) does not turn a close pass into a crash. Needs ``CourseCfg.collision``."""

    multi_agent = True  # per-agent results only

    def check(self, margin=0.2):
        if self.course_cfg.collision is None:
            raise ValueError(f"env.cfg.{self.course_name}.collision is None: the course has no collision component")
        if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not 0.0 < margin < 1e6:
            raise ValueError(f"margin: expected a distance in (0, 1e6) [m], got {margin!r}")

    def launch(self, out, margin=0.2):
        ec = self.ec
        wp.launch(clearance_kernel, dim=ec.num_envs, inputs=[1.0 / float(margin), self.read().contacts.clearance],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", margin: float = 0.2):
        return self.compute(margin=margin)


class off_track_penalty(OffTrackTerm):
    """1 while the robot is off the course: a band track: ``|lateral|`` beyond the band's half width
    (interpolated at ``s``) plus ``margin``; a gate course: farther than ``max_distance`` [m] from
    the course line."""

    def __call__(self, env, course_name: str = "course", margin: float = 0.0, max_distance: float | None = None):
        return self.compute(margin=margin, max_distance=max_distance)


class wrong_way_penalty(_event_count):
    """1 on a step that crosses the checkpoint behind backwards (``events.wrong_way``)."""

    event = "wrong_way"
