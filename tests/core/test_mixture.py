"""Per-env mixtures of parameter sets (``PipelineSpec.with_mixture``) and ``presets.gates_real``:
determinism, masks, capture, the draw itself against a float64 reference, errors."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.pipeline import presets
from track_gen.rng import name_key, stream_state

MIX = {"small": (1.0, {"gates.size": (3.0, 6.0), "gate_frames.gate_width": 0.4, "gates.min_spacing": 0.6,
                       "gates.max_spacing": 4.0, "gates.height_min": 0.5, "gates.height_max": 1.5}),
       "big": (3.0, {"gates.size": (20.0, 40.0), "gate_frames.gate_width": (0.8, 1.6), "gates.max_spacing": 20.0})}


def mixed(num_envs: int, seeds=7, mixture=MIX, **kw) -> tg.GateGenerator:
    spec = presets.gates(num_envs, "cpu", gate_width=1.0, closed=False, **kw).with_mixture(mixture)
    return tg.GateGenerator(spec, seeds=seeds)


def state(gen) -> dict[str, np.ndarray]:
    out = {k: v.numpy().copy() for k, v in gen.outputs().items()}
    out["valid"] = gen.result.valid.numpy().copy()
    out["component"] = gen.mixture_component.numpy().copy()
    out["params"] = gen._params.values.numpy().copy()
    return out


def test_each_env_draws_one_component_and_takes_its_values():
    g = mixed(2000)
    comp = g.mixture_component.numpy()
    assert set(np.unique(comp)) == {0, 1}
    share = (comp == 1).mean()
    assert abs(share - 0.75) < 0.04          # weights 1 : 3
    width, arena = g.result.width.numpy(), g.result.arena.numpy()
    assert (width[comp == 0] == np.float32(0.4)).all()
    assert ((width[comp == 1] >= 0.8) & (width[comp == 1] <= 1.6)).all()
    assert ((arena[comp == 0] >= 3.0) & (arena[comp == 0] <= 6.0)).all()
    assert ((arena[comp == 1] >= 20.0) & (arena[comp == 1] <= 40.0)).all()
    # a parameter no component names keeps its base value
    np.testing.assert_array_equal(g.param_values("gates.yaw_jitter").numpy(), np.float32(0.3))


@wp.kernel
def _mixture_draw(seeds: wp.array(dtype=wp.int32), generation: wp.array(dtype=wp.int32), key: int,
                  u_out: wp.array(dtype=float)):
    e = wp.tid()
    u_out[e] = wp.randf(stream_state(seeds[e], generation[e], key, 0))


def test_component_draw_matches_a_float64_reference():
    """The component is the first whose cumulative weight exceeds u * total, u the env's own draw."""
    g = mixed(512, seeds=11)
    u = wp.zeros(512, dtype=float, device="cpu")
    wp.launch(_mixture_draw, dim=512, inputs=[g.seeds.seeds, g.generation, name_key("mixture component")],
              outputs=[u], device="cpu")
    want = np.searchsorted(np.cumsum([1.0, 3.0]), u.numpy().astype(np.float64) * 4.0, side="right")
    np.testing.assert_array_equal(g.mixture_component.numpy(), np.minimum(want, 1))


def test_an_envs_course_does_not_depend_on_num_envs():
    a, b = mixed(32, seeds=5), mixed(96, seeds=5)
    sa, sb = state(a), state(b)
    for k in sa:
        y = sb[k][:, :32] if k == "params" else sb[k][:32]
        assert sa[k].tobytes() == np.ascontiguousarray(y).tobytes(), k


def test_masked_regeneration_equals_unmasked_for_masked_envs_and_is_identity_elsewhere():
    full, part = mixed(64), mixed(64)
    before = state(part)
    mask = np.zeros(64, np.int32)
    mask[::3] = 1
    full.enqueue(advance=True)
    part.enqueue(advance=True, mask=wp.array(mask, dtype=wp.int32, device="cpu"))
    f, p = state(full), state(part)
    on, off = mask == 1, mask == 0
    for k in f:
        if k == "params":
            assert f[k][:, on].tobytes() == p[k][:, on].tobytes()
            assert before[k][:, off].tobytes() == p[k][:, off].tobytes()
            continue
        assert f[k][on].tobytes() == p[k][on].tobytes(), k
        assert before[k][off].tobytes() == p[k][off].tobytes(), k
    # an all-zero mask changes nothing
    snap = state(part)
    part.enqueue(advance=True, mask=wp.zeros(64, dtype=wp.int32, device="cpu"))
    after = state(part)
    for k in snap:
        assert snap[k].tobytes() == after[k].tobytes(), k


def test_captured_regeneration_equals_eager():
    eager, rec = mixed(48), mixed(48)
    with wp.ScopedCapture(device="cpu") as cap:
        rec.enqueue(advance=True)
    for _ in range(3):
        eager.enqueue(advance=True)
        wp.capture_launch(cap.graph)
        a, b = state(eager), state(rec)
        for k in a:
            assert a[k].tobytes() == b[k].tobytes(), k
    # the components really change between generations
    assert (a["component"] != state(mixed(48))["component"]).any()


