"""Race-car safety terms (stable runtime): what a car that slides, spins or parks pays or ends with.

* :func:`car_slip_l2` (reward): the slip angle squared, or (``rolling=True``) only its part beyond
  the slip a rolling car has at its steering angle.
* :class:`car_spun` (termination): the slip angle beyond a limit (a spin, which the single-track
  model cannot carry on from: :mod:`track_gen_isaac.car`).
* :class:`car_stalled` (termination): the car slower than a speed for longer than a time (a car
  parked before a hard corner, which the crash penalty otherwise teaches).

Each is one Warp launch into a preallocated buffer, shared with the warp twins in
:mod:`track_gen_isaac.experimental.mdp.car`, so both runtimes record them.
"""

from __future__ import annotations

import math
import numbers

import torch
import warp as wp
from isaaclab.managers import ManagerTermBase

from track_gen_isaac.mdp.car import car_term

__all__ = ["car_slip_l2", "car_slip_sq", "car_spun", "car_stalled"]

wp.set_module_options({"enable_backward": False})


# ------------------------------------------------------------------------------------------------ slip


@wp.kernel
def car_slip_sq_kernel(lr_over_l: float, rolling: int, slip: wp.array(dtype=wp.float32),
                       steer: wp.array(dtype=wp.float32), reward_out: wp.array(dtype=wp.float32)):
    """(slip angle - the rolling slip of the steering angle when ``rolling``)^2 [rad^2]."""
    i = wp.tid()
    b = slip[i]
    if rolling != 0:
        b = b - wp.atan(lr_over_l * wp.tan(steer[i]))
    reward_out[i] = b * b


def car_slip_sq(env, out: wp.array, action_name: str = "car", rolling: bool = False) -> None:
    """The car's slip angle squared into ``out`` ([E] float32); both runtimes' launch. With ``rolling``
    the slip a rolling car has at its steering angle, ``atan(l_r tan(delta) / l)``, is taken off first."""
    if not isinstance(rolling, bool):
        raise TypeError(f"car_slip_l2: rolling must be a bool, got {rolling!r}")
    d = car_term(env, action_name).driver.dyn
    m = d.model
    wp.launch(car_slip_sq_kernel, dim=d.num_envs, inputs=[float(m.lr / (m.lf + m.lr)), int(rolling), d.slip, d.steer],
              outputs=[out], device=d.device)


def car_slip_l2(env, action_name: str = "car", rolling: bool = False) -> torch.Tensor:
    """The slip angle squared [rad^2] (use a negative weight): a car sliding towards a spin pays
    before it spins, which ends the episode. The slip angle alone also charges a car that turns
    without sliding (a rolling car at full lock slips ~0.23 rad, the rear axle's geometry); with
    ``rolling=True`` only the slip beyond that rolling slip of the steering angle pays, the sliding."""
    out = torch.empty(env.num_envs, device=env.device)
    car_slip_sq(env, wp.from_torch(out), action_name, rolling)
    return out


# ------------------------------------------------------------------------------------------------ spin


@wp.kernel
def car_spun_kernel(limit: float, slip: wp.array(dtype=wp.float32), done_out: wp.array(dtype=wp.bool)):
    """|slip angle| beyond ``limit`` [rad], or not finite."""
    i = wp.tid()
    done_out[i] = not (wp.abs(slip[i]) <= limit)


def check_slip(max_slip) -> float:
    if isinstance(max_slip, bool) or not isinstance(max_slip, numbers.Real) or not (0.0 < max_slip <= math.pi):
        raise ValueError(f"car_spun: max_slip must be in (0, pi] [rad], got {max_slip!r}")
    return float(max_slip)


