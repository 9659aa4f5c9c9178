"""Pipeline as data: plugin stages, host stages, generator inputs, the registry."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.errors import NotCapturableError
from track_gen.pipeline import ArraySpec, ParamSpec, PipelineSpec, StageRegistry, StageSpec, build, presets


@wp.kernel
def _bumps(
    active: wp.array(dtype=wp.int32),
    xy: wp.array2d(dtype=wp.vec2f),
    height: wp.array(dtype=wp.float32),
    z: wp.array2d(dtype=wp.float32),
):
    e, i = wp.tid()
    if active[e] == 0:
        return
    z[e, i] = height[e] * wp.sin(xy[e, i][0])


def _launch_bumps(ctx):
    wp.launch(_bumps, dim=(ctx.num_envs, ctx.capacity("points")),
              inputs=[ctx.active, ctx.input("xy"), ctx.param("height")], outputs=[ctx.output("z")], device=ctx.device)


def bumps_registry() -> StageRegistry:
    reg = StageRegistry()
    reg.register(
        "acme.bumps", _launch_bumps, params={"height": ParamSpec(0.2, lo=0.0)},
        inputs={"xy": ArraySpec(wp.vec2f, ("env", "points"), source="centerline.xy")},
        outputs={"z": ArraySpec(wp.float32, ("env", "points"))},
    )
    return reg


def with_stage(spec: PipelineSpec, stage: StageSpec) -> PipelineSpec:
    import dataclasses

    return dataclasses.replace(spec, stages=spec.stages + (stage,))


def test_namespaced_plugin_stage_runs_and_is_masked():
    spec = with_stage(presets.track(16, "cpu"), StageSpec("bumps", "acme.bumps", {"height": 0.5}))
    g = build(spec, registry=bumps_registry(), seeds=1)
    xy, z = g.result.xy.numpy(), g.outputs()["bumps.z"].numpy()
    np.testing.assert_allclose(z, 0.5 * np.sin(xy[..., 0]), rtol=1e-5, atol=1e-6)
    g.params["bumps.height"] = 1.0
    m = np.zeros(16, np.int32)
    m[3] = 1
    g.enqueue(mask=wp.array(m, dtype=wp.int32))
    z2 = g.outputs()["bumps.z"].numpy()
    np.testing.assert_allclose(z2[3], np.sin(xy[3, :, 0]), rtol=1e-5, atol=1e-6)
    assert z2[np.arange(16) != 3].tobytes() == z[np.arange(16) != 3].tobytes()


def test_registry_refuses_bad_kinds():
    reg = StageRegistry()
    with pytest.raises(ValueError, match="namespaced"):
        reg.register("bumps", _launch_bumps)
    with pytest.raises(ValueError, match="belong to track_gen"):
        reg.register("track.bumps", _launch_bumps)
    reg.register("acme.bumps", _launch_bumps)
    with pytest.raises(ValueError, match="already registered"):
        reg.register("acme.bumps", _launch_bumps)
    with pytest.raises(KeyError, match="unknown stage kind"):
        build(with_stage(presets.track(4, "cpu"), StageSpec("x", "acme.nothing")), registry=reg)
    assert "acme.bumps" not in StageRegistry()  # a fresh registry holds the built-ins only
    assert "track.centerline" in StageRegistry()


def test_host_stage_runs_eagerly_and_refuses_capture():
    calls = []
    reg = StageRegistry()

    @reg.register("acme.host_count", capturable=False, outputs={"n": ArraySpec(wp.int32)})
    def host_count(ctx):
        calls.append(1)
        ctx.output("n").assign(np.full(ctx.num_envs, len(calls), np.int32))

    g = build(with_stage(presets.track(8, "cpu"), StageSpec("count", "acme.host_count")), registry=reg, seeds=2)
    assert not g.capturable and calls == [1]
    g.enqueue(advance=True)
    assert (g.outputs()["count.n"].numpy() == 2).all()
    before = {k: v.numpy().copy() for k, v in g.outputs().items()}
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(NotCapturableError, match="host"):
            g.enqueue(advance=True)
    assert calls == [1, 1]
    for k, v in g.outputs().items():
        assert v.numpy().tobytes() == before[k].tobytes(), k


def test_generator_input_is_a_stable_array_read_by_replays():
    """A stage input that no stage writes becomes generator.inputs[name], written in place."""
    reg = bumps_registry()
    spec = PipelineSpec(8, "cpu", (StageSpec("bumps", "acme.bumps", inputs={"xy": "drawn.xy"}),))
    with pytest.raises(ValueError, match="capacity 'points'"):
        build(spec, registry=reg)
    reg.register(
        "acme.points", lambda ctx: None, capacities=lambda s: {"points": 5}, params={},
    )
    spec = PipelineSpec(8, "cpu", (StageSpec("pts", "acme.points"), StageSpec("bumps", "acme.bumps",
                                                                                inputs={"xy": "drawn.xy"})))
    g = build(spec, registry=reg)
    assert list(g.input_info) == ["drawn.xy"] and g.input_info["drawn.xy"].dtype == wp.vec2f
    arr = g.inputs["drawn.xy"]
    assert arr.shape == (8, 5)
    with wp.ScopedCapture(device="cpu") as cap:
        g.enqueue()
    drawn = np.random.default_rng(0).normal(size=(8, 5, 2)).astype(np.float32)
    arr.assign(drawn)
    wp.capture_launch(cap.graph)
    np.testing.assert_allclose(g.outputs()["bumps.z"].numpy(), 0.2 * np.sin(drawn[..., 0]), rtol=1e-5, atol=1e-6)
    assert g.inputs["drawn.xy"].ptr == arr.ptr


def test_spec_param_reads_defaults_and_overrides():
    spec = presets.gates(4, "cpu", gate_width=0.5)
    assert spec.param("gate_frames.gate_width") == 0.5
    assert spec.param("gate_frames.frame_thickness") == 0.05
    assert spec.with_params({"gates.size": 12.0}).param("gates.size") == 12.0
    with pytest.raises(KeyError, match="no parameter"):
        spec.param("gates.nope")
    with pytest.raises(KeyError, match="no stage"):
        spec.with_params({"nope.size": 1.0})


def test_build_returns_the_family_class():
    assert type(build(presets.track(4, "cpu"))) is tg.TrackGenerator
    assert type(build(presets.gates(4, "cpu", gate_width=1.0))) is tg.GateGenerator


def test_track_from_points_follows_the_drawn_polygon():
    E, K = 4, 12
    g = tg.TrackGenerator(presets.track_from_points(E, "cpu", control_points=K), seeds=0)
    assert list(g.input_info) == ["centerline.points"]
    assert (g.result.valid.numpy() == 0).all()  # nothing drawn yet: a degenerate course, flagged
    with wp.ScopedCapture(device="cpu") as cap:
        g.enqueue()
    ang = np.linspace(0, 2 * np.pi, K, endpoint=False)
    radius = np.array([3.0, 3.5, 4.0, 0.2])[:, None]  # the last one is far too small to be valid
    pts = np.stack([radius * np.cos(ang), radius * np.sin(ang)], -1).astype(np.float32)
    g.inputs["centerline.points"].assign(pts)
    wp.capture_launch(cap.graph)
    valid = g.result.valid.numpy()
    assert valid.tolist() == [1, 1, 1, 0]
    assert g.result.status.numpy()[3] & tg.TrackStatus.LENGTH
    r = np.linalg.norm(g.result.xy.numpy()[:3], axis=-1)
    # a B-spline through a regular polygon of radius R stays between its apothem-ish and R
    assert (r <= radius[:3] + 1e-4).all() and (r >= 0.9 * radius[:3]).all()
    np.testing.assert_allclose(g.result.length.numpy()[:3], 2 * np.pi * radius[:3, 0], rtol=0.05)
    with pytest.raises(TypeError, match="does not apply"):
        presets.track_from_points(E, "cpu", radius_min=0.2)
