"""Domain randomization of the quadrotor, warp runtime: the launch of :mod:`track_gen_isaac.mdp.randomization`
with the warp event manager's signature (``env_mask``)."""

from __future__ import annotations

from isaaclab_experimental.managers import ManagerTermBase as WarpManagerTermBase

from track_gen_isaac.mdp import randomization as stable_rand

__all__ = ["randomize_quadrotor"]

R = stable_rand.RANGES


class randomize_quadrotor(stable_rand.randomize_quadrotor, WarpManagerTermBase):
    __doc__ = stable_rand.randomize_quadrotor.__doc__

    def __call__(self, env, env_mask, action_name: str = "rotors", asset_name: str = "robot", seed=None,
                 mass_scale=R["mass_scale"], inertia_scale=R["inertia_scale"], thrust_scale=R["thrust_scale"],
                 torque_scale=R["torque_scale"], motor_time_constant=R["motor_time_constant"],
                 linear_drag=R["linear_drag"], latency=R["latency"]):
        if env_mask is None:
            env_mask = self._mask
            self._mask_t.fill_(True)
        self.launch(env_mask)

    def reset(self, env_ids=None, env_mask=None):
        return None
