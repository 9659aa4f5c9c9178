"""The car task: :class:`CarTrackEnvCfg` (``TrackGen-Car-Track-v0``), an F1TENTH race car
(:mod:`track_gen_isaac.car`) racing its own band track per env, drawn at the car's scale.

* **courses**: ``presets.track_car`` at :data:`SCALE` (0.1: circuit-like band tracks of 300-800 m,
  half widths 0.36-0.84 m, straights to ~150 m, hairpins), a new one per env at every reset; the
  generator's attempt budget raised to :data:`MAX_ATTEMPTS` so that >= 99 % of the draws are valid
  (at the preset's 128, about 82 % are). An invalid draw (no course) ends its episode at once as a
  time-out (``invalid``), which redraws it. Checkpoints every :data:`CHECKPOINT_SPACING` m.
* **the car in the scene**: a *kinematic* rigid body (:func:`~track_gen_isaac.car.car_asset_cfg`)
  whose root pose and velocity the action term writes from :class:`~track_gen_isaac.car.CarDynamics`
  every physics step (:class:`~track_gen_isaac.mdp.car.CarAction`). Why a body at all: every course
  term, reset event and evaluation reads the followed entity's root buffers (the course binds
  zero-copy to ``root_pos_w`` / ``root_quat_w``, the ``place_at_*`` events write the root pose, the
  rollouts read positions and velocities there), so a body keeps the whole drone machinery
  unchanged and the car visible in a viewer. Why kinematic: the solver must not move it (no
  gravity, no contacts, no integration of the written velocity), so the pose is the model's, bit
  for bit; the physics step (one per env step: ``decimation`` 1, ``sim.dt`` 0.02 s, which
  CarDynamics splits into four 5 ms RK4 substeps) has nothing to integrate. A body-free env would
  need a second binding path in every course term for no gain.
* **what the policy sees** (70 values): the car's own state (:class:`~track_gen_isaac.mdp.car_state`:
  speed, slip angle, yaw rate, steering angle, the last action as applied), the track frame
  (:class:`~track_gen_isaac.mdp.track_frame`: lap fraction, lateral offset, heading error as sin /
  cos) and the band ahead in the car frame (:class:`~track_gen_isaac.mdp.band_ahead`: left and
  right edge points and the course line's curvature at :data:`AHEAD` m of arc length ahead, 0.5 to
  15 m: braking from 12 m/s at mu g takes about 7 m).
* **what it does**: the action is a target steering angle (``a0 x 0.4189`` rad) and the
  longitudinal acceleration (``a1 x 9.51`` m/s^2); the model limits both (friction, power, rate).
* **what it optimises**, per second (Isaac Lab multiplies by weight and dt):

  ========  =====================================  =======  ==============================================
  term      function                               weight   meaning
  ========  =====================================  =======  ==============================================
  progress  ``progress_rate`` (clip 25 m/s)        1.0      speed along the course line: 1 per metre gained
  crash     ``is_terminated_term`` (off_track,     -5000    -100 once, when the car leaves the band or spins
            spun)
  stall     ``is_terminated_term`` (stalled)       -8500    -170 once, when the car stalls: it lands 2 s
                                                            after the car stops, so discounted (gamma
                                                            0.995) it is about the crash's -100; at -100
                                                            a stall was the cheaper failure, and policies
                                                            parked before hard corners
  slip      ``car_slip_l2``                        -20      -20 per rad^2 of slip angle per second: a car
                                                            sliding towards a spin pays before it spins
  ========  =====================================  =======  ==============================================

  (The first design, crash -1500 and no slip term, drove fast but crashed: 0.38 completion on
  ``car-track-v1``, a first lap at 1.15 x the reference, seed 1; every Budapest run spun.)

* **endings** (a failure ends the episode with the crash penalty; the others truncate it, so the
  value bootstraps): the car's box touching a band edge (``off_track``: ``BandCollision`` on the box
  footprint, :data:`HALF_EXTENTS`, grown in training by :data:`SAFETY_MARGIN`, 10 cm, on every
  side), a spin (``spun``: ``|slip| > 0.5`` rad), a stall (``stalled``: below 0.3 m/s for 2 s,
  :data:`STALL`; without it the policy learned to park before a hard corner and wait for the
  time-out, since a crash costs more than the progress of its discount horizon), one lap
  (``laps``), an invalid course (``invalid``, a time-out), the time limit (20 s).
* **starts** (all at rest): a quarter of the episodes at the course start (standing start, 5 cm /
  0.05 rad jitter), a quarter on the checkpoint 1-12 m before the track's tightest turn
  (``corner_share``: the turn a lap is most often lost at, practised far more often than once a
  lap), the rest on a random checkpoint; 10 cm lateral and 0.15 rad yaw jitter on a checkpoint.

The main job flies the mean of the run's last five checkpoints' weights (``model_average.pt``,
:mod:`track_gen_isaac.policy_average`; ``main_job.AVERAGE_LAST``), not the last checkpoint.

``TrackGen-Car-Track-Play-v0``: 16 envs, 120 s episodes (a whole lap), every episode from the course
start. Both run in both runtimes (``-Warp-`` ids). Envs sit 2 m apart (:data:`ENV_SPACING`): they do
not interact, and CarDynamics integrates world positions in float32, which stay precise near the
origin (a 200 m spacing for 1024 envs would put cars 3 km out, where float32 resolves 0.2 mm --
5 % of a 5 ms substep's travel at 1 m/s).
"""

