"""The racer's observations, warp runtime: the launches of :mod:`track_gen_isaac.mdp.racer_observations`
with the warp managers' signatures (``out``, ``env_mask``)."""

from __future__ import annotations

import types

from isaaclab_experimental.managers import ManagerTermBase as WarpManagerTermBase

from track_gen_isaac.experimental.mdp._base import ReaderTerm
from track_gen_isaac.experimental.mdp.observations import _ObsTerm
from track_gen_isaac.mdp import racer_observations as stable_obs

__all__ = ["racer_state", "gate_frames", "nearest_poles", "course_remaining"]


class racer_state(stable_obs.racer_state, WarpManagerTermBase):
    __doc__ = stable_obs.racer_state.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._descriptor = types.SimpleNamespace(out_dim=self.dim, extras={})

    def __call__(self, env, out, action_name: str = "rotors", asset_name: str = "robot", attitude: str = "matrix",
                 last_action: bool = True, height: bool = True, noise_std: tuple = (0.0, 0.0, 0.0, 0.0)):
        self.launch(out)

    def reset(self, env_ids=None, env_mask=None):
        self.noise.reset(env_mask=env_mask, env_ids=env_ids)
        return None


class gate_frames(_ObsTerm, stable_obs.gate_frames):
    __doc__ = stable_obs.gate_frames.__doc__
    modes = ("gates",)

    def __call__(self, env, out, course_name: str = "course", num: int = 2, corners: bool = False,
                 noise_std: float = 0.0, previous: bool = False):
        self.launch(out, num=num, corners=corners, noise_std=noise_std, previous=previous)

    def reset(self, env_ids=None, env_mask=None):
        self.noise.reset(env_mask=env_mask, env_ids=env_ids)
        return ReaderTerm.reset(self, env_ids, env_mask)


class nearest_poles(_ObsTerm, stable_obs.nearest_poles):
    __doc__ = stable_obs.nearest_poles.__doc__
    modes = ("gates",)

    def __call__(self, env, out, course_name: str = "course", num: int = 2, noise_std: float = 0.0,
                 max_range: float | None = None):
        self.launch(out, num=num, noise_std=noise_std, max_range=max_range)

    def reset(self, env_ids=None, env_mask=None):
        self.noise.reset(env_mask=env_mask, env_ids=env_ids)
        return ReaderTerm.reset(self, env_ids, env_mask)


class course_remaining(_ObsTerm, stable_obs.course_remaining):
    __doc__ = stable_obs.course_remaining.__doc__

    def __call__(self, env, out, course_name: str = "course"):
        self.launch(out)
