"""World-frame poses: the optional ``origin`` input of every per-step built-in.

Every course lives in its env's own frame; a simulator reports world-frame poses and each env
sits at its own origin (Isaac Lab's ``env.scene.env_origins``). With ``origin`` bound, Progress,
Localizer and the three collision components use ``position - origin`` (``box_position -
origin``); ``HeightFieldBake.sample`` takes ``origin=`` likewise.

The main check: a course bound with world positions (env positions + per-env origins) gives
the very bytes of the same course bound with env positions and no origin. To make that a fair
demand, env positions are multiples of 2^-10 m below 64 m and origins multiples of 0.25 m below
64 m, so ``(p + o) - o == p`` exactly in float32; a second test uses arbitrary float origins
and compares within 1e-5.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.capture import check_component, strict
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import (BandCollision, CenterlineFromGates, Checkpoints, DiscCollision, FrameCollision,
                             GateCheckpoints, HeightFieldBake, Localizer, Progress, TrackLine)
from track_gen.tools.component import overrides_step

E = 12
STEP_COMPONENTS = {
    "track": ("progress", "localizer", "collision", "sdf"),
    "gates": ("progress", "localizer", "collision", "frame"),
}


# ==================================================================================================
# courses, inputs, state
# ==================================================================================================
def make_course(family: str, seed: int = 3) -> Course:
    if family == "track":
        g = tg.TrackGenerator(presets.track(E, "cpu", elevated=True), seeds=seed)  # z matters too
        comps = [TrackLine(), Checkpoints(3.0), Progress(), Localizer(warm_window=4), BandCollision("segments"),
                 BandCollision("sdf", resolution=32, name="sdf"), HeightFieldBake(16)]
    else:
        g = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.2), seeds=seed)
        comps = [CenterlineFromGates(4), GateCheckpoints(), Progress(), Localizer(source="centerline", warm_window=3),
                 DiscCollision(0.15), FrameCollision(0.2, name="frame"), HeightFieldBake(16)]
    return Course(g, comps)


class Inputs:
    """The arrays one course is bound to (written in place between steps)."""

    def __init__(self, course: Course, world: bool):
        self.pos = wp.zeros(E, dtype=wp.vec3f)
        self.box = wp.zeros(E, dtype=wp.vec3f)
        self.quat = wp.zeros(E, dtype=wp.quatf)
        self.ext = wp.zeros(E, dtype=wp.vec2f)
        self.origin = wp.zeros(E, dtype=wp.vec3f) if world else None
        kw = {} if self.origin is None else {"origin": self.origin}
        course.bind(position=self.pos, orientation=self.quat, half_extents=self.ext, box_position=self.box, **kw)

    def write(self, pos, box, quat, ext, origin=None):
        """Env-frame ``pos`` / ``box``; world-frame (``+ origin``) when this course has an origin."""
        if self.origin is not None:
            pos = (pos + origin).astype(np.float32)
            box = (box + origin).astype(np.float32)
            self.origin.assign(origin)
        self.pos.assign(pos)
        self.box.assign(box)
        self.quat.assign(quat)
        self.ext.assign(ext)


def grid(x, q=1024.0):
    return (np.round(np.asarray(x, np.float64) * q) / q).astype(np.float32)


def exact_origins(rng) -> np.ndarray:
    return (rng.integers(-255, 256, (E, 3)) * 0.25).astype(np.float32)


def poses(course: Course, rng, k: int):
    """Env-frame poses near point ``k * stride`` of each env's course line (so checkpoints get
    passed), snapped to the 2^-10 m grid; the box centre 5 cm ahead of the position."""
    line = course.components["centerline"].line
    P = line.points.numpy().astype(np.float64)
    count = line.count.numpy()
    start = course.generator.result.start_pos.numpy().astype(np.float64)
    pos = start.copy()
    for e in range(E):
        if count[e] > 0:
            pos[e] = P[e, (3 * k + e) % count[e]]
    pos = grid(np.clip(pos + rng.normal(0.0, 0.4, (E, 3)), -60.0, 60.0))
    box = grid(pos + np.array([0.05, 0.0, 0.0]))
    quat = rng.normal(size=(E, 4)).astype(np.float32)
    ext = grid(rng.uniform(0.1, 0.5, (E, 2)))
    return pos, box, quat, ext


def state(course: Course) -> dict[str, np.ndarray]:
    """Every per-step result array, plus the per-env state Progress and Localizer keep."""
    out = {}
    for name in STEP_COMPONENTS[course._ctx.family]:
        c = course.components[name]
        for f, v in vars(c.result).items():
            if isinstance(v, wp.array):
                out[f"{name}.{f}"] = v.numpy().copy()
    p, loc = course.components["progress"], course.components["localizer"]
    for f in ("_prev_pos", "_has_prev", "_origin", "_last_local"):
        out[f"progress{f}"] = getattr(p, f).numpy().copy()
    out["localizer.search"] = loc.search.numpy().copy()
    out["localizer.last_segment"] = loc.last_segment.numpy().copy()
    return out


def assert_same(a: dict, b: dict, where="") -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), f"{where} {k}: {a[k]} != {b[k]}"


# ==================================================================================================
# declaration and routing
# ==================================================================================================
@pytest.mark.parametrize("family", ["track", "gates"])
def test_every_step_component_declares_origin_and_bind_routes_one_array(family):
    course = make_course(family)
    steppers = [c for c in course.components.values() if overrides_step(c)]
    assert sorted(c.name for c in steppers) == sorted(STEP_COMPONENTS[family])
    for c in steppers:
        spec = c.inputs["origin"]
        assert spec.dtype == wp.vec3f and spec.slots == 1 and not spec.required and spec.default is None
    ins = Inputs(course, world=True)
    for c in steppers:
        assert c.bound["origin"] is ins.origin
    # rebinding without it unbinds it everywhere: the components read env-frame positions again
    Inputs(course, world=False)
    assert all("origin" not in c.bound for c in steppers)
    with pytest.raises(ValueError, match="origin"):
        course.bind(position=ins.pos, orientation=ins.quat, half_extents=ins.ext,
                    origin=wp.zeros(E + 1, dtype=wp.vec3f))
    with pytest.raises(TypeError, match="origin"):
        course.bind(position=ins.pos, orientation=ins.quat, half_extents=ins.ext, origin=wp.zeros(E, dtype=wp.vec2f))


def test_origin_is_refused_by_a_course_without_a_declarer():
    course = Course(tg.TrackGenerator(presets.track(E, "cpu"), seeds=1), [TrackLine(), Checkpoints(3.0)])
    with pytest.raises(TypeError, match="unknown input 'origin'"):
        course.bind(position=wp.zeros(E, dtype=wp.vec3f), origin=wp.zeros(E, dtype=wp.vec3f))


# ==================================================================================================
# world frame == env frame
# ==================================================================================================
@pytest.mark.parametrize("family", ["track", "gates"])
def test_world_positions_with_origins_equal_env_positions_byte_for_byte(family):
    env_c, world_c, zero_c = make_course(family), make_course(family), make_course(family)
    env_in, world_in, zero_in = Inputs(env_c, False), Inputs(world_c, True), Inputs(zero_c, True)
    rng = np.random.default_rng(11)
    origin = exact_origins(rng)
    passed = 0
    for k in range(14):
        if k == 9:  # new courses for some envs mid-run: the origin still applies
            m = wp.array((np.arange(E) % 3 == 0).astype(np.int32), dtype=wp.int32)
            for c in (env_c, world_c, zero_c):
                c.regenerate(mask=m, advance=True)
        pos, box, quat, ext = poses(env_c, rng, k)
        env_in.write(pos, box, quat, ext)
        world_in.write(pos, box, quat, ext, origin)
        zero_in.write(pos, box, quat, ext, np.zeros((E, 3), np.float32))  # origin bound, all zero
        env_c.step(), world_c.step(), zero_c.step()
        ref = state(env_c)
        assert_same(ref, state(world_c), f"step {k} world")
        assert_same(ref, state(zero_c), f"step {k} zero origin")
        passed += int(ref["progress.passed"].sum())
    assert passed > 0  # the trajectory really crossed checkpoints
    # the check can fail: without the origin the world positions give other results
    world_c.bind(position=world_in.pos, orientation=world_in.quat, half_extents=world_in.ext,
                 box_position=world_in.box)
    world_c.step()
    env_c.step()
    assert state(world_c)["localizer.s"].tobytes() != state(env_c)["localizer.s"].tobytes()


@pytest.mark.parametrize("family", ["track", "gates"])
def test_float_origins_agree_within_1e5(family):
    """Arbitrary float32 origins (an Isaac Lab grid with a 2.37 m spacing): ``p + o`` rounds, so
    the continuous outputs agree within 1e-5 and the discrete ones exactly (no position of this
    trajectory lies within rounding of a checkpoint plane or an opening's edge)."""
    env_c, world_c = make_course(family), make_course(family)
    env_in, world_in = Inputs(env_c, False), Inputs(world_c, True)
    rng = np.random.default_rng(5)
    ij = np.stack([np.arange(E) % 4, np.arange(E) // 4], 1)
    origin = np.zeros((E, 3), np.float32)
    origin[:, :2] = (ij - 1.5) * np.float32(2.37)
    for k in range(10):
        pos, box, quat, ext = poses(env_c, rng, k)
        env_in.write(pos, box, quat, ext)
        world_in.write(pos, box, quat, ext, origin)
        env_c.step(), world_c.step()
        a, b = state(env_c), state(world_c)
        for key in a:
            if a[key].dtype.kind in "iu":
                np.testing.assert_array_equal(a[key], b[key], err_msg=f"step {k} {key}")
            elif key == "progress_prev_pos":
                np.testing.assert_allclose(a[key], b[key], atol=1e-5, rtol=0, err_msg=f"step {k} {key}")
            else:
                np.testing.assert_allclose(a[key], b[key], atol=1e-5, rtol=1e-6, err_msg=f"step {k} {key}")


# ==================================================================================================
# recorded replays, NaN origins
# ==================================================================================================
@pytest.mark.parametrize("family", ["track", "gates"])
def test_strict_capture_replay_equals_eager_with_origin(family):
    eager, graph = make_course(family), make_course(family)
    e_in, g_in = Inputs(eager, True), Inputs(graph, True)
    check_component(graph)  # every hook, with origin bound, records alone in a strict capture
    with strict(), wp.ScopedCapture(device="cpu") as cap:
        graph.step()
    rng = np.random.default_rng(8)
    for k in range(8):
        pos, box, quat, ext = poses(eager, rng, k)
        origin = exact_origins(rng)
        if k == 5:
            origin[2] = np.nan  # a NaN origin, replayed
        e_in.write(pos, box, quat, ext, origin)
        g_in.write(pos, box, quat, ext, origin)
        eager.step()
        wp.capture_launch(cap.graph)
        assert_same(state(eager), state(graph), f"step {k}")


@pytest.mark.parametrize("family", ["track", "gates"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_origin_isolates_to_its_env(family, bad):
    env_c, world_c = make_course(family), make_course(family)
    env_in, world_in = Inputs(env_c, False), Inputs(world_c, True)
    rng = np.random.default_rng(2)
    origin = exact_origins(rng)
    bad_env = 4
    for k in range(6):
        pos, box, quat, ext = poses(env_c, rng, k)
        o = origin.copy()
        if k >= 3:
            o[bad_env, 1] = bad
        env_in.write(pos, box, quat, ext)
        world_in.write(pos, box, quat, ext, o)
        before = state(world_c)
        env_c.step(), world_c.step()
        a, b = state(env_c), state(world_c)
        others = np.arange(E) != bad_env
        if k < 3:
            assert_same(a, b, f"step {k}")
            continue
        for key in a:
            assert a[key][others].tobytes() == b[key][others].tobytes(), (k, key)
        # the env with the bad origin: the documented non-finite-position results
        row = {key: v[bad_env] for key, v in b.items()}
        for f in ("passed", "missed", "wrong_way", "lap"):
            assert row[f"progress.{f}"] == 0
        assert row["progress.delta"] == 0.0
        for f in ("progress.progress", "progress.next", "progress.laps", "progress.total", "progress_prev_pos",
                  "progress_last_local"):
            assert row[f].tobytes() == before[f][bad_env].tobytes(), f  # unchanged
        assert row["localizer.segment"] == -1 and row["localizer.search"] == 0
        assert row["localizer.s"] == 0.0 and row["localizer.distance"] == 0.0
        for name in STEP_COMPONENTS[family][2:]:
            assert row[f"{name}.hit"] == 1 and row[f"{name}.index"] == -1
            assert row[f"{name}.depth"] == 0.0 and row[f"{name}.clearance"] == 0.0
            assert not row[f"{name}.normal"].any()


# ==================================================================================================
# HeightFieldBake.sample(origin=)
# ==================================================================================================
@pytest.mark.parametrize("family", ["track", "gates"])
def test_heightfield_sample_with_origin(family):
    course = make_course(family)
    hf = course.heightfield
    rng = np.random.default_rng(9)
    side = 0.5 * hf.extent
    env3 = grid(rng.uniform(-side, side, (E, 3)))
    if family == "gates":  # off the frames the ground is flat: sample at the gate centres
        env3 = grid(course.generator.result.pos.numpy()[:, 0] + rng.normal(0.0, 0.02, (E, 3)))
    origin = exact_origins(rng)
    o = wp.array(origin, dtype=wp.vec3f)
    ref = wp.zeros(E, dtype=wp.float32)
    hf.sample(wp.array(env3, dtype=wp.vec3f), ref)
    assert (ref.numpy() != 0.0).sum() >= E // 2  # heights to compare
    out3, out2 = wp.zeros(E, dtype=wp.float32), wp.zeros(E, dtype=wp.float32)
    w3 = wp.array(env3 + origin, dtype=wp.vec3f)
    w2 = wp.array((env3 + origin)[:, :2].copy(), dtype=wp.vec2f)
    with strict(), wp.ScopedCapture(device="cpu") as cap:  # recordable with an origin
        hf.sample(w3, out3, origin=o)
        hf.sample(w2, out2, origin=o)
    wp.capture_launch(cap.graph)
    assert out3.numpy().tobytes() == ref.numpy().tobytes()
    assert out2.numpy().tobytes() == ref.numpy().tobytes()
    # without the origin the same world points read other heights (the test can fail)
    hf.sample(w3, out3)
    assert out3.numpy().tobytes() != ref.numpy().tobytes()
    # a NaN origin reads 0.0 for its env only
    bad = origin.copy()
    bad[1, 0] = np.nan
    o.assign(bad)
    hf.sample(w3, out3, origin=o)
    got, want = out3.numpy(), ref.numpy()
    assert got[1] == 0.0
    assert np.delete(got, 1).tobytes() == np.delete(want, 1).tobytes()


def test_heightfield_sample_origin_errors():
    course = make_course("gates")
    pts, out = wp.zeros(E, dtype=wp.vec3f), wp.zeros(E, dtype=wp.float32)
    with pytest.raises(ValueError, match="origin must have shape"):
        course.heightfield.sample(pts, out, origin=wp.zeros(E - 1, dtype=wp.vec3f))
    with pytest.raises(TypeError, match="origin must be vec3f"):
        course.heightfield.sample(pts, out, origin=wp.zeros(E, dtype=wp.vec2f))
    with pytest.raises(TypeError, match="origin must be a wp.array"):
        course.heightfield.sample(pts, out, origin=np.zeros((E, 3), np.float32))
