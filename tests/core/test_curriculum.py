"""Curricula through the generator's dynamic parameters, with no re-recording.

A size curriculum on band tracks (``centerline.size``) and a gate-width curriculum on gate
courses (``gate_frames.gate_width``): the masked regeneration is recorded once, the parameter
changes between replays, and

* the regenerated courses follow the schedule (tracks grow, gate openings change);
* capacities sized for the final stage (checkpoint ring, SDF grid ``size_hi``) raise no
  CapacityWarning / ResolutionWarning and clip nothing; an SDF grid sized too small warns;
* the graph is the same object throughout (nothing is recorded again);
* the replayed course equals a twin course driven eagerly with the same schedule, byte for byte;
* a gate width <= 0 is refused and changes nothing.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.capture import strict
from track_gen.course import Course
from track_gen.errors import CapacityWarning, ResolutionWarning, TrackGenWarning
from track_gen.pipeline import presets
from track_gen.tools import BandCollision, Checkpoints, Progress

E = 32
SIZES = (6.0, 8.0, 10.0, 12.0)  # centerline.size per stage [m]
MAX_LENGTH = 40.0  # static: the longest loop any stage may produce [m]
SPACING = 1.0
WIDTHS = (1.4, 1.1, 0.8, 0.5)  # gate_frames.gate_width per stage [m]
HALVES = ((np.arange(E) % 2) == 0, (np.arange(E) % 2) == 1)  # each stage regenerates evens, then odds


# -- helpers --------------------------------------------------------------------------------------
def track_course(size_hi=SIZES[-1], resolution=16, max_checkpoints=None, seed=3):
    gen = tg.TrackGenerator(
        presets.track(E, "cpu", size=SIZES[0], min_length=6.0, max_length=MAX_LENGTH), seeds=seed)
    cap = math.ceil(MAX_LENGTH / SPACING) if max_checkpoints is None else max_checkpoints
    return Course(gen, [Checkpoints(SPACING, max_checkpoints=cap), Progress(),
                        BandCollision("sdf", resolution=resolution, size_hi=size_hi)])


def gate_course(seed=5):
    return Course.gates(presets.gates(E, "cpu", gate_width=WIDTHS[0]), collision=0.05, seeds=seed)


def state(course) -> dict[str, bytes]:
    """Every generator output, the valid flags, the generation counters and every component buffer."""
    out = {k: v.numpy().tobytes() for k, v in course.generator.outputs().items()}
    out["valid"] = course.result.valid.numpy().tobytes()
    out["generation"] = course.generator.generation.numpy().tobytes()
    for c in course.components.values():
        for f in dataclasses.fields(c.result):
            arr = getattr(c.result, f.name)
            if isinstance(arr, wp.array):
                out[f"{c.name}.{f.name}"] = arr.numpy().tobytes()
        grid = getattr(c, "grid", None)
        if isinstance(grid, wp.array):
            out[f"{c.name}.grid"] = grid.numpy().tobytes()
    return out


def assert_same(a: dict, b: dict, what: str) -> None:
    assert a.keys() == b.keys()
    diff = [k for k in a if a[k] != b[k]]
    assert not diff, f"{what}: replay and eager differ in {diff}"


def bind_poses(course):
    """Bind pose arrays (on the start poses) so that the courses can step."""
    pos = wp.array(course.result.start_pos.numpy(), dtype=wp.vec3f, device="cpu")
    quat = wp.full(E, wp.quat_identity(), dtype=wp.quatf, device="cpu")
    ext = wp.full(E, wp.vec2f(0.2, 0.1), dtype=wp.vec2f, device="cpu")
    course.bind(position=pos, orientation=quat, half_extents=ext)
    return pos


def band_extent(course) -> np.ndarray:
    """[E] largest |x| or |y| over both band edges of each env (the half side its course needs)."""
    r = course.result
    xy, hw, n = r.xy.numpy().astype(np.float64), r.half_width.numpy().astype(np.float64), r.normal.numpy()
    edges = np.concatenate([xy + hw[..., None] * n, xy - hw[..., None] * n], axis=1)
    return np.abs(edges).max(axis=(1, 2))


# -- size curriculum (band tracks) ---------------------------------------------------------------
def test_size_curriculum_one_graph_matches_eager_twin():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrackGenWarning)  # any Capacity/ResolutionWarning fails the test
        replayed, eager = track_course(), track_course()
        for c in (replayed, eager):
            bind_poses(c)
        mask = wp.zeros(E, dtype=wp.int32, device="cpu")
        twin_mask = wp.zeros(E, dtype=wp.int32, device="cpu")
        with strict():
            with wp.ScopedCapture(device="cpu") as capture:
                replayed.regenerate(mask=mask, advance=True)  # the RL reset body, recorded once
        graph = capture.graph
        own_graphs = dict(replayed._graphs)
        assert_same(state(replayed), state(eager), "before the schedule")
        cps = replayed.components["checkpoints"]
        assert cps.capacity == math.ceil(MAX_LENGTH / SPACING)

        prev_reach = 0.0
        for size in SIZES[1:]:
            for course in (replayed, eager):
                course.generator.params["centerline.size"] = size
            for half in HALVES:
                mask.assign(half.astype(np.int32))
                twin_mask.assign(half.astype(np.int32))
                wp.capture_launch(graph)
                eager.enqueue_generate(mask=twin_mask, advance=True)
                assert_same(state(replayed), state(eager), f"size {size}")
                replayed.step()  # the courses still step (stateless replay check is the byte compare)
                eager.step()
            assert capture.graph is graph and replayed._graphs == own_graphs  # nothing recorded again

            valid = replayed.result.valid.numpy() != 0
            assert valid.mean() >= 0.75, (size, valid.mean())
            reach = band_extent(replayed)[valid]
            assert reach.max() <= 0.5 * size + 1e-4, (size, reach.max())  # each course fits its stage
            assert reach.max() > prev_reach, (size, reach.max(), prev_reach)  # and the courses grow
            assert reach.max() > 0.5 * (size - 2.0), (size, reach.max())  # past the previous stage's square
            prev_reach = reach.max()

            # the checkpoint ring is sized for the last stage: no course is clipped
            length = replayed.result.length.numpy()[valid]
            want = np.maximum(np.ceil(length.astype(np.float32) / np.float32(SPACING)), 3).astype(np.int32)
            count = replayed.checkpoints.count.numpy()[valid]
            assert np.array_equal(count, want) and count.max() < cps.capacity
            assert np.allclose(replayed.checkpoints.length.numpy()[valid], length)
            # the SDF grid square (size_hi) covers every stage's square
            sdf = replayed.components["collision"]
            assert sdf.side >= size and sdf.origin <= -0.5 * size


def test_own_regeneration_graph_is_kept_across_stages():
    """``course.regenerate(mask=m, advance=True)`` outside a capture records one graph and reuses it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrackGenWarning)
        course = track_course()
        mask = wp.zeros(E, dtype=wp.int32, device="cpu")
        with strict():
            course.regenerate(mask=mask, advance=True)  # records the (advance, mask) variant
        graphs = dict(course._graphs)
        assert len(graphs) == 1
        mask.fill_(1)
        for size in SIZES[1:]:
            course.generator.params["centerline.size"] = size
            course.regenerate(mask=mask, advance=True)
            valid = course.result.valid.numpy() != 0
            assert band_extent(course)[valid].max() <= 0.5 * size + 1e-4
        assert course._graphs == graphs and all(course._graphs[k] is g for k, g in graphs.items())
        assert band_extent(course)[course.result.valid.numpy() != 0].max() > 0.5 * SIZES[-2]


