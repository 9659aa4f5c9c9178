"""Dynamic parameters: device values a curriculum changes without re-recording any graph.

Each dynamic parameter has a base value and an optional randomizer range, both in device
arrays. At the start of every regeneration one kernel resolves them into per-env values
``[P, E]`` (the base, or a uniform draw keyed by the env's seed, its generation and the
parameter's name), which the stages read.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Iterator, Mapping

import numpy as np
import warp as wp

from track_gen.capture import refuse_under_capture
from track_gen.pipeline.registry import ParamSpec
from track_gen.rng import name_key, stream_state

__all__ = ["ParamTable", "Params", "Randomizers"]

#: stream key of the per-env mixture draw (a name no parameter can have: it holds a space)
MIXTURE_KEY = wp.constant(name_key("mixture component"))


@wp.func
def _mixture_component(seed: int, generation: int, cdf: wp.array(dtype=wp.float32), num_components: int) -> int:
    """The mixture component an env draws this generation (its own stream; -1 without a mixture)."""
    if num_components == 0:
        return -1
    st = stream_state(seed, generation, MIXTURE_KEY, 0)
    u = wp.randf(st) * cdf[num_components - 1]
    c = int(0)
    while c < num_components - 1 and u >= cdf[c]:
        c += 1
    return c


@wp.kernel
def _resolve_params(
    # parameters
    keys: wp.array(dtype=wp.int32),
    base: wp.array(dtype=wp.float32),
    lo: wp.array(dtype=wp.float32),
    hi: wp.array(dtype=wp.float32),
    on: wp.array(dtype=wp.int32),
    mix_cdf: wp.array(dtype=wp.float32),
    mix_lo: wp.array2d(dtype=wp.float32),
    mix_hi: wp.array2d(dtype=wp.float32),
    mix_on: wp.array2d(dtype=wp.int32),
    num_components: int,
    # inputs
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    generation: wp.array(dtype=wp.int32),
    # outputs
    values_out: wp.array2d(dtype=wp.float32),
    component_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    c = _mixture_component(seeds[e], generation[e], mix_cdf, num_components)
    component_out[e] = c
    for p in range(keys.shape[0]):
        v = base[p]
        if c >= 0 and mix_on[c, p] != 0:
            st = stream_state(seeds[e], generation[e], keys[p], 0)
            v = mix_lo[c, p] + (mix_hi[c, p] - mix_lo[c, p]) * wp.randf(st)
        elif on[p] != 0:
            st = stream_state(seeds[e], generation[e], keys[p], 0)
            v = lo[p] + (hi[p] - lo[p]) * wp.randf(st)
        values_out[p, e] = v


@wp.kernel
def _set_entry(arr: wp.array(dtype=wp.float32), index: int, value: float):
    arr[index] = value


@wp.kernel
def _set_flag(arr: wp.array(dtype=wp.int32), index: int, value: int):
    arr[index] = value


def _cumulative(weights) -> np.ndarray:
    """float32 running sums of ``weights`` (summed in float64, rounded once per entry): the mixture's cdf."""
    cdf = np.zeros(len(weights), np.float32)
    total = 0.0
    for i, w in enumerate(weights):
        total += w
        cdf[i] = total
    return cdf


