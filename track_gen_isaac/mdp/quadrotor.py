"""Quadrotor terms (stable runtime): the rate-command action, the drone's own state, its penalties.

* :class:`QuadrotorActionCfg` / :class:`QuadrotorAction`: 4-D action in [-1, 1] -> collective
  thrust + body rates -> rate controller, mixer, motor limits and lag (every physics substep)
  -> a body-frame wrench on the asset's *permanent* wrench composer.
* :class:`quad_state`: [E, 14] observation (body velocity, rates, gravity direction, rotor
  thrusts, height).
* :func:`body_rate_l2` (reward), :func:`altitude_out_of_range` (termination).

The model (:class:`~track_gen_isaac.quadrotor.QuadrotorModel`) and its dynamics kernels live in
:mod:`track_gen_isaac.quadrotor`; the observation / reward / termination kernels here, each above
the launch that both runtimes use (the warp twins in :mod:`track_gen_isaac.experimental.mdp.quadrotor`
only pass the manager's ``out``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import warp as wp
from isaaclab.managers import ActionTerm, ActionTermCfg, ManagerTermBase
from isaaclab.utils import configclass

from track_gen_isaac.env_course import origin_view
from track_gen_isaac.physics import free_body_step
from track_gen_isaac.quadrotor import CRAZYFLIE, QuadrotorDynamics, QuadrotorModel

if TYPE_CHECKING:  # pragma: no cover
    from isaaclab.envs import ManagerBasedEnv

__all__ = ["QuadrotorAction", "QuadrotorActionCfg", "quad_state", "body_rate_l2", "altitude_out_of_range",
           "setup_quadrotor", "check_altitude", "body_rate_sq"]

wp.set_module_options({"enable_backward": False})


def setup_quadrotor(term, cfg, env) -> QuadrotorDynamics:
    """Shared construction of both runtimes' action terms: validate the model, allocate the
    dynamics, write the model's mass and inertia to the body (a spawner sets only the mass)."""
    model = cfg.model
    if not isinstance(model, QuadrotorModel):
        raise TypeError(f"QuadrotorActionCfg.model: expected a QuadrotorModel, got {type(model).__name__}")
    model.check()
    asset = term._asset
    if getattr(asset, "num_bodies", 1) != 1:
        raise ValueError(f"QuadrotorAction: asset {cfg.asset_name!r} has {asset.num_bodies} bodies; "
                         f"the quadrotor is one rigid body (see track_gen_isaac.quadrotor.quadrotor_asset_cfg)")
    command = getattr(cfg, "command", "rates")
    if command not in QuadrotorDynamics.COMMANDS:
        raise ValueError(f"QuadrotorActionCfg.command: expected one of {QuadrotorDynamics.COMMANDS}, got {command!r}")
    dyn = QuadrotorDynamics(model, env.num_envs, env.device, env.physics_dt, command=command)
    free_body_step()
    ids = torch.arange(env.num_envs, device=env.device, dtype=torch.int32)
    ixx, iyy, izz = (float(x) for x in model.inertia)
    inertia = torch.tensor([ixx, 0.0, 0.0, 0.0, iyy, 0.0, 0.0, 0.0, izz], device=env.device)
    asset.set_masses_index(masses=torch.full((env.num_envs, 1), float(model.mass), device=env.device), env_ids=ids)
    asset.set_inertias_index(inertias=inertia.repeat(env.num_envs, 1, 1), env_ids=ids)
    return dyn


