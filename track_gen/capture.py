"""Capture state queries shared by the pipeline, the generators and the course."""

from __future__ import annotations

import contextlib

import warp as wp

from track_gen.errors import CaptureError


def is_capturing(device: wp.context.Device | str | None) -> bool:
    """True while a Warp graph capture records on ``device`` (CPU captures included)."""
    return bool(wp.get_device(device).is_capturing)


def refuse_under_capture(device, what: str, fix: str) -> None:
    """Raise :class:`CaptureError` when ``device`` is recording; ``what`` and ``fix`` form the message."""
    if is_capturing(device):
        raise CaptureError(f"{what} cannot run while a graph capture is recording on {device}; {fix}")


@contextlib.contextmanager
def strict():
    """Make allocations, readbacks, host copies and syncs raise inside the block (tests and kits).

    Warp's CPU capture tolerates what a CUDA capture rejects (allocations, ``.numpy()``), so a
    CPU-green capture proves little by itself. Record inside ``strict()`` and any such call raises
    ``AssertionError`` naming it. It patches Warp functions process-wide while active: use it in
    tests, never around concurrent work.
    """
    def refuse(name):
        def _raise(*a, **k):
            raise AssertionError(f"{name} called during a recorded call")
        return _raise

    patched = {
        (wp, "zeros"), (wp, "empty"), (wp, "full"), (wp, "ones"), (wp, "zeros_like"), (wp, "empty_like"),
        (wp, "clone"), (wp, "synchronize"), (wp, "synchronize_device"), (wp, "synchronize_stream"),
        (wp.array, "numpy"), (wp.array, "list"), (wp.array, "assign"),
    }
    saved = {(o, n): getattr(o, n) for o, n in patched}
    init = wp.array.__init__

    def guarded_init(self, *a, **k):
        if k.get("ptr") is None and (a or k.get("data") is not None or k.get("shape") is not None):
            raise AssertionError("wp.array allocated during a recorded call")
        return init(self, *a, **k)

    try:
        for (o, n) in patched:
            setattr(o, n, refuse(f"{getattr(o, '__name__', o)}.{n}"))
        wp.array.__init__ = guarded_init
        yield
    finally:
        for (o, n), f in saved.items():
            setattr(o, n, f)
        wp.array.__init__ = init


def caller(fn, *, device, strict_mode: bool = True):
    """Record ``fn()`` into a graph on ``device`` (inside :func:`strict` by default) and return a
    callable that replays it. Recording runs nothing on the CPU: call the result to execute."""
    guard = strict() if strict_mode else contextlib.nullcontext()
    with wp.ScopedCapture(device=device) as cap, guard:
        fn()
    graph = cap.graph
    return lambda: wp.capture_launch(graph)


def check_component(course, names=None) -> None:
    """Record every hook of a course's components in a strict capture; name the first that fails.

    Each of ``on_generate`` (masked), ``reset`` and, for a bound per-step component, ``step`` is
    recorded alone, so the error names the component and the hook that allocated, read back or
    synced. Nothing runs (CPU recording executes nothing), so no state changes.
    """
    from track_gen.tools.component import overrides_step

    ctx = course._ctx
    comps = [c for c in course.components.values() if names is None or c.name in names]
    for c in comps:
        hooks = [("on_generate", lambda c=c: c.on_generate(ctx, course._active)),
                 ("reset", lambda c=c: c.reset(ctx, course._active))]
        if overrides_step(c) and c._bound is not None:
            hooks.append(("step", lambda c=c: c.step(ctx)))
        for hook, fn in hooks:
            try:
                caller(fn, device=course.device)
            except Exception as exc:  # noqa: BLE001 - re-raised with the component named
                raise CaptureError(
                    f"component {c.name!r}: {hook} cannot be recorded ({type(exc).__name__}: {exc}); a recorded "
                    f"hook must not allocate, read back, sync or use another stream"
                ) from exc


def active_graph(device):
    """The Warp graph being recorded on ``device`` (its current stream on CUDA), or None.

    None also under a capture Warp did not open (e.g. a plain ``torch.cuda.graph``)."""
    dev = wp.get_device(device)
    try:
        if dev.is_cpu:
            from warp._src.context import runtime

            g = runtime._apic_graph
            return g if g is not None and g.device == dev else None
        return (dev.captures or {}).get(dev.stream)
    except Exception:  # noqa: BLE001 - a Warp internal moved: retention is best effort
        return None


def retain(device, *objects) -> bool:
    """Keep ``objects`` alive as long as the graph being recorded on ``device``; False when there is
    no Warp graph to attach them to (then the caller must keep them alive)."""
    graph = active_graph(device)
    if graph is None:
        return False
    refs = getattr(graph, "_track_gen_refs", None)
    if refs is None:
        refs = []
        graph._track_gen_refs = refs
    refs.extend(objects)
    return True
