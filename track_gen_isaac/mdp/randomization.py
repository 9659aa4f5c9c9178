"""Domain randomization of the quadrotor (stable runtime; warp twin in
:mod:`track_gen_isaac.experimental.mdp.randomization`).

:class:`randomize_quadrotor` is a reset event: for every resetting env it draws the plant's
parameters once per episode and writes them where they act: the body's mass and inertia into the
simulation (the asset's ``set_masses_mask`` / ``set_inertias_mask``), the thrust and torque
coefficients, motor time constant, linear drag and action latency into the action term's
per-env buffers (:class:`~track_gen_isaac.quadrotor.QuadrotorDynamics`). The controller and
mixer keep the nominal model, so the policy must cope with the mismatch, as on a real drone.

Draws are counter based (seed, env, the env's draw count): the same in both runtimes and
independent of which other envs reset. The ranges (the defaults of :data:`RANGES`) and why:

==================  ===============  =========================================================================
parameter           range            why
==================  ===============  =========================================================================
mass                x [0.9, 1.1]     a 27 g Crazyflie varies by a few grams with battery, decks and wear
inertia (per axis)  x [0.85, 1.15]   our allowance for the error of an identified inertia (more than for mass)
thrust coefficient  x [0.9, 1.1]     propeller wear, battery voltage sag (thrust at a command drifts)
torque coefficient  x [0.85, 1.15]   km/kf is the least certain figure of the cf2x model
motor time const.   [0.02, 0.05] s   around the model's 30 ms; brushed Crazyflie motors are slower when loaded
linear drag         [0, 0.01] N s/m  order of Förster's (2015) Crazyflie rotor-drag figure near hover (~0.008)
action latency      {0, 1, 2} steps  0-40 ms at 50 Hz: radio, estimator and firmware delays
==================  ===============  =========================================================================

None of these comes from a racing paper's table (the drag figure is recalled, not re-checked); they
are our choices, sized to the uncertainty of the nominal Crazyflie figures (see :mod:`track_gen_isaac.quadrotor`).
"""

from __future__ import annotations

import math

import torch
import warp as wp
from isaaclab.managers import ManagerTermBase

from track_gen_isaac.mdp.quadrotor import _action_term
from track_gen_isaac.physics import hand_over_inertia
from track_gen_isaac.quadrotor import QuadrotorDynamics

__all__ = ["randomize_quadrotor", "RANGES", "check_ranges"]

wp.set_module_options({"enable_backward": False})

#: default ranges (lo, hi) of :class:`randomize_quadrotor`
RANGES = {
    "mass_scale": (0.9, 1.1),
    "inertia_scale": (0.85, 1.15),
    "thrust_scale": (0.9, 1.1),
    "torque_scale": (0.85, 1.15),
    "motor_time_constant": (0.02, 0.05),
    "linear_drag": (0.0, 0.01),
    "latency": (0, 2),
}


def check_ranges(**ranges) -> dict:
    """Every range a finite (lo, hi) with lo <= hi; scales > 0, the rest >= 0, latency integers within
    ``QuadrotorDynamics.MAX_DELAY``. Returns the full set (defaults filled in)."""
    out = dict(RANGES)
    for k, v in ranges.items():
        if k not in RANGES:
            raise ValueError(f"randomize_quadrotor: unknown parameter {k!r} (known: {sorted(RANGES)})")
        try:
            lo, hi = v
        except (TypeError, ValueError):
            raise ValueError(f"randomize_quadrotor.{k}: expected (lo, hi), got {v!r}") from None
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in (lo, hi)):
            raise ValueError(f"randomize_quadrotor.{k}: expected finite numbers, got {v!r}")
        if lo > hi or lo < 0 or (k.endswith("_scale") and lo <= 0):
            raise ValueError(f"randomize_quadrotor.{k}: expected 0 {'<' if k.endswith('_scale') else '<='} lo <= hi, "
                             f"got {v!r}")
        if k == "latency" and (int(lo) != lo or int(hi) != hi or hi > QuadrotorDynamics.MAX_DELAY):
            raise ValueError(f"randomize_quadrotor.latency: expected integers in [0, {QuadrotorDynamics.MAX_DELAY}], "
                             f"got {v!r}")
        out[k] = (lo, hi)
    return out


