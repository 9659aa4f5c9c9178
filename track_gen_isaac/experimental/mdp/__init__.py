"""Warp twins of :mod:`track_gen_isaac.mdp` for ``ManagerBasedRLEnvWarp`` (same names and parameters).

The curriculum term has no twin: Isaac Lab runs the curriculum manager on the stable
implementation in both runtimes, so ``track_gen_isaac.mdp.course_schedule`` serves both.
"""

from track_gen_isaac.experimental.mdp.events import (
    place_at_checkpoint,
    place_at_course_start,
    place_at_start_or_checkpoint,
    regenerate_course,
    reset_course,
)
from track_gen_isaac.experimental.mdp.observations import (
    lap_progress,
    lookahead_points,
    next_checkpoints,
    next_gates,
    track_frame,
    track_frame_velocity,
)
from track_gen_isaac.experimental.mdp.rewards import (
    checkpoint_passed,
    clearance_penalty,
    collision_penalty,
    lap_completed,
    off_track_penalty,
    progress_delta,
    progress_rate,
    wrong_way_penalty,
)
from track_gen_isaac.experimental.mdp.terminations import (
    collided,
    gate_missed,
    invalid_course,
    laps_done,
    off_track,
)
from track_gen_isaac.mdp.curriculum import course_difficulty, course_mixture, course_schedule
from track_gen_isaac.experimental.mdp.props import move_gate_props
from track_gen_isaac.experimental.mdp.racer_observations import course_remaining, gate_frames, nearest_poles, racer_state
from track_gen_isaac.experimental.mdp.randomization import randomize_quadrotor
from track_gen_isaac.experimental.mdp.depth import depth_flat, depth_image
from track_gen_isaac.experimental.mdp.duel import place_on_grid, race_over, race_reward, race_time_out, rivals
from track_gen_isaac.experimental.mdp.quadrotor import (
    QuadrotorAction,
    altitude_out_of_range,
    body_rate_l2,
    quad_state,
)

from track_gen_isaac.experimental.mdp.car import CarAction, band_ahead, car_slip_l2, car_spun, car_stalled, car_state

__all__ = [
    "CarAction", "car_state", "band_ahead", "car_spun", "car_stalled", "car_slip_l2",
    "move_gate_props",
    "place_on_grid", "rivals", "race_reward", "race_over", "race_time_out",
    "racer_state", "gate_frames", "nearest_poles", "course_remaining", "randomize_quadrotor", "depth_flat", "depth_image",
    "QuadrotorAction", "quad_state", "body_rate_l2", "altitude_out_of_range",
    "course_difficulty", "course_mixture", "course_schedule",
    "regenerate_course", "reset_course", "place_at_course_start", "place_at_checkpoint", "place_at_start_or_checkpoint",
    "next_checkpoints", "next_gates", "track_frame", "track_frame_velocity", "lookahead_points", "lap_progress",
    "progress_delta", "progress_rate", "checkpoint_passed", "lap_completed", "collision_penalty", "clearance_penalty", "off_track_penalty",
    "wrong_way_penalty",
    "collided", "off_track", "laps_done", "gate_missed", "invalid_course",
]