class QuadrotorAction(ActionTerm):
    """Collective thrust + body-rate commands (or direct rotor thrusts) for a rigid-body quadrotor.

    Action ``a`` in [-1, 1]^4 (clipped; non-finite values count as 0). ``command="rates"``:
    collective thrust ``m g (1 + thrust_range a0)`` [N], body rates ``a[1:] * max_rates`` [rad/s]
    (roll, pitch, yaw); every physics substep a proportional rate loop
    (``J (K (w_cmd - w)) + w x J w``) and an X mixer turn them into four rotor thrusts.
    ``command="motors"``: ``a`` are the four rotor thrusts directly (0 -> hover, -1 -> 0,
    +1 -> the rotor limit; rotors 0 front-right, 1 back-right, 2 back-left, 3 front-left).
    Either way each rotor is clipped to ``[0, thrust_to_weight m g / 4]`` and lags its command
    with ``motor_time_constant``; the lagged thrusts' wrench is *set* on the asset's permanent
    wrench composer (body frame, at the COM). Action 0 hovers. Reset: the reset envs' rotors at
    hover thrust.

    The term owns the asset's permanent composer (it overwrites it every substep); add
    disturbances on the instantaneous composer. On construction it writes the model's mass and
    inertia to the body.
    """

    cfg: "QuadrotorActionCfg"

    def __init__(self, cfg: "QuadrotorActionCfg", env: ManagerBasedEnv):
        super().__init__(cfg, env)
        self.dyn = setup_quadrotor(self, cfg, env)
        E = self.num_envs
        self._force = wp.zeros((E, 1), dtype=wp.vec3f, device=self.device)
        self._torque = wp.zeros((E, 1), dtype=wp.vec3f, device=self.device)
        self._mask_t = torch.zeros(E, dtype=torch.bool, device=self.device)
        self._mask = wp.from_torch(self._mask_t, dtype=wp.bool)
        self._raw_t = wp.to_torch(self.dyn.raw)

    @property
    def action_dim(self) -> int:
        return 4

    @property
    def raw_actions(self) -> torch.Tensor:
        return self._raw_t

    @property
    def processed_actions(self) -> torch.Tensor:
        """[E, 4]: commanded collective thrust [N] and body rates [rad/s] (``"rates"``), or the
        commanded rotor thrusts [N] (``"motors"``)."""
        if self.dyn.direct:
            return wp.to_torch(self.dyn.rotor_cmd)
        return torch.cat([wp.to_torch(self.dyn.thrust_cmd)[:, None], wp.to_torch(self.dyn.rate_cmd)], dim=1)

    @property
    def rotor_thrusts(self) -> torch.Tensor:
        """[E, 4] lagged rotor thrusts [N] (zero-copy view)."""
        return wp.to_torch(self.dyn.rotor)

    def process_actions(self, actions: torch.Tensor):
        a = actions.to(torch.float32).contiguous()
        self.dyn.command(wp.from_torch(a), 0)

    def apply_actions(self):
        data = self._asset.data
        self.dyn.substep(data.root_quat_w.warp, data.root_com_vel_w.warp, self._force, self._torque)
        self._asset.permanent_wrench_composer.set_forces_and_torques_mask(forces=self._force, torques=self._torque)

    def reset(self, env_ids=None) -> None:
        if env_ids is None or (isinstance(env_ids, slice) and env_ids == slice(None)):
            self.dyn.reset(None)
            return
        self._mask_t.zero_()
        self._mask_t[torch.as_tensor(env_ids, device=self.device, dtype=torch.long)] = True
        self.dyn.reset(self._mask)


@configclass
class QuadrotorActionCfg(ActionTermCfg):
    """The quadrotor's action term (see :class:`QuadrotorAction`)."""

    class_type: type = QuadrotorAction
    asset_name: str = "robot"
    model: QuadrotorModel = CRAZYFLIE
    """Mass, inertia, arm, motor limits and lag, rate limits and gains (Crazyflie 2.x by default)."""
    command: str = "rates"
    """``"rates"``: collective thrust + body rates (rate controller); ``"motors"``: rotor thrusts."""


def _action_term(env, action_name: str):
    try:
        term = env.action_manager.get_term(action_name)
    except (AttributeError, KeyError, ValueError):
        term = None
    if term is None or not hasattr(term, "dyn"):
        raise ValueError(f"action term {action_name!r}: expected a QuadrotorAction in the env's actions cfg")
    return term


@wp.kernel
def quad_state_kernel(
    hover: float,
    pos: wp.array(dtype=wp.vec3f),
    quat: wp.array(dtype=wp.quatf),
    vel: wp.array(dtype=wp.spatial_vectorf),
    origin: wp.array(dtype=wp.vec3f),
    rotor: wp.array(dtype=wp.vec4f),
    obs_out: wp.array(dtype=wp.float32, ndim=2),
):
    """[E, 14]: body-frame linear velocity (3) [m/s], body rates (3) [rad/s], gravity direction in
    the body frame (3), rotor thrusts / hover thrust - 1 (4), height above the env origin (1) [m]."""
    i = wp.tid()
    q = quat[i]
    v = wp.quat_rotate_inv(q, wp.spatial_top(vel[i]))
    w = wp.quat_rotate_inv(q, wp.spatial_bottom(vel[i]))
    g = wp.quat_rotate_inv(q, wp.vec3f(0.0, 0.0, -1.0))
    r = rotor[i]
    for j in range(3):
        obs_out[i, j] = v[j]
        obs_out[i, 3 + j] = w[j]
        obs_out[i, 6 + j] = g[j]
    for j in range(4):
        obs_out[i, 9 + j] = r[j] / hover - 1.0
    obs_out[i, 13] = pos[i][2] - origin[i][2]


