"""Reset events (stable runtime): new courses for the reset envs, then the robot onto them.

Isaac Lab applies reset events in the order the events cfg declares them, after
``scene.reset(env_ids)`` and the curriculum. Declare, for one course:

1. :class:`regenerate_course` (or :class:`reset_course` to keep the course): the masked
   regeneration, which also resets every component's per-env state (progress, localizer...)
   of the reset envs;
2. then :class:`place_at_course_start`, :class:`place_at_checkpoint` or
   :class:`place_at_start_or_checkpoint`: they read the *new* course's start / checkpoints, and a
   checkpoint placement marks the drawn checkpoint as passed in the (already reset) progress state;
3. after any other event that writes the same entity's root pose (a later one would move the
   robot off the course).

A place event declared before a regeneration of the same course is refused at its first call
(ValueError naming both terms). ``env_ids`` is ``slice(None)`` on ``env.reset()`` and an int
tensor inside ``env.step()``; both become the course's one preallocated int32 mask, so the
course replays one recorded regeneration graph whatever the ids.
"""

from __future__ import annotations

import math
import warnings

import torch
import warp as wp

from track_gen.rng import name_key, stream_state
from track_gen_isaac.env_course import _jitter
from track_gen_isaac.mdp._base import CourseTerm

__all__ = ["regenerate_course", "reset_course", "place_at_course_start", "place_at_checkpoint",
           "place_at_start_or_checkpoint", "split_start_kernel"]

_SPLIT_KEY = wp.constant(name_key("place_at_start_or_checkpoint"))


class regenerate_course(CourseTerm):
    """New courses for the reset envs (``advance=True``: the next generation; ``False``: rebuild the
    current one, e.g. after a curriculum change). Every other env's course is untouched, byte for byte.
    With K agents per course, the races of the reset envs (all their agents)."""

    multi_agent = True

    def __call__(self, env, env_ids, course_name: str = "course", advance: bool = True):
        self.ec.regenerate(env_ids, advance=advance)


class reset_course(CourseTerm):
    """Restart the reset envs' episode on the same course (progress, localizer... back to the start).
    With K agents per course, the races of the reset envs."""

    multi_agent = True

    def __call__(self, env, env_ids, course_name: str = "course"):
        self.ec.reset_course(env_ids)


def reset_order(env, term, course_name: str, resetter_types) -> tuple[str | None, list[str], list[str]]:
    """Where ``term`` stands among the reset events: (its name or None when not declared, the
    names of ``resetter_types`` events of ``course_name`` declared after it, all such names)."""
    em = env.event_manager
    mine, resetters = None, []
    for i, name in enumerate(em.active_terms.get("reset", [])):
        tc = em.get_term_cfg(name)
        f = tc.func
        if f is term:
            mine = (i, name)
        elif isinstance(f, type) and issubclass(f, resetter_types) or isinstance(f, resetter_types):
            if tc.params.get("course_name", "course") == course_name:
                resetters.append((i, name))
    if mine is None:
        return None, [], [n for _, n in resetters]
    return mine[1], [n for i, n in resetters if i > mine[0]], [n for _, n in resetters]


class _place(CourseTerm):
    """Writes the followed entity's root pose (env frame + env origins) and zero velocity."""

    _RESETTERS = (regenerate_course, reset_course)

    def check(self, jitter=(0.0, 0.0, 0.0), z_offset=None):
        _jitter(jitter)
        if z_offset is not None and (isinstance(z_offset, bool) or not isinstance(z_offset, (int, float))
                                     or not math.isfinite(z_offset)):
            raise ValueError(f"z_offset: expected None or a finite number [m], got {z_offset!r}")
        self._order_checked = False

    def z_of(self, z_offset) -> float:
        """The height added to the course pose [m]: ``z_offset``, or when None ``CourseCfg.half_height``
        on a track course (the robot's box stands on the ground) and 0 on a gate course."""
        if z_offset is not None:
            return float(z_offset)
        return float(self.course_cfg.half_height) if self.mode == "track" else 0.0

    def _check_order(self, env) -> None:
        """Refuse a place event declared before a regeneration / reset of the same course."""
        self._order_checked = True
        mine, late, resetters = reset_order(env, self, self.course_name, self._RESETTERS)
        if mine is None:
            return
        if late:
            raise ValueError(
                f"reset event {mine!r} ({type(self).__name__}) is declared before {late} of the same course: "
                f"reset events run in declaration order, so the robot would be placed on the old course. "
                f"Declare {late[0]!r} first in the events cfg"
            )
        if not resetters:
            warnings.warn(
                f"reset event {mine!r} ({type(self).__name__}) places the robot on course {self.course_name!r}, "
                f"but no regenerate_course / reset_course event resets that course: its progress state carries over "
                f"from the previous episode",
                UserWarning, stacklevel=3,
            )

    def _write(self, env, env_ids, z_offset: float) -> None:
        """The pose the course wrote (``pose_pos`` / ``pose_yaw``) onto the robot, with the asset's writers."""
        ec = self.ec
        ec.root_poses(ec.mask, z_offset)
        idx = slice(None) if env_ids is None else env_ids
        if not isinstance(idx, slice):
            idx = torch.as_tensor(idx, device=ec.mask_t.device).to(torch.long)
        pose = ec.torch(ec.root_pose)[idx]
        asset = ec.asset
        asset.write_root_pose_to_sim_index(root_pose=pose, env_ids=env_ids)
        asset.write_root_velocity_to_sim_index(root_velocity=ec.torch(ec.root_velocity)[idx], env_ids=env_ids)
        ec.stale = True