from __future__ import annotations

import isaaclab.envs.mdp as imdp
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.utils import configclass
from isaaclab_newton.physics import NewtonCfg

from track_gen.pipeline.presets import track_car_config
from track_gen_isaac import mdp
from track_gen_isaac.car import CAR_HEIGHT, F1TENTH, car_asset_cfg
from track_gen_isaac.course_cfg import CourseCfg
from track_gen_isaac.device import default_device
from track_gen_isaac.mdp.car import CarActionCfg
from track_gen_isaac.physics import solver_cfg

__all__ = ["CarTrackEnvCfg", "CarTrackEnvCfg_PLAY", "SCALE", "AHEAD", "HALF_EXTENTS", "MAX_ATTEMPTS",
           "CHECKPOINT_SPACING", "ENV_SPACING", "LAYOUT_SUITE", "SAFETY_MARGIN", "BODY_OVERRIDES", "car_course"]

#: the task's length scale of race circuits: 0.1, a 1/10 car (F1TENTH) on circuits at 1/10 size
SCALE = 0.1
#: arc lengths ahead [m] at which the policy sees the band
AHEAD = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.5, 8.0, 10.0, 12.5, 15.0)
#: the car's box footprint (half length, half width) [m]: the course's band collision
HALF_EXTENTS = (0.5 * F1TENTH.length, 0.5 * F1TENTH.width)
#: clearance [m] training adds to the box on every side: a band edge within 10 cm of the body ends a
#: training episode, so the policy keeps that room; the ``-Play`` env and every evaluation drive the
#: body's own box (:data:`BODY_OVERRIDES`). 10 cm since v15 (5 cm before; docs/isaac/car-racing.rst)
SAFETY_MARGIN = 0.10
#: (speed [m/s], time [s]): a car slower than the speed for the time has stalled, which ends the episode
#: with the stall penalty (:class:`~track_gen_isaac.mdp.car_stalled`)
STALL = (0.3, 2.0)
#: the env-cfg overrides (a suite's ``env_overrides``) that give the task's cfg the body's own box
BODY_OVERRIDES = {"course.half_extents": HALF_EXTENTS}
#: the generator's attempts per draw (the preset's 128 leaves ~18 % of the draws invalid; 1024: < 1 %)
MAX_ATTEMPTS = 1024
#: distance between checkpoints along the centre line [m]
CHECKPOINT_SPACING = 2.0
#: distance between env origins [m] (see the module docstring)
ENV_SPACING = 2.0
#: how the benchmark flies a real layout with this task (``evaluate --layout``): full-size circuits at
#: :data:`SCALE`, one lap from a standing start within 150 s, the start jittered by up to 10 cm laterally
#: and 0.1 rad in yaw (so that the runs of one circuit differ)
LAYOUT_SUITE = {"scale": SCALE, "laps": 1, "time_limit_s": 150.0, "start_jitter": (0.1, 0.0, 0.1)}


def car_course(scale: float = SCALE, margin: float = 0.0) -> CourseCfg:
    """The task's course: ``presets.track_car`` at ``scale``, band collision on the car's box grown by
    ``margin`` [m] on every side."""
    return CourseCfg(
        generator=track_car_config(scale, max_attempts=MAX_ATTEMPTS),
        collision="segments", checkpoint_spacing=CHECKPOINT_SPACING,
        half_extents=(HALF_EXTENTS[0] + margin, HALF_EXTENTS[1] + margin),
        half_height=0.5 * CAR_HEIGHT, localize_window=8,
    )


