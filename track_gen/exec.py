"""Execution context and env masks.

A mask is an ``[E]`` array on the generator's device; ``wp.int32`` is the native dtype
(``wp.bool`` and ``wp.uint8`` are accepted too). Nonzero means "this env". Masks are read on
device only, so a recorded graph reads whatever the same mask array holds at replay time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import warp as wp

__all__ = ["ExecContext", "MASK_DTYPES", "check_mask", "on_stream", "conditional_nodes_supported",
           "ConditionalNodesUnsupportedWarning", "registered", "unconditional"]

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
def _active_from_int32(mask: wp.array(dtype=wp.int32), active_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    active_out[e] = wp.where(mask[e] != 0, 1, 0)


@wp.kernel
def _active_from_uint8(mask: wp.array(dtype=wp.uint8), active_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    active_out[e] = wp.where(mask[e] != wp.uint8(0), 1, 0)


@wp.kernel
def _active_from_bool(mask: wp.array(dtype=wp.bool), active_out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    active_out[e] = wp.where(mask[e], 1, 0)


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


class ConditionalNodesUnsupportedWarning(RuntimeWarning):
    """CUDA conditional graph nodes are unavailable (driver or toolkit older than 12.4): masked
    regenerations are recorded with their full body (exact for unmasked envs). Emitted once."""


def conditional_nodes_supported(device) -> bool:
    """Whether a capture on ``device`` can hold a ``wp.capture_if`` conditional node.

    Always on the CPU (Warp's CPU graphs record ``capture_if`` themselves); on CUDA it needs a
    driver and a Warp build of CUDA 12.4+ (``wp.is_conditional_graph_supported()``, which reports
    False on a CPU-only machine, hence the device test first)."""
    return wp.get_device(device).is_cpu or bool(wp.is_conditional_graph_supported())


def _stream_plan(current, stream) -> tuple[bool, bool]:
    """``(switch, join)`` for running work on ``stream`` while ``current`` is the device's stream.

    No switch when ``stream`` is ``current`` (or wraps the same CUDA stream: Warp keys its captures
    by the Stream *object*, so the caller's object must stay current for ``capture_if`` to find the
    capture). Join both ways only when both streams are in the same capture state: a capturing
    stream must never wait on (or be waited on by) a non-capturing one -- CUDA invalidates the
    capture (the isolation error Warp's own stream tests show)."""
    if stream is None or current is None or stream is current or stream.cuda_stream == current.cuda_stream:
        return False, False
    return True, bool(stream.is_capturing) == bool(current.is_capturing)


@_contextlib.contextmanager
def on_stream(stream, device):
    """Run the block with ``stream`` as ``device``'s current stream, joined to the caller's stream.

    ``wp.ScopedStream(stream)`` alone waits on the previous stream on entry (``sync_enter=True``)
    and never joins back: work queued later on the caller's stream could overtake ours, and when
    ``stream`` is capturing while the caller's stream is not, the entry wait invalidates the
    capture. Here: ``stream`` waits on the caller's stream on entry and the caller's stream waits
    on ``stream`` on exit, whenever both are capturing or both are not (see :func:`_stream_plan`);
    otherwise no wait either way. A no-op on the CPU and for ``stream=None``.
    """
    dev = wp.get_device(device)
    if stream is None or not dev.is_cuda:
        yield
        return
    switch, join = _stream_plan(dev.stream, stream)
    if not switch:
        yield
        return
    with wp.ScopedStream(stream, sync_enter=join, sync_exit=join):
        yield


class Registration:
    """What :func:`registered` yields. ``restarted``: a conditional node recorded in the block ended
    and restarted torch's stream capture (a new capture id), so torch's graph memory pool no longer
    serves this capture -- record no allocating torch op after the block (see its docstring)."""

    def __init__(self, stream):
        self.stream = stream
        self.restarted = False


def _capture_id(device, stream):
    graph = (device.captures or {}).get(stream)
    return None if graph is None else getattr(graph, "capture_id", None)


@_contextlib.contextmanager
def registered(*, conditional: bool = True, device=None):
    """Record track_gen calls into a ``torch.cuda.graph`` capture that is already running.

    Warp learns of the torch capture (an *external* capture on torch's current stream) and that
    stream becomes Warp's current stream for the block, so ``course.step()`` and
    ``course.regenerate(mask=...)`` inside it are recorded into torch's graph (nothing runs at
    record time; each replay runs them). ``conditional=False`` records masked regenerations
    without the conditional node (as :func:`unconditional`). Warp cannot keep the course alive
    from a torch graph: keep the course and the arrays it reads referenced yourself for as long as
    you replay the graph.

    **Torch allocations after a conditional node are refused.** Adding the conditional node ends
    torch's stream capture and begins it again (``wp.capture_if``): the new capture has a new id,
    and torch's allocator routes a capture's allocations to the graph's private pool by that id.
    A torch op that allocates afterwards in the same ``torch.cuda.graph`` then fails (a
    ``cudaMalloc`` under capture) or takes a block of torch's default pool that the graph does not
    own. Record the masked regeneration after every allocating torch op of the capture, or use
    ``conditional=False``. The yielded :class:`Registration` tells (``.restarted``) whether the
    block restarted the capture.

    CUDA only (torch graphs do not exist on the CPU). Checked by ``tests/core/test_cuda.py`` on a GPU.
    """
    dev = wp.get_device(device if device is not None else "cuda")
    if not dev.is_cuda:
        raise RuntimeError("registered() records into a torch.cuda.graph capture: it needs a CUDA device")
    import torch

    if not torch.cuda.is_current_stream_capturing():
        raise RuntimeError("registered(): no torch.cuda.graph capture is running on the current stream")
    stream = wp.stream_from_torch(torch.cuda.current_stream(dev.ordinal))
    wp.capture_begin(device=dev, stream=stream, external=True)
    reg = Registration(stream)
    try:
        begun = _capture_id(dev, stream)
        # Make torch's stream Warp's current one: launches, capture_if (which looks the capture up
        # by the current stream) and the course's streams all resolve to it. sync_enter=False:
        # the capturing stream must not wait on Warp's previous, non-capturing stream.
        with wp.ScopedStream(stream, sync_enter=False):
            if conditional:
                yield reg
            else:
                with unconditional():
                    yield reg
        reg.restarted = _capture_id(dev, stream) != begun
    finally:
        wp.capture_end(device=dev, stream=stream)
