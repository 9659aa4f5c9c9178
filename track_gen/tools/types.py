"""Result types shared by the built-in components (all fields are stable ``wp.array`` buffers).

E envs, C checkpoint slots, N course-line points. Positions in the env frame [m], z up.
"""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

__all__ = ["AgentContactsResult", "CheckpointArrays", "CheckpointSet", "CourseLine", "ProgressEvents", "Contacts",
           "StandingsResult", "TrackFrame", "checkpoint_arrays"]


@dataclass
class CheckpointSet:
    """Per-generation checkpoints: planes to cross, each with a rectangular opening.

    A checkpoint is *passed* when a step's segment crosses its plane in the direction of
    ``normal`` inside the opening (|lateral| <= half_width, |vertical| <= half_height, measured
    in the plane, lateral axis = normalize(cross(z, normal))).
    """

    pos: wp.array
    """[E, C] vec3f centre of each checkpoint opening; rows >= count are zero."""
    normal: wp.array
    """[E, C] vec3f unit direction of passage."""
    half_width: wp.array
    """[E, C] float32 lateral half extent of the opening."""
    half_height: wp.array
    """[E, C] float32 vertical half extent of the opening (large for a flat band track)."""
    s: wp.array
    """[E, C] float32 arc length of the checkpoint along the course line."""
    count: wp.array
    """[E] int32 checkpoints in use."""
    length: wp.array
    """[E] float32 lap length along the course line (a sprint: its length)."""
    closed: wp.array
    """[E] int32, 1 for a loop (checkpoint count-1 is followed by checkpoint 0), 0 for a sprint."""


@wp.struct
class CheckpointArrays:
    """A :class:`CheckpointSet`'s arrays as one kernel argument (the checkpoint components write
    it as ``checkpoints_out``; Progress reads it as ``checkpoints``)."""

    pos: wp.array2d(dtype=wp.vec3f)
    normal: wp.array2d(dtype=wp.vec3f)
    half_width: wp.array2d(dtype=wp.float32)
    half_height: wp.array2d(dtype=wp.float32)
    s: wp.array2d(dtype=wp.float32)
    count: wp.array(dtype=wp.int32)
    length: wp.array(dtype=wp.float32)
    closed: wp.array(dtype=wp.int32)


def checkpoint_arrays(cps: CheckpointSet) -> CheckpointArrays:
    """The :class:`CheckpointArrays` of ``cps`` (the same buffers, not copies)."""
    a = CheckpointArrays()
    a.pos, a.normal, a.half_width, a.half_height = cps.pos, cps.normal, cps.half_width, cps.half_height
    a.s, a.count, a.length, a.closed = cps.s, cps.count, cps.length, cps.closed
    return a


@dataclass
class CourseLine:
    """A polyline along the course, for progress and the localizer."""

    points: wp.array
    """[E, N] vec3f points in order of travel; rows >= count are unused."""
    tangent: wp.array
    """[E, N] vec3f unit tangent of the segment leaving each point."""
    s: wp.array
    """[E, N] float32 arc length at each point (s[0] = 0)."""
    count: wp.array
    """[E] int32 points in use."""
    length: wp.array
    """[E] float32 total length (the closing segment included when closed)."""
    closed: wp.array
    """[E] int32, 1 when the last point connects back to the first."""


@dataclass
class ProgressEvents:
    """Per-step progress (``StepResult.events``); every field [E], reset per env."""

    next: wp.array
    """int32 index of the next checkpoint to pass."""
    passed: wp.array
    """int32 checkpoints passed this step (a fast body can pass several)."""
    missed: wp.array
    """int32 1 when this step crossed the next checkpoint's plane outside its opening."""
    wrong_way: wp.array
    """int32 1 when this step crossed a checkpoint plane against its normal."""
    lap: wp.array
    """int32 1 when this step completed a lap (or finished a sprint)."""
    laps: wp.array
    """int32 laps completed since reset."""
    total: wp.array
    """int32 checkpoints passed since reset."""
    progress: wp.array
    """float32 distance travelled along the course since reset [m] (laps included)."""
    delta: wp.array
    """float32 change of ``progress`` during this step [m]."""


@dataclass
class Contacts:
    """Per-step collision result (``StepResult.contacts``); every field [E]."""

    hit: wp.array
    """int32 1 when the body touches or penetrates an obstacle."""
    depth: wp.array
    """float32 penetration depth [m] (0 without contact)."""
    clearance: wp.array
    """float32 signed distance to the nearest obstacle [m] (< 0: penetrating)."""
    normal: wp.array
    """vec3f unit direction that pushes the body out of the nearest obstacle."""
    index: wp.array
    """int32 index of the nearest obstacle (segment, post or gate), -1 when none."""


@dataclass
class TrackFrame:
    """Per-step pose in the course frame (``StepResult.frame``); every field [E]."""

    s: wp.array
    """float32 arc length of the projection on the course line [m]."""
    lateral: wp.array
    """float32 signed horizontal offset from the line, > 0 to the left of travel [m]."""
    vertical: wp.array
    """float32 height above the line [m]."""
    heading: wp.array
    """float32 body yaw minus the line's heading, wrapped to [-pi, pi) [rad]."""
    tangent: wp.array
    """vec3f unit tangent of the line at the projection."""
    segment: wp.array
    """int32 index of the segment holding the projection."""
    distance: wp.array
    """float32 3D distance to the line [m]."""


@dataclass
class AgentContactsResult:
    """Per-step proximity of the agents of one env (``res["agent_contacts"]``); every field [E*K]."""

    contact: wp.array
    """int32 1 when another agent of the same env is within ``2 * radius`` (centre to centre)."""
    distance: wp.array
    """float32 distance to the nearest other agent of the env [m] (``FAR`` = 1e6 when there is none)."""
    index: wp.array
    """int32 global index ``e*K + k'`` of that agent, -1 when there is none (always with K = 1)."""


@dataclass
class StandingsResult:
    """Per-step race order of the agents of one env (``res["standings"]``); every field [E*K]."""

    rank: wp.array
    """int32 place in the env's race, 0 = leading: by laps, then checkpoints passed, then position
    along the course line; ties go to the lower agent index."""
    gap: wp.array
    """float32 distance along the course line to the leader [m], >= 0 (0 for the leader)."""