@configclass
class CarSceneCfg(InteractiveSceneCfg):
    """One car per env (a kinematic body that shows CarDynamics' state); nothing else has physics."""

    robot = car_asset_cfg()


@configclass
class CarActionsCfg:
    car = CarActionCfg(asset_name="robot", steering="angle")


@configclass
class CarObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        state = ObsTerm(func=mdp.car_state)
        frame = ObsTerm(func=mdp.track_frame)
        band = ObsTerm(func=mdp.band_ahead, params={"distances": AHEAD})

    policy: PolicyCfg = PolicyCfg()


@configclass
class CarRewardsCfg:
    progress = RewTerm(func=mdp.progress_rate, weight=1.0, params={"clip": 25.0})
    crash = RewTerm(func=imdp.is_terminated_term, weight=-5000.0,
                    params={"term_keys": ["off_track", "spun"]})
    stall = RewTerm(func=imdp.is_terminated_term, weight=-8500.0, params={"term_keys": ["stalled"]})
    slip = RewTerm(func=mdp.car_slip_l2, weight=-20.0)


@configclass
class CarTerminationsCfg:
    time_out = DoneTerm(func=imdp.time_out, time_out=True)
    off_track = DoneTerm(func=mdp.collided)  # the box touches a band edge (band collision)
    spun = DoneTerm(func=mdp.car_spun, params={"max_slip": 0.5})
    # parked: below 0.3 m/s for 2 s ends the episode with the stall penalty (else waiting before a hard corner pays)
    stalled = DoneTerm(func=mdp.car_stalled, params={"min_speed": STALL[0], "patience": STALL[1]})
    invalid = DoneTerm(func=mdp.invalid_course, time_out=True)
    # a lap (a start near the lap line reaches it in training) truncates, not terminates: the race goes
    # on, so the value bootstraps, and the policy is never taught that the finish line ends its reward
    laps = DoneTerm(func=mdp.laps_done, params={"laps": 1}, time_out=True)


@configclass
class CarEventsCfg:
    course = EventTerm(func=mdp.regenerate_course, mode="reset")
    place = EventTerm(func=mdp.place_at_start_or_checkpoint, mode="reset",
                      params={"start_share": 0.25, "jitter": (0.1, 0.0, 0.15), "start_jitter": (0.05, 0.0, 0.05),
                              "corner_share": 0.25, "corner_lead": (1.0, 12.0)})


@configclass
class CarTrackEnvCfg(ManagerBasedRLEnvCfg):
    """Race an F1TENTH car around a circuit-like band track; leaving the band ends the episode."""

    scene: CarSceneCfg = CarSceneCfg(num_envs=1024, env_spacing=ENV_SPACING)
    actions: CarActionsCfg = CarActionsCfg()
    observations: CarObsCfg = CarObsCfg()
    rewards: CarRewardsCfg = CarRewardsCfg()
    terminations: CarTerminationsCfg = CarTerminationsCfg()
    events: CarEventsCfg = CarEventsCfg()
    course: CourseCfg = car_course(margin=SAFETY_MARGIN)
    layout_suite: dict = LAYOUT_SUITE
    """How the benchmark flies real layouts with this task (:data:`LAYOUT_SUITE`)."""

    def __post_init__(self):
        self.episode_length_s = 20.0
        self.decimation = 1
        self.sim.dt = 1 / 50
        self.sim.device = default_device()  # --device overrides
        self.sim.physics = NewtonCfg(solver_cfg=solver_cfg(), use_cuda_graph=True)


@configclass
class CarTrackEnvCfg_PLAY(CarTrackEnvCfg):
    """16 envs, 120 s episodes (a whole lap), every episode from the course start, the body's own box
    (no safety margin), course markers on (drawn only when a visualizer runs)."""

    def __post_init__(self):
        super().__post_init__()
        self.scene.num_envs = 16
        self.episode_length_s = 120.0
        self.events.place = EventTerm(func=mdp.place_at_course_start, mode="reset")
        self.course = self.course.replace(half_extents=HALF_EXTENTS, debug_vis=True)
