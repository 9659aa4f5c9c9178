"""Head-to-head racing: :class:`DroneGatesDuelEnvCfg` (``TrackGen-Drone-Gates-Duel-v0``), K drones
(``course.agents``, default 2) racing one procedural gate course per race, one shared policy for
all of them (self-play).

* **how K drones fit Isaac Lab and rsl_rl**: every drone is an Isaac Lab env of its own and the K
  envs ``r*K .. r*K+K-1`` race course ``r`` (``CourseCfg.agents = K``: the course is generated
  once per race, every per-step result is per drone, env-major, which is the env order). So
  ``--num_envs`` counts drones (1024 = 512 races of 2). Each drone has its own observation row,
  reward and done flag in Isaac Lab's managers, and ``isaaclab train --rl_library rsl_rl`` (the
  main job's path, :class:`~isaaclab_rl.rsl_rl.RslRlVecEnvWrapper` unchanged) trains one policy on
  every drone of every race: self-play with no wrapper, no custom runner and no multi-agent
  library. The alternatives: a VecEnv wrapper reshaping ``[E, K*D]`` into ``[E*K, D]`` cannot be
  slotted into ``isaaclab train`` (it wraps the env itself and accepts only rsl_rl's two runner
  classes), and Isaac Lab's multi-agent path (``DirectMARLEnv``, skrl IPPO/MAPPO) needs a direct
  env, not the manager-based terms every task here is made of. The drones of a race share one
  origin (``scene.env_spacing = 0``): they have no collision shape, so nothing touches physically;
  whether two drones touch is ``tools.AgentContacts``.
* **courses**: the generalist's (``presets.gates_real``: lab arenas, hall and field courses, hall
  loops, outdoor sprints; one pass), so the main job's solo racer (``TrackGen-Drone-Gates-Real-v0``) is
  the natural opponent, on the courses it trained on.
* **what a drone sees** (71 values for K = 2): the generalist's 60 values first, in the same order
  (its own state, the next two gates, the two nearest poles), then :class:`~track_gen_isaac.mdp.rivals`
  (11): whether it is still racing, and per rival: racing / finished, position and velocity
  relative to it in its body frame, ahead or behind in the ``tools.Standings`` and its lead along
  the course line. A solo checkpoint trained on ``-Real-`` (60) or ``-Race-`` (50, a prefix of the
  60) therefore flies in this env on the first values of the row: it does not see the other drone.
* **the race** (:class:`~track_gen_isaac.mdp.duel.RaceCfg`, :mod:`track_gen_isaac.mdp.duel`): a
  drone finishes after one pass, crashes on a gate frame or pole, a missed gate, 2.5 m off the
  course line, leaving the 0-9 m altitude band, or by **touching a racing rival** (within 2 x
  :data:`CONTACT_RADIUS`: both crash -- a racer that rams the other loses its own race too). The
  first to finish wins. A drone that is out is held where it stopped until the race ends, which is
  when every drone is out or at the 20 s time limit; the K envs of a race always end together.
* **what it optimises**, per step (Isaac Lab multiplies by weight and dt = 0.02 s), all 0 once
  the drone is out:

  =========  ==========================  =======  =================================================
  term       signal                      weight   meaning
  =========  ==========================  =======  =================================================
  progress   ``progress`` (clip 25 m/s)  1.0      1 per metre along the course line (the racer's)
  gate       ``gate``                    250      5 per gate
  finish     ``finish``                  500      10 for finishing
  win        ``win``                     500      10 more for finishing first
  crash      ``crash``                   -500     -10 once (contact included), as the racer
  proximity  ``proximity`` (0.3 m)       -25      up to -0.5/s when within 0.3 m of contact
  rates      ``rates``                   -0.05    smooth flight, as the racer
  =========  ==========================  =======  =================================================

* **starts**: half of the races from the course start (a standing start or a take-off, side by
  side 0.6 m apart), the other half side by side on a random gate, each drone jittered; randomized
  dynamics per drone (the racer's ranges) and the racer's observation noise and safety margin.

``TrackGen-Drone-Gates-Duel-Play-v0`` flies the centre plant, the body's own box and standing
starts only (``duel-v1`` flies it). Both have ``-Warp-`` twins.
"""

from __future__ import annotations

from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.utils import configclass

from track_gen import tools
from track_gen_isaac import mdp
from track_gen_isaac.course_cfg import CourseCfg
from track_gen_isaac.mdp.duel import RaceCfg
from track_gen_isaac.tasks.drone_gates_track import _HALF_HEIGHT, DroneRacingEnvCfg, GatesEventsCfg
from track_gen_isaac.tasks.drone_generalist import ALTITUDE, DroneGatesRealEnvCfg, RealObsCfg
from track_gen_isaac.tasks.drone_racer import body_box, centre_plant

