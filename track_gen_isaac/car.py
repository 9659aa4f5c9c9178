"""A procedural race car: its physical model and its single-track dynamics, integrated by Warp kernels.

The car is a *dynamic single-track* (bicycle) model with tyre slip, after the CommonRoad vehicle
models that f1tenth_gym implements: state (x, y) of the centre of gravity, yaw, speed ``v`` (the
magnitude of the CoG velocity, signed: negative in reverse), slip angle ``beta`` (the CoG velocity's
angle to the heading, positive to the left), yaw rate ``r`` and front steering angle ``delta``.

Per axle, the lateral tyre force is linear in the slip angle with a load-proportional stiffness,
and saturates at the friction limit (ours: f1tenth_gym's linear tyre has none)::

    F_zf = m (g l_r - a h) / l,    F_zr = m (g l_f + a h) / l                 (load transfer, l = l_f + l_r)
    alpha_f = delta - beta - l_f r / v,    alpha_r = -beta + l_r r / v
    F_yi = mu F_zi clip(C_i alpha_i, -1, 1)                                    (|F_yi| <= mu F_zi)
    x' = v cos(psi + beta),  y' = v sin(psi + beta),  psi' = r,  v' = a,  delta' = steering rate
    beta' = (F_yf + F_yr) / (m v) - r,    r' = (l_f F_yf - l_r F_yr) / I_z

so the acceleration across the path, ``v (psi' + beta') = (F_yf + F_yr) / m``, never exceeds
``mu g`` (the loads sum to ``m g``). Below ``kinematic_speed`` (and in reverse) the slip terms are
singular, and the *kinematic* single-track model drives instead: ``beta = atan(l_r tan(delta) / l)``,
``psi' = v cos(beta) tan(delta) / l`` (its path curvature capped at ``mu g / v^2``), ``beta`` and ``r``
set from it after each substep, so the switch to the dynamic model is continuous.

Inputs are held over a step and limited as f1tenth_gym does: the steering rate to
``[steer_rate_min, steer_rate_max]``, and zero once the steering angle is at a limit and pushed further;
the acceleration to ``[-a_max, a_max]``, above ``switch_speed`` to ``a_max switch_speed / v`` when
accelerating (constant power), to ``mu g`` (traction), and to zero once the speed is at a limit and
pushed further. Each step is ``ceil(dt / max_substep)`` classic Runge-Kutta (RK4) substeps.
In the kinematic model the steering rate is also held to what keeps the path acceleration
``v^2 kappa + v dbeta/dt`` within ``mu g`` (it binds only when reversing fast).

Like any single-track model with small-angle slips, it describes a car that grips or slides a
little; the speed follows the commanded acceleration whatever the slip, so a car that spins
(``|beta|`` beyond ~0.5 rad) keeps its speed and turns on: treat that as a crash (terminate).

Default figures (:data:`F1TENTH`): the 1/10-scale F1TENTH car of f1tenth_gym
(github.com/f1tenth/f1tenth_gym, ``gym/f110_gym/envs/f110_env.py`` @ 4fdb9c7, the default ``params``
of ``F110Env``, MIT licence): mass ``m`` 3.74 kg, yaw inertia ``I`` 0.04712 kg m^2, CoG to front / rear
axle ``lf`` 0.15875 m / ``lr`` 0.17145 m, CoG height ``h`` 0.074 m, cornering stiffness coefficients
``C_Sf`` 4.718 / ``C_Sr`` 5.4562 per rad, friction ``mu`` 1.0489, steering angle +-0.4189 rad
(``s_min`` / ``s_max``), steering rate +-3.2 rad/s (``sv_min`` / ``sv_max``), speed -5 .. 20 m/s
(``v_min`` / ``v_max``), acceleration 9.51 m/s^2 (``a_max``), switching velocity 7.319 m/s
(``v_switch``), body 0.58 m x 0.31 m (``length`` / ``width``); the kinematic switch at 0.5 m/s is
the one its ``gym/f110_gym/envs/dynamic_models.py`` hard-codes. Those figures come from
CommonRoad's vehicle models and the F1TENTH platform. The substep (5 ms) and the friction
saturation are ours.

:class:`CarDynamics` owns every buffer (allocated once), so a step is one launch: capturable.
"""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
import warp as wp
from isaaclab.utils import configclass

