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
  crash     ``is_terminated_term`` (failures)      -500     -10 once, when a failure ends the episode (gate
                                                            frame, missed gate, 2.5 m off course, altitude);
                                                            twice the gate task's: at -250 the 700-iteration
                                                            runs trade completion for speed (docs, seed study)
  rates     ``body_rate_l2``                       -0.05    smooth flight: -0.001 per (rad/s)^2 per step
  ========  =====================================  =======  ====================================================

* **what is randomized**, per episode, by the reset event :class:`~track_gen_isaac.mdp.randomize_quadrotor`:
  mass x[0.9, 1.1], inertia x[0.85, 1.15] per axis, thrust coefficient x[0.9, 1.1], torque coefficient
  x[0.85, 1.15], motor time constant [20, 50] ms, linear drag [0, 0.01] N s/m per axis, action
  latency 0-2 steps (reasons in :mod:`track_gen_isaac.mdp.randomization`); observation noise
  (std): velocity 0.05 m/s, attitude 0.01, rates 0.05 rad/s, height 0.02 m, gate positions 0.03 m.
* **a safety margin**: training tests gate-frame collisions with the body grown by
  :data:`SAFETY_MARGIN` (5 cm) on every side; the ``-Play`` env and evaluations fly the body itself.

``TrackGen-Drone-Gates-Race-Play-v0`` flies the **centre plant** (:func:`centre_plant`): the drone
at the centre of what is randomized -- the model's own mass, inertia, coefficients and motor time
constant, plus the two effects the model leaves out at the middle of their ranges (linear drag
0.005 N s/m per axis, one step of action latency) -- with no observation noise; 16 envs, 30 s
episodes from the course start. The gate task's drone (no drag, no latency: the edge of the
randomized ranges, where no real drone sits) is :func:`ideal_plant`. Both run in both runtimes
(``-Warp-`` ids).
"""

from __future__ import annotations

from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.utils import configclass

from track_gen_isaac import mdp
from track_gen_isaac.course_cfg import CourseCfg
from track_gen_isaac.tasks.drone_gates_track import (_HALF, _HALF_HEIGHT, DroneGatesEnvCfg, GatesEventsCfg,
                                                     GatesRewardsCfg, _to_play)

__all__ = ["DroneGatesRaceEnvCfg", "DroneGatesRaceEnvCfg_PLAY", "STATE_NOISE", "GATE_NOISE", "SAFETY_MARGIN",
           "with_margin", "body_box", "centre_plant", "ideal_plant", "IDEAL_OVERRIDES", "BODY_OVERRIDES"]

#: racer_state noise stds: (velocity [m/s], attitude [rotation-matrix entries], rates [rad/s], height [m])
STATE_NOISE = (0.05, 0.01, 0.05, 0.02)
#: gate position noise std [m]
GATE_NOISE = 0.03
#: clearance [m] the racer's training adds to the body's box on every side for the gate-frame
#: collision: a frame hit within 5 cm of the body ends the training episode, so the policy learns
#: to leave that room (every failure of the 700-iteration racer without it was a frame hit). The
#: ``-Play`` env and every evaluation fly the body itself (:data:`BODY_OVERRIDES`).
SAFETY_MARGIN = 0.05
#: the env-cfg overrides (a suite's ``env_overrides``) that give a racer cfg the body's own box
BODY_OVERRIDES = {"course.half_extents": _HALF, "course.half_height": _HALF_HEIGHT}


def with_margin(course: CourseCfg, margin: float) -> CourseCfg:
    """A copy of ``course`` whose collision box is ``margin`` [m] larger on every side."""
    hx, hy = course.half_extents
    return course.replace(half_extents=(hx + margin, hy + margin), half_height=course.half_height + margin)


def body_box(cfg: DroneGatesEnvCfg) -> None:
    """Give ``cfg``'s course the body's own collision box, without the training's safety margin
    (the ``-Play`` envs; set directly, since undoing :func:`with_margin` in floats would not give
    back the same bits)."""
    cfg.course = cfg.course.replace(half_extents=_HALF, half_height=_HALF_HEIGHT)


@configclass
class RaceObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        state = ObsTerm(func=mdp.racer_state, params={"attitude": "matrix", "noise_std": STATE_NOISE})
        gates = ObsTerm(func=mdp.gate_frames, params={"num": 2, "corners": True, "noise_std": GATE_NOISE})

    policy: PolicyCfg = PolicyCfg()


@configclass
class RaceRewardsCfg(GatesRewardsCfg):
    """The gate task's gate, lap and body-rate terms; progress as a rate (1 per metre,
    independent of the control step) instead of a per-step delta; a crash costs twice as much."""

    progress = RewTerm(func=mdp.progress_rate, weight=1.0, params={"clip": 25.0})
    crash = GatesRewardsCfg().crash.replace(weight=-500.0)


@configclass
class RaceEventsCfg:
    # the plant first: its mass and inertia reach the solver before the placement's pose write
    dynamics = EventTerm(func=mdp.randomize_quadrotor, mode="reset")
    course = GatesEventsCfg().course
    place = GatesEventsCfg().place


@configclass
class DroneGatesRaceEnvCfg(DroneGatesEnvCfg):
    """Race a loop of gates from body-frame observations, progress-rate reward, randomized dynamics,
    a safety margin around the body."""

    observations: RaceObsCfg = RaceObsCfg()
    rewards: RaceRewardsCfg = RaceRewardsCfg()
    events: RaceEventsCfg = RaceEventsCfg()
    course: CourseCfg = with_margin(DroneGatesEnvCfg().course, SAFETY_MARGIN)


def _noise_free(cfg: DroneGatesRaceEnvCfg) -> None:
    """No observation noise: every policy term's ``noise_std`` set to zero (a number or a tuple)."""
    for term in vars(cfg.observations.policy).values():
        std = getattr(term, "params", {}).get("noise_std") if hasattr(term, "params") else None
        if std is not None:
            term.params["noise_std"] = tuple(0.0 for _ in std) if isinstance(std, (tuple, list)) else 0.0


