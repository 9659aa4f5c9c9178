"""Isaac Lab terms over a track_gen course (stable runtime: ``ManagerBasedRLEnv``, torch, ``env_ids``).

Every term is a class (pass it as ``func``) with a ``course_name`` parameter (default ``"course"``:
the :class:`~track_gen_isaac.CourseCfg` attribute of the env cfg). See ``docs/isaac/index.rst``.
"""

from track_gen_isaac.mdp import curriculum, events, observations, rewards, terminations
from track_gen_isaac.mdp.curriculum import course_difficulty, course_mixture, course_schedule
from track_gen_isaac.mdp.events import (
    place_at_checkpoint,
    place_at_course_start,
    place_at_start_or_checkpoint,
    regenerate_course,
    reset_course,
)
from track_gen_isaac.mdp.observations import (
    lap_progress,
    lookahead_points,
    next_checkpoints,
    next_gates,
    track_frame,
    track_frame_velocity,
)
from track_gen_isaac.mdp.rewards import (
    checkpoint_passed,
    clearance_penalty,
    collision_penalty,
    lap_completed,
    off_track_penalty,
    progress_delta,
    progress_rate,
    wrong_way_penalty,
)
from track_gen_isaac.mdp.terminations import collided, gate_missed, invalid_course, laps_done, off_track

from track_gen_isaac.mdp.props import move_gate_props
from track_gen_isaac.mdp.quadrotor import (
    QuadrotorAction,
    QuadrotorActionCfg,
    altitude_out_of_range,
    body_rate_l2,
    quad_state,
)

__all__ = [
    "move_gate_props",
    "QuadrotorAction", "QuadrotorActionCfg", "quad_state", "body_rate_l2", "altitude_out_of_range",
    "curriculum", "events", "observations", "rewards", "terminations",
    "course_difficulty", "course_mixture", "course_schedule",
    "regenerate_course", "reset_course", "place_at_course_start", "place_at_checkpoint", "place_at_start_or_checkpoint",
    "next_checkpoints", "next_gates", "track_frame", "track_frame_velocity", "lookahead_points", "lap_progress",
    "progress_delta", "progress_rate", "checkpoint_passed", "lap_completed", "collision_penalty", "clearance_penalty", "off_track_penalty",
    "wrong_way_penalty",
    "collided", "off_track", "laps_done", "gate_missed", "invalid_course",
]
from track_gen_isaac.mdp.racer_observations import course_remaining, gate_frames, nearest_poles, racer_state
from track_gen_isaac.mdp.depth import depth_flat, depth_image
from track_gen_isaac.mdp.randomization import randomize_quadrotor
from track_gen_isaac.mdp.duel import RaceCfg, get_race, place_on_grid, race_over, race_reward, race_time_out, rivals

__all__ += ["racer_state", "gate_frames", "nearest_poles", "course_remaining", "randomize_quadrotor", "depth_flat", "depth_image"]
__all__ += ["RaceCfg", "get_race", "place_on_grid", "rivals", "race_reward", "race_over", "race_time_out"]

# Importing the warp package declares the warp twins (track_gen_isaac.experimental.mdp) to Isaac Lab's warp
# frontend, so that a cfg using these terms also runs in ManagerBasedRLEnvWarp (its terms swapped to the twins).
import track_gen_isaac.experimental  # noqa: E402, F401
from track_gen_isaac.mdp.car import CarAction, CarActionCfg, band_ahead, car_state  # noqa: E402
from track_gen_isaac.mdp.car_safety import car_slip_l2, car_spun, car_stalled  # noqa: E402

__all__ += ["CarAction", "CarActionCfg", "car_state", "band_ahead", "car_spun", "car_stalled", "car_slip_l2"]
