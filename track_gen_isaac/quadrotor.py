"""A procedural quadrotor: its physical model, the rigid body that stands for it, and its dynamics.

The body is one free rigid cuboid (no mesh, nothing to download). Its four rotors are not bodies:
each step, a rate controller turns the commanded body rates into a wrench, the wrench is split
into four rotor thrusts (an X-configuration mixer), the thrusts are clipped to the motors' range,
lag behind their command (first-order motor model), and the lagged thrusts are summed back into
a body-frame force and torque applied through the asset's wrench composer.

Default figures (:data:`CRAZYFLIE`): the Crazyflie 2.x model of gym-pybullet-drones
(``gym_pybullet_drones/assets/cf2x.urdf``: mass 0.027 kg, inertia diag(1.4e-5, 1.4e-5,
2.17e-5) kg m^2, arm 0.0397 m, thrust-to-weight 2.25, rotor thrust / drag coefficients
kf = 3.16e-10 N/rpm^2 and km = 7.94e-12 N m/rpm^2, i.e. a yaw moment of km/kf = 0.0251 m per newton of
thrust), which that project takes from Landry (MIT, 2015) and Förster (ETH, 2015) system identification.
The motor time constant (30 ms) and the rate-loop gains are ours: a fast, well-damped rate loop
at the default 100 Hz physics rate.

Kernels sit beside the Python that launches them; :class:`QuadrotorDynamics` owns every buffer
(allocated once), so both Isaac Lab runtimes run it as a fixed list of launches (capturable).
"""

from __future__ import annotations

import math
from dataclasses import fields

import warp as wp
from isaaclab.utils import configclass

__all__ = ["QuadrotorModel", "CRAZYFLIE", "QuadrotorDynamics", "quadrotor_asset_cfg", "GRAVITY"]

#: standard gravity [m/s^2] (Isaac Lab's default scene gravity is (0, 0, -9.81))
GRAVITY = 9.81


