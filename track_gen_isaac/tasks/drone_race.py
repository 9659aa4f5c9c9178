"""The racer: :class:`DroneGatesRaceEnvCfg` (``TrackGen-Drone-Gates-Race-v0``), the gate task set up the
way drone-racing policies that transfer to real drones are trained (Song et al. 2021/2023, Swift):

* **what the policy sees** (50 values): its own state as an estimator gives it, body frame only
  (:class:`~track_gen_isaac.mdp.racer_state`: body velocity 3, rotation matrix 9, body rates 3,
  last action 4, height 1) and the next two gates relative to the body
  (:class:`~track_gen_isaac.mdp.gate_frames` with corners: centre + 4 opening corners, 15 a gate),
  both with estimator noise. Nothing in a world or course frame (``track_frame``, ``lap_progress``
  and ``quad_state`` remain available as options).
* **what it optimises**, per step (Isaac Lab multiplies by weight and dt):

  ========  =====================================  =======  ====================================================
  term      function                               weight   meaning
  ========  =====================================  =======  ====================================================
  progress  ``progress_rate`` (clip 25 m/s)        1.0      speed along the course line: 1 per metre gained, so
                                                            with discounting the faster line earns more (the
                                                            time-optimal objective of Song et al.)
  gate      ``checkpoint_passed``                  250      5 per gate passed (250 x 0.02 s)
  lap       ``lap_completed``                      500      10 per lap
  crash     ``is_terminated_term`` (failures)      -250     -5 once, when a failure ends the episode (gate frame,
                                                            missed gate, 2.5 m off course, altitude)
  clearance ``clearance_penalty`` (margin 0.2 m)   -10      up to -0.2 per step while the body box is within
                                                            0.2 m of a gate bar (linear, -0.2 at contact): pass
                                                            gates with room to spare
  rates     ``body_rate_l2``                       -0.05    smooth flight: -0.001 per (rad/s)^2 per step
  ========  =====================================  =======  ====================================================

* **what is randomized**, per episode, by the reset event :class:`~track_gen_isaac.mdp.randomize_quadrotor`:
  mass x[0.9, 1.1], inertia x[0.85, 1.15] per axis, thrust coefficient x[0.9, 1.1], torque coefficient
  x[0.85, 1.15], motor time constant [20, 50] ms, linear drag [0, 0.01] N s/m per axis, action
  latency 0-2 steps (reasons in :mod:`track_gen_isaac.mdp.randomization`); observation noise
  (std): velocity 0.05 m/s, attitude 0.01, rates 0.05 rad/s, height 0.02 m, gate positions 0.03 m.

``TrackGen-Drone-Gates-Race-Play-v0`` flies the nominal drone (no randomization, no noise), 16
envs, 30 s episodes from the course start. Both run in both runtimes (``-Warp-`` ids).
"""

from __future__ import annotations

from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.utils import configclass

from track_gen_isaac import mdp
from track_gen_isaac.tasks.drone_racing import DroneGatesEnvCfg, GatesEventsCfg, GatesRewardsCfg, _to_play

__all__ = ["DroneGatesRaceEnvCfg", "DroneGatesRaceEnvCfg_PLAY", "STATE_NOISE", "GATE_NOISE"]

#: racer_state noise stds: (velocity [m/s], attitude [rotation-matrix entries], rates [rad/s], height [m])
STATE_NOISE = (0.05, 0.01, 0.05, 0.02)
#: gate position noise std [m]
GATE_NOISE = 0.03


@configclass
class RaceObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        state = ObsTerm(func=mdp.racer_state, params={"attitude": "matrix", "noise_std": STATE_NOISE})
        gates = ObsTerm(func=mdp.gate_frames, params={"num": 2, "corners": True, "noise_std": GATE_NOISE})

    policy: PolicyCfg = PolicyCfg()


@configclass
class RaceRewardsCfg(GatesRewardsCfg):
    """The gate task's gate, lap, crash and body-rate terms; progress as a rate (1 per metre,
    independent of the control step) instead of a per-step delta; a clearance margin to the gate bars."""

    progress = RewTerm(func=mdp.progress_rate, weight=1.0, params={"clip": 25.0})
    clearance = RewTerm(func=mdp.clearance_penalty, weight=-10.0, params={"margin": 0.2})


@configclass
class RaceEventsCfg:
    # the plant first: its mass and inertia reach the solver before the placement's pose write
    dynamics = EventTerm(func=mdp.randomize_quadrotor, mode="reset")
    course = GatesEventsCfg().course
    place = GatesEventsCfg().place


@configclass
class DroneGatesRaceEnvCfg(DroneGatesEnvCfg):
    """Race a loop of gates from body-frame observations, progress-rate reward, randomized dynamics."""

    observations: RaceObsCfg = RaceObsCfg()
    rewards: RaceRewardsCfg = RaceRewardsCfg()
    events: RaceEventsCfg = RaceEventsCfg()


def nominal(cfg: DroneGatesRaceEnvCfg) -> None:
    """The nominal drone: no dynamics randomization, no observation noise."""
    cfg.events.dynamics = None
    cfg.observations.policy.state.params["noise_std"] = (0.0, 0.0, 0.0, 0.0)
    cfg.observations.policy.gates.params["noise_std"] = 0.0


@configclass
class DroneGatesRaceEnvCfg_PLAY(DroneGatesRaceEnvCfg):
    """Fewer envs, longer episodes, every episode from the course start, the nominal drone."""

    def __post_init__(self):
        super().__post_init__()
        _to_play(self)
        nominal(self)
