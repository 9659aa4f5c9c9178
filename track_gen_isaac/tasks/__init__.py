"""Registered gymnasium tasks (Isaac Lab discovers them through the ``isaaclab.tasks`` entry point).

=================================  ===================================================
task id                            what
=================================  ===================================================
``TrackGen-Drone-Gates-v0``        quadrotor racing a gate course per env (training)
``TrackGen-Drone-Gates-Play-v0``   16 envs, 30 s episodes from the course start, markers
``TrackGen-Drone-Track-v0``        quadrotor flying an elevated band track per env
``TrackGen-Drone-Track-Play-v0``   as above, for playback
``TrackGen-Drone-Gates-Race-v0``   the racer: body-frame observations, progress rate, randomized dynamics
``TrackGen-Drone-Gates-Race-Play-v0``  the racer's playback on its centre plant
``TrackGen-Drone-Gates-Race-Curriculum-v0``  the racer on the curriculum task's harder courses
``TrackGen-Drone-Gates-Real-v0``   the generalist: the racer on courses at every scale of real tracks (main job)
``TrackGen-Drone-Gates-Real-Play-v0``  its playback on the centre plant
``TrackGen-Drone-Gates-Curriculum-v0``  harder gate courses (pole obstacles) at a per-env difficulty curriculum
``TrackGen-Drone-Gates-Depth-v0``  the gate task seen through a 16 x 12 depth camera (no gate poses)
``TrackGen-Drone-Gates-Depth-Play-v0``  its playback
``TrackGen-Car-Track-v0``          an F1TENTH race car on a circuit-like band track per env (1/10 scale)
``TrackGen-Car-Track-Play-v0``     its playback: 16 envs, whole laps from the course start
``TrackGen-Drone-Gates-Duel-v0``   head to head: 2 drones per generalist course, one policy (self-play)
``TrackGen-Drone-Gates-Duel-Play-v0``  its playback: standing starts side by side, centre plant
``*-Warp-*``                       the same tasks in Isaac Lab's warp-first runtime
=================================  ===================================================

The stable ids run ``ManagerBasedRLEnv``; the ``-Warp-`` ids run ``ManagerBasedRLEnvWarp`` on the
same cfg (its terms swapped for their warp twins). ``isaaclab train --frontend warp`` on a stable
id does the same swap.
"""

import gymnasium as gym

__all__ = ["TASKS"]

_STABLE = "isaaclab.envs:ManagerBasedRLEnv"
_WARP = "isaaclab_experimental.envs:ManagerBasedRLEnvWarp"

#: task id -> (env cfg, rsl_rl cfg, entry point)
TASKS: dict[str, tuple[str, str, str]] = {}

for _family, _mod, _cls, _agent in (("Gates", "drone_gates_track", "DroneGatesEnvCfg", "drone_gates_ppo"),
                                    ("Track", "drone_gates_track", "DroneTrackEnvCfg", "drone_track_ppo"),
                                    ("Gates-Race", "drone_racer", "DroneGatesRaceEnvCfg", "drone_race_ppo"),
                                    ("Gates-Curriculum", "drone_gates_curriculum", "DroneGatesCurriculumEnvCfg",
                                     "drone_gates_ppo"),
                                    ("Gates-Depth", "drone_depth", "DroneGatesDepthEnvCfg", "drone_depth_ppo"),
                                    ("Gates-Race-Curriculum", "drone_racer_curriculum",
                                     "DroneGatesRaceCurriculumEnvCfg", "drone_race_ppo"),
                                    ("Gates-Real", "drone_generalist", "DroneGatesRealEnvCfg", "drone_real_ppo"),
                                    ("Gates-Duel", "drone_duel", "DroneGatesDuelEnvCfg", "drone_duel_ppo")):
    for _play in ("", "_PLAY"):
        for _runtime, _entry in (("", _STABLE), ("-Warp", _WARP)):
            _id = f"TrackGen-Drone-{_family}{_runtime}{'-Play' if _play else ''}-v0"
            TASKS[_id] = (f"{__name__}.{_mod}:{_cls}{_play}", f"{__name__}.agents:{_agent}", _entry)

for _family, _mod, _cls, _agent in (("Track", "car_track", "CarTrackEnvCfg", "car_track_ppo"),):
    for _play in ("", "_PLAY"):
        for _runtime, _entry in (("", _STABLE), ("-Warp", _WARP)):
            _id = f"TrackGen-Car-{_family}{_runtime}{'-Play' if _play else ''}-v0"
            TASKS[_id] = (f"{__name__}.{_mod}:{_cls}{_play}", f"{__name__}.agents:{_agent}", _entry)

for _id, (_env, _agent, _entry) in TASKS.items():
    if _id not in gym.registry:
        gym.register(
            id=_id,
            entry_point=_entry,
            disable_env_checker=True,
            kwargs={"env_cfg_entry_point": _env, "rsl_rl_cfg_entry_point": _agent, "default_agent": "rsl_rl"},
        )
