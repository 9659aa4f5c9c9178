"""Recording is strict: no allocation, readback or sync may happen inside a recorded call.

Warp's CPU capture tolerates allocations and ``.numpy()`` readbacks that a CUDA capture would
reject, so a green CPU capture alone does not prove a body is CUDA-capturable. These tests make
every such operation raise while the generators record.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.capture import strict
from track_gen.pipeline import presets


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