class place_at_course_start(_place):
    """Put the robot at its course's start pose, facing the start heading, plus uniform ``jitter``
    half ranges ``(lateral [m], vertical [m], yaw [rad])`` (lateral along the start's left axis) and
    ``z_offset`` [m] up. The start pose is at ground level on a flat band track (on the centerline
    of an elevated one) and at the gate centres' height on a gate course; the robot's root goes
    ``z_offset`` above it. ``z_offset=None`` (default): ``CourseCfg.half_height`` on a track course,
    so a ground robot's box stands on the ground instead of starting half inside it, and 0 on a
    gate course. Draws are per env and counter based (independent of which other envs reset).
    Velocity is zeroed."""

    def __call__(self, env, env_ids, course_name: str = "course", jitter: tuple = (0.0, 0.0, 0.0),
                 z_offset: float | None = None):
        if not self._order_checked:
            self._check_order(env)
        self.ec.start_poses(self.ec.set_mask(env_ids), jitter)
        self._write(env, env_ids, self.z_of(z_offset))


class place_at_checkpoint(_place):
    """Put the robot on a random checkpoint of its course (uniform over the env's checkpoints, via
    ``course.checkpoint_sampler``), facing its direction of passage, plus ``jitter`` /
    ``z_offset`` as :class:`place_at_course_start`. The drawn checkpoint counts as passed
    (``progress.start_at``), so the next one is the target. An env without checkpoints (invalid
    course) gets its start pose. The checkpoint's pose is at ground level on a flat band track and
    at the gate's centre on a gate course; ``z_offset`` (None: ``CourseCfg.half_height`` on a track,
    0 on gates) is added as for :class:`place_at_course_start`."""

    def __call__(self, env, env_ids, course_name: str = "course", jitter: tuple = (0.0, 0.0, 0.0),
                 z_offset: float | None = None):
        if not self._order_checked:
            self._check_order(env)
        self.ec.checkpoint_poses(self.ec.set_mask(env_ids), jitter)
        self._write(env, env_ids, self.z_of(z_offset))


@wp.kernel
def split_start_kernel(
    # parameters
    share: float,
    corner_share: float,
    # inputs
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    # outputs
    counter_out: wp.array(dtype=wp.int32),
    start_out: wp.array(dtype=wp.int32),
    checkpoint_out: wp.array(dtype=wp.int32),
    corner_out: wp.array(dtype=wp.int32),
):
    """Split the masked envs: each goes to its course start with probability ``share``, before its
    tightest turn with probability ``corner_share``, else to a random checkpoint (one uniform draw
    ``u``: start below ``share``, corner below ``share + corner_share``; with ``corner_share`` 0 the
    split is the two-way one, draw for draw). Counter-based draws per env (independent of which other
    envs reset)."""
    e = wp.tid()
    start_out[e] = 0
    checkpoint_out[e] = 0
    corner_out[e] = 0
    if active[e] == 0:
        return
    c = counter_out[e] + 1
    counter_out[e] = c
    u = wp.randf(stream_state(seeds[e], c, _SPLIT_KEY, 0))
    if u < share:
        start_out[e] = 1
    elif u < share + corner_share:
        corner_out[e] = 1
    else:
        checkpoint_out[e] = 1


def check_share(share) -> float:
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= float(share) <= 1.0:
        raise ValueError(f"start_share: expected a number in [0, 1], got {share!r}")
    return float(share)