def centre_plant(cfg: DroneGatesRaceEnvCfg) -> None:
    """Fly one plant, the centre of the randomization, with no observation noise: every parameter
    the model has at the model's value (mass, inertia, thrust and torque coefficients scaled by 1,
    its motor time constant), the two it lacks at the middle of their ranges
    (:data:`~track_gen_isaac.mdp.randomization.RANGES`: linear drag, action latency).

    Why not the drag-free, latency-free model: there the plant sits at the edge of both ranges,
    and a policy trained across them flies the middle best (measured: the racer completes 0.81 of
    the ``gates-v1`` courses with no drag and 0.95 at the top of the drag range, seed 2, 500 iterations,
    crash -250)."""
    from track_gen_isaac.mdp.randomization import RANGES

    tau = float(cfg.actions.rotors.model.motor_time_constant)
    drag = 0.5 * (RANGES["linear_drag"][0] + RANGES["linear_drag"][1])
    latency = (RANGES["latency"][0] + RANGES["latency"][1]) // 2
    cfg.events.dynamics.params.update({
        "mass_scale": (1.0, 1.0), "inertia_scale": (1.0, 1.0), "thrust_scale": (1.0, 1.0), "torque_scale": (1.0, 1.0),
        "motor_time_constant": (tau, tau), "linear_drag": (drag, drag), "latency": (latency, latency)})
    _noise_free(cfg)


#: the env-cfg overrides (an evaluation suite's ``env_overrides``) that turn the racer's ``-Play``
#: env into the ideal plant: no randomization event at all
IDEAL_OVERRIDES = {"events.dynamics": None}


def ideal_plant(cfg: DroneGatesRaceEnvCfg) -> None:
    """Fly the model as the gate task does: no drag, no latency, no randomization, no noise."""
    cfg.events.dynamics = None
    _noise_free(cfg)


@configclass
class DroneGatesRaceEnvCfg_PLAY(DroneGatesRaceEnvCfg):
    """Fewer envs, longer episodes, every episode from the course start, the centre plant, the body's
    own box (no safety margin)."""

    def __post_init__(self):
        super().__post_init__()
        _to_play(self)
        centre_plant(self)
        body_box(self)
