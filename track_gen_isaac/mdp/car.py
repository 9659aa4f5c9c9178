"""Race-car terms (stable runtime): the action that drives :class:`~track_gen_isaac.car.CarDynamics`, the car's
own state, the band ahead of it, the spin termination.

* :class:`CarActionCfg` / :class:`CarAction`: 2-D action in [-1, 1] -> steering (a target angle,
  ``a0 x steer_max``, or a rate) and longitudinal acceleration (``a1 x accel_max``) -> one
  :meth:`CarDynamics.step <track_gen_isaac.car.CarDynamics.step>` per physics step -> the car's
  pose and velocity written into the asset's root buffers (a kinematic body: see
  :mod:`track_gen_isaac.tasks.car_track` for why).
* :class:`car_state`: [E, 6] observation (speed, slip angle, yaw rate, steering angle, the last
  step's two clipped commands over their limits).
* :class:`band_ahead`: [E, 5 K] observation of a band-track course: at each of K arc lengths ahead
  of the car's projection, the band's left and right edge points in the car frame and the course
  line's curvature.

The slip penalty and the spin and stall endings are in :mod:`track_gen_isaac.mdp.car_safety`.

Every term is one Warp launch into a preallocated buffer (the launch is shared with the warp twins in
:mod:`track_gen_isaac.experimental.mdp.car`), so both runtimes record them.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np
import torch
import warp as wp
from isaaclab.managers import ActionTerm, ActionTermCfg, ManagerTermBase
from isaaclab.utils import configclass

from track_gen_isaac.car import F1TENTH, CarDynamics, CarModel
from track_gen_isaac.mdp._base import CourseTerm
from track_gen_isaac.quadrotor import GRAVITY

if TYPE_CHECKING:  # pragma: no cover
    from isaaclab.envs import ManagerBasedEnv

__all__ = ["CarAction", "CarActionCfg", "car_state", "band_ahead", "car_term", "CAR_STATE_DIM", "BAND_VALUES"]

wp.set_module_options({"enable_backward": False})

#: values of :class:`car_state`
CAR_STATE_DIM = 6
#: values of :class:`band_ahead` per distance: left edge (x, y), right edge (x, y), curvature
BAND_VALUES = 5


# ------------------------------------------------------------------------------------------------ action


@wp.func
def grip_steer_limit(steer_max: float, grip_accel: float, wheelbase: float, understeer: float, v: float) -> float:
    """The steering angle of a steady turn at lateral acceleration ``grip_accel`` at speed ``v``,
    ``grip_accel (l / v^2 + K)``, never beyond ``steer_max`` (which it is at rest)."""
    v2 = v * v
    if v2 * steer_max <= grip_accel * wheelbase:
        return steer_max
    return wp.min(steer_max, grip_accel * (wheelbase / v2 + understeer))


@wp.kernel
def car_scale_kernel(
    offset: int,
    steer_scale: float,
    accel_scale: float,
    grip_accel: float,
    wheelbase: float,
    understeer: float,
    speed: wp.array(dtype=wp.float32),
    actions: wp.array(dtype=wp.float32, ndim=2),
    raw_out: wp.array(dtype=wp.float32, ndim=2),
    scaled_out: wp.array(dtype=wp.float32, ndim=2),
):
    """Clip the policy's two columns to [-1, 1] (non-finite: 0), keep them (``raw_out``) and scale them
    to the dynamics' units (``scaled_out``: steering [rad or rad/s], acceleration [m/s^2]). With
    ``grip_accel > 0`` the steering scale is :func:`grip_steer_limit` at the car's speed."""
    i = wp.tid()
    for j in range(2):
        a = actions[i, offset + j]
        if not wp.isfinite(a):
            a = 0.0
        a = wp.clamp(a, -1.0, 1.0)
        raw_out[i, j] = a
    s = steer_scale
    if grip_accel > 0.0:
        s = grip_steer_limit(steer_scale, grip_accel, wheelbase, understeer, wp.abs(speed[i]))
    scaled_out[i, 0] = raw_out[i, 0] * s
    scaled_out[i, 1] = raw_out[i, 1] * accel_scale


