"""Racing gates from depth: :class:`DroneGatesDepthEnvCfg` (``TrackGen-Drone-Gates-Depth-v0``), the gate task
with a forward depth camera instead of the gates' poses.

* **what the policy sees**: its own state (:class:`~track_gen_isaac.mdp.racer_state`: body velocity 3,
  rotation matrix 9, body rates 3, last action 4, height 1) and a 16 x 12 depth image
  (:class:`~track_gen_isaac.mdp.depth_flat`, divided by ``far`` so a pixel that sees nothing reads 1),
  cast exactly against the course (gate frames, the ground) with no renderer
  (``CourseCfg.depth_camera``). Nothing tells it where the next gate is but the image.
* **the camera** (:data:`DEPTH_CAMERA`): 90 deg horizontal field of view (74 deg vertical), 0.05 ... 10 m,
  on the nose of the body (5 cm forward), looking along body x (no pitch: the drone tilts it when
  it accelerates, as on a real racer).
* **why 16 x 12**: the image is cast on the CPU inside every env step and is the policy's widest
  input. Its gates are 2.4 m apart on average; from a gate, facing the next, 91% of the envs see a
  gate in the 16 x 12 image (6 pixels of frame on average; all envs at 32 x 24), and the image
  adds about 40% to the Gates task's env step on the CPU where 32 x 24 adds about 130% (256 envs;
  docs: "Depth without a renderer" in the Isaac Lab guide). Thin bars are point sampled: a 5 cm
  bar shows only where a pixel's centre ray meets it, so far gates appear in pieces.
* **rewards, terminations, events**: the gate task's (:mod:`track_gen_isaac.tasks.drone_gates_track`):
  progress along the course line, gates, laps, a crash penalty, body rates; frame collision, a
  missed gate, 2.5 m off the course line or the altitude band end the episode; each episode starts
  at a random gate.

``TrackGen-Drone-Gates-Depth-Play-v0``: 16 envs, 30 s episodes from the course start. Both run in both
runtimes (``-Warp-`` ids). PPO settings: the ``[depth]`` table of ``drone_racing_ppo.toml``.
"""

from __future__ import annotations

from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.utils import configclass

import track_gen as tg
from track_gen_isaac import mdp
from track_gen_isaac.course_cfg import CourseCfg, DepthCameraCfg
from track_gen_isaac.tasks.drone_gates_track import _HALF, _HALF_HEIGHT, DroneGatesEnvCfg, _to_play

__all__ = ["DroneGatesDepthEnvCfg", "DroneGatesDepthEnvCfg_PLAY", "DEPTH_CAMERA"]

#: the task's camera: 16 x 12 pixels, 90 deg, 0.05 ... 10 m, 5 cm ahead of the body centre
DEPTH_CAMERA = DepthCameraCfg(width=16, height=12, fov_deg=90.0, near=0.05, far=10.0, offset=(0.05, 0.0, 0.0),
                              pitch_deg=0.0)


@configclass
class DepthObsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        state = ObsTerm(func=mdp.racer_state, params={"attitude": "matrix"})
        depth = ObsTerm(func=mdp.depth_flat, scale=1.0 / DEPTH_CAMERA.far)

    policy: PolicyCfg = PolicyCfg()


@configclass
class DroneGatesDepthEnvCfg(DroneGatesEnvCfg):
    """Race a loop of gates seeing only a depth image and its own state (no gate poses)."""

    observations: DepthObsCfg = DepthObsCfg()
    course: CourseCfg = CourseCfg(
        generator=tg.GateGenConfig(gate_width=1.0, gate_height=1.0, size=10.0),
        collision="frame", half_extents=_HALF, half_height=_HALF_HEIGHT, depth_camera=DEPTH_CAMERA,
    )


@configclass
class DroneGatesDepthEnvCfg_PLAY(DroneGatesDepthEnvCfg):
    """Fewer envs, longer episodes, every episode from the course start."""

    def __post_init__(self):
        super().__post_init__()
        _to_play(self)
