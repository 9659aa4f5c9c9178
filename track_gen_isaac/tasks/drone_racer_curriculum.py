"""The racer on harder courses: :class:`DroneGatesRaceCurriculumEnvCfg`
(``TrackGen-Drone-Gates-Race-Curriculum-v0``) is the racer (:mod:`~track_gen_isaac.tasks.drone_racer`:
body-frame observations, progress rate, randomized dynamics and noise) flying the curriculum task's
courses (:mod:`~track_gen_isaac.tasks.drone_gates_curriculum`): each env's difficulty rises after an
episode that completed a lap and falls after one that did not, up to figure-8s, hairpins, split-S,
climbs to 5.5 m and four pole obstacles at difficulty 1. A pole ends the episode like a frame.
Training collides with the body grown by the racer's :data:`~track_gen_isaac.tasks.drone_racer.SAFETY_MARGIN`
(frames and poles alike: the course binds one box for every collision component).

``-Play-v0`` flies the racer's centre plant (:func:`~track_gen_isaac.tasks.drone_racer.centre_plant`)
with the body's own box, 16 envs from the course start. Evaluate it on the hard suite with ``python -m
track_gen_isaac.evaluate --checkpoint <run folder> --suite gates-hard-v1``.
"""

from __future__ import annotations

from isaaclab.utils import configclass

from track_gen_isaac.course_cfg import CourseCfg
from track_gen_isaac.tasks.drone_gates_curriculum import (CurriculumCfg, CurriculumTerminationsCfg,
                                                          DroneGatesCurriculumEnvCfg)
from track_gen_isaac.tasks.drone_racer import SAFETY_MARGIN, DroneGatesRaceEnvCfg, body_box, centre_plant, with_margin
from track_gen_isaac.tasks.drone_gates_track import _to_play

__all__ = ["DroneGatesRaceCurriculumEnvCfg", "DroneGatesRaceCurriculumEnvCfg_PLAY"]


@configclass
class DroneGatesRaceCurriculumEnvCfg(DroneGatesRaceEnvCfg):
    """The racer on courses whose difficulty each env earns (pole obstacles included), with its
    safety margin."""

    terminations: CurriculumTerminationsCfg = CurriculumTerminationsCfg()
    curriculum: CurriculumCfg = CurriculumCfg()
    course: CourseCfg = with_margin(DroneGatesCurriculumEnvCfg().course, SAFETY_MARGIN)


@configclass
class DroneGatesRaceCurriculumEnvCfg_PLAY(DroneGatesRaceCurriculumEnvCfg):
    """Fewer envs, longer episodes, every episode from the course start, the centre plant, the body's
    own box (no safety margin)."""

    def __post_init__(self):
        super().__post_init__()
        _to_play(self)
        centre_plant(self)
        body_box(self)