@wp.kernel
def car_pose_kernel(
    pos: wp.array(dtype=wp.vec2f),
    yaw: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    slip: wp.array(dtype=wp.float32),
    yaw_rate: wp.array(dtype=wp.float32),
    pose_out: wp.array(dtype=wp.transformf),
    velocity_out: wp.array(dtype=wp.spatial_vectorf),
):
    """The car's state as the asset's root pose (world x, y; height kept; yaw about z) and velocity
    (the CoG velocity ``v (cos(yaw + slip), sin(yaw + slip), 0)``, angular ``(0, 0, yaw rate)``)."""
    i = wp.tid()
    z = wp.transform_get_translation(pose_out[i])[2]
    p = pos[i]
    h = 0.5 * yaw[i]
    pose_out[i] = wp.transformf(wp.vec3f(p[0], p[1], z), wp.quatf(0.0, 0.0, wp.sin(h), wp.cos(h)))
    c = yaw[i] + slip[i]
    v = speed[i]
    velocity_out[i] = wp.spatial_vectorf(v * wp.cos(c), v * wp.sin(c), 0.0, 0.0, 0.0, yaw_rate[i])


@wp.kernel
def car_sync_kernel(
    pose: wp.array(dtype=wp.transformf),
    velocity: wp.array(dtype=wp.spatial_vectorf),
    start_pos_out: wp.array(dtype=wp.vec3f),
    start_yaw_out: wp.array(dtype=wp.float32),
    start_speed_out: wp.array(dtype=wp.float32),
):
    """The asset's root pose and velocity (as a reset event placed them) as the car's start: position,
    yaw (the heading of the body x axis in the ground plane) and the speed along that heading (0 from
    a placement at rest; the dynamics' reset holds it to the model's speed range)."""
    i = wp.tid()
    t = pose[i]
    start_pos_out[i] = wp.transform_get_translation(t)
    fwd = wp.quat_rotate(wp.transform_get_rotation(t), wp.vec3f(1.0, 0.0, 0.0))
    start_yaw_out[i] = wp.atan2(fwd[1], fwd[0])
    v = velocity[i]
    h = wp.normalize(wp.vec2f(fwd[0], fwd[1]))
    start_speed_out[i] = v[0] * h[0] + v[1] * h[1]


