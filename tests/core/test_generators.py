"""Contracts of the generators: determinism, masks, capture, dynamic fields, seeds, errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.errors import CaptureError
from track_gen.pipeline import presets

E = 24


def snapshot(gen) -> dict[str, np.ndarray]:
    """Every committed array and the generation counters, copied to the host."""
    out = {k: v.numpy().copy() for k, v in gen.outputs().items()}
    out["valid"] = gen.result.valid.numpy().copy()
    out["generation"] = gen.generation.numpy().copy()
    return out


def assert_same(a: dict, b: dict, rows=None):
    for k in a:
        x, y = (a[k], b[k]) if rows is None else (a[k][rows], b[k][rows])
        assert x.tobytes() == y.tobytes(), k


def make(family, num_envs=E, seeds=42, **kw):
    if family == "track":
        return tg.TrackGenerator(presets.track(num_envs, "cpu", **kw), seeds=seeds)
    return tg.GateGenerator(presets.gates(num_envs, "cpu", gate_width=kw.pop("gate_width", 1.0), **kw), seeds=seeds)


def int_mask(values, device="cpu"):
    return wp.array(np.asarray(values, dtype=np.int32), dtype=wp.int32, device=device)


FAMILIES = ["track", "gates"]


# -- determinism ------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
def test_same_seed_same_course_whatever_num_envs(family):
    small, big = make(family, 5), make(family, 17)
    a, b = snapshot(small), snapshot(big)
    for k in a:
        assert a[k].tobytes() == b[k][:5].tobytes(), k


@pytest.mark.parametrize("family", FAMILIES)
def test_course_follows_the_seed_not_the_env_index(family):
    seeds = np.arange(1000, 1000 + E, dtype=np.int32)
    perm = np.random.default_rng(0).permutation(E)
    a = make(family, seeds=wp.array(seeds, dtype=wp.int32))
    b = make(family, seeds=wp.array(seeds[perm], dtype=wp.int32))
    sa, sb = snapshot(a), snapshot(b)
    for k in sa:
        assert sa[k][perm].tobytes() == sb[k].tobytes(), k


@pytest.mark.parametrize("family", FAMILIES)
def test_batch_mates_and_mask_do_not_matter(family):
    a, b = make(family), make(family)
    m1 = np.zeros(E, np.int32)
    m1[[3, 7]] = 1
    m2 = np.ones(E, np.int32)
    a.enqueue(advance=True, mask=int_mask(m1))
    b.enqueue(advance=True, mask=int_mask(m2))
    sa, sb = snapshot(a), snapshot(b)
    assert_same(sa, sb, rows=[3, 7])


@pytest.mark.parametrize("family", FAMILIES)
def test_advance_draws_a_new_course_and_rebuild_repeats_it(family):
    g = make(family)
    first = snapshot(g)
    g.enqueue(advance=False)
    assert_same(first, snapshot(g))
    g.enqueue(advance=True)
    key = "centerline.xy" if family == "track" else "gates.pos"
    after = snapshot(g)
    assert (after["generation"] == 1).all()
    changed = [(first[key][e] != after[key][e]).any() for e in range(E)]
    assert all(changed)


@pytest.mark.parametrize("family", FAMILIES)
def test_graph_replay_equals_eager_byte_for_byte(family):
    """Record one masked regeneration, then mutate the mask in place and replay (not just re-run)."""
    eager, graph = make(family), make(family)
    mask_e, mask_g = int_mask(np.zeros(E)), int_mask(np.zeros(E))
    with wp.ScopedCapture(device="cpu") as cap:
        graph.enqueue(advance=True, mask=mask_g)
    assert_same(snapshot(eager), snapshot(graph))  # recording ran nothing
    rng = np.random.default_rng(1)
    for _ in range(4):
        m = (rng.random(E) < 0.4).astype(np.int32)
        mask_e.assign(m)
        mask_g.assign(m)
        eager.enqueue(advance=True, mask=mask_e)
        wp.capture_launch(cap.graph)
        assert_same(snapshot(eager), snapshot(graph))


# -- masks ------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype", [wp.int32, wp.bool, wp.uint8])
def test_all_zero_mask_is_an_exact_identity(family, dtype):
    g = make(family)
    before = snapshot(g)
    g.enqueue(advance=True, mask=wp.zeros(E, dtype=dtype, device="cpu"))
    assert_same(before, snapshot(g))


@pytest.mark.parametrize("family", FAMILIES)
def test_mask_changes_masked_rows_only_and_matches_full_regeneration(family):
    masked, full = make(family), make(family)
    before = snapshot(masked)
    m = np.zeros(E, bool)
    m[[0, 5, 6, 23]] = True
    masked.enqueue(advance=True, mask=wp.array(m, dtype=wp.bool, device="cpu"))
    full.enqueue(advance=True)
    after, ref = snapshot(masked), snapshot(full)
    assert_same(before, after, rows=~m)
    assert_same(ref, after, rows=m)


# -- dynamic fields and randomizers ------------------------------------------------------------
def test_param_change_takes_effect_in_a_recorded_graph():
    g = make("track")
    with wp.ScopedCapture(device="cpu") as cap:
        g.enqueue(advance=True)
    g.params["centerline.half_width"] = 0.25
    g.params["centerline.size"] = 14.0
    wp.capture_launch(cap.graph)
    r = g.result
    assert np.allclose(r.half_width.numpy(), 0.25)
    valid = r.valid.numpy() == 1
    assert valid.mean() > 0.9
    edge = np.abs(r.xy.numpy()[valid]).max()
    assert 7.0 - 0.25 >= edge > 5.0  # uses the bigger square, stays inside it
    assert g.params["centerline.size"] == 14.0


def test_gate_width_param_and_randomizer_without_recapture():
    g = make("gates", gate_width=1.0)
    with wp.ScopedCapture(device="cpu") as cap:
        g.enqueue(advance=True)
    g.params["gate_frames.gate_width"] = 0.7
    wp.capture_launch(cap.graph)
    assert np.allclose(g.result.width.numpy(), 0.7)
    assert np.allclose(g.result.height.numpy(), 0.7)  # height 0: square opening
    g.randomizers["gate_frames.gate_width"] = (0.5, 0.9)
    wp.capture_launch(cap.graph)
    w = g.result.width.numpy()
    assert ((w >= 0.5) & (w <= 0.9)).all() and np.unique(w).size > E // 2
    del g.randomizers["gate_frames.gate_width"]
    wp.capture_launch(cap.graph)
    assert np.allclose(g.result.width.numpy(), 0.7)


def test_construction_randomizer_is_per_env_and_deterministic():
    spec = presets.track(E, "cpu").with_randomize({"centerline.half_width": (0.3, 0.5)})
    a, b = tg.TrackGenerator(spec, seeds=3), tg.TrackGenerator(spec, seeds=3)
    hw = a.result.half_width.numpy()[:, 0]
    assert ((hw >= 0.3) & (hw <= 0.5)).all() and np.unique(hw).size == E
    assert hw.tobytes() == b.result.half_width.numpy()[:, 0].tobytes()
    assert a.randomizers["centerline.half_width"] == (0.3, 0.5)


def test_config_with_randomize_equals_spec_with_randomize():
    cfg = tg.GateGenConfig(num_envs=E, gate_width=1.0).with_randomize({"gates.size": (8.0, 12.0)})
    spec = presets.gates(E, "cpu", gate_width=1.0).with_randomize({"gates.size": (8.0, 12.0)})
    assert_same(snapshot(tg.GateGenerator(cfg, seeds=5)), snapshot(tg.GateGenerator(spec, seeds=5)))


# -- seeds ------------------------------------------------------------------------------------
def test_bound_seed_array_is_never_written():
    arr = wp.array(np.arange(E, dtype=np.int32) * 7, dtype=wp.int32, device="cpu")
    g = tg.TrackGenerator(presets.track(E, "cpu"), seeds=arr)
    before = arr.numpy().copy()
    g.enqueue(advance=True)
    g.generate()
    with pytest.raises(RuntimeError, match="never writes"):
        g.generate(seeds=3)
    assert (arr.numpy() == before).all()
    assert not g.seeds.owned and g.seeds.seeds.ptr == arr.ptr
    arr.assign(before + 1)  # the recipe: write it yourself, then regenerate
    g.generate()
    ref = tg.TrackGenerator(presets.track(E, "cpu"), seeds=wp.array(before + 1, dtype=wp.int32))
    ref.enqueue(advance=True)  # generate() rebuilds the current generation (1 here)
    assert_same(snapshot(ref), snapshot(g))


def test_generate_with_seeds_follows_the_owner():
    owned = make("track", seeds=1)
    owned.enqueue(advance=True)
    owned.generate(seeds=9)
    assert_same(snapshot(make("track", seeds=9)), snapshot(owned))
    rng = tg.PerEnvSeededRNG(E, 1, device="cpu")
    via_rng = tg.TrackGenerator(presets.track(E, "cpu"), seeds=rng)
    assert via_rng.rng is rng and via_rng.seeds.seeds.ptr == rng.seeds.ptr
    via_rng.generate(seeds=9)
    assert (rng.seeds.numpy() == owned.seeds.seeds.numpy()).all()
    assert_same(snapshot(owned), snapshot(via_rng))


def test_rng_next_seeds_masked_and_capturable():
    rng = tg.PerEnvSeededRNG(E, 4, device="cpu")
    before = rng.seeds.numpy().copy()
    m = np.zeros(E, np.int32)
    m[2] = 1
    mask = int_mask(m)
    with wp.ScopedCapture(device="cpu") as cap:
        rng.next_seeds(mask)
    assert (rng.seeds.numpy() == before).all()
    wp.capture_launch(cap.graph)
    after = rng.seeds.numpy()
    assert after[2] != before[2] and (np.delete(after, 2) == np.delete(before, 2)).all()


def test_env_offset_shifts_int_seeds():
    a = tg.SeedState(8, "cpu", 42)
    b = tg.SeedState(4, "cpu", 42, env_offset=4)
    assert (a.seeds.numpy()[4:] == b.seeds.numpy()).all()


# -- prepare ------------------------------------------------------------------------------------
def test_prepare_false_refuses_capture_then_prepares():
    g = tg.TrackGenerator(presets.track(E, "cpu"), seeds=1, prepare=False)
    assert not g.prepared and (g.result.valid.numpy() == 0).all()
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(CaptureError, match="prepare"):
            g.enqueue()
    g.prepare()
    assert g.prepared and g.result.valid.numpy().mean() > 0.9
    before = snapshot(g)
    g.prepare()  # idempotent
    assert_same(before, snapshot(g))


# -- layout -------------------------------------------------------------------------------------
def test_layout_capacities():
    t = make("track", num_points=128)
    assert t.layout.num_envs == E and t.layout.points == 128 and t.layout.max_loop_length == 40.0
    assert t.result.xy.shape == (E, 128)
    el = make("track", elevated=True)
    assert el.layout.max_loop_length is None
    z = el.result.z.numpy()
    assert (z > 0).all() and np.ptp(z) > 0
    assert np.allclose(el.result.start_pos.numpy()[:, 2], z[:, 0])
    g = make("gates", max_gates=12)
    assert g.layout.gates == 12 and g.result.pos.shape == (E, 12)
    with pytest.raises(AttributeError, match="capacities"):
        g.layout.points


def test_sprint_courses_are_open():
    g = make("gates", closed=False)
    assert g.valid_fraction() > 0.95
    assert g.params["gates.closed"] == 0


# -- out= ---------------------------------------------------------------------------------------
def test_out_arrays_receive_the_commit():
    xy = wp.zeros((E, 256), dtype=wp.vec2f, device="cpu")
    valid = wp.zeros(E, dtype=wp.int32, device="cpu")
    from track_gen.pipeline import build

    g = build(presets.track(E, "cpu"), out={"centerline.xy": xy, "valid": valid}, seeds=42)
    assert isinstance(g, tg.TrackGenerator)
    assert g.result.xy.ptr == xy.ptr and g.result.valid.ptr == valid.ptr
    assert_same(snapshot(make("track")), snapshot(g))
    with pytest.raises(ValueError, match="expected shape"):
        build(presets.track(E, "cpu"), out={"centerline.xy": wp.zeros((E, 3), dtype=wp.vec2f)})
    with pytest.raises(KeyError, match="unknown output"):
        build(presets.track(E, "cpu"), out={"nope": xy})


def test_param_values_are_the_per_env_draws():
    g = tg.TrackGenerator(presets.track(E, "cpu").with_randomize({"centerline.size": (8.0, 12.0)}), seeds=2)
    size = g.param_values("centerline.size").numpy()
    assert ((size >= 8.0) & (size <= 12.0)).all() and np.unique(size).size == E
    xy = np.abs(g.result.xy.numpy()).max(axis=(1, 2))
    assert (xy <= size / 2).all()
    assert make("gates").result.closed and not make("gates", closed=False).result.closed


# -- one copy of each fact (issue 11) ------------------------------------------------------------
def test_kernel_status_bits_are_the_status_flags():
    from track_gen.generators.gates import bits as gate_kernels
    from track_gen.generators.track import bits as track_kernels

    for flag in tg.TrackStatus:
        if flag:
            assert getattr(track_kernels, flag.name) == int(flag)
    for flag in tg.GateStatus:
        if flag:
            assert getattr(gate_kernels, flag.name) == int(flag)


def test_config_defaults_are_the_stage_parameter_defaults():
    import dataclasses

    from track_gen.generators import gates, track

    td = {f.name: f.default for f in dataclasses.fields(tg.TrackGenConfig)}
    for name, spec in track.CENTERLINE_PARAMS.items():
        assert td[name] == spec.default, name
    for field_name, param in track.ELEVATION_FIELDS.items():
        assert td[field_name] == track.ELEVATION_PARAMS[param].default, field_name
    assert set(track.ELEVATION_FIELDS.values()) == set(track.ELEVATION_PARAMS)
    gd = {f.name: f.default for f in dataclasses.fields(tg.GateGenConfig)}
    for name, spec in {**gates.LAYOUT_PARAMS, **gates.FRAME_PARAMS}.items():
        if name != "dense_per_span":  # not a config field
            assert gd[name] == spec.default, name
    # the elevated spec carries the config's height_amplitude as elevation.amplitude
    spec = tg.TrackGenConfig(num_envs=2, elevated=True, height_amplitude=0.25).to_spec()
    assert spec.param("elevation.amplitude") == 0.25
