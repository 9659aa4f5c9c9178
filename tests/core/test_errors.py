"""Bad input is refused early, with the argument, the value and the fix, and changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import warp as wp

import track_gen as tg
from track_gen.pipeline import presets

E = 8


def snapshot(gen):
    out = {k: v.numpy().copy() for k, v in gen.outputs().items()}
    out["valid"] = gen.result.valid.numpy().copy()
    out["generation"] = gen.generation.numpy().copy()
    out["params"] = dict(gen.params)
    out["ranges"] = dict(gen.randomizers)
    return out


def unchanged(gen, before):
    after = snapshot(gen)
    for k, v in before.items():
        assert (v == after[k]) if isinstance(v, dict) else v.tobytes() == after[k].tobytes(), k
    gen.enqueue(advance=False)  # device-side parameters unchanged too: the same courses again
    again = snapshot(gen)
    for k, v in before.items():
        if not isinstance(v, dict):
            assert v.tobytes() == again[k].tobytes(), k


@pytest.fixture(scope="module")
def track():
    return tg.TrackGenerator(presets.track(E, "cpu"), seeds=1)


@pytest.fixture(scope="module")
def gates():
    return tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=1)


CONFIG_CASES = [
    (dict(num_envs=0), ValueError, "num_envs"),
    (dict(num_envs=True), ValueError, "num_envs"),
    (dict(num_envs=2.5), ValueError, "num_envs"),
    (dict(device="gpu9"), ValueError, "device"),
    (dict(size=-1.0), ValueError, r"centerline.size: -1 is outside \(0, inf\]"),
    (dict(size=float("nan")), ValueError, "centerline.size: must be finite"),
    (dict(num_points=10), ValueError, "centerline.num_points"),
    (dict(num_points=100.5), ValueError, "must be an integer"),
    (dict(half_width="wide"), TypeError, "centerline.half_width: expected a number"),
    (dict(radius_min=0.9, radius_max=0.5), ValueError, "radius_min=0.9 exceeds centerline.radius_max"),
    (dict(min_length=50.0), ValueError, "min_length=50 exceeds centerline.max_length"),
    (dict(elevated="yes"), TypeError, "elevated"),
    (dict(randomize={"centerline.nope": (0, 1)}), KeyError, "unknown parameter 'centerline.nope'"),
    (dict(randomize={"centerline.num_points": (16, 32)}), ValueError, "static"),
    (dict(randomize={"centerline.size": (12, 8)}), ValueError, "lo=12 > hi=8"),
    (dict(randomize={"centerline.size": (-1, 8)}), ValueError, "lo"),
    (dict(randomize={"centerline.size": 3}), TypeError, "pair"),
]


@pytest.mark.parametrize("kwargs,exc,match", CONFIG_CASES)
def test_bad_track_config(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        tg.TrackGenerator(tg.TrackGenConfig(**{"num_envs": E, **kwargs}))


GATE_CASES = [
    (dict(gate_width=-0.1), ValueError, "gate_frames.gate_width"),
    (dict(min_spacing=7.0), ValueError, "min_spacing=7 exceeds gates.max_spacing"),
    (dict(min_gates=12), ValueError, "min_gates=12 exceeds gates.max_gates"),
    (dict(max_gates=1), ValueError, "gates.max_gates"),
    (dict(closed=1), TypeError, "closed"),
    (dict(max_turn=0.0), ValueError, "gates.max_turn"),
]


@pytest.mark.parametrize("kwargs,exc,match", GATE_CASES)
def test_bad_gate_config(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        tg.GateGenerator(tg.GateGenConfig(**{"num_envs": E, "gate_width": 1.0, **kwargs}))


def test_wrong_family_or_source():
    with pytest.raises(TypeError, match="GateGenerator"):
        tg.TrackGenerator(tg.GateGenConfig(num_envs=E))
    with pytest.raises(TypeError, match="GateGenerator"):
        tg.TrackGenerator(presets.gates(E, "cpu"))
    with pytest.raises(TypeError, match="TrackGenerator"):
        tg.GateGenerator(presets.track(E, "cpu"))
    with pytest.raises(TypeError, match="expected a TrackGenConfig or PipelineSpec"):
        tg.TrackGenerator("track")


SEED_CASES = [
    (True, TypeError, "bool"),
    ([1, 2, 3], ValueError, f"expected an int or {E} integer seeds"),
    (np.full(E, -1), ValueError, r"\[0, 2\*\*31 - 1\]"),
    (np.zeros(E, np.float32), ValueError, "integer seeds"),
    (wp.zeros(E, dtype=wp.float32), ValueError, "int32 array"),
    (wp.zeros(E + 1, dtype=wp.int32), ValueError, f"\\[{E}\\] int32"),
]


@pytest.mark.parametrize("seeds,exc,match", SEED_CASES)
def test_bad_seeds(seeds, exc, match):
    with pytest.raises(exc, match=match):
        tg.TrackGenerator(presets.track(E, "cpu"), seeds=seeds)


def test_rng_for_another_size_is_refused():
    with pytest.raises(ValueError, match="PerEnvSeededRNG is for 4 envs"):
        tg.TrackGenerator(presets.track(E, "cpu"), seeds=tg.PerEnvSeededRNG(4, 0, device="cpu"))


PARAM_CASES = [
    ("centerline.nope", 1.0, KeyError, "unknown parameter"),
    ("centerline.num_points", 64, ValueError, "static"),
    ("centerline.size", 0.0, ValueError, r"centerline.size: 0 is outside \(0, inf\]"),
    ("centerline.size", float("inf"), ValueError, "finite"),
    ("centerline.size", True, TypeError, "expected a number"),
    ("centerline.radius_min", 1.0 + 1e-3, ValueError, "outside"),
    ("centerline.radius_max", 0.2, ValueError, "radius_min=0.35 exceeds centerline.radius_max=0.2"),
]


@pytest.mark.parametrize("name,value,exc,match", PARAM_CASES)
def test_bad_param_set_changes_nothing(track, name, value, exc, match):
    before = snapshot(track)
    with pytest.raises(exc, match=match):
        track.params[name] = value
    unchanged(track, before)


RANGE_CASES = [
    ("centerline.nope", (0, 1), KeyError, "not a dynamic parameter"),
    ("centerline.size", (9, 8), ValueError, "lo=9 > hi=8"),
    ("centerline.half_width", (0.0, 0.5), ValueError, "lo"),
    ("centerline.size", "big", TypeError, "pair"),
]


@pytest.mark.parametrize("name,rng,exc,match", RANGE_CASES)
def test_bad_randomizer_changes_nothing(track, name, rng, exc, match):
    before = snapshot(track)
    with pytest.raises(exc, match=match):
        track.randomizers[name] = rng
    unchanged(track, before)


MASK_CASES = [
    (lambda: [1] * E, TypeError, "expected a wp.array"),
    (lambda: torch.ones(E, dtype=torch.int32), TypeError, "wp.from_torch"),
    (lambda: wp.ones(E + 1, dtype=wp.int32), ValueError, rf"expected shape \({E},\)"),
    (lambda: wp.ones((E, 2), dtype=wp.int32), ValueError, "expected shape"),
    (lambda: wp.ones(E, dtype=wp.float32), TypeError, "use wp.int32"),
    (lambda: wp.ones(2 * E, dtype=wp.int32)[::2], ValueError, "contiguous"),
]


@pytest.mark.parametrize("make_mask,exc,match", MASK_CASES)
@pytest.mark.parametrize("family", ["track", "gates"])
def test_bad_mask_changes_nothing(request, family, make_mask, exc, match):
    gen = request.getfixturevalue(family)
    before = snapshot(gen)
    with pytest.raises(exc, match=match):
        gen.enqueue(advance=True, mask=make_mask())
    unchanged(gen, before)


def test_param_writes_are_refused_while_recording(track):
    before = snapshot(track)
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(tg.CaptureError, match="between replays"):
            track.params["centerline.size"] = 12.0
        with pytest.raises(tg.CaptureError, match="between replays"):
            track.randomizers["centerline.size"] = (8.0, 12.0)
    unchanged(track, before)


def test_zero_gate_width_is_an_invalid_course():
    g = tg.GateGenerator(presets.gates(E, "cpu"), seeds=1)  # gate_width defaults to 0
    assert (g.result.valid.numpy() == 0).all()
    assert (g.result.status.numpy() & tg.GateStatus.OPENING).all()


def test_elevated_status_carries_the_ground_bit():
    g = tg.TrackGenerator(presets.track(E, "cpu", elevated=True, base_height=0.05), seeds=1)
    assert (g.result.valid.numpy() == 0).all()
    assert (g.result.status.numpy() & tg.TrackStatus.GROUND).all()