class CarDriver:
    """What both runtimes' :class:`CarAction` share: the dynamics, the action buffers, the writes into
    the asset's root buffers, the reset from the placed pose. ``term`` is the action term (its
    ``_asset``), ``cfg`` its :class:`CarActionCfg`."""

    def __init__(self, term, cfg: "CarActionCfg", env):
        from isaaclab_newton.physics import NewtonManager

        model = cfg.model
        if not isinstance(model, CarModel):
            raise TypeError(f"CarActionCfg.model: expected a track_gen_isaac.car.CarModel, got {type(model).__name__}")
        if cfg.steering not in CarDynamics.STEERING:
            raise ValueError(f"CarActionCfg.steering: expected one of {CarDynamics.STEERING}, got {cfg.steering!r}")
        asset = term._asset
        if getattr(asset, "num_bodies", 1) != 1:
            raise ValueError(f"CarAction: asset {cfg.asset_name!r} has {asset.num_bodies} bodies; the car is one "
                             "kinematic body (see track_gen_isaac.car.car_asset_cfg)")
        self.asset = asset
        self.dyn = CarDynamics(model, env.num_envs, env.device, steering=cfg.steering)
        self.dt = float(env.physics_dt)
        model.substeps(self.dt)  # a bad dt fails here, not in the first step
        E, dev = env.num_envs, self.dyn.device
        self.raw = wp.zeros((E, 2), dtype=wp.float32, device=dev)
        self.scaled = wp.zeros((E, 2), dtype=wp.float32, device=dev)
        self.steer_scale = float(model.steer_max if cfg.steering == "angle" else model.steer_rate_max)
        self.accel_scale = float(model.accel_max)
        grip = cfg.grip_steering
        if not isinstance(grip, numbers.Real) or isinstance(grip, bool) or not math.isfinite(grip) or grip < 0:
            raise ValueError(f"CarActionCfg.grip_steering: expected a finite number >= 0 (0: off), got {grip!r}")
        if grip > 0 and cfg.steering != "angle":
            raise ValueError("CarActionCfg.grip_steering limits a target steering angle: it needs steering='angle', "
                             f"got steering={cfg.steering!r}")
        #: lateral acceleration [m/s^2] that a full steering action asks for at speed (0: off)
        self.grip_accel = float(grip) * model.friction * GRAVITY
        self.mask = wp.zeros(E, dtype=wp.bool, device=dev)
        self.all_mask = wp.ones(E, dtype=wp.bool, device=dev)
        self.start_pos = wp.zeros(E, dtype=wp.vec3f, device=dev)
        self.start_yaw = wp.zeros(E, dtype=wp.float32, device=dev)
        self.start_speed = wp.zeros(E, dtype=wp.float32, device=dev)
        # a replayed graph does not replay invalidate_fk's Python flag: Newton must re-read root poses anyway
        NewtonManager.transforms_may_change_on_graph_replay = True

    def command(self, actions: wp.array, offset: int = 0) -> None:
        m = self.dyn.model
        wp.launch(car_scale_kernel, dim=self.dyn.num_envs,
                  inputs=[int(offset), self.steer_scale, self.accel_scale, self.grip_accel, float(m.wheelbase),
                          float(m.understeer_gradient), self.dyn.speed, actions],
                  outputs=[self.raw, self.scaled], device=self.dyn.device)

    def step(self) -> None:
        """One physics step of the car, then its pose and velocity into the asset's root buffers."""
        self.dyn.step(self.scaled, self.dt)
        self.write(self.all_mask)

    def write(self, mask: wp.array) -> None:
        from isaaclab_newton.physics import NewtonManager

        d = self.dyn
        data = self.asset.data
        wp.launch(car_pose_kernel, dim=d.num_envs, inputs=[d.pos, d.yaw, d.speed, d.slip, d.yaw_rate],
                  outputs=[data.root_link_pose_w.warp, data.root_com_vel_w.warp], device=d.device)
        NewtonManager.invalidate_fk(env_mask=mask, articulation_ids=self.asset.root_view.articulation_ids)

    def reset(self, mask: wp.array | None) -> None:
        """The masked cars (all when None) where the reset events put the asset, at the speed they gave
        it along its heading (at rest unless a placement started it at speed)."""
        m = self.all_mask if mask is None else mask
        d = self.dyn
        data = self.asset.data
        wp.launch(car_sync_kernel, dim=d.num_envs,
                  inputs=[data.root_link_pose_w.warp, data.root_com_vel_w.warp],
                  outputs=[self.start_pos, self.start_yaw, self.start_speed], device=d.device)
        d.reset(m, self.start_pos, self.start_yaw, self.start_speed)
        wp.launch(car_zero_raw_kernel, dim=d.num_envs, inputs=[m], outputs=[self.raw], device=d.device)
        self.write(m)


@wp.kernel
def car_zero_raw_kernel(mask: wp.array(dtype=wp.bool), raw_out: wp.array(dtype=wp.float32, ndim=2)):
    i = wp.tid()
    if mask[i]:
        raw_out[i, 0] = 0.0
        raw_out[i, 1] = 0.0


