"""Small kitless env cfgs for the Isaac tests: Newton on the CPU, a procedural cuboid robot, an offline ground."""

from __future__ import annotations

import isaaclab.envs.mdp as imdp
import isaaclab.sim as sim_utils
from isaaclab.assets import AssetBaseCfg, RigidObjectCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.utils import configclass
from isaaclab_newton.physics import MJWarpSolverCfg, NewtonCfg

import track_gen as tg
from track_gen_isaac import CourseCfg
from track_gen_isaac import mdp

HALF = (0.15, 0.1, 0.05)  # robot half extents (x, y, z) [m]


@configclass
class SceneCfg(InteractiveSceneCfg):
    # a static collider as the ground (no download): collision props, no rigid props
    ground = AssetBaseCfg(
        prim_path="/World/ground",
        spawn=sim_utils.CuboidCfg(size=(400.0, 400.0, 0.1), collision_props=sim_utils.UsdPhysicsCollisionCfg()),
        init_state=AssetBaseCfg.InitialStateCfg(pos=(0.0, 0.0, -0.05)),
    )
    robot = RigidObjectCfg(
        prim_path="{ENV_REGEX_NS}/Robot",
        spawn=sim_utils.CuboidCfg(
            size=(2 * HALF[0], 2 * HALF[1], 2 * HALF[2]),
            mass_props=sim_utils.MassCfg(mass=0.5),
            rigid_props=sim_utils.UsdPhysicsRigidBodyCfg(kinematic_enabled=True),
            collision_props=sim_utils.UsdPhysicsCollisionCfg(),
        ),
        init_state=RigidObjectCfg.InitialStateCfg(pos=(0.0, 0.0, 1.0)),
    )


@configclass
class ActCfg:
    pass


@configclass
class GatesObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        gates = ObsTerm(func=mdp.next_gates, params={"num": 2})
        frame = ObsTerm(func=mdp.track_frame)
        ahead = ObsTerm(func=mdp.lookahead_points, params={"distances": (0.5, 1.5, 3.0)})
        laps = ObsTerm(func=mdp.lap_progress)

        def __post_init__(self):
            self.concatenate_terms = False

    policy: PolicyCfg = PolicyCfg()


@configclass
class GatesRewCfg:
    progress = RewTerm(func=mdp.progress_delta, weight=1.0)
    passed = RewTerm(func=mdp.checkpoint_passed, weight=1.0)
    lap = RewTerm(func=mdp.lap_completed, weight=5.0)
    crash = RewTerm(func=mdp.collision_penalty, weight=-1.0)
    clear = RewTerm(func=mdp.clearance_penalty, weight=-0.5, params={"margin": 1.0})
    off = RewTerm(func=mdp.off_track_penalty, weight=-1.0, params={"max_distance": 2.0})
    wrong = RewTerm(func=mdp.wrong_way_penalty, weight=-1.0)


@configclass
class GatesTermCfg:
    time_out = DoneTerm(func=imdp.time_out, time_out=True)
    crash = DoneTerm(func=mdp.collided)
    missed = DoneTerm(func=mdp.gate_missed)
    laps = DoneTerm(func=mdp.laps_done, params={"laps": 1})
    invalid = DoneTerm(func=mdp.invalid_course)


@configclass
class EvCfg:
    regenerate = EventTerm(func=mdp.regenerate_course, mode="reset")
    place = EventTerm(func=mdp.place_at_course_start, mode="reset")


@configclass
class GatesEnvCfg(ManagerBasedRLEnvCfg):
    scene: SceneCfg = SceneCfg(num_envs=8, env_spacing=30.0)
    observations: GatesObsCfg = GatesObsCfg()
    actions: ActCfg = ActCfg()
    rewards: GatesRewCfg = GatesRewCfg()
    terminations: GatesTermCfg = GatesTermCfg()
    events: EvCfg = EvCfg()
    course: CourseCfg = CourseCfg(
        generator=tg.GateGenConfig(gate_width=1.0, gate_height=1.0, size=12.0),
        collision="frame", half_extents=HALF[:2], half_height=HALF[2], seed=7,
    )

    def __post_init__(self):
        self.decimation = 2
        self.episode_length_s = 100.0
        self.sim.dt = 1 / 100
        self.sim.device = "cpu"
        self.sim.physics = NewtonCfg(solver_cfg=MJWarpSolverCfg(), use_cuda_graph=False)


@configclass
class TrackObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        cps = ObsTerm(func=mdp.next_checkpoints, params={"num": 3})
        frame = ObsTerm(func=mdp.track_frame)
        ahead = ObsTerm(func=mdp.lookahead_points, params={"distances": (1.0, 2.0)})
        laps = ObsTerm(func=mdp.lap_progress, params={"laps": 2})

        def __post_init__(self):
            self.concatenate_terms = False

    policy: PolicyCfg = PolicyCfg()


