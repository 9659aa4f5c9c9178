"""The drone tasks' physics step recorded as a Warp graph on the CPU as well as on CUDA.

Isaac Lab's Newton manager records the decimation loop (actuators and solver substeps) as a graph
and replays it each env step, but only on a CUDA device: on the CPU every Warp launch of
MuJoCo-Warp's step goes through Python (argument packing and dispatch), about a quarter of the
drone tasks' env step at 1024 envs. Warp 1.17 records graphs on the CPU too (conditional nodes
included, which MuJoCo-Warp's solver loop uses), and replays them without Python in the loop.

:class:`NewtonGraphedMJWarpManager` is MuJoCo-Warp's manager with that one difference: where Isaac Lab
would step eagerly because the device is the CPU, it records the same work once and replays it.
On CUDA it is Isaac Lab's manager unchanged. The replay is bit-identical to the eager step
(``tests/isaac/test_physics.py``); the gate racer's env step takes about 0.8x the time
(``bench/bench_env_step.py``). ``NewtonCfg(use_cuda_graph=False)`` still turns recording off.
"""

from __future__ import annotations

from collections.abc import Callable

import warp as wp
from isaaclab.physics import PhysicsManager
from isaaclab_newton.physics.mjwarp_manager import NewtonMJWarpManager
from isaaclab_newton.physics.newton_manager import NewtonManager, NewtonQueries

__all__ = ["NewtonGraphedMJWarpManager"]


def _on_cpu() -> bool:
    device = PhysicsManager._device
    return device is not None and "cuda" not in device


class NewtonGraphedMJWarpManager(NewtonMJWarpManager):
    """MuJoCo-Warp's Newton manager, replaying a recorded graph of the physics step on the CPU too.
    (Isaac Lab picks its asset backends by the manager's class name, which must start with "Newton".)"""

    _recording: bool = False

    @classmethod
    def _invalidate_graph(cls) -> None:
        """Schedule a recording after the next eager step, as Isaac Lab does on CUDA."""
        super()._invalidate_graph()
        cfg = PhysicsManager._cfg
        if cfg is not None and cfg.use_cuda_graph and _on_cpu() and cls._supports_cuda_graph_capture():
            NewtonManager._graph_capture_pending = True

    @classmethod
    def _capture_graph(cls, capture_target: Callable[[], None]) -> wp.Graph:
        if not _on_cpu():
            return super()._capture_graph(capture_target)
        cls._recording = True
        try:
            with NewtonQueries._paused_gc(), wp.ScopedCapture(device=PhysicsManager._device) as capture:
                capture_target()
        finally:
            cls._recording = False
        return capture.graph

    @classmethod
    def _replayed(cls) -> bool:
        """Replay the recorded step in place of the eager one Isaac Lab runs on the CPU."""
        graph = NewtonManager._graph
        if graph is None or cls._recording or not _on_cpu():
            return False
        wp.capture_launch(graph)
        return True

    @classmethod
    def _simulate_full(cls) -> None:
        if not cls._replayed():
            super()._simulate_full()

    @classmethod
    def _simulate_physics_only(cls) -> None:
        if not cls._replayed():
            super()._simulate_physics_only()
