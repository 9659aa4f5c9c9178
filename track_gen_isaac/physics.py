"""The drone tasks' physics: MuJoCo-Warp (through Newton) stepping one free rigid body per env.

The quadrotor is a single body with no collision shape (the course computes every collision), so
the simulation has nothing to constrain. :func:`solver_cfg` builds the solver with no constraint
rows at all (``njmax=0``): MuJoCo-Warp then skips its constraint solver and takes the
unconstrained acceleration as it is. One consequence is handled here:

* MuJoCo-Warp's Euler step, with implicit damping on (its default), solves for the acceleration
  from the constraint solver's output, which is never written when there are no rows: the body
  would not move. :func:`free_body_step` turns implicit damping off (the body's degrees of freedom
  have no damping, so it changes nothing else). Trajectories match those of the former settings
  (one constraint row, one solver iteration) to float rounding, and the gate task's env step takes
  0.65x the time.
"""

from __future__ import annotations

__all__ = ["solver_cfg", "free_body_step", "hand_over_inertia"]


def solver_cfg():
    """MuJoCo-Warp for one free body per env: no contacts, no constraint rows."""
    from isaaclab_newton.physics import MJWarpSolverCfg

    return MJWarpSolverCfg(disable_contacts=True, njmax=0, nconmax=0, iterations=1, ls_iterations=1)


def _mujoco_warp_solver():
    """Newton's active MuJoCo-Warp solver with no constraint rows, or None (another solver, the
    MuJoCo CPU backend, rows allowed, or no simulation yet)."""
    try:
        from isaaclab_newton.physics import NewtonManager
    except ImportError:  # pragma: no cover
        return None
    solver = getattr(NewtonManager, "_solver", None)
    data = getattr(solver, "mjw_data", None)
    if data is None or getattr(solver, "use_mujoco_cpu", True) or int(getattr(data, "njmax", -1)) != 0:
        return None
    return solver


def free_body_step() -> None:
    """Make MuJoCo-Warp's Euler step integrate the unconstrained acceleration when the solver holds
    no constraint rows (see the module docstring). Called when a drone task's action term is built,
    before the first physics step (a graph recorded earlier is dropped and recorded again).
    Raises if a degree of freedom has damping: then implicit damping is not a no-op."""
    import numpy as np
    from mujoco_warp._src.types import DisableBit

    solver = _mujoco_warp_solver()
    if solver is None:
        return
    model = solver.mjw_model
    flag = int(DisableBit.EULERDAMP)
    if model.opt.disableflags & flag:
        return
    if model.nv and np.any(model.dof_damping.numpy() != 0.0):
        raise ValueError("free_body_step: the simulated bodies have joint damping, which MuJoCo-Warp's Euler step "
                         "with no constraint rows (njmax=0) cannot integrate; give the solver constraint rows")
    model.opt.disableflags |= flag
    from isaaclab_newton.physics import NewtonManager

    if getattr(NewtonManager, "_graph", None) is not None:
        NewtonManager._invalidate_graph()


def hand_over_inertia() -> None:
    """Hand pending body-property changes (new masses and inertias) to the solver now rather than at
    the next physics step, so both runtimes' reset orders (pose writes, forward kinematics) see the
    same model.

    Newton's hand-over also recomputes the constraint solver's constants over all envs (a fifth of
    the racer's env step at 1024 envs); copying only the masses and inertias, which no constraint
    row would read, was tried and makes the simulation return NaN within a few steps of bang-bang
    actions, so the full hand-over stays."""
    try:
        from isaaclab_newton.physics import NewtonManager
    except ImportError:  # pragma: no cover
        return
    solver = getattr(NewtonManager, "_solver", None)
    if solver is None or not NewtonManager._model_changes:
        return
    for change in NewtonManager._model_changes:
        solver.notify_model_changed(change)
    NewtonManager._model_changes = set()