from track_gen_isaac.quadrotor import GRAVITY

__all__ = ["CarModel", "F1TENTH", "CarDynamics", "RK4_STABLE", "car_asset_cfg", "CAR_HEIGHT"]

#: the stable step of classic RK4 on a real decaying mode is h |lambda| <= 2.785; this keeps a margin
RK4_STABLE = 2.5


@configclass
class CarModel:
    """Physical figures and limits of the car (SI units, angles in rad). A configclass, so a task cfg
    holds it and command-line overrides reach it. Defaults: F1TENTH (see the module docstring)."""

    mass: float = 3.74
    """Total mass ``m`` [kg] (f1tenth_gym ``m``)."""
    yaw_inertia: float = 0.04712
    """Moment of inertia about the vertical axis through the CoG ``I_z`` [kg m^2] (``I``)."""
    lf: float = 0.15875
    """Distance from the CoG to the front axle [m] (``lf``)."""
    lr: float = 0.17145
    """Distance from the CoG to the rear axle [m] (``lr``)."""
    cog_height: float = 0.074
    """Height of the CoG above the ground [m] (``h``): longitudinal load transfer."""
    cornering_front: float = 4.718
    """Front cornering stiffness coefficient ``C_Sf`` [1/rad]: lateral force per newton of load and
    per radian of slip, before the friction coefficient (axle stiffness = ``mu C_Sf F_zf``)."""
    cornering_rear: float = 5.4562
    """Rear cornering stiffness coefficient ``C_Sr`` [1/rad]."""
    friction: float = 1.0489
    """Tyre-road friction coefficient ``mu``: scales the stiffness and caps each axle's lateral force at
    ``mu F_z`` and the longitudinal acceleration at ``mu g``."""
    steer_min: float = -0.4189
    """Smallest (rightmost) front steering angle [rad] (``s_min``)."""
    steer_max: float = 0.4189
    """Largest (leftmost) front steering angle [rad] (``s_max``)."""
    steer_rate_min: float = -3.2
    """Smallest steering rate [rad/s] (``sv_min``)."""
    steer_rate_max: float = 3.2
    """Largest steering rate [rad/s] (``sv_max``)."""
    speed_min: float = -5.0
    """Lowest speed [m/s] (``v_min``; negative: reverse)."""
    speed_max: float = 20.0
    """Highest speed [m/s] (``v_max``)."""
    accel_max: float = 9.51
    """Largest |longitudinal acceleration| [m/s^2] (``a_max``)."""
    switch_speed: float = 7.319
    """Switching velocity [m/s] (``v_switch``): above it the drive acceleration is at most
    ``accel_max * switch_speed / v`` (constant power; no wheel spin)."""
    length: float = 0.58
    """Body length [m] (``length``): the collision box."""
    width: float = 0.31
    """Body width [m] (``width``)."""
    kinematic_speed: float = 0.5
    """Below this speed (and in reverse) the kinematic single-track model drives [m/s]."""
    max_substep: float = 0.005
    """Longest integration substep [s]; a step of ``dt`` takes ``ceil(dt / max_substep)`` RK4 substeps."""

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        """Raise ValueError naming the field on a non-finite, out-of-range or inconsistent figure."""
        for f in fields(self):
            v = getattr(self, f.name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)):
                raise ValueError(f"CarModel.{f.name}: expected a finite number, got {v!r}")
        for name in ("mass", "yaw_inertia", "lf", "lr", "cornering_front", "cornering_rear", "friction",
                     "steer_rate_max", "speed_max", "accel_max", "switch_speed", "length", "width",
                     "kinematic_speed", "max_substep"):
            if getattr(self, name) <= 0:
                raise ValueError(f"CarModel.{name}: expected > 0, got {getattr(self, name)!r}")
        if self.cog_height < 0:
            raise ValueError(f"CarModel.cog_height: expected >= 0, got {self.cog_height!r}")
        if not -0.5 * math.pi < self.steer_min < self.steer_max < 0.5 * math.pi:
            raise ValueError(f"CarModel.steer_min, steer_max: expected -pi/2 < steer_min < steer_max < pi/2, got "
                             f"{self.steer_min!r}, {self.steer_max!r}")
        if not self.steer_rate_min < 0:
            raise ValueError(f"CarModel.steer_rate_min: expected < 0, got {self.steer_rate_min!r}")
        if not self.speed_min <= 0 < self.kinematic_speed < self.speed_max:
            raise ValueError(f"CarModel.speed_min, kinematic_speed, speed_max: expected speed_min <= 0 < "
                             f"kinematic_speed < speed_max (the car starts at rest), got {self.speed_min!r}, "
                             f"{self.kinematic_speed!r}, {self.speed_max!r}")
        lift = self.accel_max * self.cog_height
        if lift >= GRAVITY * min(self.lf, self.lr):
            raise ValueError(f"CarModel.cog_height: accel_max x cog_height = {lift:.4g} must stay below "
                             f"g x min(lf, lr) = {GRAVITY * min(self.lf, self.lr):.4g}, or an axle lifts off "
                             "under full acceleration or braking; lower cog_height or accel_max")
        if self.accel_max * self.max_substep >= 0.5 * self.kinematic_speed:
            raise ValueError(f"CarModel.max_substep: accel_max x max_substep = {self.accel_max * self.max_substep:.4g}"
                             f" m/s must stay below kinematic_speed / 2 = {0.5 * self.kinematic_speed:.4g} m/s (the "
                             "slip terms divide by the speed inside a substep); shorten max_substep")
        rate = self.stiffest_rate()
        if self.max_substep * rate > RK4_STABLE:
            raise ValueError(f"CarModel.max_substep: {self.max_substep!r} s is too long for the tyres' fastest mode "
                             f"at kinematic_speed ({rate:.4g} 1/s): RK4 is stable up to {RK4_STABLE / rate:.4g} s; "
                             "shorten max_substep or raise kinematic_speed")

    @property
    def wheelbase(self) -> float:
        """``l = lf + lr`` [m]."""
        return self.lf + self.lr

    @property
    def understeer_gradient(self) -> float:
        """``K`` [rad s^2/m]: steady-state steering ``delta = l / R + K a_y`` in the linear tyre range,
        ``K = (1 / C_Sf - 1 / C_Sr) / (mu g)`` (> 0: understeer)."""
        return (1.0 / self.cornering_front - 1.0 / self.cornering_rear) / (self.friction * GRAVITY)

    def stiffest_rate(self, speed: float | None = None) -> float:
        """Largest |eigenvalue| [1/s] of the linear slip / yaw-rate dynamics at ``speed`` (default
        ``kinematic_speed``, the stiffest speed the dynamic model runs at): ``max_substep`` times it must
        stay within RK4's stable range (:data:`RK4_STABLE`)."""
        v = self.kinematic_speed if speed is None else float(speed)
        g, m, iz, a, b = GRAVITY, self.mass, self.yaw_inertia, self.lf, self.lr
        cf, cr = self.friction * self.cornering_front * g * b, self.friction * self.cornering_rear * g * a
        l = a + b
        jac = np.array([[-(cf + cr) / (v * l), (b * cr - a * cf) / (v * v * l) - 1.0],
                        [m * (b * cr - a * cf) / (iz * l), -m * (a * a * cf + b * b * cr) / (v * iz * l)]])
        return float(np.abs(np.linalg.eigvals(jac)).max())

    def substeps(self, dt: float) -> int:
        """RK4 substeps of a step of ``dt`` seconds: ``ceil(dt / max_substep)`` (at least 1)."""
        if not (isinstance(dt, (int, float)) and not isinstance(dt, bool) and math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt: expected a step > 0 [s], got {dt!r}")
        return max(1, math.ceil(dt / self.max_substep - 1e-9))


#: the F1TENTH car of f1tenth_gym (see the module docstring for the source)
F1TENTH = CarModel()


#: height of the car's box [m] (the body seen in a viewer; the course's collision is in the ground plane)
CAR_HEIGHT = 0.15


def car_asset_cfg(model: CarModel = F1TENTH, prim_path: str = "{ENV_REGEX_NS}/Car", height: float = CAR_HEIGHT):
    """A ``RigidObjectCfg`` for the car: a **kinematic** cuboid of the model's length and width.

    No collision shape and no dynamics of its own: :class:`~track_gen_isaac.mdp.car.CarAction`
    integrates :class:`CarDynamics` and writes the car's pose and velocity into the body's root
    buffers every physics step, the course decides contact with the band. A kinematic body is not
    moved by the solver, so the pose it shows is exactly the model's."""
    import isaaclab.sim as sim_utils
    from isaaclab.assets import RigidObjectCfg

    return RigidObjectCfg(
        prim_path=prim_path,
        spawn=sim_utils.CuboidCfg(
            size=(float(model.length), float(model.width), float(height)),
            mass_props=sim_utils.MassCfg(mass=float(model.mass)),
            rigid_props=sim_utils.UsdPhysicsRigidBodyCfg(kinematic_enabled=True),
            visual_material=sim_utils.PreviewSurfaceCfg(diffuse_color=(0.8, 0.1, 0.1)),
        ),
        init_state=RigidObjectCfg.InitialStateCfg(pos=(0.0, 0.0, 0.5 * float(height))),
    )


# ------------------------------------------------------------------------------------------------ kernels

_G = wp.constant(GRAVITY)
vec7 = wp.types.vector(length=7, dtype=wp.float32)
"""The integrated state: x, y, yaw, speed, slip angle, yaw rate, steering angle."""


@wp.struct
class CarParams:
    """The model's figures the kernels read (per-env plant factors come in arrays)."""

    lf: float
    lr: float
    h: float
    mass: float
    inertia: float
    c_front: float
    c_rear: float
    mu: float
    steer_min: float
    steer_max: float
    rate_min: float
    rate_max: float
    speed_min: float
    speed_max: float
    accel_max: float
    switch_speed: float
    kinematic_speed: float


def car_params(model: CarModel) -> CarParams:
    """The kernel-side copy of ``model``'s figures."""
    p = CarParams()
    p.lf, p.lr, p.h, p.mass, p.inertia = model.lf, model.lr, model.cog_height, model.mass, model.yaw_inertia
    p.c_front, p.c_rear, p.mu = model.cornering_front, model.cornering_rear, model.friction
    p.steer_min, p.steer_max, p.rate_min, p.rate_max = (model.steer_min, model.steer_max, model.steer_rate_min,
                                                        model.steer_rate_max)
    p.speed_min, p.speed_max, p.accel_max = model.speed_min, model.speed_max, model.accel_max
    p.switch_speed, p.kinematic_speed = model.switch_speed, model.kinematic_speed
    return p


@wp.func
def steer_rate_limited(p: CarParams, delta: float, rate: float) -> float:
    """The steering rate, clipped to its range, and 0 at a steering limit pushed further."""
    if (delta <= p.steer_min and rate <= 0.0) or (delta >= p.steer_max and rate >= 0.0):
        return 0.0
    return wp.clamp(rate, p.rate_min, p.rate_max)


@wp.func
def accel_limited(p: CarParams, mu: float, v: float, a: float) -> float:
    """The longitudinal acceleration within the drive (constant power above ``switch_speed``), brake,
    traction (``mu g``) and speed limits."""
    top = wp.min(p.accel_max, mu * _G)
    pos = top
    if v > p.switch_speed:
        pos = wp.min(top, p.accel_max * p.switch_speed / v)
    if (v <= p.speed_min and a <= 0.0) or (v >= p.speed_max and a >= 0.0):
        return 0.0
    return wp.clamp(a, -top, pos)


@wp.func
def kinematic_slip_curvature(p: CarParams, mu: float, v: float, delta: float) -> wp.vec2f:
    """(slip angle, path curvature) of the kinematic model: no tyre slip, the curvature capped so that
    ``v^2 kappa <= mu g``."""
    l = p.lf + p.lr
    t = wp.tan(delta)
    beta = wp.atan(p.lr * t / l)
    kappa = wp.cos(beta) * t / l
    lim = mu * _G
    if v * v * wp.abs(kappa) > lim:
        kappa = wp.sign(kappa) * lim / (v * v)
    return wp.vec2f(beta, kappa)


@wp.func
def kinematic_rhs(p: CarParams, mu: float, s: vec7, rate: float, a: float) -> vec7:
    """Time derivative of the state under the kinematic single-track model (slip and yaw rate are set
    after the substep, so their derivatives are 0). The path acceleration ``v^2 kappa + v beta'(delta)
    delta'`` stays within ``mu g``: the capped curvature, and the steering rate clipped to what is left."""
    v = s[3]
    delta = s[6]
    bk = kinematic_slip_curvature(p, mu, v, delta)
    dr = steer_rate_limited(p, delta, rate)
    c = p.lr / (p.lf + p.lr)
    t = wp.tan(delta)
    slope = v * c * (1.0 + t * t) / (1.0 + c * c * t * t)  # v d(beta)/d(delta)
    lim = mu * _G
    base = v * v * bk[1]
    if slope * dr != 0.0:
        dr = wp.sign(dr) * wp.min(wp.abs(dr), (lim - base * wp.sign(slope * dr)) / wp.abs(slope))
    return vec7(v * wp.cos(s[2] + bk[0]), v * wp.sin(s[2] + bk[0]), v * bk[1], accel_limited(p, mu, v, a), 0.0,
                0.0, dr)


@wp.func
def dynamic_rhs(p: CarParams, m: float, iz: float, cf: float, cr: float, mu: float, s: vec7, rate: float,
                a: float) -> vec7:
    """Time derivative of the state under the dynamic single-track model with saturating tyres."""
    v = s[3]
    beta = s[4]
    r = s[5]
    l = p.lf + p.lr
    ac = accel_limited(p, mu, v, a)
    fzf = m * (_G * p.lr - ac * p.h) / l
    fzr = m * (_G * p.lf + ac * p.h) / l
    fyf = mu * fzf * wp.clamp(cf * (s[6] - beta - p.lf * r / v), -1.0, 1.0)
    fyr = mu * fzr * wp.clamp(cr * (p.lr * r / v - beta), -1.0, 1.0)
    return vec7(v * wp.cos(s[2] + beta), v * wp.sin(s[2] + beta), r, ac, (fyf + fyr) / (m * v) - r,
                (p.lf * fyf - p.lr * fyr) / iz, steer_rate_limited(p, s[6], rate))


@wp.func
def rk4_substep(p: CarParams, m: float, iz: float, cf: float, cr: float, mu: float, s: vec7, rate: float,
                a: float, h: float) -> vec7:
    """One RK4 substep of ``h`` seconds, in the mode the speed at its start selects; speed and steering
    angle clamped to their limits, yaw wrapped into [-pi, pi)."""
    n = s
    if s[3] >= p.kinematic_speed:
        k1 = dynamic_rhs(p, m, iz, cf, cr, mu, s, rate, a)
        k2 = dynamic_rhs(p, m, iz, cf, cr, mu, s + (0.5 * h) * k1, rate, a)
        k3 = dynamic_rhs(p, m, iz, cf, cr, mu, s + (0.5 * h) * k2, rate, a)
        k4 = dynamic_rhs(p, m, iz, cf, cr, mu, s + h * k3, rate, a)
        n = s + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    else:
        k1 = kinematic_rhs(p, mu, s, rate, a)
        k2 = kinematic_rhs(p, mu, s + (0.5 * h) * k1, rate, a)
        k3 = kinematic_rhs(p, mu, s + (0.5 * h) * k2, rate, a)
        k4 = kinematic_rhs(p, mu, s + h * k3, rate, a)
        n = s + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    n[3] = wp.clamp(n[3], p.speed_min, p.speed_max)
    n[6] = wp.clamp(n[6], p.steer_min, p.steer_max)
    if s[3] < p.kinematic_speed:
        bk = kinematic_slip_curvature(p, mu, n[3], n[6])
        n[4] = bk[0]
        n[5] = n[3] * bk[1]
    n[2] = n[2] - wp.tau * wp.floor((n[2] + wp.pi) / wp.tau)
    return n


@wp.kernel
def car_step_kernel(
    p: CarParams,
    offset: int,
    angle_command: int,
    substeps: int,
    h: float,
    actions: wp.array(dtype=wp.float32, ndim=2),
    mass_scale: wp.array(dtype=wp.float32),
    inertia_scale: wp.array(dtype=wp.float32),
    stiffness_scale: wp.array(dtype=wp.float32),
    friction_scale: wp.array(dtype=wp.float32),
    command_out: wp.array(dtype=wp.vec2f),
    pos_out: wp.array(dtype=wp.vec2f),
    yaw_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
    slip_out: wp.array(dtype=wp.float32),
    yaw_rate_out: wp.array(dtype=wp.float32),
    steer_out: wp.array(dtype=wp.float32),
):
    """One env step of ``substeps`` RK4 substeps of ``h`` seconds.

    ``actions[i, offset]``: steering rate [rad/s] (``angle_command == 0``) or target steering angle
    [rad]; ``actions[i, offset + 1]``: longitudinal acceleration [m/s^2]; non-finite counts as 0; both
    clipped to the model's ranges and held over the step (``command_out``). A target angle is
    reached at the largest steering rate, without overshoot (the rate is re-aimed each substep)."""
    i = wp.tid()
    c0 = actions[i, offset]
    c1 = actions[i, offset + 1]
    if not wp.isfinite(c0):
        c0 = 0.0
    if not wp.isfinite(c1):
        c1 = 0.0
    if angle_command != 0:
        c0 = wp.clamp(c0, p.steer_min, p.steer_max)
    else:
        c0 = wp.clamp(c0, p.rate_min, p.rate_max)
    c1 = wp.clamp(c1, -p.accel_max, p.accel_max)
    command_out[i] = wp.vec2f(c0, c1)
    m = p.mass * mass_scale[i]
    iz = p.inertia * inertia_scale[i]
    cf = p.c_front * stiffness_scale[i]
    cr = p.c_rear * stiffness_scale[i]
    mu = p.mu * friction_scale[i]
    xy = pos_out[i]
    s = vec7(xy[0], xy[1], yaw_out[i], speed_out[i], slip_out[i], yaw_rate_out[i], steer_out[i])
    for _k in range(substeps):
        rate = c0
        if angle_command != 0:
            rate = wp.clamp((c0 - s[6]) / h, p.rate_min, p.rate_max)
        s = rk4_substep(p, m, iz, cf, cr, mu, s, rate, c1, h)
    pos_out[i] = wp.vec2f(s[0], s[1])
    yaw_out[i] = s[2]
    speed_out[i] = s[3]
    slip_out[i] = s[4]
    yaw_rate_out[i] = s[5]
    steer_out[i] = s[6]


@wp.kernel
def car_reset_kernel(
    p: CarParams,
    mask: wp.array(dtype=wp.bool),
    start_pos: wp.array(dtype=wp.vec3f),
    start_yaw: wp.array(dtype=wp.float32),
    start_speed: wp.array(dtype=wp.float32),
    command_out: wp.array(dtype=wp.vec2f),
    pos_out: wp.array(dtype=wp.vec2f),
    yaw_out: wp.array(dtype=wp.float32),
    speed_out: wp.array(dtype=wp.float32),
    slip_out: wp.array(dtype=wp.float32),
    yaw_rate_out: wp.array(dtype=wp.float32),
    steer_out: wp.array(dtype=wp.float32),
):
    """Masked envs: at (start_pos.x, start_pos.y) facing ``start_yaw``, rolling straight ahead at
    ``start_speed`` (within the model's speed range), wheels straight."""
    i = wp.tid()
    if mask[i]:
        sp = start_pos[i]
        pos_out[i] = wp.vec2f(sp[0], sp[1])
        yaw_out[i] = start_yaw[i]
        speed_out[i] = wp.clamp(start_speed[i], p.speed_min, p.speed_max)
        slip_out[i] = 0.0
        yaw_rate_out[i] = 0.0
        steer_out[i] = 0.0
        command_out[i] = wp.vec2f(0.0, 0.0)


# ------------------------------------------------------------------------------------------------ dynamics


class CarDynamics:
    """The state of ``num_envs`` cars and the launches that drive them.

    State ([E] arrays, written in place): ``pos`` (vec2f CoG position [m]), ``yaw`` [rad, in [-pi, pi)],
    ``speed`` [m/s], ``slip`` (slip angle beta [rad]), ``yaw_rate`` [rad/s], ``steer`` (front steering
    angle [rad]); ``command`` (vec2f, the last step's clipped commands).

    ``steering``: ``"rate"`` (action column 0 is the steering rate [rad/s]) or ``"angle"`` (a target
    steering angle [rad], reached at the largest rate). Column 1 is the longitudinal acceleration
    [m/s^2]. ``step(actions, dt, offset)`` once per env step; ``reset(mask, start_pos, start_yaw)`` on
    reset. All buffers are allocated here, once, and a step is one launch, so both are capturable
    (``dt`` and ``offset`` are frozen into a recorded graph).

    Per-env plant factors (1 unless a randomization event writes them), relative to the model's:
    ``mass_scale``, ``inertia_scale``, ``stiffness_scale`` (both cornering stiffnesses) and
    ``friction_scale`` [E] float32. Keep the scaled figures within RK4's stable substep
    (:meth:`CarModel.stiffest_rate`): stiffer, lighter or lower-inertia cars need a shorter one."""

    STEERING = ("rate", "angle")

    def __init__(self, model: CarModel, num_envs: int, device, steering: str = "rate"):
        if steering not in self.STEERING:
            raise ValueError(f"steering: expected one of {self.STEERING}, got {steering!r}")
        if not (isinstance(num_envs, int) and not isinstance(num_envs, bool) and num_envs >= 1):
            raise ValueError(f"num_envs: expected an int >= 1, got {num_envs!r}")
        model.check()
        self.model = model
        self.steering = steering
        self.num_envs = num_envs
        self.device = wp.get_device(device)
        self.params = car_params(model)
        E, dev = num_envs, self.device
        self.pos = wp.zeros(E, dtype=wp.vec2f, device=dev)
        self.yaw = wp.zeros(E, dtype=wp.float32, device=dev)
        self.speed = wp.zeros(E, dtype=wp.float32, device=dev)
        self.slip = wp.zeros(E, dtype=wp.float32, device=dev)
        self.yaw_rate = wp.zeros(E, dtype=wp.float32, device=dev)
        self.steer = wp.zeros(E, dtype=wp.float32, device=dev)
        self.command = wp.zeros(E, dtype=wp.vec2f, device=dev)
        self.mass_scale = wp.ones(E, dtype=wp.float32, device=dev)
        self.inertia_scale = wp.ones(E, dtype=wp.float32, device=dev)
        self.stiffness_scale = wp.ones(E, dtype=wp.float32, device=dev)
        self.friction_scale = wp.ones(E, dtype=wp.float32, device=dev)
        self.all_mask = wp.ones(E, dtype=wp.bool, device=dev)
        self._origin = wp.zeros(E, dtype=wp.vec3f, device=dev)
        self._zeros = wp.zeros(E, dtype=wp.float32, device=dev)

    def state(self) -> tuple[wp.array, ...]:
        """The state arrays in the kernels' order: pos, yaw, speed, slip, yaw_rate, steer."""
        return self.pos, self.yaw, self.speed, self.slip, self.yaw_rate, self.steer

    def step(self, actions: wp.array, dt: float, offset: int = 0) -> None:
        """Advance every car by ``dt`` seconds under ``actions`` ([E, A] float32, columns ``offset`` and
        ``offset + 1``); one launch, no allocation, no host sync."""
        n = self.model.substeps(dt)
        if actions.dtype != wp.float32 or actions.ndim != 2 or actions.shape[0] != self.num_envs:
            raise ValueError(f"actions: expected a [{self.num_envs}, A] float32 array, got shape {actions.shape} "
                             f"of {wp.types.type_repr(actions.dtype)}")
        if not 0 <= offset <= actions.shape[1] - 2:
            raise ValueError(f"offset: expected 0 <= offset <= {actions.shape[1] - 2} (two action columns), "
                             f"got {offset!r}")
        wp.launch(car_step_kernel, dim=self.num_envs,
                  inputs=[self.params, int(offset), int(self.steering == "angle"), n, float(dt) / n, actions,
                          self.mass_scale, self.inertia_scale, self.stiffness_scale, self.friction_scale],
                  outputs=[self.command, *self.state()], device=self.device)

    def reset(self, mask: wp.array | None = None, start_pos: wp.array | None = None,
              start_yaw: wp.array | None = None, start_speed: wp.array | None = None) -> None:
        """Masked envs (all when None) at ``start_pos`` ([E] vec3f, z ignored; the origin when None)
        facing ``start_yaw`` ([E] float32; 0 when None): a course's ``start_pos`` / ``start_yaw`` fit;
        at rest, or rolling straight at ``start_speed`` ([E] float32 m/s, clamped to the speed range)."""
        wp.launch(car_reset_kernel, dim=self.num_envs,
                  inputs=[self.params, self.all_mask if mask is None else mask,
                          self._origin if start_pos is None else start_pos,
                          self._zeros if start_yaw is None else start_yaw,
                          self._zeros if start_speed is None else start_speed],
                  outputs=[self.command, *self.state()], device=self.device)