__all__ = ["DroneGatesDuelEnvCfg", "DroneGatesDuelEnvCfg_PLAY", "AGENTS", "CONTACT_RADIUS", "GRID_SPACING",
           "START_SHARE", "SOLO_OBS"]

#: drones per race (``course.agents``)
AGENTS = 2
#: each drone is a sphere of this radius for AgentContacts [m]: contact within 0.2 m between
#: centres, about one body length (0.092 m) of air between the rotor tips
CONTACT_RADIUS = 0.1
#: lateral distance between neighbours on the starting grid [m]
GRID_SPACING = 0.6
#: share of the training races that start at the course start (the rest: on a random gate)
START_SHARE = 0.5
#: the generalist's observation width: the first values of a duel row (a solo policy's input)
SOLO_OBS = 60


def _contacts():
    return tools.AgentContacts(radius=CONTACT_RADIUS)


@configclass
class DuelObsCfg:
    @configclass
    class PolicyCfg(RealObsCfg.PolicyCfg):
        rivals = ObsTerm(func=mdp.rivals)

    policy: PolicyCfg = PolicyCfg()


@configclass
class DuelRewardsCfg:
    progress = RewTerm(func=mdp.race_reward, weight=1.0, params={"signal": "progress", "clip": 25.0})
    gate = RewTerm(func=mdp.race_reward, weight=250.0, params={"signal": "gate"})
    finish = RewTerm(func=mdp.race_reward, weight=500.0, params={"signal": "finish"})
    win = RewTerm(func=mdp.race_reward, weight=500.0, params={"signal": "win"})
    crash = RewTerm(func=mdp.race_reward, weight=-500.0, params={"signal": "crash"})
    proximity = RewTerm(func=mdp.race_reward, weight=-25.0, params={"signal": "proximity", "margin": 0.3})
    rates = RewTerm(func=mdp.race_reward, weight=-0.05, params={"signal": "rates"})


@configclass
class DuelTerminationsCfg:
    # first: its read steps the course (and the race) for the env step
    race = DoneTerm(func=mdp.race_over)
    time_out = DoneTerm(func=mdp.race_time_out, time_out=True)


@configclass
class DuelEventsCfg:
    # the plant first: its mass and inertia reach the solver before the placement's pose write
    dynamics = EventTerm(func=mdp.randomize_quadrotor, mode="reset")
    course = GatesEventsCfg().course
    place = EventTerm(func=mdp.place_on_grid, mode="reset",
                      params={"start_share": START_SHARE, "spacing": GRID_SPACING, "jitter": (0.1, 0.2, 0.2),
                              "start_jitter": (0.05, 0.0, 0.1), "z_offset": _HALF_HEIGHT})


@configclass
class DroneGatesDuelEnvCfg(DroneGatesRealEnvCfg):
    """K drones (``course.agents``) per procedural gate course, one policy for all (self-play)."""

    observations: DuelObsCfg = DuelObsCfg()
    rewards: DuelRewardsCfg = DuelRewardsCfg()
    terminations: DuelTerminationsCfg = DuelTerminationsCfg()
    events: DuelEventsCfg = DuelEventsCfg()
    course: CourseCfg = DroneGatesRealEnvCfg().course.replace(agents=AGENTS, extra=[_contacts, tools.Standings])
    race: RaceCfg = RaceCfg(laps=1, max_distance=2.5, altitude=ALTITUDE, contact_crash=True)

    def __post_init__(self):
        DroneRacingEnvCfg.__post_init__(self)  # not the generalist's: its terminations are not these
        self.episode_length_s = 20.0
        self.scene.env_spacing = 0.0  # the K envs of a race share one origin
        # the fixed mixture the duel results were measured on (the generalist's curriculum over the
        # kinds of course counts one drone per env; a race's drones share one course)
        self.curriculum = None


@configclass
class DroneGatesDuelEnvCfg_PLAY(DroneGatesDuelEnvCfg):
    """16 drones (8 races), 30 s, standing starts side by side only, the centre plant, the body's own box."""

    def __post_init__(self):
        super().__post_init__()
        self.scene.num_envs = 16
        self.episode_length_s = 30.0
        self.events.place.params.update({"start_share": 1.0, "start_jitter": (0.0, 0.0, 0.0)})
        centre_plant(self)
        body_box(self)
