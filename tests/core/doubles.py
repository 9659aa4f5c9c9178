"""Test doubles shared by the component tests."""

from __future__ import annotations

import numpy as np
import warp as wp


@wp.kernel
def _kill(kill: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if kill[e] != 0:
        valid[e] = 0


class Killer:
    """A duck-typed generator: a real one whose envs in ``kill`` always come out invalid."""

    def __init__(self, inner, kill):
        self.inner, self.family = inner, inner.family
        self.result, self.layout, self.device = inner.result, inner.layout, inner.device
        self.kill = wp.array(np.asarray(kill, np.int32), dtype=wp.int32, device=inner.device)

    def enqueue(self, ctx=None, *, advance=False, mask=None):
        self.inner.enqueue(ctx, advance=advance, mask=mask)
        wp.launch(_kill, dim=self.layout.num_envs, inputs=[self.kill, self.result.valid], device=self.device)