@configclass
class QuadrotorModel:
    """Physical and control parameters of the quadrotor (SI units). A configclass, so a task cfg
    holds it and command-line overrides reach it (``env.actions.rotors.model.mass=0.03``)."""

    mass: float = 0.027
    """Body mass [kg]."""
    inertia: tuple[float, float, float] = (1.4e-5, 1.4e-5, 2.17e-5)
    """Principal moments of inertia (x, y, z) [kg m^2]."""
    arm_length: float = 0.0397
    """Rotor distance from the centre [m] (X configuration: rotors at 45 degrees to the body axes)."""
    yaw_moment_coef: float = 7.94e-12 / 3.16e-10
    """Rotor drag torque per newton of rotor thrust [m] (km / kf)."""
    thrust_to_weight: float = 2.25
    """Maximum total thrust / weight: each rotor gives at most ``thrust_to_weight * m g / 4``."""
    motor_time_constant: float = 0.03
    """First-order lag of each rotor's thrust behind its command [s] (0: no lag)."""
    max_rates: tuple[float, float, float] = (6.0, 6.0, 3.0)
    """Body-rate command at action +-1 (roll, pitch, yaw) [rad/s]."""
    rate_gains: tuple[float, float, float] = (20.0, 20.0, 10.0)
    """Rate-loop proportional gains [1/s]: angular acceleration = gain x rate error."""
    thrust_range: float = 1.0
    """Collective thrust command = m g (1 + ``thrust_range`` x action), before the motor limits."""
    size: tuple[float, float, float] = (0.092, 0.092, 0.03)
    """Collision/visual box of the body (length, width, height) [m]: rotor tip to rotor tip."""
    linear_drag: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Linear drag coefficients along the body axes (x, y, z) [N s/m]: a body-frame force
    ``-linear_drag * v_body`` every substep. 0 (default): no drag, the model as before; the
    racer's domain randomization draws it per env (:class:`~track_gen_isaac.mdp.randomization.randomize_quadrotor`)."""

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        """Raise ValueError on a non-finite, non-positive or inconsistent parameter."""
        for f in fields(self):
            v = getattr(self, f.name)
            vals = tuple(v) if isinstance(v, (tuple, list)) else (v,)
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in vals):
                raise ValueError(f"QuadrotorModel.{f.name}: expected finite number(s), got {v!r}")
        for name in ("mass", "arm_length", "yaw_moment_coef"):
            if getattr(self, name) <= 0:
                raise ValueError(f"QuadrotorModel.{name}: expected > 0, got {getattr(self, name)!r}")
        for name in ("inertia", "max_rates", "rate_gains", "size"):
            v = getattr(self, name)
            if len(v) != 3 or min(v) <= 0:
                raise ValueError(f"QuadrotorModel.{name}: expected three values > 0, got {v!r}")
        if self.thrust_to_weight <= 1.0:
            raise ValueError(f"QuadrotorModel.thrust_to_weight: expected > 1 (it must be able to hover), "
                             f"got {self.thrust_to_weight!r}")
        if len(self.linear_drag) != 3 or min(self.linear_drag) < 0:
            raise ValueError(f"QuadrotorModel.linear_drag: expected three values >= 0, got {self.linear_drag!r}")
        if self.motor_time_constant < 0 or self.thrust_range <= 0:
            raise ValueError("QuadrotorModel: motor_time_constant must be >= 0 and thrust_range > 0")

    @property
    def weight(self) -> float:
        """m g [N]."""
        return self.mass * GRAVITY

    @property
    def max_rotor_thrust(self) -> float:
        """Per-rotor thrust limit [N]."""
        return self.thrust_to_weight * self.weight / 4.0

    def motor_alpha(self, dt: float) -> float:
        """Per-substep blend of the first-order motor lag (exact discretisation)."""
        if self.motor_time_constant == 0.0:
            return 1.0
        return 1.0 - math.exp(-dt / self.motor_time_constant)


#: Crazyflie 2.x figures (see the module docstring for the sources)
CRAZYFLIE = QuadrotorModel()


def quadrotor_asset_cfg(model: QuadrotorModel = CRAZYFLIE, prim_path: str = "{ENV_REGEX_NS}/Drone",
                        pos: tuple[float, float, float] = (0.0, 0.0, 1.0)):
    """A ``RigidObjectCfg`` for the quadrotor body: a cuboid of ``model.size`` with ``model.mass``.

    No collision shape: contact with the course (gate frames, band edges) is decided by the
    course's collision component, and the ground by an altitude termination. The inertia is
    written by the action term (``QuadrotorActionCfg``) at construction, since a spawner only
    sets mass or density."""
    import isaaclab.sim as sim_utils
    from isaaclab.assets import RigidObjectCfg

    return RigidObjectCfg(
        prim_path=prim_path,
        spawn=sim_utils.CuboidCfg(
            size=tuple(float(s) for s in model.size),
            mass_props=sim_utils.MassCfg(mass=float(model.mass)),
            rigid_props=sim_utils.UsdPhysicsRigidBodyCfg(),
            visual_material=sim_utils.PreviewSurfaceCfg(diffuse_color=(0.1, 0.1, 0.12)),
        ),
        init_state=RigidObjectCfg.InitialStateCfg(pos=pos),
    )


# ------------------------------------------------------------------------------------------------ kernels