class ParamTable:
    """Device storage of every dynamic parameter of a program, plus the static ones' values."""

    def __init__(self, specs: Mapping[str, ParamSpec], values: Mapping[str, Any], randomize: Mapping, num_envs, device,
                 mixture: tuple = ()):
        self.specs = dict(specs)
        self.static = {n: values[n] for n, s in specs.items() if s.static}
        self.dynamic = [n for n, s in specs.items() if not s.static]
        self.index = {n: i for i, n in enumerate(self.dynamic)}
        self.device = device
        p = max(len(self.dynamic), 1)
        base = np.zeros(p, np.float32)
        for n, i in self.index.items():
            base[i] = values[n]
        lo, hi, on = np.zeros(p, np.float32), np.zeros(p, np.float32), np.zeros(p, np.int32)
        for n, (a, b) in randomize.items():
            i = self.index[n]
            lo[i], hi[i], on[i] = a, b, 1
        keys = np.array([name_key(n) for n in self.dynamic] or [0], np.int32)
        self.keys = wp.array(keys[: len(self.dynamic)], dtype=wp.int32, device=device)
        self.base = wp.array(base, dtype=wp.float32, device=device)
        self.lo = wp.array(lo, dtype=wp.float32, device=device)
        self.hi = wp.array(hi, dtype=wp.float32, device=device)
        self.on = wp.array(on, dtype=wp.int32, device=device)
        self._init_mixture(mixture, p, device)
        self.component = wp.full(num_envs, -1, dtype=wp.int32, device=device)
        self.values = wp.zeros((p, num_envs), dtype=wp.float32, device=device)
        self.values.assign(np.repeat(base[:, None], num_envs, axis=1))
        # host mirrors: reading a value never syncs the device
        self._base = {n: float(values[n]) for n in self.dynamic}
        self._ranges = {n: (float(a), float(b)) for n, (a, b) in randomize.items()}
        self._rows = {n: self.values[i] for n, i in self.index.items()}

    def _init_mixture(self, mixture: tuple, p: int, device) -> None:
        """Device tables of the mixture: cumulative weights [C], per-component ranges [C, P]."""
        c = max(len(mixture), 1)
        cdf = _cumulative([m[1] for m in mixture]) if mixture else np.zeros(1, np.float32)
        mlo, mhi, mon = np.zeros((c, p), np.float32), np.zeros((c, p), np.float32), np.zeros((c, p), np.int32)
        for i, (_, _, ranges) in enumerate(mixture):
            for n, (a, b) in ranges.items():
                j = self.index[n]
                mlo[i, j], mhi[i, j], mon[i, j] = a, b, 1
        self.mixture_names = [m[0] for m in mixture]
        self.mixture_weights = [float(m[1]) for m in mixture]
        # host mirrors of the per-component ranges (read without a sync, written back whole)
        self._mix_lo, self._mix_hi, self._mix_on = mlo, mhi, mon
        self.mix_cdf = wp.array(cdf, dtype=wp.float32, device=device)
        self.mix_lo = wp.array(mlo, dtype=wp.float32, device=device)
        self.mix_hi = wp.array(mhi, dtype=wp.float32, device=device)
        self.mix_on = wp.array(mon, dtype=wp.int32, device=device)

    def set_mixture_weights(self, weights) -> None:
        """Write new component weights (in ``mixture_names`` order, each > 0) into the device cdf: a
        small write between replays; the same cumulative float32 sums as at construction
        (:func:`_cumulative`), so the spec's own weights give back the same draws bit for bit."""
        refuse_under_capture(self.device, "setting mixture weights", "a recorded write would restore the old "
                             "weights at every replay; set them between replays")
        self.mix_cdf.assign(_cumulative(weights))
        self.mixture_weights = [float(w) for w in weights]

    def mixture_ranges(self, component: int) -> dict[str, tuple[float, float]]:
        """The ``(lo, hi)`` of every parameter component ``component`` draws itself (host mirror)."""
        return {n: (float(self._mix_lo[component, j]), float(self._mix_hi[component, j]))
                for n, j in self.index.items() if self._mix_on[component, j]}

    def set_mixture_ranges(self, component: int, ranges: Mapping[str, tuple[float, float]]) -> None:
        """Write ``(lo, hi)`` ranges of one component's parameters into the device tables (checked
        by the caller): a small write between replays, like the weights."""
        refuse_under_capture(self.device, "setting mixture ranges", "a recorded write would restore the old "
                             "ranges at every replay; set them between replays")
        for name, (lo, hi) in ranges.items():
            j = self.index[name]
            self._mix_lo[component, j], self._mix_hi[component, j], self._mix_on[component, j] = lo, hi, 1
        self.mix_lo.assign(self._mix_lo)
        self.mix_hi.assign(self._mix_hi)
        self.mix_on.assign(self._mix_on)

    def values_of(self, name: str) -> wp.array:
        if name not in self.index:
            kind = "static" if name in self.static else "unknown"
            raise KeyError(f"parameter {name!r} is {kind}; dynamic parameters: {self.dynamic}")
        return self._rows[name]

    def resolve(self, active, seeds, generation) -> None:
        if not self.dynamic:
            return
        wp.launch(
            _resolve_params, dim=active.shape[0],
            inputs=[self.keys, self.base, self.lo, self.hi, self.on, self.mix_cdf, self.mix_lo, self.mix_hi,
                    self.mix_on, len(self.mixture_names), active, seeds, generation],
            outputs=[self.values, self.component], device=self.device,
        )

    def set_base(self, name: str, value: float) -> None:
        refuse_under_capture(self.device, f"setting {name}", "a recorded write would restore the old value at "
                             "every replay; set parameters between replays")
        wp.launch(_set_entry, dim=1, inputs=[self.base, self.index[name], float(value)], device=self.device)
        self._base[name] = float(value)

    def set_range(self, name: str, rng: tuple[float, float] | None) -> None:
        refuse_under_capture(self.device, f"randomizing {name}", "set randomizers between replays")
        i = self.index[name]
        if rng is None:
            wp.launch(_set_flag, dim=1, inputs=[self.on, i, 0], device=self.device)
            self._ranges.pop(name, None)
            return
        wp.launch(_set_entry, dim=1, inputs=[self.lo, i, float(rng[0])], device=self.device)
        wp.launch(_set_entry, dim=1, inputs=[self.hi, i, float(rng[1])], device=self.device)
        wp.launch(_set_flag, dim=1, inputs=[self.on, i, 1], device=self.device)
        self._ranges[name] = (float(rng[0]), float(rng[1]))


