"""Reward terms (stable runtime): the course's per-step events as [E] float32.

Each returns a non-negative magnitude (or the signed progress); give penalties a negative
``weight``. Isaac Lab multiplies by ``weight * step_dt``. They read the StepResult of the current
env step (the course is stepped by its first reader, see :mod:`track_gen_isaac.env_course`).
"""

from __future__ import annotations

import math
import numbers

import torch
import warp as wp

from track_gen_isaac import kernels as K
from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["progress_delta", "checkpoint_passed", "lap_completed", "collision_penalty", "off_track_penalty",
           "wrong_way_penalty", "off_track_mask", "off_track_args"]


class progress_delta(CourseTerm):
    """Distance gained along the course this step [m] (``events.delta``; negative when going back),
    clipped to ``[-clip, clip]`` when ``clip`` is given."""

    def check(self, clip=None):
        if clip is not None and (isinstance(clip, bool) or not isinstance(clip, numbers.Real) or not clip > 0):
            raise ValueError(f"clip: expected None or a number > 0 [m], got {clip!r}")

    def __call__(self, env, course_name: str = "course", clip: float | None = None):
        ec = self.ec
        d = ec.torch(ec.step().events.delta)
        return d.clone() if clip is None else d.clamp(-float(clip), float(clip))


class checkpoint_passed(CourseTerm):
    """Checkpoints (gates) passed this step (``events.passed``; a fast body may pass several)."""

    def __call__(self, env, course_name: str = "course"):
        ec = self.ec
        return ec.torch(ec.step().events.passed).to(torch.float32)


class lap_completed(CourseTerm):
    """1 on the step that completes a lap (or finishes a sprint) (``events.lap``)."""

    def __call__(self, env, course_name: str = "course"):
        ec = self.ec
        return ec.torch(ec.step().events.lap).to(torch.float32)


class collision_penalty(CourseTerm):
    """1 while the robot's box touches an obstacle of the course (``contacts.hit``), or the
    penetration depth [m] with ``depth=True``. Needs ``CourseCfg.collision``."""

    def check(self, depth=False):
        if self.course_cfg.collision is None:
            raise ValueError(f"env.cfg.{self.course_name}.collision is None: the course has no collision component")

    def __call__(self, env, course_name: str = "course", depth: bool = False):
        ec = self.ec
        c = ec.step().contacts
        return ec.torch(c.depth).clone() if depth else ec.torch(c.hit).to(torch.float32)


def _check_off_track(term, margin, max_distance):
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not math.isfinite(margin):
        raise ValueError(f"margin: expected a finite number [m], got {margin!r}")
    if term.mode == "track" and not term.course_cfg.localizer:
        raise ValueError(f"env.cfg.{term.course_name}.localizer is False: off-track needs the localizer")
    if term.mode == "gates":
        if max_distance is None:
            raise ValueError("a gate course has no band: pass max_distance (distance from the course line [m])")
        if isinstance(max_distance, bool) or not isinstance(max_distance, numbers.Real) or not max_distance > 0:
            raise ValueError(f"max_distance: expected a number > 0 [m], got {max_distance!r}")


def off_track_args(ec, margin: float = 0.0, max_distance: float | None = None) -> list:
    """Launch inputs of :func:`track_gen_isaac.kernels.off_track_kernel` for this course."""
    f = ec.result.frame
    line = ec.course.course_line.line
    gates = ec.mode == "gates"
    hw = ec.course.result.half_width if not gates else ec.buffer("no_half_width", (ec.num_envs, 1))
    return [int(gates), f.s, f.lateral, f.distance, f.segment, line.s, line.length, hw, float(margin),
            float(max_distance) if max_distance is not None else 0.0]


def off_track_mask(ec, margin: float = 0.0, max_distance: float | None = None) -> torch.Tensor:
    """[E] bool: track: ``|lateral| > half width at s + margin``; gates: ``distance > max_distance``.
    False without a frame (invalid course)."""
    ec.step()
    out = ec.buffer(("off_track", float(margin), max_distance), ec.num_envs, wp.bool)
    wp.launch(K.off_track_kernel, dim=ec.num_envs, inputs=off_track_args(ec, margin, max_distance), outputs=[out],
              device=ec.device)
    return ec.torch(out).clone()


class off_track_penalty(CourseTerm):
    """1 while the robot is off the course: a band track: ``|lateral|`` beyond the band's half width
    (interpolated at ``s``) plus ``margin``; a gate course: farther than ``max_distance`` [m] from
    the course line."""

    def check(self, margin=0.0, max_distance=None):
        _check_off_track(self, margin, max_distance)

    def __call__(self, env, course_name: str = "course", margin: float = 0.0, max_distance: float | None = None):
        return off_track_mask(self.ec, margin, max_distance).to(torch.float32)


class wrong_way_penalty(CourseTerm):
    """1 on a step that crosses the checkpoint behind backwards (``events.wrong_way``)."""

    def __call__(self, env, course_name: str = "course"):
        ec = self.ec
        return ec.torch(ec.step().events.wrong_way).to(torch.float32)