@wp.kernel
def quad_command_kernel(
    offset: int,
    weight: float,
    thrust_range: float,
    max_rates: wp.vec3f,
    direct: int,
    f_max: float,
    actions: wp.array(dtype=wp.float32, ndim=2),
    delay: wp.array(dtype=wp.int32),
    history_out: wp.array(dtype=wp.vec4f, ndim=2),
    raw_out: wp.array(dtype=wp.float32, ndim=2),
    thrust_cmd_out: wp.array(dtype=wp.float32),
    rate_cmd_out: wp.array(dtype=wp.vec3f),
    rotor_cmd_out: wp.array(dtype=wp.vec4f),
):
    """Policy action in [-1, 1]^4 (clipped; NaN counts as 0) -> commands.

    ``raw`` is this step's clipped action; the command uses the action of ``delay[i]`` env steps
    ago (``history[i, k]``: the action of k steps ago, k < ``history.shape[1]``; after a reset the
    history holds zeros, i.e. hover). ``direct == 0`` (rates): collective thrust [N] and body rates
    [rad/s]. ``direct == 1`` (motors): each rotor's thrust, piecewise linear with 0 -> hover,
    -1 -> 0, +1 -> ``f_max``."""
    i = wp.tid()
    a = wp.vec4f()
    for j in range(4):
        v = actions[i, offset + j]
        if not wp.isfinite(v):
            v = 0.0
        v = wp.clamp(v, -1.0, 1.0)
        raw_out[i, j] = v
        a[j] = v
    K = history_out.shape[1]
    for kk in range(K - 1):
        k = K - 1 - kk
        history_out[i, k] = history_out[i, k - 1]
    history_out[i, 0] = a
    a = history_out[i, wp.clamp(delay[i], 0, K - 1)]
    if direct != 0:
        h = 0.25 * weight
        f = wp.vec4f()
        for j in range(4):
            if a[j] < 0.0:
                f[j] = h * (1.0 + a[j])
            else:
                f[j] = h + a[j] * (f_max - h)
        rotor_cmd_out[i] = f
        thrust_cmd_out[i] = f[0] + f[1] + f[2] + f[3]
        rate_cmd_out[i] = wp.vec3f(0.0, 0.0, 0.0)
    else:
        thrust_cmd_out[i] = weight * (1.0 + thrust_range * a[0])
        rate_cmd_out[i] = wp.vec3f(a[1] * max_rates[0], a[2] * max_rates[1], a[3] * max_rates[2])


@wp.func
def _mix(t: float, tx: float, ty: float, tz: float, d: float, c: float) -> wp.vec4f:
    """Rotor thrusts for a body wrench (X configuration, orthogonal mixer rows, so the inverse is
    the transpose / 4). Rotors: 0 front-right (+x, -y), 1 back-right (-x, -y), 2 back-left (-x, +y),
    3 front-left (+x, +y); 0 and 2 spin one way, 1 and 3 the other."""
    return wp.vec4f(
        0.25 * (t - tx / d - ty / d + tz / c),
        0.25 * (t - tx / d + ty / d - tz / c),
        0.25 * (t + tx / d + ty / d + tz / c),
        0.25 * (t + tx / d - ty / d - tz / c),
    )