def test_without_a_mixture_every_env_reports_component_minus_one():
    g = tg.GateGenerator(presets.gates(8, "cpu", gate_width=1.0), seeds=1)
    assert (g.mixture_component.numpy() == -1).all()


@pytest.mark.parametrize("mixture, err, match", [
    ({}, TypeError, "non-empty mapping"),
    ({"a": (0.0, {"gates.size": 5.0})}, ValueError, "weight: expected a number > 0"),
    ({"a": (float("nan"), {"gates.size": 5.0})}, ValueError, "weight"),
    ({"a": (1.0, {"gates.size": (6.0, 3.0)})}, ValueError, r"lo=6 > hi=3"),
    ({"a": (1.0, {"gates.size": "big"})}, TypeError, "a number or a pair"),
    ({"a": (1.0, ["gates.size"])}, TypeError, "mapping of parameters"),
    ({"a": 1.0}, TypeError, r"expected \(weight"),
])
def test_bad_mixtures_are_refused_by_the_spec(mixture, err, match):
    with pytest.raises(err, match=match):
        presets.gates(4, "cpu", gate_width=1.0).with_mixture(mixture)


@pytest.mark.parametrize("values, err, match", [
    ({"gates.nope": 1.0}, KeyError, "unknown parameter 'gates.nope'"),
    ({"gates.max_gates": 8.0}, ValueError, "static"),
    ({"gates.size": -1.0}, ValueError, "gates.size"),
])
def test_bad_mixture_parameters_are_refused_by_the_generator(values, err, match):
    spec = presets.gates(4, "cpu", gate_width=1.0).with_mixture({"a": (1.0, values)})
    with pytest.raises(err, match=match):
        tg.GateGenerator(spec, seeds=0)


def test_gates_real_is_valid_and_mixes_scales_per_env():
    g = tg.GateGenerator(presets.gates_real(1024, "cpu"), seeds=0)
    valid = g.result.valid.numpy() == 1
    assert valid.mean() >= 0.98
    comp, arena, width = g.mixture_component.numpy(), g.result.arena.numpy(), g.result.width.numpy()
    names = [m[0] for m in g.spec.mixture]
    assert names == list(presets.REAL_MIXTURE)
    for i in range(len(names)):
        assert (comp == i).sum() > 100
    assert arena.min() < 6.0 and arena.max() > 40.0
    assert width.min() < 0.5 and width.max() > 1.5
    assert not g.result.closed


def test_band_tracks_mix_through_their_config_too():
    cfg = tg.TrackGenConfig(num_envs=256, device="cpu", mixture={
        "narrow": (1.0, {"centerline.half_width": 0.3}), "wide": (1.0, {"centerline.half_width": (0.6, 0.8)})})
    g = tg.TrackGenerator(cfg, seeds=2)
    comp, hw = g.mixture_component.numpy(), g.result.half_width.numpy()[:, 0]
    assert set(np.unique(comp)) == {0, 1}
    assert (hw[comp == 0] == np.float32(0.3)).all() and (hw[comp == 1] >= 0.6).all()


def test_reweighting_changes_the_draws_to_the_reference_and_the_specs_weights_give_them_back():
    """``set_mixture_weights`` between replays: a recorded regeneration draws with the new weights
    (the same float64 reference as above), and writing the spec's weights back gives the spec's draws."""
    base, g = mixed(512, seeds=11), mixed(512, seeds=11)
    assert g.mixture_weights == {"small": 1.0, "big": 3.0}
    with wp.ScopedCapture(device="cpu") as cap:
        g.enqueue(advance=True)
    g.set_mixture_weights({"small": 9.0})               # "big" keeps its 3
    assert g.mixture_weights == {"small": 9.0, "big": 3.0}
    wp.capture_launch(cap.graph)
    u = wp.zeros(512, dtype=float, device="cpu")
    wp.launch(_mixture_draw, dim=512, inputs=[g.seeds.seeds, g.generation, name_key("mixture component")],
              outputs=[u], device="cpu")
    want = np.minimum(np.searchsorted(np.cumsum([9.0, 3.0]), u.numpy().astype(np.float64) * 12.0, side="right"), 1)
    np.testing.assert_array_equal(g.mixture_component.numpy(), want)
    assert abs((want == 0).mean() - 0.75) < 0.06
    g.set_mixture_weights({"small": 1.0, "big": 3.0})
    wp.capture_launch(cap.graph)
    base.enqueue(advance=True)
    base.enqueue(advance=True)             # generation 2 of both: a draw depends on seed, generation, weights
    a, b = state(base), state(g)
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), k


@pytest.mark.parametrize("weights, err, match", [
    ({"tiny": 1.0}, KeyError, r"unknown components \['tiny'\]"),
    ({"small": 0.0}, ValueError, "'small' weight must be a finite number > 0"),
    ({"small": float("inf")}, ValueError, "finite number > 0"),
    ({"small": True}, ValueError, "finite number > 0"),
    ([1.0, 2.0], TypeError, "expected a mapping"),
])
def test_bad_mixture_weights_are_refused_and_change_nothing(weights, err, match):
    g = mixed(8)
    with pytest.raises(err, match=match):
        g.set_mixture_weights(weights)
    assert g.mixture_weights == {"small": 1.0, "big": 3.0}
    np.testing.assert_array_equal(g._params.mix_cdf.numpy(), np.float32([1.0, 4.0]))