class Params(MutableMapping):
    """``generator.params``: every parameter by global name.

    Reading gives the current base value (host mirror, no sync). Setting a dynamic parameter
    validates it, then writes the device value: the next regeneration uses it, recorded graphs
    included. Static parameters are read-only (build a new generator to change them).
    """

    def __init__(self, table: ParamTable, on_set=None):
        self._t = table
        self._on_set = on_set

    def __getitem__(self, name: str):
        if name in self._t._base:
            return self._t._base[name]
        if name in self._t.static:
            return self._t.static[name]
        raise KeyError(f"unknown parameter {name!r}; parameters: {sorted(self._t.specs)}")

    def __setitem__(self, name: str, value) -> None:
        if name in self._t.static:
            raise ValueError(
                f"{name} is static (it sizes buffers or loops); build a new generator with "
                f"spec.with_params({{{name!r}: {value!r}}})"
            )
        if name not in self._t.index:
            raise KeyError(f"unknown parameter {name!r}; dynamic parameters: {self._t.dynamic}")
        value = self._t.specs[name].check(name, value)
        if self._on_set is not None:
            self._on_set(name, value)
        self._t.set_base(name, value)

    def __delitem__(self, name):
        raise TypeError("parameters cannot be deleted")

    def __iter__(self) -> Iterator[str]:
        return iter(self._t.specs)

    def __len__(self) -> int:
        return len(self._t.specs)

    def is_dynamic(self, name: str) -> bool:
        return name in self._t.index

    def __repr__(self) -> str:
        return f"Params({dict(self)})"


class Randomizers(MutableMapping):
    """``generator.randomizers``: live ``(lo, hi)`` ranges of randomized dynamic parameters.

    Setting a range (validated against the parameter's bounds) turns on a per-env draw from the
    next regeneration on; deleting it goes back to the base value.
    """

    def __init__(self, table: ParamTable, on_set=None):
        self._t = table
        self._on_set = on_set

    def __getitem__(self, name):
        return self._t._ranges[name]

    def __setitem__(self, name, rng):
        from track_gen.pipeline.spec import _as_range

        if name not in self._t.index:
            raise KeyError(f"{name!r} is not a dynamic parameter; dynamic parameters: {self._t.dynamic}")
        lo, hi = _as_range(name, rng)
        spec = self._t.specs[name]
        lo = spec.check(f"randomize[{name!r}] lo", lo)
        hi = spec.check(f"randomize[{name!r}] hi", hi)
        if self._on_set is not None:
            self._on_set(name, lo, hi)   # the guards of params[name] see both ends
        self._t.set_range(name, (lo, hi))

    def __delitem__(self, name):
        if name not in self._t._ranges:
            raise KeyError(f"{name!r} is not randomized")
        self._t.set_range(name, None)

    def __iter__(self):
        return iter(dict(self._t._ranges))

    def __len__(self):
        return len(self._t._ranges)