@wp.kernel
def randomize_quadrotor_kernel(
    seed: int,
    mass0: float,
    inertia0: wp.vec3f,
    dt: float,
    r_mass: wp.vec2f,
    r_inertia: wp.vec2f,
    r_thrust: wp.vec2f,
    r_torque: wp.vec2f,
    r_tau: wp.vec2f,
    r_drag: wp.vec2f,
    lat_lo: int,
    lat_hi: int,
    mask: wp.array(dtype=wp.bool),
    draws_out: wp.array(dtype=wp.int32),
    mass_out: wp.array2d(dtype=wp.float32),
    inertia_out: wp.array3d(dtype=wp.float32),
    thrust_scale_out: wp.array(dtype=wp.float32),
    torque_scale_out: wp.array(dtype=wp.float32),
    tau_out: wp.array(dtype=wp.float32),
    alpha_out: wp.array(dtype=wp.float32),
    drag_out: wp.array(dtype=wp.vec3f),
    delay_out: wp.array(dtype=wp.int32),
):
    """Masked envs: one draw of every parameter (uniform in its range; latency uniform over the
    integers lo..hi), keyed by (seed, env, draws[env]); draws[env] += 1."""
    i = wp.tid()
    if not mask[i]:
        return
    s = wp.rand_init(seed + i * 7919, draws_out[i] * 16)
    draws_out[i] = draws_out[i] + 1
    mass_out[i, 0] = mass0 * (r_mass[0] + (r_mass[1] - r_mass[0]) * wp.randf(s))
    for j in range(3):
        inertia_out[i, 0, 4 * j] = inertia0[j] * (r_inertia[0] + (r_inertia[1] - r_inertia[0]) * wp.randf(s))
    thrust_scale_out[i] = r_thrust[0] + (r_thrust[1] - r_thrust[0]) * wp.randf(s)
    torque_scale_out[i] = r_torque[0] + (r_torque[1] - r_torque[0]) * wp.randf(s)
    t = r_tau[0] + (r_tau[1] - r_tau[0]) * wp.randf(s)
    tau_out[i] = t
    a = float(1.0)
    if t > 0.0:
        a = 1.0 - wp.exp(-dt / t)
    alpha_out[i] = a
    dx = r_drag[0] + (r_drag[1] - r_drag[0]) * wp.randf(s)
    dy = r_drag[0] + (r_drag[1] - r_drag[0]) * wp.randf(s)
    dz = r_drag[0] + (r_drag[1] - r_drag[0]) * wp.randf(s)
    drag_out[i] = wp.vec3f(dx, dy, dz)
    k = lat_lo + int(wp.randf(s) * float(lat_hi - lat_lo + 1))
    delay_out[i] = wp.min(k, lat_hi)


class randomize_quadrotor(ManagerTermBase):
    """Reset event: draw the resetting envs' quadrotor parameters (see the module docstring for the
    ranges and their reasons). Parameters (each ``(lo, hi)``): ``mass_scale``, ``inertia_scale``
    (per axis), ``thrust_scale``, ``torque_scale`` (factors of the model's figures),
    ``motor_time_constant`` [s], ``linear_drag`` [N s/m] (per body axis), ``latency`` [env steps,
    integers, at most ``QuadrotorDynamics.MAX_DELAY``]. ``seed``: None -> the env cfg's seed.

    Read back: ``asset.data.body_mass`` / ``body_inertia`` (the simulation's), and the action
    term's ``dyn.thrust_scale``, ``torque_scale``, ``alpha_env``, ``drag``, ``delay``; this term's
    ``tau`` holds the drawn time constants [s]. Declare it first among the reset events (it does
    not move the robot; the new mass and inertia are handed to the solver at once, before any
    pose write). With CUDA graphs (warp runtime on a GPU) that hand-over is Python, not replayed:
    there, run the event outside the captured reset stage."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        p = dict(cfg.params)
        self._action_name = p.pop("action_name", "rotors")
        self._asset_name = p.pop("asset_name", "robot")
        seed = p.pop("seed", None)
        self.ranges = check_ranges(**p)
        self.seed = int(getattr(env.cfg, "seed", None) or 0 if seed is None else seed) * 7 + 12345
        E = env.num_envs
        dev = env.device
        self.draws = wp.zeros(E, dtype=wp.int32, device=dev)
        self.mass = wp.zeros((E, 1), dtype=wp.float32, device=dev)
        self.inertia = wp.zeros((E, 1, 9), dtype=wp.float32, device=dev)
        self.tau = wp.zeros(E, dtype=wp.float32, device=dev)
        self._mask_t = torch.zeros(E, dtype=torch.bool, device=dev)
        self._mask = wp.from_torch(self._mask_t, dtype=wp.bool)
        self._term = None

    @property
    def term(self):
        if self._term is None:  # the action manager is built after the event manager
            self._term = _action_term(self._env, self._action_name)
        return self._term

    def launch(self, env_mask: wp.array) -> None:
        """Draw for ``env_mask`` and write the parameters (both runtimes)."""
        dyn = self.term.dyn
        m = dyn.model
        r = self.ranges
        v2 = lambda k: wp.vec2f(float(r[k][0]), float(r[k][1]))  # noqa: E731
        wp.launch(randomize_quadrotor_kernel, dim=dyn.num_envs,
                  inputs=[self.seed, float(m.mass), wp.vec3f(*m.inertia), float(self._env.physics_dt),
                          v2("mass_scale"), v2("inertia_scale"), v2("thrust_scale"), v2("torque_scale"),
                          v2("motor_time_constant"), v2("linear_drag"), int(r["latency"][0]), int(r["latency"][1]),
                          env_mask],
                  outputs=[self.draws, self.mass, self.inertia, dyn.thrust_scale, dyn.torque_scale, self.tau,
                           dyn.alpha_env, dyn.drag, dyn.delay], device=dyn.device)
        asset = self._env.scene[self._asset_name]
        asset.set_masses_mask(masses=self.mass, env_mask=env_mask)
        asset.set_inertias_mask(inertias=self.inertia, env_mask=env_mask)
        hand_over_inertia()

    def __call__(self, env, env_ids, action_name: str = "rotors", asset_name: str = "robot", seed=None,
                 mass_scale=RANGES["mass_scale"], inertia_scale=RANGES["inertia_scale"],
                 thrust_scale=RANGES["thrust_scale"], torque_scale=RANGES["torque_scale"],
                 motor_time_constant=RANGES["motor_time_constant"], linear_drag=RANGES["linear_drag"],
                 latency=RANGES["latency"]):
        if env_ids is None or (isinstance(env_ids, slice) and env_ids == slice(None)):
            self._mask_t.fill_(True)
        else:
            self._mask_t.zero_()
            self._mask_t[torch.as_tensor(env_ids, device=self._mask_t.device, dtype=torch.long)] = True
        self.launch(self._mask)