class CarAction(ActionTerm):
    """Steering and acceleration for a car driven by :class:`~track_gen_isaac.car.CarDynamics`.

    Action ``a`` in [-1, 1]^2 (clipped; non-finite values count as 0): ``a0 x steer_max`` is the
    target steering angle [rad] (``steering="angle"``, reached at the largest steering rate) or
    ``a0 x steer_rate_max`` the steering rate [rad/s] (``"rate"``); ``a1 x accel_max`` the
    longitudinal acceleration [m/s^2] (the model then limits both: :mod:`track_gen_isaac.car`).
    With ``cfg.grip_steering = g > 0`` the angle's scale shrinks with speed to the steady turn at
    ``g`` times the friction limit (:func:`grip_steer_limit`). Every physics step the car is
    integrated over ``physics_dt`` and its pose (x, y, yaw; the height stays where the reset put it)
    and velocity are written into the asset's root buffers (``root_link_pose_w``, ``root_com_vel_w``)
    with a forward-kinematics invalidation: the asset is a kinematic body that only shows the car. On
    reset the reset envs' cars start at the pose the reset events gave the asset, rolling along its
    heading at the speed they gave it (at rest unless a placement set one)."""

    cfg: "CarActionCfg"

    def __init__(self, cfg: "CarActionCfg", env: ManagerBasedEnv):
        super().__init__(cfg, env)
        self.driver = CarDriver(self, cfg, env)
        self.dyn = self.driver.dyn
        self._mask_t = wp.to_torch(self.driver.mask)
        self._raw_t = wp.to_torch(self.driver.raw)
        self._scaled_t = wp.to_torch(self.driver.scaled)

    @property
    def action_dim(self) -> int:
        return 2

    @property
    def raw_actions(self) -> torch.Tensor:
        return self._raw_t

    @property
    def processed_actions(self) -> torch.Tensor:
        """[E, 2]: the steering command [rad or rad/s] and the acceleration [m/s^2] before the model's limits."""
        return self._scaled_t

    def process_actions(self, actions: torch.Tensor):
        self.driver.command(wp.from_torch(actions.to(torch.float32).contiguous()), 0)

    def apply_actions(self):
        self.driver.step()

    def reset(self, env_ids=None) -> None:
        if env_ids is None or (isinstance(env_ids, slice) and env_ids == slice(None)):
            self.driver.reset(None)
            return
        self._mask_t.zero_()
        self._mask_t[torch.as_tensor(env_ids, device=self.device, dtype=torch.long)] = True
        self.driver.reset(self.driver.mask)


@configclass
class CarActionCfg(ActionTermCfg):
    """The car's action term (see :class:`CarAction`)."""

    class_type: type = CarAction
    asset_name: str = "robot"
    model: CarModel = F1TENTH
    """The car's figures and limits (F1TENTH by default)."""
    steering: str = "angle"
    """``"angle"``: action 0 is a target steering angle; ``"rate"``: a steering rate."""
    grip_steering: float = 0.0
    """0 (off): a full steering action is ``steer_max`` at every speed. ``g > 0`` (``steering="angle"``
    only): a full steering action asks for the steady turn at ``g`` times the friction limit at the
    car's speed, ``min(steer_max, g mu g_0 (l / v^2 + K))`` (``K`` the understeer gradient), so the same
    action noise that is harmless at 3 m/s does not throw the car off the road at 15 m/s."""


def car_term(env, action_name: str):
    """The env's :class:`CarAction` term named ``action_name`` (either runtime's); ValueError otherwise."""
    try:
        term = env.action_manager.get_term(action_name)
    except (AttributeError, KeyError, ValueError):
        term = None
    if term is None or not hasattr(term, "driver"):
        raise ValueError(f"action term {action_name!r}: expected a CarAction in the env's actions cfg")
    return term


# ------------------------------------------------------------------------------------------------ car state


@wp.kernel
def car_state_kernel(
    steer_scale: float,
    accel_scale: float,
    speed: wp.array(dtype=wp.float32),
    slip: wp.array(dtype=wp.float32),
    yaw_rate: wp.array(dtype=wp.float32),
    steer: wp.array(dtype=wp.float32),
    command: wp.array(dtype=wp.vec2f),
    obs_out: wp.array(dtype=wp.float32, ndim=2),
):
    """[E, 6]: speed [m/s], slip angle [rad], yaw rate [rad/s], steering angle [rad], the last step's
    clipped steering and acceleration commands over their scales (in [-1, 1])."""
    i = wp.tid()
    c = command[i]
    obs_out[i, 0] = speed[i]
    obs_out[i, 1] = slip[i]
    obs_out[i, 2] = yaw_rate[i]
    obs_out[i, 3] = steer[i]
    obs_out[i, 4] = c[0] / steer_scale
    obs_out[i, 5] = c[1] / accel_scale


