"""Brute-force nearest-segment projection in torch: the O(N) baseline for the Localizer.

Every step, each env's position is tested against *all* segments of its course line at once,
batched over envs: an ``[E, N]`` tensor of squared distances, ``argmin`` over the segments, then
arc length, signed lateral offset, height, heading and distance from the chosen segment. No
pruning, no warm start: this is how a vectorized RL task usually computes "progress along the
centerline" when it has no spatial structure to lean on.

Two layouts of the same computation:

* ``"soa"`` (default, the tuned one): x, y, z held as separate ``[E, N]`` tensors, fused
  ``addcmul`` and in-place ops, a precomputed ``1 / |d|^2`` and a ``+inf`` penalty row for unused
  segments. About 17 elementwise passes over ``E * N`` floats per step.
* ``"aos"`` (the straightforward one): ``[E, N, 3]`` tensors and ``.sum(-1)`` reductions over the
  last axis, as one would first write it.

Both give the same answer (the first segment of minimal squared distance, like the Localizer's
lowest-index tie-break). Everything that depends only on the line (segment starts, directions,
``1/|d|^2``, arc lengths, the penalty) is built once in the constructor, like the Localizer's own
bake in ``on_generate``, and is not part of the per-step cost.

Line conventions follow :class:`track_gen.tools.types.CourseLine`: ``count[e]`` points in use; a
closed line has ``count`` segments (the last back to point 0, ending at ``s = length``), an open
one ``count - 1``. Lines with fewer than 2 points give segment -1 and zeros.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["TorchProjection"]


class TorchProjection:
    """Projects [E] positions on [E, N] course lines, all N segments per env, every call.

    Args:
        points: [E, N, 3] float array of line points (rows >= count unused).
        s: [E, N] arc length at each point.
        count: [E] points in use.
        length: [E] total length (closing segment included when closed).
        closed: [E] 1 for a loop.
        layout: ``"soa"`` (tuned, default) or ``"aos"`` (straightforward).
        threads: torch intra-op threads (``torch.set_num_threads``); None leaves it alone.

    Call with ``pos`` [E, 3] and optionally ``quat`` [E, 4] (x, y, z, w) tensors; returns a dict of
    [E] tensors ``s``, ``lateral``, ``vertical``, ``heading``, ``segment``, ``distance``.
    """

    def __init__(self, points, s, count, length, closed, *, layout: str = "soa", threads: int | None = 2):
        if layout not in ("soa", "aos"):
            raise ValueError(f"layout must be 'soa' or 'aos', got {layout!r}")
        if threads is not None:
            torch.set_num_threads(int(threads))
        self.layout = layout
        P = np.asarray(points, dtype=np.float32)
        S = np.asarray(s, dtype=np.float32)
        n = np.asarray(count, dtype=np.int64)
        L = np.asarray(length, dtype=np.float32)
        cl = np.asarray(closed) != 0
        E, N, _ = P.shape
        idx = np.arange(N)[None, :]
        m = np.where(cl, n, n - 1)
        m = np.where(n >= 2, m, 0)  # segments in use
        nxt = idx + 1
        wrap = nxt >= n[:, None]  # the segment leaving the last point: back to point 0 (closed only)
        nxt = np.where(wrap, 0, nxt)
        nxt = np.minimum(nxt, N - 1)
        B = np.take_along_axis(P, nxt[..., None], axis=1)
        S1 = np.where(wrap, L[:, None], np.take_along_axis(S, nxt, axis=1))
        D = B - P
        l2 = np.einsum("enk,enk->en", D, D)
        inv = np.where(l2 > 1e-30, 1.0 / np.maximum(l2, 1e-30), 0.0).astype(np.float32)
        used = idx < m[:, None]
        self.E, self.N = E, N
        self.segments = m
        self.pen = torch.from_numpy(np.where(used, 0.0, np.inf).astype(np.float32))
        self.s0 = torch.from_numpy(S.copy())
        self.ds = torch.from_numpy((S1 - S).astype(np.float32))
        self.inv_l2 = torch.from_numpy(inv)
        hl = np.sqrt(D[..., 0] ** 2 + D[..., 1] ** 2)
        self.inv_hl = torch.from_numpy(np.where(hl > 0, 1.0 / np.maximum(hl, 1e-30), 0.0).astype(np.float32))
        self.A = torch.from_numpy(P.copy())
        self.D = torch.from_numpy(D.astype(np.float32))
        # structure-of-arrays copies
        self.Ax, self.Ay, self.Az = (self.A[..., k].contiguous() for k in range(3))
        self.Dx, self.Dy, self.Dz = (self.D[..., k].contiguous() for k in range(3))
        self.rows = torch.arange(E)
        self.none = torch.from_numpy(m <= 0)

    # -- the per-step computation ---------------------------------------------------------------
    def __call__(self, pos: torch.Tensor, quat: torch.Tensor | None = None) -> dict:
        if self.layout == "soa":
            j, t, d2, ox, oy, oz = self._nearest_soa(pos)
        else:
            j, t, d2, ox, oy, oz = self._nearest_aos(pos)
        rows = self.rows
        dx, dy = self.Dx[rows, j], self.Dy[rows, j]
        out_s = self.s0[rows, j] + t * self.ds[rows, j]
        lateral = (dx * oy - dy * ox) * self.inv_hl[rows, j]
        heading = torch.zeros_like(out_s)
        if quat is not None:
            x, y, z, w = quat.unbind(1)
            fx = w * w + x * x - y * y - z * z
            fy = 2.0 * (x * y + w * z)
            heading = torch.atan2(dx * fy - dy * fx, dx * fx + dy * fy)
        out = dict(s=out_s, lateral=lateral, vertical=oz, heading=heading, segment=j, distance=torch.sqrt(d2))
        if bool(self.none.any()):
            for k in out:
                out[k] = out[k].masked_fill(self.none, -1 if k == "segment" else 0)
        return out

    def _nearest_soa(self, pos):
        px, py, pz = (pos[:, k : k + 1] for k in range(3))
        vx = torch.sub(px, self.Ax)
        vy = torch.sub(py, self.Ay)
        vz = torch.sub(pz, self.Az)
        t = vx * self.Dx
        t.addcmul_(vy, self.Dy).addcmul_(vz, self.Dz).mul_(self.inv_l2).clamp_(0.0, 1.0)
        vx.addcmul_(t, self.Dx, value=-1.0)  # v - t d: the offset from the projection
        vy.addcmul_(t, self.Dy, value=-1.0)
        vz.addcmul_(t, self.Dz, value=-1.0)
        d2 = vx * vx
        d2.addcmul_(vy, vy).addcmul_(vz, vz).add_(self.pen)
        best, j = d2.min(dim=1)  # first minimum on ties
        rows = self.rows
        return j, t[rows, j], best, vx[rows, j], vy[rows, j], vz[rows, j]

    def _nearest_aos(self, pos):
        v = pos[:, None, :] - self.A  # [E, N, 3]
        t = ((v * self.D).sum(-1) * self.inv_l2).clamp(0.0, 1.0)
        r = v - t[..., None] * self.D
        d2 = (r * r).sum(-1) + self.pen
        j = d2.argmin(dim=1)
        rows = self.rows
        off = r[rows, j]
        return j, t[rows, j], d2[rows, j], off[:, 0], off[:, 1], off[:, 2]