class place_at_start_or_checkpoint(_place):
    """A mix of the placements: each reset env starts at its course start with probability
    ``start_share`` (plus ``start_jitter``: a standing start, a take-off where the course starts on
    the ground) and otherwise on a random checkpoint (plus ``jitter``), as :class:`place_at_course_start`
    and :class:`place_at_checkpoint` do. Draws are per env and counter based.

    ``corner_share`` (band tracks; 0 by default, which changes nothing): that share of the resets
    starts on the checkpoint a uniform ``corner_lead`` = (min, max) metres of arc length before the
    track's tightest turn (plus ``jitter``), so the corner a lap is most often lost at is practised
    as often as the policy needs, not once per lap at best. ``start_share + corner_share <= 1``.
    ``corner_power`` (None: the tightest turn): instead, before a centre-line point drawn with
    probability proportional to ``|curvature|^corner_power`` -- every tight turn of the track, the
    tighter the likelier. ``corner_brake`` [m/s^2] (None: at rest): corner starts at speed, drawn
    uniformly up to the speed from which braking at ``corner_brake`` over the lead meets the turn at
    ``sqrt(corner_brake / |curvature|)`` (what a point mass with that grip turns it at), so the braking
    into the corner is practised too, not only the turn from a standstill. The robot's root gets that
    velocity along its heading (a car action term starts its dynamics from it)."""

    def check(self, start_share=0.25, jitter=(0.0, 0.0, 0.0), start_jitter=(0.0, 0.0, 0.0), z_offset=None,
              corner_share=0.0, corner_lead=(2.0, 10.0), corner_power=None, corner_brake=None):
        check_share(start_share)
        if isinstance(corner_share, bool) or not isinstance(corner_share, (int, float)) \
                or not 0.0 <= float(corner_share) <= 1.0 - float(start_share):
            raise ValueError(f"corner_share: expected a number in [0, 1 - start_share] = [0, {1.0 - start_share:g}], "
                             f"got {corner_share!r}")
        try:
            lo, hi = (float(v) for v in corner_lead)
        except (TypeError, ValueError):
            raise ValueError(f"corner_lead: expected (min, max) distances [m], got {corner_lead!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 <= lo <= hi):
            raise ValueError(f"corner_lead: expected finite 0 <= min <= max [m], got {corner_lead!r}")
        if corner_power is not None and (isinstance(corner_power, bool) or not isinstance(corner_power, (int, float))
                                         or not math.isfinite(corner_power) or corner_power < 0):
            raise ValueError(f"corner_power: expected None (the tightest turn) or a finite number >= 0, "
                             f"got {corner_power!r}")
        if corner_brake is not None and (isinstance(corner_brake, bool) or not isinstance(corner_brake, (int, float))
                                         or not math.isfinite(corner_brake) or corner_brake <= 0):
            raise ValueError(f"corner_brake: expected None (corner starts at rest) or a finite deceleration > 0 "
                             f"[m/s^2], got {corner_brake!r}")
        if corner_share > 0 and self.mode != "track":
            raise ValueError(f"corner_share: course {self.course_name!r} is a {self.mode} course; starts before the "
                             f"tightest turn need a band track")
        _jitter(start_jitter)
        super().check(jitter, z_offset)

    def split(self, mask, share: float, corner_share: float = 0.0):
        """(start, checkpoint, corner) masks of the envs (races) of ``mask``: the course's [R] int32 split arrays."""
        ec = self.ec
        wp.launch(split_start_kernel, dim=ec.num_races,
                  inputs=[float(share), float(corner_share), mask, ec.course.seeds.seeds],
                  outputs=[ec.split_counter, ec.start_mask, ec.checkpoint_mask, ec.corner_mask], device=ec.device)
        return ec.start_mask, ec.checkpoint_mask, ec.corner_mask

    def place(self, mask, start_share, jitter, start_jitter, corner_share=0.0, corner_lead=(2.0, 10.0),
              corner_power=None, corner_brake=None) -> None:
        start, ckpt, corner = self.split(mask, start_share, corner_share)
        self.ec.start_poses(start, start_jitter)
        self.ec.checkpoint_poses(ckpt, jitter)
        if corner_share > 0:
            self.ec.corner_poses(corner, corner_lead, jitter, corner_power, corner_brake)

    def __call__(self, env, env_ids, course_name: str = "course", start_share: float = 0.25,
                 jitter: tuple = (0.0, 0.0, 0.0), start_jitter: tuple = (0.0, 0.0, 0.0), z_offset: float | None = None,
                 corner_share: float = 0.0, corner_lead: tuple = (2.0, 10.0), corner_power: float | None = None,
                 corner_brake: float | None = None):
        if not self._order_checked:
            self._check_order(env)
        self.place(self.ec.set_mask(env_ids), start_share, jitter, start_jitter, corner_share, corner_lead,
                   corner_power, corner_brake)
        self._write(env, env_ids, self.z_of(z_offset))