class car_state(ManagerTermBase):
    """The car's own state, [E, 6]: speed [m/s], slip angle [rad], yaw rate [rad/s], steering angle
    [rad], and the last action as applied (the two clipped commands over their full scale, in
    [-1, 1]). ``action_name``: the :class:`CarAction` term."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self._term = car_term(env, cfg.params.get("action_name", "car"))
        self._out = wp.zeros((env.num_envs, CAR_STATE_DIM), dtype=wp.float32, device=env.device)

    def launch(self, out: wp.array) -> None:
        drv = self._term.driver
        d = drv.dyn
        wp.launch(car_state_kernel, dim=d.num_envs,
                  inputs=[drv.steer_scale, drv.accel_scale, d.speed, d.slip, d.yaw_rate, d.steer, d.command],
                  outputs=[out], device=d.device)

    def __call__(self, env, action_name: str = "car"):
        self.launch(self._out)
        return wp.to_torch(self._out).clone()


# ------------------------------------------------------------------------------------------------ band ahead


@wp.func
def _at(e: int, j: int, t: float, a: wp.array2d(dtype=wp.float32)):
    n = a.shape[1]
    return a[e, j] * (1.0 - t) + a[e, (j + 1) % n] * t


@wp.kernel
def band_ahead_kernel(
    pos_w: wp.array(dtype=wp.vec3f),
    quat_w: wp.array(dtype=wp.quatf),
    origin: wp.array(dtype=wp.vec3f),
    frame_s: wp.array(dtype=wp.float32),
    frame_segment: wp.array(dtype=wp.int32),
    xy: wp.array2d(dtype=wp.vec2f),
    normal: wp.array2d(dtype=wp.vec2f),
    half_width: wp.array2d(dtype=wp.float32),
    curvature: wp.array2d(dtype=wp.float32),
    line_s: wp.array2d(dtype=wp.float32),
    length: wp.array(dtype=wp.float32),
    valid: wp.array(dtype=wp.int32),
    distances: wp.array(dtype=wp.float32),
    peak: int,
    obs_out: wp.array2d(dtype=wp.float32),
):
    """Per distance ``d``: the band's left and right edge points at arc length ``s + d`` (the centre
    line point plus / minus the half width along the left normal, linearly interpolated between
    the line's points) in the body frame (x, y), and the line's signed curvature there [1/m] -- or,
    with ``peak``, the signed curvature of largest magnitude over the stretch from the previous
    distance (the car's own projection for the first) to ``d``: the line's points inside it and its
    two ends. The loop wraps. An invalid course or no frame (segment -1): zeros."""
    e = wp.tid()
    D = distances.shape[0]
    n = xy.shape[1]
    seg = frame_segment[e]
    L = length[e]
    if valid[e] == 0 or seg < 0 or seg >= n or L <= 0.0:
        for k in range(BAND_VALUES * D):
            obs_out[e, k] = 0.0
        return
    p = pos_w[e] - origin[e]
    q = quat_w[e]
    j = seg
    s0 = line_s[e, j]
    s1 = L
    if j + 1 < n:
        s1 = line_s[e, j + 1]
    t = float(0.0)
    if s1 > s0:
        t = wp.clamp((frame_s[e] - s0) / (s1 - s0), 0.0, 1.0)
    k_prev = _at(e, j, t, curvature)  # the curvature where the stretch to the next distance begins
    for i in range(D):
        target = frame_s[e] + distances[i]
        target = target - L * wp.floor(target / L)
        k_peak = k_prev
        # walk forwards (cyclically) from the last segment to the one holding target; distances are
        # sorted ahead, so the walk continues where the previous distance stopped; every point
        # walked onto lies inside the stretch
        for _k in range(n + 1):
            s0 = line_s[e, j]
            s1 = L
            if j + 1 < n:
                s1 = line_s[e, j + 1]
            if target >= s0 and target <= s1:
                break
            j = (j + 1) % n
            if wp.abs(curvature[e, j]) > wp.abs(k_peak):
                k_peak = curvature[e, j]
        s0 = line_s[e, j]
        s1 = L
        if j + 1 < n:
            s1 = line_s[e, j + 1]
        t = 0.0
        if s1 > s0:
            t = wp.clamp((target - s0) / (s1 - s0), 0.0, 1.0)
        a = xy[e, j]
        b = xy[e, (j + 1) % n]
        c = a + (b - a) * t
        na = normal[e, j]
        nb = normal[e, (j + 1) % n]
        nm = na + (nb - na) * t
        ln = wp.length(nm)
        if ln > 0.0:
            nm = nm / ln
        hw = _at(e, j, t, half_width)
        left = wp.quat_rotate_inv(q, wp.vec3f(c[0] + hw * nm[0], c[1] + hw * nm[1], p[2]) - p)
        right = wp.quat_rotate_inv(q, wp.vec3f(c[0] - hw * nm[0], c[1] - hw * nm[1], p[2]) - p)
        k0 = BAND_VALUES * i
        obs_out[e, k0] = left[0]
        obs_out[e, k0 + 1] = left[1]
        obs_out[e, k0 + 2] = right[0]
        obs_out[e, k0 + 3] = right[1]
        k_end = _at(e, j, t, curvature)
        if wp.abs(k_end) > wp.abs(k_peak):
            k_peak = k_end
        if peak != 0:
            obs_out[e, k0 + 4] = k_peak
        else:
            obs_out[e, k0 + 4] = k_end
        k_prev = k_end


class band_ahead(CourseTerm):
    """The band ahead of the car, in the **car frame** (x forward, y left; the root frame of the
    followed entity): at each of ``distances`` [m] of arc length ahead of the localizer's
    projection, the band's left edge (x, y), its right edge (x, y) and the course line's signed
    curvature [1/m] (> 0: turning left). Shape ``[E, 5 * len(distances)]``; an invalid course or no
    frame: zeros. Band-track courses only; ``distances`` must be >= 0 and increasing.

    ``peak=True``: each curvature is the one of largest magnitude (signed) over the stretch since the
    previous distance, not the value at the distance: a kink shorter than the spacing of the far
    distances is seen as sharp as it is, wherever it falls between them."""

    modes = ("track",)

    def check(self, distances=(1.0, 2.0, 4.0), peak=False):
        if not isinstance(peak, bool):
            raise TypeError(f"band_ahead: peak must be a bool, got {peak!r}")
        try:
            d = [float(x) for x in distances]
        except (TypeError, ValueError):
            raise TypeError(f"distances: expected a sequence of numbers [m], got {distances!r}") from None
        if not d or not all(math.isfinite(x) and x >= 0.0 for x in d) or any(b < a for a, b in zip(d, d[1:])):
            raise ValueError(f"distances: expected at least one finite distance >= 0 [m], increasing, got {distances!r}")
        if not self.course_cfg.localizer:
            raise ValueError(f"env.cfg.{self.course_name}.localizer is False: the course has no localizer")
        self._distances_host = np.asarray(d, np.float32)
        self._distances = None

    def out_shape(self, distances=(1.0, 2.0, 4.0), peak=False):
        return (self.num_envs, BAND_VALUES * len(self._distances_host))

    def launch(self, out, distances=(1.0, 2.0, 4.0), peak=False):
        ec = self.ec
        f = self.read().frame
        if self._distances is None:  # first (eager) call: allocate outside any capture
            self._distances = wp.array(self._distances_host, dtype=wp.float32, device=ec.device)
        r = ec.course.result
        wp.launch(band_ahead_kernel, dim=ec.num_envs,
                  inputs=[ec.position, ec.orientation, ec.origin, f.s, f.segment, r.xy, r.normal, r.half_width,
                          r.curvature, r.s, r.length, r.valid, self._distances, int(peak)],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", distances: tuple = (1.0, 2.0, 4.0), peak: bool = False):
        return self.compute(distances=distances, peak=peak)