def test_reweighting_needs_a_mixture_and_is_refused_under_capture():
    plain = tg.GateGenerator(presets.gates(8, "cpu", gate_width=1.0), seeds=1)
    assert plain.mixture_weights == {}
    with pytest.raises(ValueError, match="no mixture"):
        plain.set_mixture_weights({"a": 1.0})
    g = mixed(8)
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(Exception, match="setting mixture weights"):
            g.set_mixture_weights({"small": 2.0})


def test_new_ranges_reach_a_recorded_regeneration_and_the_specs_ranges_give_its_draws_back():
    """``set_mixture_ranges`` between replays: the next replay draws the component's values from the
    new ranges (a name it did not set joins it), the other component is untouched, and writing the
    spec's ranges back gives the spec's draws bit for bit."""
    base, g = mixed(512, seeds=5), mixed(512, seeds=5)
    spec_small = g.mixture_ranges("small")
    assert spec_small["gates.size"] == (3.0, 6.0) and spec_small["gate_frames.gate_width"] == pytest.approx((0.4, 0.4))
    assert "gates.yaw_jitter" not in spec_small
    with wp.ScopedCapture(device="cpu") as cap:
        g.enqueue(advance=True)
    g.set_mixture_ranges("small", {"gates.size": (4.0, 4.5), "gates.yaw_jitter": 0.1})
    assert g.mixture_ranges("small")["gates.size"] == (4.0, 4.5)
    assert g.mixture_ranges("small")["gates.yaw_jitter"] == pytest.approx((0.1, 0.1))
    assert g.mixture_ranges("big") == base.mixture_ranges("big")
    wp.capture_launch(cap.graph)
    comp, arena = g.mixture_component.numpy(), g.result.arena.numpy()
    jitter = g.param_values("gates.yaw_jitter").numpy()
    assert ((arena[comp == 0] >= 4.0) & (arena[comp == 0] <= 4.5)).all()
    np.testing.assert_array_equal(jitter[comp == 0], np.float32(0.1))
    np.testing.assert_array_equal(jitter[comp == 1], np.float32(0.3))     # big keeps the base value
    assert ((arena[comp == 1] >= 20.0) & (arena[comp == 1] <= 40.0)).all()
    # the same draw u of each env, mapped into the new range: lo + (hi - lo) * u as the resolver does
    ref = mixed(512, seeds=5)
    ref.enqueue(advance=True)
    u = (ref.param_values("gates.size").numpy()[comp == 0].astype(np.float64) - 3.0) / 3.0
    np.testing.assert_allclose(g.param_values("gates.size").numpy()[comp == 0], 4.0 + 0.5 * u, atol=2e-6)
    g.set_mixture_ranges("small", {**spec_small, "gates.yaw_jitter": 0.3})
    g._params._mix_on[0, g._params.index["gates.yaw_jitter"]] = 0          # the spec did not set it
    g._params.mix_on.assign(g._params._mix_on)
    wp.capture_launch(cap.graph)
    base.enqueue(advance=True)
    base.enqueue(advance=True)
    a, b = state(base), state(g)
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), k


@pytest.mark.parametrize("component, ranges, err, match", [
    ("tiny", {"gates.size": 4.0}, KeyError, r"unknown component 'tiny'"),
    ("small", {"gates.nope": 4.0}, KeyError, "unknown parameter 'gates.nope'"),
    ("small", {"gates.size": (5.0, 4.0)}, ValueError, "lo=5 > hi=4"),
    ("small", {"gates.size": (1.0, 2.0, 3.0)}, TypeError, "a number or a pair"),
    ("small", {"gate_frames.gate_width": (-1.0, 0.5)}, ValueError, "outside"),
    ("small", [("gates.size", 4.0)], TypeError, "expected a mapping"),
])
def test_bad_mixture_ranges_are_refused_and_change_nothing(component, ranges, err, match):
    g = mixed(8)
    before = {c: g.mixture_ranges(c) for c in ("small", "big")}
    lo = g._params.mix_lo.numpy().copy()
    with pytest.raises(err, match=match):
        g.set_mixture_ranges(component, {"gates.max_spacing": 3.0, **ranges} if isinstance(ranges, dict) else ranges)
    assert {c: g.mixture_ranges(c) for c in ("small", "big")} == before
    np.testing.assert_array_equal(g._params.mix_lo.numpy(), lo)


def test_setting_ranges_needs_a_mixture_and_is_refused_under_capture():
    plain = tg.GateGenerator(presets.gates(8, "cpu", gate_width=1.0), seeds=1)
    with pytest.raises(ValueError, match="no mixture"):
        plain.set_mixture_ranges("a", {"gates.size": 4.0})
    g = mixed(8)
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(Exception, match="setting mixture ranges"):
            g.set_mixture_ranges("small", {"gates.size": 4.0})
    assert g.mixture_ranges("small")["gates.size"] == (3.0, 6.0)