@wp.kernel
def quad_motor_kernel(
    inertia: wp.vec3f,
    gains: wp.vec3f,
    d: float,
    c: float,
    f_max: float,
    direct: int,
    thrust_cmd: wp.array(dtype=wp.float32),
    rate_cmd: wp.array(dtype=wp.vec3f),
    quat: wp.array(dtype=wp.quatf),
    vel: wp.array(dtype=wp.spatial_vectorf),
    alpha: wp.array(dtype=wp.float32),
    rotor_cmd: wp.array(dtype=wp.vec4f),
    thrust_scale: wp.array(dtype=wp.float32),
    torque_scale: wp.array(dtype=wp.float32),
    drag: wp.array(dtype=wp.vec3f),
    rotor_out: wp.array(dtype=wp.vec4f),
    force_out: wp.array(dtype=wp.vec3f, ndim=2),
    torque_out: wp.array(dtype=wp.vec3f, ndim=2),
):
    """One physics substep of the rotors: rate controller -> mixer (or, ``direct``, the commanded
    rotor thrusts) -> motor limits -> motor lag (per-env ``alpha``) -> wrench.

    ``d`` = arm length / sqrt(2) (the rotors' offset along each body axis), ``c`` = yaw moment
    per newton. The controller and mixer use the nominal model; the plant's per-env factors act
    after the lag: each rotor gives ``thrust_scale[i]`` x its lagged thrust (thrust coefficient),
    its drag moment is ``c x torque_scale[i]`` per newton of that thrust (torque coefficient), and a
    body-frame linear drag ``-drag[i] * v_body`` [N] joins the force. ``force`` / ``torque`` are the
    composer's [E, 1] body-frame buffers."""
    i = wp.tid()
    f = rotor_cmd[i]
    if direct == 0:
        q = quat[i]
        w_world = wp.spatial_bottom(vel[i])  # [lin, ang]: the angular part
        w = wp.quat_rotate_inv(q, w_world)
        jw = wp.cw_mul(inertia, w)
        tau = wp.cw_mul(inertia, wp.cw_mul(gains, rate_cmd[i] - w)) + wp.cross(w, jw)
        f = _mix(thrust_cmd[i], tau[0], tau[1], tau[2], d, c)
    r = rotor_out[i]
    al = alpha[i]
    for j in range(4):
        fj = wp.clamp(f[j], 0.0, f_max)
        r[j] = r[j] + al * (fj - r[j])
    rotor_out[i] = r
    ks = thrust_scale[i]
    t = ks * (r[0] + r[1] + r[2] + r[3])
    dr = drag[i]
    v_b = wp.quat_rotate_inv(quat[i], wp.spatial_top(vel[i]))
    force_out[i, 0] = wp.vec3f(-dr[0] * v_b[0], -dr[1] * v_b[1], t - dr[2] * v_b[2])
    torque_out[i, 0] = wp.vec3f(
        ks * d * (-r[0] - r[1] + r[2] + r[3]),
        ks * d * (-r[0] + r[1] + r[2] - r[3]),
        ks * c * torque_scale[i] * (r[0] - r[1] + r[2] - r[3]),
    )


@wp.kernel
def quad_reset_kernel(hover: float, mask: wp.array(dtype=wp.bool), rotor_out: wp.array(dtype=wp.vec4f),
                      rotor_cmd_out: wp.array(dtype=wp.vec4f), thrust_cmd_out: wp.array(dtype=wp.float32),
                      rate_cmd_out: wp.array(dtype=wp.vec3f), raw_out: wp.array(dtype=wp.float32, ndim=2),
                      history_out: wp.array(dtype=wp.vec4f, ndim=2)):
    """Masked envs: rotors at hover thrust, hover command, zero rates, actions and action history."""
    i = wp.tid()
    if mask[i]:
        for k in range(history_out.shape[1]):
            history_out[i, k] = wp.vec4f(0.0, 0.0, 0.0, 0.0)
        rotor_out[i] = wp.vec4f(hover, hover, hover, hover)
        rotor_cmd_out[i] = wp.vec4f(hover, hover, hover, hover)
        thrust_cmd_out[i] = 4.0 * hover
        rate_cmd_out[i] = wp.vec3f(0.0, 0.0, 0.0)
        for j in range(4):
            raw_out[i, j] = 0.0


# ------------------------------------------------------------------------------------------------ dynamics


