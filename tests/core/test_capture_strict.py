"""Recording is strict: no allocation, readback or sync may happen inside a recorded call.

Warp's CPU capture tolerates allocations and ``.numpy()`` readbacks that a CUDA capture would
reject, so a green CPU capture alone does not prove a body is CUDA-capturable. These tests make
every such operation raise while the generators record.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.pipeline import presets


@contextlib.contextmanager
def strict():
    """Make allocations, readbacks, host copies and syncs raise inside the block."""
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


def test_strict_mode_catches_an_allocation():
    with pytest.raises(AssertionError, match="allocated|called"):
        with strict():
            wp.zeros(3, dtype=float, device="cpu")


@pytest.mark.parametrize("make", [
    lambda: tg.TrackGenerator(presets.track(16, "cpu"), seeds=1),
    lambda: tg.TrackGenerator(presets.track(16, "cpu", elevated=True), seeds=1),
    lambda: tg.GateGenerator(presets.gates(16, "cpu", gate_width=1.0, closed=False), seeds=1),
])
@pytest.mark.parametrize("masked", [False, True])
def test_enqueue_records_without_alloc_or_sync(make, masked):
    g = make()
    mask = wp.array(np.arange(16) % 3 == 0, dtype=wp.bool, device="cpu") if masked else None
    before = {k: v.numpy().copy() for k, v in g.outputs().items()}
    with wp.ScopedCapture(device="cpu") as cap, strict():
        g.enqueue(advance=True, mask=mask)
    for k, v in g.outputs().items():  # recording runs nothing
        assert v.numpy().tobytes() == before[k].tobytes(), k
    wp.capture_launch(cap.graph)
    assert (g.generation.numpy() == (1 if not masked else (np.arange(16) % 3 == 0))).all()
    assert g.valid_fraction() > 0.8


def test_rng_next_seeds_records_strictly():
    rng = tg.PerEnvSeededRNG(8, 0, device="cpu")
    with wp.ScopedCapture(device="cpu"), strict():
        rng.next_seeds()
