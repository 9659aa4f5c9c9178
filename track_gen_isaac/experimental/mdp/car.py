"""Race-car terms, warp runtime: the same kernels, buffers and launches as :mod:`track_gen_isaac.mdp.car`, with
the warp managers' signatures (``out`` arrays, ``env_mask``, ``action_offset``)."""

from __future__ import annotations

import types

import warp as wp
from isaaclab_experimental.managers import ActionTerm
from isaaclab_experimental.managers import ManagerTermBase as WarpManagerTermBase

from track_gen_isaac.experimental.mdp.observations import _ObsTerm
from track_gen_isaac.mdp import car as stable
from track_gen_isaac.mdp import car_safety as safety

__all__ = ["CarAction", "car_state", "band_ahead", "car_spun", "car_stalled", "car_slip_l2"]


class CarAction(ActionTerm):
    __doc__ = stable.CarAction.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self.driver = stable.CarDriver(self, cfg, env)
        self.dyn = self.driver.dyn

    @property
    def action_dim(self) -> int:
        return 2

    @property
    def raw_actions(self) -> wp.array:
        return self.driver.raw

    @property
    def processed_actions(self) -> wp.array:
        return self.driver.scaled

    def process_actions(self, actions: wp.array, action_offset: int = 0):
        self.driver.command(actions, action_offset)

    def apply_actions(self):
        self.driver.step()

    def reset(self, env_ids=None, env_mask: wp.array | None = None) -> None:
        self.driver.reset(env_mask)


class car_state(stable.car_state, WarpManagerTermBase):
    __doc__ = stable.car_state.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._descriptor = types.SimpleNamespace(out_dim=stable.CAR_STATE_DIM, extras={})

    def __call__(self, env, out, action_name: str = "car"):
        self.launch(out)

    def reset(self, env_ids=None, env_mask=None):
        return None


class band_ahead(_ObsTerm, stable.band_ahead):
    __doc__ = stable.band_ahead.__doc__

    def __call__(self, env, out, course_name: str = "course", distances: tuple = (1.0, 2.0, 4.0), peak: bool = False):
        self.launch(out, distances=distances, peak=peak)


class car_spun(safety.car_spun, WarpManagerTermBase):
    __doc__ = safety.car_spun.__doc__

    def __call__(self, env, out, max_slip: float = 0.5, action_name: str = "car"):
        self.launch(out, max_slip)

    def reset(self, env_ids=None, env_mask=None):
        return None


class car_stalled(safety.car_stalled, WarpManagerTermBase):
    __doc__ = safety.car_stalled.__doc__

    def __call__(self, env, out, min_speed: float = 0.3, patience: float = 2.0, action_name: str = "car"):
        self.launch(out, min_speed, patience)

    def reset(self, env_ids=None, env_mask=None):
        if env_mask is not None:
            self.reset_mask(env_mask)
        else:
            safety.car_stalled.reset(self, env_ids)


def car_slip_l2(env, out, action_name: str = "car", rolling: bool = False) -> None:
    """The slip angle squared [rad^2] (use a negative weight); with ``rolling`` only the slip beyond the
    rolling slip of the steering angle (:func:`track_gen_isaac.mdp.car_slip_l2`)."""
    safety.car_slip_sq(env, out, action_name, rolling)
