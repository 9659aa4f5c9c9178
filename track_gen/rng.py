"""Per-env seeds and counter-based random streams.

A course is a pure function of (env seed, generation counter, parameter values). Kernels never
carry a sequential RNG state between launches: every draw starts from
``stream_state(seed, generation, key, attempt)``, a hash of those four integers, so an env's
draws do not depend on ``num_envs``, on the mask, or on which other envs regenerate with it.

Seed ownership: a :class:`SeedState` either *owns* its ``[E]`` int32 array (built from an ``int``
or a list of values; :meth:`SeedState.set` rewrites it) or is *bound* to an array of yours, by
pointer; the library never writes a bound array. A :class:`PerEnvSeededRNG` owns and writes its
array and can draw fresh per-env seeds on device.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import warp as wp

from track_gen.capture import refuse_under_capture
from track_gen.checks import INT32_MAX, as_int

__all__ = ["SeedState", "PerEnvSeededRNG", "mix32", "stream_state", "name_key"]


@wp.func
def mix32(x: wp.uint32) -> wp.uint32:
    """A 32-bit avalanche mix (xorshift-multiply, two rounds)."""
    x = (x ^ (x >> wp.uint32(16))) * wp.uint32(0x45D9F3B)
    x = (x ^ (x >> wp.uint32(16))) * wp.uint32(0x45D9F3B)
    return x ^ (x >> wp.uint32(16))


@wp.func
def combine(h: wp.uint32, v: wp.int32) -> wp.uint32:
    return mix32(h ^ (mix32(wp.uint32(v)) + wp.uint32(0x7F4A7C15) + (h << wp.uint32(6)) + (h >> wp.uint32(2))))


@wp.func
def stream_state(seed: wp.int32, generation: wp.int32, key: wp.int32, attempt: wp.int32) -> wp.uint32:
    """RNG state for one (env seed, generation, purpose key, attempt); feed it to ``wp.randf``."""
    h = combine(combine(combine(mix32(wp.uint32(seed)), generation), key), attempt)
    return wp.rand_init(wp.int32(h & wp.uint32(0x7FFFFFFF)))


@wp.kernel
def _seeds_from_int(base: wp.int32, env_offset: wp.int32, seeds_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    h = combine(mix32(wp.uint32(base)), env_offset + e)
    seeds_out[e] = wp.int32(h & wp.uint32(0x7FFFFFFF))


@wp.kernel
def _next_seeds(
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    counter: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    c = counter[e] + 1
    counter[e] = c
    seeds[e] = wp.int32(combine(mix32(wp.uint32(seeds[e])), c) & wp.uint32(0x7FFFFFFF))


def name_key(name: str) -> int:
    """A stable int32 key for a purpose name (FNV-1a), the same on every run and device."""
    h = 0x811C9DC5
    for b in name.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h & 0x7FFFFFFF


def _check_array(arr: wp.array, num_envs: int, device, what: str) -> None:
    if arr.dtype != wp.int32 or arr.ndim != 1 or arr.shape[0] != num_envs:
        raise ValueError(
            f"{what}: expected a [{num_envs}] int32 array, got shape {tuple(arr.shape)} dtype "
            f"{getattr(arr.dtype, '__name__', arr.dtype)}; allocate wp.zeros({num_envs}, dtype=wp.int32)"
        )
    if wp.get_device(arr.device) != wp.get_device(device):
        raise ValueError(f"{what}: array is on {arr.device}, the generator on {device}; move it to {device}")


def _seed_values(values: Any, num_envs: int, what: str) -> np.ndarray | int:
    """Normalize host seed values: an int (hashed per env) or ``num_envs`` int32 values."""
    if isinstance(values, (bool, np.bool_)):
        raise TypeError(f"{what}: a bool is not a seed; pass an int or {num_envs} ints")
    if isinstance(values, (numbers.Real, str)):
        # one integer rule everywhere (track_gen.checks): exact, in [0, 2**31 - 1], never folded
        return as_int(what, values, 0, INT32_MAX)
    if isinstance(values, wp.array):
        values = values.numpy()
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu" or arr.shape != (num_envs,):
        raise ValueError(
            f"{what}: expected an int or {num_envs} integer seeds, got shape {arr.shape} dtype {arr.dtype}"
        )
    if arr.size and (arr.min() < 0 or arr.max() > 0x7FFFFFFF):
        raise ValueError(f"{what}: seeds must lie in [0, 2**31 - 1], got range [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int32)


def _env_offset(value: Any, num_envs: int) -> int:
    """The global index of env 0: an exact int with ``env_offset + num_envs - 1 <= 2**31 - 1``."""
    return as_int("env_offset", value, 0, INT32_MAX - (num_envs - 1))


def _write_seeds(dst: wp.array, values: np.ndarray | int, env_offset: int) -> None:
    if isinstance(values, int):
        wp.launch(_seeds_from_int, dim=dst.shape[0], inputs=[int(values) & 0x7FFFFFFF, env_offset, dst],
                  device=dst.device)
    else:
        dst.assign(values)


class SeedState:
    """The per-env seeds a generator draws from.

    Args:
        num_envs: E.
        device: the generator's device.
        seeds: ``None`` (seed 0), an ``int`` (hashed with the env's global index, so env ``e`` gets
            the same seed whatever ``num_envs``), ``E`` host integers, or an ``[E]`` int32
            ``wp.array`` on ``device``, which is *bound* by pointer and never written.
        env_offset: added to the env index when hashing an ``int`` seed (the global index of env 0,
            e.g. ``rank * num_envs`` in a distributed run).
    """

    def __init__(self, num_envs: int, device, seeds: Any = None, *, env_offset: int = 0):
        self.num_envs = as_int("num_envs", num_envs, 1, INT32_MAX)
        self.device = wp.get_device(device)
        self.env_offset = _env_offset(env_offset, self.num_envs)
        if isinstance(seeds, wp.array):
            _check_array(seeds, self.num_envs, self.device, "seeds")
            self.seeds = seeds
            self.owned = False
        else:
            values = _seed_values(0 if seeds is None else seeds, self.num_envs, "seeds")
            self.seeds = wp.zeros(self.num_envs, dtype=wp.int32, device=self.device)
            self.owned = True
            _write_seeds(self.seeds, values, self.env_offset)

    def set(self, values: Any) -> None:
        """Rewrite owned seeds (an int or E ints); a bound array is never written (RuntimeError)."""
        if not self.owned:
            raise RuntimeError(
                "these seeds are bound to your array and track_gen never writes it; write the array "
                "yourself, then regenerate"
            )
        refuse_under_capture(self.device, "SeedState.set", "set seeds before recording")
        _write_seeds(self.seeds, _seed_values(values, self.num_envs, "seeds"), self.env_offset)

    def __repr__(self) -> str:
        return f"SeedState(num_envs={self.num_envs}, device={self.device}, owned={self.owned})"


class PerEnvSeededRNG:
    """An RNG that owns a ``[E]`` int32 seed array and writes it.

    Pass it as ``seeds=`` to a generator: the generator reads ``rng.seeds``; ``generate(seeds=...)``
    then goes through :meth:`set`. :meth:`next_seeds` draws a fresh seed for masked envs on device
    (capturable), e.g. to give every reset a course no earlier episode saw.
    """

    def __init__(self, num_envs: int, seed: Any = 0, *, device=None, env_offset: int = 0):
        self.num_envs = as_int("num_envs", num_envs, 1, INT32_MAX)
        self.device = wp.get_device(device)
        self.env_offset = _env_offset(env_offset, self.num_envs)
        self.seeds = wp.zeros(self.num_envs, dtype=wp.int32, device=self.device)
        self.counter = wp.zeros(self.num_envs, dtype=wp.int32, device=self.device)
        self._active = wp.zeros(self.num_envs, dtype=wp.int32, device=self.device)
        _write_seeds(self.seeds, _seed_values(seed, self.num_envs, "seed"), self.env_offset)

    def set(self, values: Any) -> None:
        """Reseed: an int (hashed per env with its global index) or E ints."""
        refuse_under_capture(self.device, "PerEnvSeededRNG.set", "set seeds before recording")
        _write_seeds(self.seeds, _seed_values(values, self.num_envs, "seeds"), self.env_offset)
        self.counter.zero_()

    def next_seeds(self, mask: wp.array | None = None) -> None:
        """Replace the seeds of masked envs (all when ``mask`` is None) by fresh ones; capturable."""
        from track_gen.exec import check_mask, mask_to_active

        if mask is not None:
            check_mask(mask, self.num_envs, self.device)
        mask_to_active(mask, self._active)
        wp.launch(_next_seeds, dim=self.num_envs, inputs=[self._active, self.seeds, self.counter], device=self.device)

    def __repr__(self) -> str:
        return f"PerEnvSeededRNG(num_envs={self.num_envs}, device={self.device})"


def resolve_seeds(seeds: Any, num_envs: int, device, env_offset: int = 0) -> tuple[SeedState, PerEnvSeededRNG | None]:
    """Turn anything ``seeds=`` accepts into (SeedState, rng or None)."""
    if isinstance(seeds, SeedState):
        if seeds.num_envs != num_envs or seeds.device != wp.get_device(device):
            raise ValueError(
                f"seeds: SeedState is for {seeds.num_envs} envs on {seeds.device}, the generator has "
                f"{num_envs} envs on {wp.get_device(device)}; build a SeedState that matches"
            )
        return seeds, None
    if isinstance(seeds, PerEnvSeededRNG):
        if seeds.num_envs != num_envs or seeds.device != wp.get_device(device):
            raise ValueError(
                f"seeds: PerEnvSeededRNG is for {seeds.num_envs} envs on {seeds.device}, the generator "
                f"has {num_envs} envs on {wp.get_device(device)}; build an rng that matches"
            )
        state = SeedState(num_envs, device, seeds.seeds, env_offset=env_offset)
        return state, seeds
    return SeedState(num_envs, device, seeds, env_offset=env_offset), None
