"""The generalist racer: :class:`DroneGatesRealEnvCfg` (``TrackGen-Drone-Gates-Real-v0``), the racer
(:mod:`~track_gen_isaac.tasks.drone_racer`: body-frame observations with estimator noise, the
progress-rate objective, randomized dynamics, a safety margin) trained on the courses people
race instead of one kind of loop.

* **courses**: ``presets.gates_real`` (:func:`track_gen.pipeline.presets.gates_real_config`), mixed per
  env at every reset: lab arenas (3.5-7 m, 0.35-0.65 m openings, thick frames, poles), hall and
  field courses (9-24 m, 0.6-1.7 m openings, climbs to 7 m), hall loops (8-14 m, 0.8-1.2 m openings)
  and outdoor sprints (25-80 m, legs to 30 m), each one pass from a start pose, some from the ground.
  No real layout is a training input: ``track_gen.layouts.coverage`` shows that each one lies inside
  this distribution.
* **what it sees**: the racer's 50 values plus the two nearest pole obstacles in the body frame
  within 5 m (:class:`~track_gen_isaac.mdp.nearest_poles`, 5 a pole, with the gates' position
  noise): a lab arena's thin poles stand half a metre from its gates.
* **curriculum**: :class:`~track_gen_isaac.mdp.course_mixture` reweights the four kinds by their
  success in training (a kind always finished keeps :data:`MIXTURE_FLOOR` of its weight): seeds
  1 / 2 / 3 fly ``gates-v1`` 0.89 / 0.92 / 0.89 with it, 0.94 / 0.83 / 0.44 without. Its ladder
  starts the lab arenas easy (:data:`ARENA_LADDER`) and moves them to their own ranges as they are
  finished (:data:`LADDER_STEPS`): seeds 1-3 fly the three AIGP tracks 0.92 on average with it,
  0.78 without (docs/isaac/drone-racing.rst).
* **starts**: a quarter of the episodes from the course start (a standing start, or a take-off
  where the course starts on the ground), the rest on a random gate (not the last one, which is the
  finish) with the racer's jitter (:class:`~track_gen_isaac.mdp.place_at_start_or_checkpoint`).
* **endings**: the racer's, with the altitude band made for these courses: from the ground
  (a body centre below it is a crash: nothing else stops a fall) to 9 m; the course is finished
  after one pass.
* **episodes**: 20 s (a sprint's 150 m at 8 m/s fits in one).

``TrackGen-Drone-Gates-Real-Play-v0`` flies the centre plant from the course start with the body's
own box, as the racer's ``-Play`` env does.
"""

from __future__ import annotations

from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.utils import configclass

from track_gen.pipeline.presets import gates_real_config
from track_gen_isaac import mdp
from track_gen_isaac.course_cfg import CourseCfg
from track_gen_isaac.tasks.drone_gates_track import _HALF, _HALF_HEIGHT, GatesEventsCfg, _to_play
from track_gen_isaac.tasks.drone_racer import (GATE_NOISE, SAFETY_MARGIN, DroneGatesRaceEnvCfg, RaceObsCfg, body_box,
                                               centre_plant, with_margin)

__all__ = ["DroneGatesRealEnvCfg", "DroneGatesRealEnvCfg_PLAY", "START_SHARE", "ALTITUDE", "POLE_RANGE",
           "MIXTURE_FLOOR", "ARENA_LADDER", "LADDER_STEPS"]

#: share of the training episodes that start at the course start (the rest: on a random gate)
START_SHARE = 0.25
#: the poles the policy sees [m, plan view]: farther ones are reported absent (bounded values; a
#: pole 40 m down a sprint says nothing about the next second of flight)
POLE_RANGE = 5.0
#: the altitude band [m] of the ``altitude`` termination: the ground to above the highest gates drawn
ALTITUDE = (0.0, 9.0)
#: the share of its spec weight a kind of course keeps once it is always finished (``course_mixture``)
MIXTURE_FLOOR = 0.3
#: the easy end of the lab arena's ranges (``course_mixture``'s ladder): a small hall of metre-wide
#: gates, gentle turns and few take-offs, which the arena's own ranges replace as the policy finishes it
ARENA_LADDER = {"gates.size": (6.0, 9.0), "gate_frames.gate_width": (0.8, 1.0),
                "gate_frames.frame_thickness": (0.04, 0.08), "gates.min_spacing": 1.2, "gates.max_spacing": 5.0,
                "gates.max_turn": 1.2, "gates.yaw_jitter": 0.2, "gates.difficulty": (0.0, 0.3),
                "gates.hard_size": (6.0, 9.0), "gates.hard_min_spacing": 1.2, "gates.hard_max_spacing": 5.0,
                "gates.ground_start": 0.2}
#: (promote, demote, step) of the arena's ladder: window success rates that move its level by the step
LADDER_STEPS = (0.4, 0.15, 0.1)


@configclass
class RealObsCfg:
    @configclass
    class PolicyCfg(RaceObsCfg.PolicyCfg):
        poles = ObsTerm(func=mdp.nearest_poles, params={"num": 2, "noise_std": GATE_NOISE, "max_range": POLE_RANGE})

    policy: PolicyCfg = PolicyCfg()


@configclass
class RealEventsCfg:
    # the plant first: its mass and inertia reach the solver before the placement's pose write
    dynamics = EventTerm(func=mdp.randomize_quadrotor, mode="reset")
    course = GatesEventsCfg().course
    place = EventTerm(func=mdp.place_at_start_or_checkpoint, mode="reset",
                      params={"start_share": START_SHARE, "jitter": (0.2, 0.2, 0.3), "start_jitter": (0.1, 0.0, 0.1),
                              "z_offset": _HALF_HEIGHT})


@configclass
class RealCurriculumCfg:
    # more of the kinds of course not yet finished: a kind always finished keeps 0.3 of its weight
    kinds = CurrTerm(func=mdp.course_mixture, params={
        "floor": MIXTURE_FLOOR, "min_episodes": 1024, "ladder": {"arena": ARENA_LADDER},
        "promote": LADDER_STEPS[0], "demote": LADDER_STEPS[1], "step": LADDER_STEPS[2]})


@configclass
class DroneGatesRealEnvCfg(DroneGatesRaceEnvCfg):
    """The racer on ``gates_real`` courses: every scale of real track, one pass, some from the ground."""

    observations: RealObsCfg = RealObsCfg()
    events: RealEventsCfg = RealEventsCfg()
    curriculum: RealCurriculumCfg = RealCurriculumCfg()
    course: CourseCfg = with_margin(
        CourseCfg(generator=gates_real_config(), collision="frame", half_extents=_HALF, half_height=_HALF_HEIGHT),
        SAFETY_MARGIN)

    def __post_init__(self):
        super().__post_init__()
        self.episode_length_s = 20.0
        self.terminations.altitude.params.update({"min_height": ALTITUDE[0], "max_height": ALTITUDE[1]})
        self.terminations.laps.params["laps"] = 1


@configclass
class DroneGatesRealEnvCfg_PLAY(DroneGatesRealEnvCfg):
    """Fewer envs, 30 s episodes, every episode from the course start, the centre plant, the body's own box."""

    def __post_init__(self):
        super().__post_init__()
        _to_play(self)
        self.curriculum = None
        self.events.place = EventTerm(func=mdp.place_at_course_start, mode="reset", params={"z_offset": _HALF_HEIGHT})
        centre_plant(self)
        body_box(self)
