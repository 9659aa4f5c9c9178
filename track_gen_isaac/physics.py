"""The drone tasks' physics: MuJoCo-Warp (through Newton) stepping one free rigid body per env.

The quadrotor is a single body with no collision shape (the course computes every collision), so
the simulation has nothing to constrain. :func:`solver_cfg` builds the solver with no constraint
rows at all (``njmax=0``): MuJoCo-Warp then skips its constraint solver and takes the
unconstrained acceleration as it is. Two consequences are handled here:

* MuJoCo-Warp's Euler step, with implicit damping on (its default), solves for the acceleration
  from the constraint solver's output, which is never written when there are no rows: the body
  would not move. :func:`free_body_step` turns implicit damping off (the body's degrees of freedom
  have no damping, so it changes nothing else). Trajectories match those of the former settings
  (one constraint row, one solver iteration) to float rounding, and the gate task's env step takes
  0.65x the time.
* A new mass or inertia (the racer's domain randomization, at every reset) reaches the solver
  through Newton with a recomputation of every constant over all envs, including the qpos0
  constants of the constraint solver (``set_const_0``: a forward pass over all envs, about 30 % of
  the racer's env step). With no constraint rows nothing reads those, so
  :func:`hand_over_inertia` copies the masses and inertias and recomputes only the subtree masses
  (``set_const_fixed``, which the dynamics divide by: without it the simulation returns NaN within
  a few steps). Trajectories are bit-identical to Newton's full hand-over (tested); the racer's
  env step takes 0.73x the time.
"""

from __future__ import annotations

__all__ = ["solver_cfg", "free_body_step", "hand_over_inertia", "SHORT_HAND_OVER"]

#: take :func:`hand_over_inertia`'s short path where it applies (False: always Newton's full
#: hand-over, e.g. to compare the two)
SHORT_HAND_OVER = True


def solver_cfg():
    """MuJoCo-Warp for one free body per env: no contacts, no constraint rows, the step recorded as
    a graph on the CPU too (:mod:`track_gen_isaac.physics_graph`)."""
    from isaaclab_newton.physics import MJWarpSolverCfg

    from track_gen_isaac.physics_graph import NewtonGraphedMJWarpManager

    return MJWarpSolverCfg(class_type=NewtonGraphedMJWarpManager, disable_contacts=True, njmax=0, nconmax=0, iterations=1,
                           ls_iterations=1)


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
    from isaaclab.physics import PhysicsManager
    from isaaclab_newton.physics import NewtonManager

    if getattr(NewtonManager, "_graph", None) is not None:
        manager = getattr(PhysicsManager._sim, "physics_manager", NewtonManager)   # the active subclass
        manager._invalidate_graph()


def hand_over_inertia() -> None:
    """Hand pending body-property changes (new masses and inertias) to the solver now rather than at
    the next physics step, so both runtimes' reset orders (pose writes, forward kinematics) see the
    same model (see the module docstring for the short path taken with no constraint rows)."""
    try:
        from isaaclab_newton.physics import NewtonManager
        from newton import ModelFlags
    except ImportError:  # pragma: no cover
        return
    solver = getattr(NewtonManager, "_solver", None)
    changes = NewtonManager._model_changes
    if solver is None or not changes:
        return
    if (SHORT_HAND_OVER and changes == {int(ModelFlags.BODY_INERTIAL_PROPERTIES)} and _mujoco_warp_solver() is solver
            and hasattr(solver, "_update_model_inertial_properties")):
        from mujoco_warp._src.io import set_const_fixed

        solver._update_model_inertial_properties()
        set_const_fixed(solver.mjw_model, solver.mjw_data)   # the subtree masses the dynamics divide by
    else:
        for change in changes:
            solver.notify_model_changed(change)
    NewtonManager._model_changes = set()
