"""The gate-pass test of the public Isaac Lab drone-racing projects, in batched torch.

Per step and env, only the env's *next* gate is tested, on the straight move from the previous
position to the current one. Two variants:

* ``"idr"``: kousheekc/isaac_drone_racer, ``GateTargetingCommand._update_command``
  (``tasks/drone_racer/mdp/commands.py``). The gate pose is gathered from per-gate position and
  (w, x, y, z) quaternion tensors, as Isaac Lab's ``object_com_pos_w`` / ``object_quat_w``
  hold them; the plane normal is ``(cos yaw, sin yaw)`` with the yaw taken from the quaternion
  (the original calls ``euler_xyz_from_quat`` and keeps the yaw; we compute the yaw alone, one
  ``atan2``, which is slightly cheaper than the original). Signed horizontal distances of the
  previous and current positions to the plane; a crossing is ``old < 0 < new``; the box test is
  ``all(|p - p_gate| < gate_size / 2)`` on *world* axes at the current position; pass = crossing
  and inside, miss = crossing and outside. The next index advances on a pass and wraps modulo
  the gate count (no lap counter). The original also gathers the next 5 gate poses for the
  observation; that is not part of the pass test and is left out here.
* ``"lsy"``: utiasDSL/lsy_drone_racing, ``envs/utils.py:gate_passed``: previous and current
  positions are rotated into the gate frame (inverse quaternion rotation), a ``-x -> +x``
  crossing is required, y and z of the crossing point are linearly interpolated and compared
  with the half opening. The index advances on a pass (wrapped modulo the count here so that
  laps continue; LSY stops at -1 after one lap).

Both keep ``next`` ([E] int64) and the previous position ([E, 3]) as state; ``step(pos)``
returns ``(passed, missed)`` bool tensors and accumulates ``passes`` / ``misses`` counts.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["TorchGatePass", "yaw_to_quat_wxyz"]


def yaw_to_quat_wxyz(yaw: np.ndarray) -> np.ndarray:
    """[..., 4] (w, x, y, z) quaternions of pure yaw rotations."""
    yaw = np.asarray(yaw, dtype=np.float64)
    q = np.zeros(yaw.shape + (4,), dtype=np.float32)
    q[..., 0] = np.cos(0.5 * yaw)
    q[..., 3] = np.sin(0.5 * yaw)
    return q


class TorchGatePass:
    """Batched next-gate pass/miss test.

    Args:
        gate_pos: [E, G, 3] gate centres (rows >= count unused).
        gate_yaw: [E, G] gate yaw [rad]; the passage direction is (cos yaw, sin yaw, 0).
        count: [E] gates in use (>= 1).
        gate_size: full opening size [m] (``idr``: the world-axis box side; ``lsy``: the
            square opening's side).
        variant: ``"idr"`` or ``"lsy"``.
        threads: torch intra-op threads; None leaves the setting alone.
    """

    def __init__(self, gate_pos, gate_yaw, count, gate_size: float, *, variant: str = "idr",
                 threads: int | None = 2):
        if variant not in ("idr", "lsy"):
            raise ValueError(f"variant must be 'idr' or 'lsy', got {variant!r}")
        if threads is not None:
            torch.set_num_threads(int(threads))
        self.variant = variant
        self.pos = torch.from_numpy(np.ascontiguousarray(gate_pos, dtype=np.float32))
        self.quat = torch.from_numpy(yaw_to_quat_wxyz(gate_yaw))
        self.count = torch.from_numpy(np.maximum(np.asarray(count, dtype=np.int64), 1))
        self.half = 0.5 * float(gate_size)
        E = self.pos.shape[0]
        self.rows = torch.arange(E)
        self.next = torch.zeros(E, dtype=torch.int64)
        self.prev = torch.zeros(E, 3, dtype=torch.float32)
        self.passes = 0
        self.misses = 0

    def reset(self, pos: torch.Tensor, next_index=None) -> None:
        """Store ``pos`` as the previous position; set the next gate (default 0)."""
        self.prev.copy_(pos)
        if next_index is None:
            self.next.zero_()
        else:
            self.next.copy_(torch.as_tensor(np.asarray(next_index), dtype=torch.int64))

    def step(self, pos: torch.Tensor):
        gp = self.pos[self.rows, self.next]  # [E, 3]
        gq = self.quat[self.rows, self.next]  # [E, 4] (w, x, y, z)
        if self.variant == "idr":
            passed, missed = self._idr(pos, gp, gq)
        else:
            passed, missed = self._lsy(pos, gp, gq)
        self.next.add_(passed).remainder_(self.count)
        self.prev.copy_(pos)
        return passed, missed

    def count_events(self, passed, missed) -> None:
        """Accumulate pass / miss counts (a host sync: call it outside timed loops)."""
        self.passes += int(passed.sum())
        self.misses += int(missed.sum())

    # -- variants ---------------------------------------------------------------------------------
    def _idr(self, pos, gp, gq):
        w, x, y, z = gq.unbind(1)
        yaw = torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
        nx, ny = torch.cos(yaw), torch.sin(yaw)
        old = (self.prev[:, 0] - gp[:, 0]) * nx + (self.prev[:, 1] - gp[:, 1]) * ny
        new = (pos[:, 0] - gp[:, 0]) * nx + (pos[:, 1] - gp[:, 1]) * ny
        crossed = (old < 0) & (new > 0)
        inside = torch.all(torch.abs(pos - gp) < self.half, dim=1)
        return crossed & inside, crossed & ~inside

    def _lsy(self, pos, gp, gq):
        a = _rotate_inverse(gq, self.prev - gp)
        b = _rotate_inverse(gq, pos - gp)
        crossed = (a[:, 0] < 0) & (b[:, 0] > 0)
        alpha = -a[:, 0] / (b[:, 0] - a[:, 0])
        y = alpha * b[:, 1] + (1.0 - alpha) * a[:, 1]
        z = alpha * b[:, 2] + (1.0 - alpha) * a[:, 2]
        inside = (torch.abs(y) < self.half) & (torch.abs(z) < self.half)
        return crossed & inside, crossed & ~inside


def _rotate_inverse(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate [E, 3] vectors by the inverse of unit (w, x, y, z) quaternions [E, 4]."""
    w = q[:, :1]
    u = -q[:, 1:]  # the conjugate's vector part
    t = 2.0 * torch.cross(u, v, dim=1)
    return v + w * t + torch.cross(u, t, dim=1)
