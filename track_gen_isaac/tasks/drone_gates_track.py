"""The gate and track task cfgs (and their shared base, :class:`DroneRacingEnvCfg`): a Crazyflie-like quadrotor
(rate commands) racing its own course per env. The racer built on the gate task is
:mod:`~track_gen_isaac.tasks.drone_racer`.

* :class:`DroneGatesEnvCfg`: a gate course per env (loops of 6-10 gates), gate-frame collision.
* :class:`DroneTrackEnvCfg`: an elevated band track per env (a 3D centerline with a width), band
  collision (the band's edges are walls).
* ``*_PLAY``: fewer envs, longer episodes, every episode from the course start, debug markers on.

Both run in the stable and the warp runtime (the warp one swaps every term for its twin).
Rewards are per second (Isaac Lab multiplies each term by its weight and the step dt): progress
along the course line [1/m], gates or checkpoints passed, laps, a penalty on crashes and body
rates. Observations are the drone's own state plus the course ahead in the body frame.
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

import track_gen as tg
from track_gen_isaac import mdp
from track_gen_isaac.course_cfg import CourseCfg
from track_gen_isaac.physics import solver_cfg
from track_gen_isaac.device import default_device
from track_gen_isaac.mdp.quadrotor import QuadrotorActionCfg
from track_gen_isaac.quadrotor import CRAZYFLIE, quadrotor_asset_cfg

__all__ = ["DroneRacingEnvCfg", "DroneGatesEnvCfg", "DroneGatesEnvCfg_PLAY", "DroneTrackEnvCfg", "DroneTrackEnvCfg_PLAY"]

_HALF = (0.5 * CRAZYFLIE.size[0], 0.5 * CRAZYFLIE.size[1])  # the body box seen by the course's collision
_HALF_HEIGHT = 0.5 * CRAZYFLIE.size[2]


@configclass
class DroneSceneCfg(InteractiveSceneCfg):
    """One quadrotor per env; nothing else has physics (the course decides contact)."""

    robot = quadrotor_asset_cfg()


@configclass
class DroneActionsCfg:
    rotors = QuadrotorActionCfg(asset_name="robot")


# ------------------------------------------------------------------------------------------ gates


@configclass
class GatesObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        state = ObsTerm(func=mdp.quad_state)
        gates = ObsTerm(func=mdp.next_gates, params={"num": 2})

    policy: PolicyCfg = PolicyCfg()


@configclass
class GatesRewardsCfg:
    progress = RewTerm(func=mdp.progress_delta, weight=50.0, params={"clip": 0.5})
    gate = RewTerm(func=mdp.checkpoint_passed, weight=250.0)
    lap = RewTerm(func=mdp.lap_completed, weight=500.0)
    # a failure ends the episode (finishing the laps or the time limit does not count)
    crash = RewTerm(func=imdp.is_terminated_term, weight=-250.0,
                    params={"term_keys": ["crash", "missed", "off_course", "altitude"]})
    rates = RewTerm(func=mdp.body_rate_l2, weight=-0.05)


@configclass
class GatesTerminationsCfg:
    time_out = DoneTerm(func=imdp.time_out, time_out=True)
    crash = DoneTerm(func=mdp.collided)
    missed = DoneTerm(func=mdp.gate_missed)
    off_course = DoneTerm(func=mdp.off_track, params={"max_distance": 2.5})
    altitude = DoneTerm(func=mdp.altitude_out_of_range, params={"min_height": 0.1, "max_height": 4.0})
    laps = DoneTerm(func=mdp.laps_done, params={"laps": 2})


@configclass
class GatesEventsCfg:
    course = EventTerm(func=mdp.regenerate_course, mode="reset")
    place = EventTerm(func=mdp.place_at_checkpoint, mode="reset", params={"jitter": (0.2, 0.2, 0.3)})


def _sim(cfg: ManagerBasedRLEnvCfg) -> None:
    """100 Hz physics, 50 Hz policy, on the default device. The drone is the only physical body and has no collision
    shape, so MuJoCo-Warp runs without contacts or constraint rows (:mod:`track_gen_isaac.physics`)."""
    cfg.decimation = 2
    cfg.sim.dt = 1 / 100
    cfg.sim.device = default_device()  # --device overrides
    cfg.sim.physics = NewtonCfg(
        solver_cfg=solver_cfg(),
        use_cuda_graph=True,
    )


@configclass
class DroneRacingEnvCfg(ManagerBasedRLEnvCfg):
    """What every drone-racing task shares: the quadrotor scene and action, 15 s episodes, the sim.
    A task adds its course, observations, rewards, terminations and events."""

    scene: DroneSceneCfg = DroneSceneCfg(num_envs=1024, env_spacing=25.0)
    actions: DroneActionsCfg = DroneActionsCfg()

    def __post_init__(self):
        self.episode_length_s = 15.0
        _sim(self)


def _to_play(cfg: DroneRacingEnvCfg) -> None:
    """The ``-Play`` variant of a task cfg: 16 envs, 30 s episodes, every episode from the course
    start, course markers on (drawn only when a visualizer runs)."""
    cfg.scene.num_envs = 16
    cfg.episode_length_s = 30.0
    cfg.events.place = EventTerm(func=mdp.place_at_course_start, mode="reset")
    cfg.course.debug_vis = True


@configclass
class DroneGatesEnvCfg(DroneRacingEnvCfg):
    """Race through a loop of gates (frame collision ends the episode); start at a random gate."""

    observations: GatesObsCfg = GatesObsCfg()
    rewards: GatesRewardsCfg = GatesRewardsCfg()
    terminations: GatesTerminationsCfg = GatesTerminationsCfg()
    events: GatesEventsCfg = GatesEventsCfg()
    course: CourseCfg = CourseCfg(
        generator=tg.GateGenConfig(gate_width=1.0, gate_height=1.0, size=10.0),
        collision="frame", half_extents=_HALF, half_height=_HALF_HEIGHT,
    )


@configclass
class DroneGatesEnvCfg_PLAY(DroneGatesEnvCfg):
    """Fewer envs, longer episodes, every episode from the course start."""

    def __post_init__(self):
        super().__post_init__()
        _to_play(self)


# ------------------------------------------------------------------------------------------ track


@configclass
class TrackObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        state = ObsTerm(func=mdp.quad_state)
        frame = ObsTerm(func=mdp.track_frame, params={"vertical": True})
        ahead = ObsTerm(func=mdp.lookahead_points, params={"distances": (1.0, 2.0, 4.0, 6.0)})

    policy: PolicyCfg = PolicyCfg()


@configclass
class TrackRewardsCfg:
    progress = RewTerm(func=mdp.progress_delta, weight=50.0, params={"clip": 0.5})
    checkpoint = RewTerm(func=mdp.checkpoint_passed, weight=25.0)
    lap = RewTerm(func=mdp.lap_completed, weight=500.0)
    crash = RewTerm(func=imdp.is_terminated_term, weight=-250.0, params={"term_keys": ["off_track", "altitude"]})
    wall = RewTerm(func=mdp.collision_penalty, weight=-100.0, params={"depth": True})
    rates = RewTerm(func=mdp.body_rate_l2, weight=-0.05)


@configclass
class TrackTerminationsCfg:
    time_out = DoneTerm(func=imdp.time_out, time_out=True)
    off_track = DoneTerm(func=mdp.off_track, params={"margin": 0.3})
    altitude = DoneTerm(func=mdp.altitude_out_of_range, params={"min_height": 0.1, "max_height": 4.0})
    laps = DoneTerm(func=mdp.laps_done, params={"laps": 2})


@configclass
class TrackEventsCfg:
    course = EventTerm(func=mdp.regenerate_course, mode="reset")
    place = EventTerm(func=mdp.place_at_checkpoint, mode="reset", params={"jitter": (0.1, 0.1, 0.3)})


@configclass
class DroneTrackEnvCfg(DroneRacingEnvCfg):
    """Fly along an elevated band track (3D centerline, 0.8 m wide); leaving the band ends the episode."""

    observations: TrackObsCfg = TrackObsCfg()
    rewards: TrackRewardsCfg = TrackRewardsCfg()
    terminations: TrackTerminationsCfg = TrackTerminationsCfg()
    events: TrackEventsCfg = TrackEventsCfg()
    course: CourseCfg = CourseCfg(
        generator=tg.TrackGenConfig(size=12.0, elevated=True, half_width=0.4, min_length=12.0),
        collision="segments", checkpoint_spacing=1.0, half_extents=_HALF, half_height=_HALF_HEIGHT,
        localize_window=8,
    )


@configclass
class DroneTrackEnvCfg_PLAY(DroneTrackEnvCfg):
    """Fewer envs, longer episodes, every episode from the course start."""

    def __post_init__(self):
        super().__post_init__()
        _to_play(self)