class quad_state(ManagerTermBase):
    """The drone's own state, [E, 14]: body-frame linear velocity [m/s] (3), body rates [rad/s] (3),
    gravity direction in the body frame (3), rotor thrusts / hover thrust - 1 (4, the motor lag's
    state), height above the env origin [m] (1). ``action_name``: the QuadrotorAction term."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._term = _action_term(env, cfg.params.get("action_name", "rotors"))
        self._asset = env.scene[cfg.params.get("asset_name", "robot")]
        self._origin = origin_view(env)
        self._out = wp.zeros((env.num_envs, 14), dtype=wp.float32, device=env.device)

    def launch(self, out: wp.array) -> None:
        d = self._asset.data
        dyn = self._term.dyn
        wp.launch(quad_state_kernel, dim=dyn.num_envs,
                  inputs=[float(dyn.hover_rotor), d.root_pos_w.warp, d.root_quat_w.warp, d.root_com_vel_w.warp,
                          self._origin, dyn.rotor], outputs=[out], device=dyn.device)

    def __call__(self, env, action_name: str = "rotors", asset_name: str = "robot"):
        self.launch(self._out)
        return wp.to_torch(self._out).clone()


@wp.kernel
def body_rate_sq_kernel(vel: wp.array(dtype=wp.spatial_vectorf), reward_out: wp.array(dtype=wp.float32)):
    """|angular velocity|^2 [rad^2/s^2] (frame independent)."""
    i = wp.tid()
    w = wp.spatial_bottom(vel[i])
    reward_out[i] = wp.dot(w, w)


def body_rate_sq(env, out: wp.array, asset_name: str = "robot") -> None:
    """|angular velocity|^2 of the asset's root into ``out`` ([E] float32); both runtimes' launch."""
    d = env.scene[asset_name].data
    wp.launch(body_rate_sq_kernel, dim=env.num_envs, inputs=[d.root_com_vel_w.warp], outputs=[out], device=env.device)


def body_rate_l2(env, asset_name: str = "robot") -> torch.Tensor:
    """|angular velocity|^2 [rad^2/s^2] of the asset's root (use a negative weight)."""
    out = torch.empty(env.num_envs, device=env.device)
    body_rate_sq(env, wp.from_torch(out), asset_name)
    return out


def check_altitude(min_height, max_height) -> None:
    """The parameters of :class:`altitude_out_of_range` (ValueError when they make no band)."""
    for n, v in (("min_height", min_height), ("max_height", max_height)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"altitude_out_of_range: {n} must be a finite number [m], got {v!r}")
    if not min_height < max_height:
        raise ValueError(f"altitude_out_of_range: expected min_height < max_height, got {min_height}, {max_height}")


@wp.kernel
def altitude_out_kernel(lo: float, hi: float, pos: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f),
                        done_out: wp.array(dtype=wp.bool)):
    """Height above the env origin outside [lo, hi], or a non-finite position."""
    i = wp.tid()
    z = pos[i][2] - origin[i][2]
    done_out[i] = not (z >= lo and z <= hi)


class altitude_out_of_range(ManagerTermBase):
    """True where the root's height above its env origin leaves [min_height, max_height] [m]
    (the ground, a ceiling) or is not finite. Parameters are checked when the env is built."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        p = cfg.params
        check_altitude(p.get("min_height", 0.05), p.get("max_height", 5.0))
        self._asset = env.scene[p.get("asset_name", "robot")]
        self._origin = origin_view(env)
        self._out = wp.zeros(env.num_envs, dtype=wp.bool, device=env.device)

    def launch(self, out: wp.array, min_height: float, max_height: float) -> None:
        wp.launch(altitude_out_kernel, dim=out.shape[0],
                  inputs=[float(min_height), float(max_height), self._asset.data.root_pos_w.warp, self._origin],
                  outputs=[out], device=out.device)

    def __call__(self, env, min_height: float = 0.05, max_height: float = 5.0, asset_name: str = "robot"):
        self.launch(self._out, min_height, max_height)
        return wp.to_torch(self._out).clone()