class car_spun(ManagerTermBase):
    """True where the car's slip angle exceeds ``max_slip`` [rad] (default 0.5): a spin, which the
    single-track model cannot carry on from (it keeps the speed and turns on), so treat it as a
    crash. ``action_name``: the :class:`CarAction` term."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        check_slip(cfg.params.get("max_slip", 0.5))
        self._term = car_term(env, cfg.params.get("action_name", "car"))
        self._out = wp.zeros(env.num_envs, dtype=wp.bool, device=env.device)

    def launch(self, out: wp.array, max_slip: float = 0.5) -> None:
        d = self._term.driver.dyn
        wp.launch(car_spun_kernel, dim=d.num_envs, inputs=[float(max_slip), d.slip], outputs=[out], device=d.device)

    def __call__(self, env, max_slip: float = 0.5, action_name: str = "car"):
        self.launch(self._out, max_slip)
        return wp.to_torch(self._out).clone()


# ------------------------------------------------------------------------------------------------ stall


@wp.kernel
def car_stalled_kernel(dt: float, min_speed: float, patience: float, speed: wp.array(dtype=wp.float32),
                       timer: wp.array(dtype=wp.float32), done_out: wp.array(dtype=wp.bool)):
    """Per car: the time it has been slower than ``min_speed`` (reset by any faster step), and
    whether that time reached ``patience``."""
    i = wp.tid()
    t = float(0.0)
    if wp.abs(speed[i]) < min_speed:
        t = timer[i] + dt
    timer[i] = t
    done_out[i] = t >= patience


@wp.kernel
def car_stall_reset_kernel(mask: wp.array(dtype=wp.bool), timer: wp.array(dtype=wp.float32)):
    i = wp.tid()
    if mask[i]:
        timer[i] = 0.0


def check_stall(min_speed, patience) -> tuple[float, float]:
    for name, v in (("min_speed", min_speed), ("patience", patience)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0.0 < v < math.inf):
            raise ValueError(f"car_stalled: {name} must be a finite number > 0 ({'m/s' if name == 'min_speed' else 's'}), "
                             f"got {v!r}")
    return float(min_speed), float(patience)


class car_stalled(ManagerTermBase):
    """True where the car has been slower than ``min_speed`` [m/s] (default 0.3) for ``patience`` [s]
    (default 2) of env steps in a row. Without it a car whose every crash costs more than the
    progress it can make in its discount horizon learns to park before a hard corner and wait for the
    time-out; counted as a failure (with the crash penalty) it has to drive through. A standing
    start is not a stall: the car leaves ``min_speed`` behind within a fraction of a second.
    ``action_name``: the :class:`CarAction` term."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        p = cfg.params
        check_stall(p.get("min_speed", 0.3), p.get("patience", 2.0))
        self._term = car_term(env, p.get("action_name", "car"))
        self._dt = float(env.step_dt)
        self._timer = wp.zeros(env.num_envs, dtype=wp.float32, device=env.device)
        self._out = wp.zeros(env.num_envs, dtype=wp.bool, device=env.device)
        self._mask = wp.zeros(env.num_envs, dtype=wp.bool, device=env.device)

    @property
    def stalled_s(self) -> wp.array:
        """[E] float32: how long each car has been below ``min_speed`` [s]."""
        return self._timer

    def launch(self, out: wp.array, min_speed: float = 0.3, patience: float = 2.0) -> None:
        d = self._term.driver.dyn
        wp.launch(car_stalled_kernel, dim=d.num_envs, inputs=[self._dt, float(min_speed), float(patience), d.speed],
                  outputs=[self._timer, out], device=d.device)

    def reset_mask(self, mask: wp.array) -> None:
        wp.launch(car_stall_reset_kernel, dim=self._timer.shape[0], inputs=[mask], outputs=[self._timer],
                  device=self._timer.device)

    def reset(self, env_ids=None) -> None:
        if env_ids is None or isinstance(env_ids, slice):
            self._timer.zero_()
            return
        m = wp.to_torch(self._mask)
        m.zero_()
        m[torch.as_tensor(env_ids, device=m.device, dtype=torch.long)] = True
        self.reset_mask(self._mask)

    def __call__(self, env, min_speed: float = 0.3, patience: float = 2.0, action_name: str = "car"):
        self.launch(self._out, min_speed, patience)
        return wp.to_torch(self._out).clone()
