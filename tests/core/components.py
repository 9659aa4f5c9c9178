"""Components written for the tests: they exercise the course machinery, not built-in behaviour."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from track_gen.tools import Component, InputSpec

LOG: list[tuple[str, str]] = []


@wp.kernel
def _copy_masked(active: wp.array(dtype=wp.int32), use_mask: int, src: wp.array(dtype=wp.float32),
                 scale: float, dst: wp.array(dtype=wp.float32)):
    e = wp.tid()
    if use_mask != 0 and active[e] == 0:
        return
    dst[e] = src[e] * scale


@wp.kernel
def _dist(pos: wp.array(dtype=wp.vec3f), start: wp.array(dtype=wp.vec3f), dist: wp.array(dtype=wp.float32),
          steps: wp.array(dtype=wp.int32)):
    e = wp.tid()
    dist[e] = wp.length(pos[e] - start[e])
    steps[e] = steps[e] + 1


@wp.kernel
def _reset_steps(active: wp.array(dtype=wp.int32), steps: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if active[e] != 0:
        steps[e] = 0


@dataclass
class DistResult:
    dist: wp.array
    steps: wp.array


class Logged(Component):
    """Logs every hook call as (name, hook)."""

    def attach(self, ctx):
        LOG.append((self.name, "attach"))

    def on_generate(self, ctx, mask):
        LOG.append((self.name, "on_generate"))

    def reset(self, ctx, mask):
        LOG.append((self.name, "reset"))


class Named(Logged):
    def __init__(self, name, after=(), source=None, requires=(), inputs=None, topology=None):
        self.name = name
        self.after = tuple(after)
        self.source = source
        self.requires = tuple(requires)
        self.inputs = inputs or {}
        self.topology = topology


class LengthCopy(Component):
    """Per generation: a copy of the generator's loop length, times ``scale`` (masked envs only)."""

    def __init__(self, name="acme.length", scale=1.0, source=None, field="length"):
        self.name, self.scale, self.source, self.field = name, scale, source, field

    def attach(self, ctx):
        self.result = wp.zeros(ctx.num_envs, dtype=wp.float32, device=ctx.device)
        self._ones(ctx)
        self._src = getattr(ctx.result, self.field) if self.source is None else ctx.component(self.source).result

    def _ones(self, ctx):
        if not hasattr(self, "_all"):
            self._all = wp.ones(ctx.num_envs, dtype=wp.int32, device=ctx.device)
        return self._all

    def on_generate(self, ctx, mask):
        wp.launch(_copy_masked, dim=ctx.num_envs, inputs=[mask if mask is not None else self._ones(ctx),
                  int(mask is not None), self._src, self.scale], outputs=[self.result], device=ctx.device)


class StartDistance(Component):
    """Per step: distance from ``position`` to the course start, and steps since reset."""

    name = "acme.dist"
    inputs = {"position": InputSpec(wp.vec3f)}

    def attach(self, ctx):
        E, d = ctx.num_envs, ctx.device
        self.result = DistResult(wp.zeros(E, dtype=wp.float32, device=d), wp.zeros(E, dtype=wp.int32, device=d))
        self._start = ctx.result.start_pos

    def step(self, ctx):
        wp.launch(_dist, dim=ctx.num_envs, inputs=[self._bound["position"], self._start],
                  outputs=[self.result.dist, self.result.steps], device=ctx.device)

    def reset(self, ctx, mask):
        wp.launch(_reset_steps, dim=ctx.num_envs, inputs=[mask, self.result.steps], device=ctx.device)


class BoxReader(Component):
    """Declares a box input routed from ``position`` by default."""

    name = "acme.box"
    inputs = {"box_position": InputSpec(wp.vec3f, default="position"), "half_extents": InputSpec(wp.vec2f)}

    def step(self, ctx):
        pass