class QuadrotorDynamics:
    """The rotor state and command buffers of ``num_envs`` quadrotors, and the launches that drive them.

    ``command``: ``"rates"`` (collective thrust + body rates through the rate controller) or
    ``"motors"`` (each rotor's thrust directly; no controller).

    ``command(actions, offset)`` once per env step (policy rate); ``substep(quat, vel, force,
    torque)`` once per physics substep; ``reset(mask)`` on reset. All buffers are allocated here,
    once, so every call is a fixed list of launches (recordable into a graph).

    Per-env plant parameters (the model's values unless a randomization event writes them):
    ``thrust_scale`` / ``torque_scale`` [E] (thrust and rotor-drag-moment coefficients relative to
    the model's), ``alpha`` [E] (motor-lag blend per substep, from the motor time constant),
    ``drag`` [E] vec3 (linear drag [N s/m]) and ``delay`` [E] int32 (action latency in env steps,
    0 to ``MAX_DELAY``)."""

    COMMANDS = ("rates", "motors")
    #: the longest action latency the history holds [env steps]
    MAX_DELAY = 2

    def __init__(self, model: QuadrotorModel, num_envs: int, device, physics_dt: float, command: str = "rates"):
        if not (isinstance(physics_dt, (int, float)) and physics_dt > 0):
            raise ValueError(f"physics_dt: expected > 0 [s], got {physics_dt!r}")
        if command not in self.COMMANDS:
            raise ValueError(f"command: expected one of {self.COMMANDS}, got {command!r}")
        self.model = model
        self.direct = int(command == "motors")
        self.num_envs = int(num_envs)
        self.device = device
        self.alpha = float(model.motor_alpha(float(physics_dt)))
        self.hover_rotor = model.weight / 4.0
        E = self.num_envs
        self.raw = wp.zeros((E, 4), dtype=wp.float32, device=device)
        self.thrust_cmd = wp.full(E, model.weight, dtype=wp.float32, device=device)
        self.rate_cmd = wp.zeros(E, dtype=wp.vec3f, device=device)
        h = self.hover_rotor
        self.rotor = wp.full(E, wp.vec4f(h, h, h, h), dtype=wp.vec4f, device=device)
        self.rotor_cmd = wp.full(E, wp.vec4f(h, h, h, h), dtype=wp.vec4f, device=device)
        self.all_mask = wp.ones(E, dtype=wp.bool, device=device)
        self.thrust_scale = wp.ones(E, dtype=wp.float32, device=device)
        self.torque_scale = wp.ones(E, dtype=wp.float32, device=device)
        self.alpha_env = wp.full(E, self.alpha, dtype=wp.float32, device=device)
        self.drag = wp.full(E, wp.vec3f(*(float(x) for x in model.linear_drag)), dtype=wp.vec3f, device=device)
        self.delay = wp.zeros(E, dtype=wp.int32, device=device)
        self.history = wp.zeros((E, self.MAX_DELAY + 1), dtype=wp.vec4f, device=device)

    def command(self, actions: wp.array, offset: int = 0) -> None:
        m = self.model
        wp.launch(quad_command_kernel, dim=self.num_envs,
                  inputs=[int(offset), float(m.weight), float(m.thrust_range), wp.vec3f(*m.max_rates), self.direct,
                          float(m.max_rotor_thrust), actions, self.delay],
                  outputs=[self.history, self.raw, self.thrust_cmd, self.rate_cmd, self.rotor_cmd], device=self.device)

    def substep(self, quat: wp.array, vel: wp.array, force: wp.array, torque: wp.array) -> None:
        m = self.model
        wp.launch(quad_motor_kernel, dim=self.num_envs,
                  inputs=[wp.vec3f(*m.inertia), wp.vec3f(*m.rate_gains), float(m.arm_length / math.sqrt(2.0)),
                          float(m.yaw_moment_coef), float(m.max_rotor_thrust), self.direct, self.thrust_cmd,
                          self.rate_cmd, quat, vel, self.alpha_env, self.rotor_cmd, self.thrust_scale,
                          self.torque_scale, self.drag],
                  outputs=[self.rotor, force, torque], device=self.device)

    def reset(self, mask: wp.array | None = None) -> None:
        wp.launch(quad_reset_kernel, dim=self.num_envs,
                  inputs=[float(self.hover_rotor), self.all_mask if mask is None else mask],
                  outputs=[self.rotor, self.rotor_cmd, self.thrust_cmd, self.rate_cmd, self.raw, self.history],
                  device=self.device)