def test_sdf_grid_too_small_warns_once():
    """``size_hi`` below the schedule's last size: one ResolutionWarning, at the first regeneration past it."""
    course = track_course(size_hi=9.0)
    mask = wp.ones(E, dtype=wp.int32, device="cpu")
    caught_at = []
    for size in SIZES[1:]:
        course.generator.params["centerline.size"] = size
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            course.enqueue_generate(mask=mask, advance=True)  # eager: on_generate checks the cover
        caught_at += [size for w in caught if issubclass(w.category, ResolutionWarning)]
        assert not [w for w in caught if issubclass(w.category, CapacityWarning)]
    assert caught_at == [10.0]


@pytest.mark.parametrize("size_hi, warns", [(12.0, False), (10.0, True)])
def test_sdf_grid_against_a_size_randomizer(size_hi, warns):
    """A randomizer range counts with its ``hi``: checked when the course is built."""
    gen = tg.TrackGenerator(presets.track(E, "cpu", size=SIZES[0], min_length=6.0), seeds=3)
    gen.randomizers["centerline.size"] = (6.0, 12.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Course(gen, [Checkpoints(SPACING), BandCollision("sdf", resolution=8, size_hi=size_hi)])
    got = [w for w in caught if issubclass(w.category, ResolutionWarning)]
    assert len(got) == int(warns), [str(w.message) for w in caught]


def test_too_small_checkpoint_ring_clips():
    """The capacity bounds the count: a ring sized for the first stage spreads later courses out."""
    course = track_course(max_checkpoints=12)
    mask = wp.ones(E, dtype=wp.int32, device="cpu")
    course.generator.params["centerline.size"] = SIZES[-1]
    course.enqueue_generate(mask=mask, advance=True)
    valid = course.result.valid.numpy() != 0
    length = course.result.length.numpy()[valid]
    assert (np.ceil(length / SPACING) > 12).any()
    assert course.checkpoints.count.numpy()[valid].max() == 12


# -- gate-width curriculum ------------------------------------------------------------------------
def test_gate_width_curriculum_one_graph_matches_eager_twin():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrackGenWarning)
        replayed, eager = gate_course(), gate_course()
        for c in (replayed, eager):
            bind_poses(c)
        mask = wp.zeros(E, dtype=wp.int32, device="cpu")
        twin_mask = wp.zeros(E, dtype=wp.int32, device="cpu")
        with strict():
            with wp.ScopedCapture(device="cpu") as capture:
                replayed.step()
                replayed.regenerate(mask=mask, advance=True)
        graph = capture.graph  # recorded, not run: both courses are still as built
        own_graphs = dict(replayed._graphs)
        assert_same(state(replayed), state(eager), "before the schedule")

        def replay_both():
            for half in HALVES:
                mask.assign(half.astype(np.int32))
                twin_mask.assign(half.astype(np.int32))
                wp.capture_launch(graph)
                eager.step()  # the eager twin makes the calls the graph holds
                eager.enqueue_generate(mask=twin_mask, advance=True)
                assert_same(state(replayed), state(eager), "replay")

        for width in WIDTHS[1:]:
            for course in (replayed, eager):
                course.generator.params["gate_frames.gate_width"] = width
            replay_both()
            assert capture.graph is graph and replayed._graphs == own_graphs
            r, cps = replayed.result, replayed.checkpoints
            assert np.allclose(r.width.numpy(), width)
            valid = r.valid.numpy() != 0
            assert valid.mean() >= 0.75
            count = cps.count.numpy()
            hw = cps.half_width.numpy()
            for e in np.flatnonzero(valid):
                assert np.allclose(hw[e, :count[e]], 0.5 * width) and not hw[e, count[e]:].any()

        # a width <= 0 is refused, and the refusal changes nothing
        before = state(replayed)
        for bad in (0.0, -0.3):
            with pytest.raises(ValueError):
                replayed.generator.params["gate_frames.gate_width"] = bad
        assert replayed.generator.params["gate_frames.gate_width"] == WIDTHS[-1]
        assert_same(state(replayed), before, "after a refused width")
        replay_both()
        assert np.allclose(replayed.result.width.numpy(), WIDTHS[-1])

        # a per-env range instead of one value: drawn per env and generation, same graph
        for course in (replayed, eager):
            course.generator.randomizers["gate_frames.gate_width"] = (0.6, 0.9)
        replay_both()
        w = replayed.result.width.numpy()
        assert (w >= 0.6).all() and (w <= 0.9).all() and np.ptp(w) > 0.05
        valid = replayed.result.valid.numpy() != 0
        hw = replayed.checkpoints.half_width.numpy()[:, 0]
        assert np.allclose(hw[valid], 0.5 * w[valid])
        assert capture.graph is graph and replayed._graphs == own_graphs
