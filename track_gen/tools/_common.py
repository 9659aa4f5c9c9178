"""Helpers shared by the built-in components (private): argument rules, capacity and grid-size
rules, the env-origin input, and the Warp functions several kernels call.

Each helper is the one definition of a rule that two or more components apply, so they cannot
drift apart (e.g. the float32 ``ceil(length / spacing)`` a capacity is sized with is the one the
kernel counts with).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Mapping

import numpy as np
import warp as wp

from track_gen.checks import as_real
from track_gen.errors import CapacityWarning, ResolutionWarning
from track_gen.math import BIG
from track_gen.tools.component import InputSpec

# ------------------------------------------------------------------------------------------------
# the env origin (world-frame poses)
# ------------------------------------------------------------------------------------------------
#: the optional per-step input ``origin`` ([E] vec3f, world frame [m]): each env's origin, e.g. Isaac
#: Lab's ``env.scene.env_origins``. When bound, a per-step component reads its position inputs as
#: world-frame and uses ``position[a] - origin[a // K]``; unbound, they are env-frame as they are.
#: One row per env whatever the agents per env (they share their env's origin).
ORIGIN_INPUT = InputSpec(wp.vec3f, required=False, per_agent=False)


def no_origin(device) -> wp.array:
    """The placeholder a kernel gets while ``origin`` is unbound (one element, never read: the
    kernels read ``origin`` only when its flag is set)."""
    return wp.zeros(1, dtype=wp.vec3f, device=device)


def origin_args(bound: Mapping[str, Any] | None, placeholder: wp.array) -> list:
    """``[origin array, has_origin]`` launch arguments for :func:`env_position`."""
    origin = (bound or {}).get("origin")
    return [placeholder, 0] if origin is None else [origin, 1]


@wp.func
def env_position(position: wp.array(dtype=wp.vec3f), origin: wp.array(dtype=wp.vec3f), has_origin: int,
                 a: int, e: int) -> wp.vec3f:
    """Agent ``a``'s position in the frame of its env ``e``: ``position[a] - origin[e]`` when
    ``has_origin``, else ``position[a]`` as it is (bit for bit). With one agent per env ``a == e``.
    A non-finite origin gives a non-finite result."""
    p = position[a]
    if has_origin != 0:
        p = p - origin[e]
    return p


# ------------------------------------------------------------------------------------------------
# argument checks
# ------------------------------------------------------------------------------------------------
def real(what: str, value: Any) -> float:
    """A finite real number (TypeError / ValueError naming ``what`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what}: expected a real number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{what}: expected a finite number, got {value!r}")
    return as_real(what, v)     # and finite in float32, the kernels' precision


def positive(name: str, value: Any) -> float:
    """A finite number > 0 (TypeError / ValueError naming ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number > 0, got {type(value).__name__}")
    v = float(value)
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name}: must be > 0 and finite, got {value!r}")
    return as_real(name, v)     # and finite in float32, the kernels' precision


#: the most slots a per-env capacity may have (checkpoints, cones per edge): anything above is a
#: units mistake (a course in millimetres, a spacing of 1 cm on a 1 km loop), refused before allocating
MAX_CAPACITY = 1 << 16
#: bytes one slot costs across a component's arrays (checkpoints: position, normal, half width,
#: half height, arc length), for the memory a refused capacity would have taken
SLOT_BYTES = 36


def check_capacity(n: float, num_envs: int, what: str, capacity_arg: str) -> None:
    """Refuse a per-env capacity above :data:`MAX_CAPACITY` before anything is allocated, naming
    what asked for it and the memory it would take."""
    if n <= MAX_CAPACITY:
        return
    mem = float(n) * num_envs * SLOT_BYTES
    raise ValueError(
        f"{what} need {n:.6g} slots per env, more than the {MAX_CAPACITY} allowed (about {mem / 2**30:,.1f} GiB "
        f"for {num_envs} envs); pass a larger spacing, a max_length in metres, or {capacity_arg}=<int>"
    )


def capacity_arg(what: str, value: Any, minimum: int, *, even: bool = False, why: str = "") -> int | None:
    """A capacity argument: None for ``"auto"`` / None, else an int >= ``minimum`` (even when
    ``even``; ``why`` explains that rule in the error)."""
    expected = f"an even int >= {minimum}" if even else f"an int >= {minimum}"
    if value is None or (isinstance(value, str) and value == "auto"):
        return None
    if isinstance(value, str):
        raise ValueError(f"{what}: expected {expected}, 'auto' or None, got {value!r}")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what}: expected {expected}, 'auto' or None, got {type(value).__name__}")
    v = int(value)
    if v < minimum or (even and v % 2):
        rule = expected if even else f">= {minimum}"
        raise ValueError(f"{what}: must be {rule}{why}, got {v}")
    if v > MAX_CAPACITY:
        raise ValueError(f"{what}: {v} is above the {MAX_CAPACITY} slots per env allowed; pass a smaller capacity")
    return v


def resolution_arg(value: Any, meaning: str, unit: str) -> int:
    """A grid resolution: an int in 2 ... 4096 ``unit`` (``meaning``: what it counts, for the errors)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"resolution: expected an int ({meaning}), got {value!r}")
    if not 2 <= int(value) <= 4096:
        raise ValueError(f"resolution: expected 2 ... 4096 {unit}, got {value!r}")
    return int(value)


def size_hi_arg(value: Any) -> float | None:
    """``size_hi``: None (the generator's largest course) or a course size > 0 [m]."""
    if value is None:
        return None
    size = real("size_hi", value)
    if size <= 0.0:
        raise ValueError(f"size_hi: expected a course size > 0 [m], got {size!r}")
    return size


# ------------------------------------------------------------------------------------------------
# capacities and grid sizes
# ------------------------------------------------------------------------------------------------
def ceil_ratio(length, spacing: float) -> np.ndarray:
    """ceil(length / spacing) as the kernels compute it (float32), as float64."""
    with np.errstate(all="ignore"):
        return np.ceil(np.asarray(length, np.float32) / np.float32(spacing)).astype(np.float64)


def spaced_capacity(ctx, spacing: float, minimum: int, *, owner: str, noun: str, per: str, spacing_arg: str,
                    capacity_arg: str, stacklevel: int) -> tuple[int, str]:
    """``(capacity, source)``: slots for items spaced ``spacing`` [m] along a loop, at least ``minimum``.

    From ``ctx.layout.max_loop_length`` when the layout declares it (source ``"max_loop_length"``;
    one :class:`~track_gen.errors.CapacityWarning` when that clips a valid course of the
    construction batch, worded with ``owner``, ``noun`` + ``per``, ``spacing_arg`` and
    ``capacity_arg``), else from the longest valid course of the construction batch, read back
    once (``"readback"``). ``stacklevel`` counts from the caller.
    """
    if getattr(ctx.generator, "prepared", True) is False:
        ctx.generator.prepare()  # the construction batch must exist before it is read back
    valid = ctx.result.valid.numpy() != 0
    length = ctx.result.length.numpy().astype(np.float64)
    ok = valid & np.isfinite(length) & (length > 0.0)
    need = ceil_ratio(length[ok], spacing)
    bound = getattr(ctx.layout, "max_loop_length", None)
    if bound is None:
        n = int(max(minimum, need.max())) if need.size else minimum
        check_capacity(n, ctx.num_envs, f"{owner}: the longest course of the construction batch "
                       f"({float(length[ok].max()):g} m) at {spacing_arg} {spacing:g} m", capacity_arg)
        return n, "readback"
    n_real = max(float(minimum), math.ceil(float(bound) / spacing))
    check_capacity(n_real, ctx.num_envs, f"{owner}: layout.max_loop_length (the generator's max_length) "
                   f"{float(bound):g} m at {spacing_arg} {spacing:g} m", capacity_arg)
    n = int(max(minimum, math.ceil(float(bound) / spacing), ceil_ratio(np.array([bound]), spacing)[0]))
    over = need > n
    if over.any():
        warnings.warn(
            f"{owner}: {int(over.sum())} valid course(s) of the construction batch need up to {int(need.max())} "
            f"{noun}{per} at {spacing_arg} {spacing:g} m, more than the {n} sized from "
            f"layout.max_loop_length={float(bound):g}; their {noun} spread out to length / {n}; pass a larger "
            f"{capacity_arg}",
            CapacityWarning, stacklevel=stacklevel + 1,
        )
    return n, "max_loop_length"


def chunking(num_points: int) -> tuple[int, int]:
    """``(K, C)``: a closed polyline of ``num_points`` segments cut into C chunks of K segments
    (``K = max(4, ceil(sqrt(N)))``), the unit of the bounding-box pruned nearest-segment searches."""
    K = max(4, math.isqrt(max(num_points - 1, 0)) + 1)
    return K, (num_points + K - 1) // K


def largest_size(generator, keys) -> tuple[str, float] | None:
    """``(parameter, largest value)`` of the first of ``keys`` the generator has: its value, or its
    randomizer's hi when it is randomized (what it can draw now). None when it has none."""
    params = getattr(generator, "params", None)
    for key in keys:
        try:
            size = float(params[key])
        except (AttributeError, KeyError, TypeError):
            continue
        rnd = getattr(generator, "randomizers", None)
        try:
            if rnd is not None and key in rnd:
                size = float(rnd[key][1])
        except (KeyError, TypeError):
            pass
        return key, size
    return None


def warn_uncovered(name: str, grid: str, side: float, generator, keys, beyond: str, stacklevel: int) -> bool:
    """Warn :class:`~track_gen.errors.ResolutionWarning` when ``generator`` can draw a course
    larger than the ``side`` [m] a grid covers (``beyond``: what happens outside it); True when
    it warned. ``stacklevel`` counts from the caller."""
    found = largest_size(generator, keys)
    if found is None:
        return False
    key, largest = found
    if largest <= side * (1.0 + 1e-6):
        return False
    warnings.warn(
        f"{name!r}: the {grid} covers a {side:g} m square (size_hi={side:g}), but the generator can draw courses "
        f"up to {key}={largest:g} m; outside the grid {beyond}. Pass size_hi={largest:g} (or the largest size "
        f"your curriculum reaches)",
        ResolutionWarning,
        stacklevel=stacklevel + 1,
    )
    return True


# ------------------------------------------------------------------------------------------------
# device functions
# ------------------------------------------------------------------------------------------------
@wp.func
def gates_in_use(valid: int, gcount: int, capacity: int) -> int:
    """Gates of an env's course: its count clamped to ``[0, capacity]``, 0 on an invalid course."""
    n = wp.clamp(gcount, 0, capacity)
    if valid == 0:
        n = 0
    return n


@wp.func
def spaced_count(valid: int, total: float, spacing: float, capacity: int, minimum: int) -> int:
    """Items spaced ``spacing`` along a loop of length ``total``: ``clamp(ceil(total / spacing),
    minimum, capacity)``; 0 on an invalid course or a non-finite or non-positive length."""
    n = int(0)
    if valid != 0 and wp.isfinite(total) and total > 0.0:
        c = wp.min(wp.ceil(total / spacing), float(capacity))
        n = wp.max(int(c), minimum)
    return n


@wp.func
def arc_locate(s: wp.array2d(dtype=wp.float32), e: int, N: int, total: float, sk: float, i: int):
    """Locate arc length ``sk`` on env ``e``'s closed polyline of ``N`` points (arc lengths ``s``,
    loop length ``total``), walking forward from point ``i`` (ascending ``sk`` -> amortized O(1)).

    Returns ``(i, j, f, ds)``: the segment from point i to j = (i + 1) % N that holds it, the
    fraction f in [0, 1] along it (0 on a zero-length segment) and the segment's arc length ds."""
    while i < N - 1:
        if s[e, i + 1] > sk:
            break
        i += 1
    j = (i + 1) % N
    s0 = s[e, i]
    s1 = total
    if i < N - 1:
        s1 = s[e, i + 1]
    ds = s1 - s0
    f = float(0.0)
    if ds > 0.0:
        f = wp.clamp((sk - s0) / ds, 0.0, 1.0)
    return i, j, f, ds


@wp.func
def chunk_box(points: wp.array2d(dtype=wp.vec2f), e: int, i0: int, i1: int, N: int) -> wp.vec4f:
    """Bounding box (min x, min y, max x, max y) of points ``i0 .. i1`` (inclusive, index mod N)
    of env ``e``: the chunk of segments ``i0 .. i1 - 1`` of a closed polyline."""
    lo = wp.vec2f(BIG, BIG)
    hi = wp.vec2f(-BIG, -BIG)
    for i in range(i0, i1 + 1):
        q = points[e, i % N]
        lo = wp.min(lo, q)
        hi = wp.max(hi, q)
    return wp.vec4f(lo[0], lo[1], hi[0], hi[1])


@wp.func
def box_dist2(p: wp.vec2f, box: wp.vec4f) -> float:
    """Squared distance from ``p`` to an axis-aligned box (min x, min y, max x, max y); 0 inside."""
    dx = wp.max(wp.max(box[0] - p[0], p[0] - box[2]), 0.0)
    dy = wp.max(wp.max(box[1] - p[1], p[1] - box[3]), 0.0)
    return dx * dx + dy * dy
