"""The gate task with harder courses and a per-env difficulty curriculum.

:class:`DroneGatesCurriculumEnvCfg` is :class:`~track_gen_isaac.tasks.drone_gates_track.DroneGatesEnvCfg`
with courses drawn at a per-env ``difficulty`` (figure-8s, hairpins, split-S, climbs up to 5.5 m and
up to four pole obstacles at difficulty 1: ``docs/user-guide/difficulty.rst``) that
:class:`~track_gen_isaac.mdp.curriculum.course_difficulty` raises after an episode that completed a
lap and lowers after one that did not. Hitting a pole ends the episode like hitting a frame
(:class:`~track_gen_isaac.mdp.terminations.collided` reads both).
"""

from __future__ import annotations

from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.utils import configclass

import track_gen as tg
from track_gen_isaac import mdp
from track_gen_isaac.course_cfg import CourseCfg
from track_gen_isaac.tasks.drone_gates_track import (
    _HALF,
    _HALF_HEIGHT,
    DroneGatesEnvCfg,
    GatesTerminationsCfg,
    _to_play,
)

__all__ = ["DroneGatesCurriculumEnvCfg", "DroneGatesCurriculumEnvCfg_PLAY"]


@configclass
class CurriculumCfg:
    # success (a lap) raises an env's level by 0.1, any other ending lowers it by 0.05
    difficulty = CurrTerm(func=mdp.course_difficulty, params={"up": 0.1, "down": 0.05, "laps": 1})


@configclass
class CurriculumTerminationsCfg(GatesTerminationsCfg):
    # gates climb to 5.5 m at difficulty 1
    altitude = DoneTerm(func=mdp.altitude_out_of_range, params={"min_height": 0.1, "max_height": 7.0})


@configclass
class DroneGatesCurriculumEnvCfg(DroneGatesEnvCfg):
    """Gate courses whose difficulty each env earns; up to four pole obstacles per course."""

    terminations: CurriculumTerminationsCfg = CurriculumTerminationsCfg()
    curriculum: CurriculumCfg = CurriculumCfg()
    course: CourseCfg = CourseCfg(
        generator=tg.GateGenConfig(gate_width=1.0, gate_height=1.0, size=10.0, max_obstacles=4),
        collision="frame", half_extents=_HALF, half_height=_HALF_HEIGHT,
    )


@configclass
class DroneGatesCurriculumEnvCfg_PLAY(DroneGatesCurriculumEnvCfg):
    """Fewer envs, longer episodes, every episode from the course start."""

    def __post_init__(self):
        super().__post_init__()
        _to_play(self)