@configclass
class TrackRewCfg:
    progress = RewTerm(func=mdp.progress_delta, weight=1.0)
    passed = RewTerm(func=mdp.checkpoint_passed, weight=1.0)
    crash = RewTerm(func=mdp.collision_penalty, weight=-1.0, params={"depth": True})
    off = RewTerm(func=mdp.off_track_penalty, weight=-1.0)


@configclass
class TrackTermCfg:
    time_out = DoneTerm(func=imdp.time_out, time_out=True)
    off = DoneTerm(func=mdp.off_track, params={"margin": 0.5})
    laps = DoneTerm(func=mdp.laps_done, params={"laps": 2})


@configclass
class TrackEvCfg:
    regenerate = EventTerm(func=mdp.regenerate_course, mode="reset")
    place = EventTerm(func=mdp.place_at_checkpoint, mode="reset",
                      params={"jitter": (0.1, 0.0, 0.2), "z_offset": HALF[2]})


@configclass
class TrackCurrCfg:
    size = CurrTerm(func=mdp.course_schedule,
                    params={"param": "centerline.size", "values": (10.0, 12.0), "min_episodes": 4})


@configclass
class TrackEnvCfg(ManagerBasedRLEnvCfg):
    scene: SceneCfg = SceneCfg(num_envs=8, env_spacing=30.0)
    observations: TrackObsCfg = TrackObsCfg()
    actions: ActCfg = ActCfg()
    rewards: TrackRewCfg = TrackRewCfg()
    terminations: TrackTermCfg = TrackTermCfg()
    events: TrackEvCfg = TrackEvCfg()
    curriculum: TrackCurrCfg = TrackCurrCfg()
    course: CourseCfg = CourseCfg(
        generator=tg.TrackGenConfig(size=10.0, min_length=8.0), collision="segments", checkpoint_spacing=1.0,
        half_extents=HALF[:2], localize_window=8,
    )

    def __post_init__(self):
        self.seed = 11
        self.decimation = 2
        self.episode_length_s = 100.0
        self.sim.dt = 1 / 100
        self.sim.device = "cpu"
        self.sim.physics = NewtonCfg(solver_cfg=MJWarpSolverCfg(), use_cuda_graph=False)


# -- a ground rover on a flat band track: the terms a task author reaches for (issue 19) ---------
@configclass
class RoverObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        frame = ObsTerm(func=mdp.track_frame, params={"vertical": True})
        vel = ObsTerm(func=mdp.track_frame_velocity)
        ahead = ObsTerm(func=mdp.lookahead_points, params={"distances": (1.0, 2.0)})

        def __post_init__(self):
            self.concatenate_terms = False

    policy: PolicyCfg = PolicyCfg()


@configclass
class RoverRewCfg:
    rate = RewTerm(func=mdp.progress_rate, weight=1.0)
    progress = RewTerm(func=mdp.progress_delta, weight=1.0)
    passed = RewTerm(func=mdp.checkpoint_passed, weight=1.0)
    lap = RewTerm(func=mdp.lap_completed, weight=1.0)


@configclass
class RoverTermCfg:
    time_out = DoneTerm(func=imdp.time_out, time_out=True)
    off = DoneTerm(func=mdp.off_track, params={"margin": 1.0})
    laps = DoneTerm(func=mdp.laps_done, params={"laps": 1})


@configclass
class RoverEvCfg:
    regenerate = EventTerm(func=mdp.regenerate_course, mode="reset")
    place = EventTerm(func=mdp.place_at_course_start, mode="reset")  # z_offset: CourseCfg.half_height


@configclass
class RoverEnvCfg(ManagerBasedRLEnvCfg):
    scene: SceneCfg = SceneCfg(num_envs=8, env_spacing=30.0)
    observations: RoverObsCfg = RoverObsCfg()
    actions: ActCfg = ActCfg()
    rewards: RoverRewCfg = RoverRewCfg()
    terminations: RoverTermCfg = RoverTermCfg()
    events: RoverEvCfg = RoverEvCfg()
    course: CourseCfg = CourseCfg(
        generator=tg.TrackGenConfig(size=10.0, min_length=8.0), checkpoint_spacing=1.0,
        half_extents=HALF[:2], half_height=HALF[2], localize_window=8, seed=5,
    )

    def __post_init__(self):
        self.decimation = 2
        self.episode_length_s = 4.0
        self.sim.dt = 1 / 100
        self.sim.device = "cpu"
        self.sim.physics = NewtonCfg(solver_cfg=MJWarpSolverCfg(), use_cuda_graph=False)
