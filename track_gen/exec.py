"""Execution context and env masks.

A mask is an ``[E]`` array on the generator's device; ``wp.int32`` is the native dtype
(``wp.bool`` and ``wp.uint8`` are accepted too). Nonzero means "this env". Masks are read on
device only, so a recorded graph reads whatever the same mask array holds at replay time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import warp as wp

__all__ = ["ExecContext", "MASK_DTYPES", "check_mask"]

MASK_DTYPES = (wp.int32, wp.bool, wp.uint8)


@dataclass(frozen=True)
class ExecContext:
    """Where enqueued work goes: a device and, on CUDA, a stream (None: the device's current one)."""

    device: wp.context.Device
    stream: Any = None

    @classmethod
    def of(cls, device, stream=None) -> "ExecContext":
        return cls(wp.get_device(device), stream)


def check_mask(mask: Any, num_envs: int, device, name: str = "mask") -> None:
    """Refuse anything but an ``[E]`` int32 / bool / uint8 ``wp.array`` on ``device``."""
    if not isinstance(mask, wp.array):
        hint = " (convert a torch tensor with wp.from_torch(t))" if type(mask).__module__.startswith("torch") else ""
        raise TypeError(
            f"{name}: expected a wp.array of shape [{num_envs}] (int32, bool or uint8), got "
            f"{type(mask).__name__}{hint}"
        )
    if mask.ndim != 1 or mask.shape[0] != num_envs:
        raise ValueError(f"{name}: expected shape ({num_envs},), got {tuple(mask.shape)}; one entry per env")
    if mask.dtype not in MASK_DTYPES:
        raise TypeError(
            f"{name}: dtype {getattr(mask.dtype, '__name__', mask.dtype)} is not accepted; use wp.int32 "
            f"(native), wp.bool or wp.uint8"
        )
    if wp.get_device(mask.device) != wp.get_device(device):
        raise ValueError(f"{name}: array is on {mask.device}, the generator on {device}; allocate it on {device}")
    if not mask.is_contiguous:
        raise ValueError(f"{name}: the array must be contiguous; pass mask.contiguous() (and keep that array)")


# One kernel per mask dtype, not one dtype-generic kernel: Warp 1.17's CPU graph replay picked
# the wrong overload of generic kernels (see track_gen.pipeline.program._rows).
@wp.kernel
def _active_from_int32(mask: wp.array(dtype=wp.int32), active: wp.array(dtype=wp.int32)):
    e = wp.tid()
    active[e] = wp.where(mask[e] != 0, 1, 0)


@wp.kernel
def _active_from_uint8(mask: wp.array(dtype=wp.uint8), active: wp.array(dtype=wp.int32)):
    e = wp.tid()
    active[e] = wp.where(mask[e] != wp.uint8(0), 1, 0)


@wp.kernel
def _active_from_bool(mask: wp.array(dtype=wp.bool), active: wp.array(dtype=wp.int32)):
    e = wp.tid()
    active[e] = wp.where(mask[e], 1, 0)


_TO_ACTIVE = {wp.int32: _active_from_int32, wp.uint8: _active_from_uint8, wp.bool: _active_from_bool}


def mask_to_active(mask: wp.array | None, active: wp.array) -> None:
    """Write the int32 ``active`` flags from ``mask`` (all ones when ``mask`` is None)."""
    if mask is None:
        active.fill_(1)
    else:
        wp.launch(_TO_ACTIVE[mask.dtype], dim=active.shape[0], inputs=[mask, active], device=active.device)


# -- conditional execution ----------------------------------------------------------------------
import contextlib as _contextlib
import contextvars as _contextvars

_UNCONDITIONAL = _contextvars.ContextVar("track_gen_unconditional", default=False)


@_contextlib.contextmanager
def unconditional():
    """Record masked regenerations without a conditional node inside this block.

    The body then runs in full even when the mask is all zero (still an exact identity). Use it
    when the graph you record must be added as a CUDA child graph, or when a side stream forked
    in your capture is not joined yet at ``regenerate(mask=...)``.
    """
    token = _UNCONDITIONAL.set(True)
    try:
        yield
    finally:
        _UNCONDITIONAL.reset(token)


def conditional_enabled() -> bool:
    """False inside :func:`unconditional`."""
    return not _UNCONDITIONAL.get()


@wp.kernel
def _any_set(active: wp.array(dtype=wp.int32), flag: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if active[e] != 0:
        wp.atomic_max(flag, 0, 1)


def any_set(active: wp.array, flag: wp.array) -> None:
    """``flag[0] = 1`` if any entry of the int32 ``active`` array is nonzero, else 0 (on device)."""
    flag.zero_()
    wp.launch(_any_set, dim=active.shape[0], inputs=[active, flag], device=active.device)


@_contextlib.contextmanager
def registered(*, conditional: bool = True, device=None):
    """Record track_gen calls into a ``torch.cuda.graph`` capture that is already running.

    Warp learns of the torch capture (an *external* capture on torch's current stream), so
    ``course.step()`` and ``course.regenerate(mask=...)`` inside this block are recorded into
    torch's graph; ``conditional=False`` records masked regenerations without the conditional
    node (as :func:`unconditional`). Warp cannot keep the course alive from a torch graph: keep
    the course and the arrays it reads referenced yourself for as long as you replay the graph.
    Record the masked regeneration after every allocating torch op of the capture.

    CUDA only (torch graphs do not exist on the CPU). Not exercised on this project's CPU-only CI.
    """
    dev = wp.get_device(device if device is not None else "cuda")
    if not dev.is_cuda:
        raise RuntimeError("registered() records into a torch.cuda.graph capture: it needs a CUDA device")
    import torch

    if not torch.cuda.is_current_stream_capturing():
        raise RuntimeError("registered(): no torch.cuda.graph capture is running on the current stream")
    stream = wp.stream_from_torch(torch.cuda.current_stream(dev.ordinal))
    wp.capture_begin(device=dev, stream=stream, external=True)
    try:
        if conditional:
            yield
        else:
            with unconditional():
                yield
    finally:
        wp.capture_end(device=dev, stream=stream)
