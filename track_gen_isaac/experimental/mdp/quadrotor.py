"""Quadrotor terms, warp runtime: the same kernels, buffers and launches as :mod:`track_gen_isaac.mdp.quadrotor`,
with the warp managers' signatures (``out`` arrays, ``env_mask``, ``action_offset``)."""

from __future__ import annotations

import types

import warp as wp
from isaaclab_experimental.managers import ActionTerm
from isaaclab_experimental.managers import ManagerTermBase as WarpManagerTermBase

from track_gen_isaac.mdp import quadrotor as stable

__all__ = ["QuadrotorAction", "quad_state", "body_rate_l2", "altitude_out_of_range"]


class QuadrotorAction(ActionTerm):
    __doc__ = stable.QuadrotorAction.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self.dyn = stable.setup_quadrotor(self, cfg, env)
        E = self.num_envs
        self._force = wp.zeros((E, 1), dtype=wp.vec3f, device=self.device)
        self._torque = wp.zeros((E, 1), dtype=wp.vec3f, device=self.device)

    @property
    def action_dim(self) -> int:
        return 4

    @property
    def raw_actions(self) -> wp.array:
        return self.dyn.raw

    @property
    def processed_actions(self) -> wp.array:
        return self.dyn.raw

    def process_actions(self, actions: wp.array, action_offset: int = 0):
        self.dyn.command(actions, action_offset)

    def apply_actions(self):
        data = self._asset.data
        self.dyn.substep(data.root_quat_w.warp, data.root_com_vel_w.warp, self._force, self._torque)
        self._asset.permanent_wrench_composer.set_forces_and_torques_mask(forces=self._force, torques=self._torque)

    def reset(self, env_ids=None, env_mask: wp.array | None = None) -> None:
        self.dyn.reset(env_mask)


class quad_state(stable.quad_state, WarpManagerTermBase):
    __doc__ = stable.quad_state.__doc__

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._descriptor = types.SimpleNamespace(out_dim=14, extras={})

    def __call__(self, env, out, action_name: str = "rotors", asset_name: str = "robot"):
        self.launch(out)

    def reset(self, env_ids=None, env_mask=None):
        return None


def body_rate_l2(env, out, asset_name: str = "robot") -> None:
    """|angular velocity|^2 [rad^2/s^2] of the asset's root (use a negative weight)."""
    stable.body_rate_sq(env, out, asset_name)


class altitude_out_of_range(stable.altitude_out_of_range, WarpManagerTermBase):
    __doc__ = stable.altitude_out_of_range.__doc__

    def __call__(self, env, out, min_height: float = 0.05, max_height: float = 5.0, asset_name: str = "robot"):
        self.launch(out, min_height, max_height)

    def reset(self, env_ids=None, env_mask=None):
        return None
