"""``valid == 1`` never lies, and every bad value is refused with its field named.

Each test here pins one rule of the validity page (``docs/user-guide/generators.rst``,
"Validity rules"): the overlap test at any clearance, non-finite geometry, the float32 range,
clear refusals, numpy scalars, huge poses, the integer rule for seeds and offsets, and the guards.
The hypothesis test at the end throws every config field, parameter, randomizer bound and
hand-drawn input at the generators: each draw is either refused naming the field, or every course
it calls valid is finite and passes the float64 reference checker.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen.course import Course
from track_gen.pipeline import presets

from .reference import track_violations
from .test_validity import check_gates, check_tracks

F32_MAX = float(np.finfo(np.float32).max)


def _points_gen(points: np.ndarray, **kw) -> tg.TrackGenerator:
    """A one-env hand-drawn track through ``points`` [K, 2], generated once."""
    g = tg.TrackGenerator(presets.track_from_points(1, "cpu", control_points=len(points), **kw), seeds=0)
    g.inputs["centerline.points"].assign(np.asarray(points, np.float32)[None])
    g.enqueue(advance=True)
    return g


def _figure_eight(k: int = 16) -> np.ndarray:
    t = np.linspace(0.0, 2.0 * np.pi, k, endpoint=False)
    return np.stack([3.5 * np.sin(t), 2.0 * np.sin(2.0 * t)], 1)


def _circle(k: int = 12, r: float = 3.0) -> np.ndarray:
    t = np.linspace(0.0, 2.0 * np.pi, k, endpoint=False)
    return np.stack([r * np.cos(t), r * np.sin(t)], 1)


# ---------------------------------------------------------------------------------------------
# 1. the overlap test holds at every clearance, and gets stricter as clearance grows
@pytest.mark.parametrize("clearance", [0.0, 0.1, 1.0, 4.0, 10.0])
def test_figure_eight_overlaps_at_any_clearance(clearance):
    g = _points_gen(_figure_eight(), clearance=clearance)
    assert g.result.valid.numpy()[0] == 0
    assert g.result.status.numpy()[0] & int(tg.TrackStatus.OVERLAP)


def test_large_clearance_rejects_close_band_edges():
    """Random tracks at clearance 4: every accepted one keeps non-adjacent parts 4 m apart."""
    g = tg.TrackGenerator(presets.track(128, "cpu", clearance=4.0, max_attempts=1), seeds=3)
    check_tracks(g)      # the reference applies the same rule: valid ones pass, rejected ones fail
    status = g.result.status.numpy()
    assert np.count_nonzero(status & int(tg.TrackStatus.OVERLAP)) > 10
    loose = tg.TrackGenerator(presets.track(128, "cpu", clearance=0.1, max_attempts=1), seeds=3)
    assert g.result.valid.numpy().sum() < loose.result.valid.numpy().sum()


def test_clearance_only_tightens():
    """Raising clearance never turns an invalid course valid (same draws, one attempt)."""
    prev = None
    for c in (0.0, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0):
        g = tg.TrackGenerator(presets.track(256, "cpu", clearance=c, max_attempts=1), seeds=11)
        valid = g.result.valid.numpy()
        if prev is not None:
            assert not np.any(valid > prev), f"clearance {c}: a course became valid"
        prev = valid


# ---------------------------------------------------------------------------------------------
# 2. non-finite geometry is never valid and has its own status bit
@pytest.mark.parametrize("k", [0, 1, 2, 5, 11])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_control_point_is_flagged(k, bad):
    pts = _circle()
    pts[k, k % 2] = bad
    g = _points_gen(pts)
    assert g.result.valid.numpy()[0] == 0
    assert g.result.status.numpy()[0] & int(tg.TrackStatus.NONFINITE)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_all_non_finite_points_are_flagged(bad):
    g = _points_gen(np.full((12, 2), bad))
    assert g.result.valid.numpy()[0] == 0
    assert g.result.status.numpy()[0] & int(tg.TrackStatus.NONFINITE)


def test_non_finite_is_its_own_bit():
    assert int(tg.TrackStatus.NONFINITE) not in {int(b) for b in tg.TrackStatus if b.name != "NONFINITE"}
    assert int(tg.GateStatus.NONFINITE) not in {int(b) for b in tg.GateStatus if b.name != "NONFINITE"}


def test_huge_control_points_are_not_valid():
    """Finite points whose squares overflow float32 cannot make a valid course."""
    g = _points_gen(_circle(r=1e30), size=1e6, max_length=1e6)
    assert g.result.valid.numpy()[0] == 0


# ---------------------------------------------------------------------------------------------
# 3. values outside the float32 range are refused, naming the field
@pytest.mark.parametrize("make, field", [
    (lambda: presets.track(4, "cpu", size=1e39), "size"),
    (lambda: presets.track(4, "cpu", clearance=1e39), "clearance"),
    (lambda: presets.track(4, "cpu", min_turn_radius=-1e39), "min_turn_radius"),
    (lambda: presets.gates(4, "cpu", gate_width=1.0, height_max=1e39), "height_max"),
    (lambda: presets.gates(4, "cpu", gate_width=1e39), "gate_width"),
    (lambda: presets.track(4, "cpu").with_randomize({"centerline.size": (10.0, 1e39)}), "centerline.size"),
])
def test_values_beyond_float32_are_refused(make, field):
    with pytest.raises(ValueError, match=field) as err:
        spec = make()
        tg.TrackGenerator(spec) if spec.family == "track" else tg.GateGenerator(spec)
    assert "float32" in str(err.value)


def test_param_and_randomizer_beyond_float32_are_refused():
    g = tg.TrackGenerator(presets.track(4, "cpu"), seeds=0)
    with pytest.raises(ValueError, match="centerline.size.*float32"):
        g.params["centerline.size"] = 1e39
    with pytest.raises(ValueError, match="centerline.size.*float32"):
        g.randomizers["centerline.size"] = (5.0, 1e39)
    assert g.params["centerline.size"] == 10.0 and "centerline.size" not in g.randomizers


# ---------------------------------------------------------------------------------------------
# 4. clear refusals
@pytest.mark.parametrize("value", ["abc", None, [1.0], True])
def test_max_length_of_wrong_type_is_refused_by_name(value):
    with pytest.raises(TypeError, match="max_length"):
        tg.TrackGenerator(presets.track(4, "cpu", max_length=value))


def test_gate_width_of_wrong_type_is_refused_by_name():
    with pytest.raises(TypeError, match="gate_width"):
        Course.gates(presets.gates(4, "cpu", gate_width="abc"), collision=0.05, seeds=1)


def test_huge_capacity_is_refused_before_allocating():
    with pytest.raises(ValueError, match=r"max_length.*spacing.*GiB"):
        Course.track(presets.track(4, "cpu", max_length=1e6), checkpoint_spacing=0.01, seeds=1)
    with pytest.raises(ValueError, match="max_length"):
        Course.track(presets.track(4, "cpu", max_length=1e12), checkpoint_spacing=1.0, seeds=1)


def test_numpy_bool_is_a_bool():
    a = tg.TrackGenerator(presets.track(4, "cpu", elevated=np.bool_(True)), seeds=2)
    b = tg.TrackGenerator(presets.track(4, "cpu", elevated=True), seeds=2)
    assert a.result.z.numpy().tobytes() == b.result.z.numpy().tobytes()
    with pytest.raises(TypeError, match="elevated: expected a bool.*got int"):
        presets.track(4, "cpu", elevated=1)


# ---------------------------------------------------------------------------------------------
# 5. numpy scalars are numbers
def test_numpy_scalars_are_accepted():
    a = tg.TrackGenerator(presets.track(np.int64(4), "cpu", size=np.float32(10), num_points=np.int64(256),
                                        clearance=np.float64(0.1)), seeds=np.int64(5))
    b = tg.TrackGenerator(presets.track(4, "cpu"), seeds=5)
    assert a.result.xy.numpy().tobytes() == b.result.xy.numpy().tobytes()
    a.params["centerline.half_width"] = np.float32(0.35)
    a.randomizers["centerline.size"] = (np.float32(9.0), np.float64(11.0))
    gates = tg.GateGenerator(presets.gates(np.int32(4), "cpu", gate_width=np.float32(1.0),
                                           max_gates=np.int16(8)), seeds=1)
    assert gates.layout.gates == 8
    c = Course.gates(presets.gates(4, "cpu", gate_width=1.0), collision=np.float32(0.05), seeds=1)
    assert c.num_envs == 4


# ---------------------------------------------------------------------------------------------
# 6. huge finite poses are treated like NaN poses (that env only)
def _track_course(mode):
    E = 4
    course = Course.track(presets.track(E, "cpu"), checkpoint_spacing=1.0, collision=mode, seeds=1)
    r = course.generator.result
    start, yaw = r.start_pos.numpy(), r.start_yaw.numpy()
    pos = wp.array(start, dtype=wp.vec3f)
    quat = wp.array(np.stack([0 * yaw, 0 * yaw, np.sin(yaw / 2), np.cos(yaw / 2)], 1), dtype=wp.quatf)
    ext = wp.full(E, wp.vec2f(0.2, 0.1), dtype=wp.vec2f)
    course.bind(position=pos, orientation=quat, half_extents=ext)
    return course, pos, quat, start


@pytest.mark.parametrize("mode", ["segments", "sdf"])
def test_huge_position_is_a_non_finite_pose(mode):
    course, pos, quat, start = _track_course(mode)
    ok = course.step().contacts.clearance.numpy().copy()
    bad = start.copy()
    bad[1] = (1e30, 1e30, 0.0)
    pos.assign(bad)
    c = course.step().contacts
    clearance, depth, hit, idx = (c.clearance.numpy(), c.depth.numpy(), c.hit.numpy(), c.index.numpy())
    assert np.all(np.isfinite(clearance)) and np.all(np.isfinite(depth))
    assert (hit[1], depth[1], clearance[1], idx[1]) == (1, 0.0, 0.0, -1)
    assert np.array_equal(clearance[[0, 2, 3]], ok[[0, 2, 3]])


def test_unnormalisable_quaternion_is_a_non_finite_pose():
    E = 2
    course = Course.gates(presets.gates(E, "cpu", gate_width=1.0), collision=0.05, seeds=1)
    start = course.generator.result.start_pos.numpy()
    pos = wp.array(start, dtype=wp.vec3f)
    q = np.tile(np.array([0.0, 0.0, 0.0, 1.0], np.float32), (E, 1))
    q[0] = (0.0, 0.0, 1e30, 1e30)
    quat = wp.array(q, dtype=wp.quatf)
    course.bind(position=pos, orientation=quat, half_extents=wp.full(E, wp.vec2f(0.1, 0.1), dtype=wp.vec2f))
    c = course.step().contacts
    n = c.normal.numpy()
    assert np.all(np.isfinite(n)) and np.all(np.isfinite(c.clearance.numpy()))
    assert (c.hit.numpy()[0], c.depth.numpy()[0], c.index.numpy()[0]) == (1, 0.0, -1)
    # a scaled (unnormalised) quaternion is the same rotation: same result as the unit one
    q2 = q.copy()
    q2[0] = (0.0, 0.0, 0.0, 1.0)
    quat.assign(q2)
    unit = course.step().contacts.clearance.numpy().copy()
    q2[0] *= 3.0
    quat.assign(q2)
    assert np.allclose(course.step().contacts.clearance.numpy(), unit, rtol=0.0, atol=1e-6)
    q2[0] = 0.0                                  # the zero quaternion is no rotation at all
    quat.assign(q2)
    assert (course.step().contacts.hit.numpy()[0], course.step().contacts.index.numpy()[0]) == (1, -1)


# ---------------------------------------------------------------------------------------------
# 7. one rule for integers: exact ints in range, or refused
@pytest.mark.parametrize("seeds", [2**31, -1, 2**40, 1.7, "7", True])
def test_unrepresentable_seed_is_refused(seeds):
    with pytest.raises((TypeError, ValueError), match="seeds"):
        tg.TrackGenerator(presets.track(2, "cpu"), seeds=seeds)


@pytest.mark.parametrize("offset", [2**32, -1, 1.7, 2**31])
def test_unrepresentable_env_offset_is_refused(offset):
    with pytest.raises((TypeError, ValueError), match="env_offset"):
        tg.TrackGenerator(presets.track(2, "cpu"), seeds=3, env_offset=offset)


def test_integral_numpy_and_edge_seeds_are_accepted():
    a = tg.TrackGenerator(presets.track(2, "cpu"), seeds=2**31 - 1, env_offset=np.int64(0))
    b = tg.TrackGenerator(presets.track(2, "cpu"), seeds=np.int32(2**31 - 1))
    c = tg.TrackGenerator(presets.track(2, "cpu"), seeds=float(2**31 - 1), env_offset=0.0)   # integral floats
    assert a.seeds.seeds.numpy().tobytes() == b.seeds.seeds.numpy().tobytes() == c.seeds.seeds.numpy().tobytes()


# ---------------------------------------------------------------------------------------------
# 8. guards
def test_gate_width_guard_covers_randomizers():
    course = Course.gates(presets.gates(4, "cpu", gate_width=1.0), collision=0.05, seeds=1)
    with pytest.raises(ValueError, match="gate_width"):
        course.generator.randomizers["gate_frames.gate_width"] = (0.0, 1e-9)
    assert "gate_frames.gate_width" not in course.generator.randomizers


@pytest.mark.parametrize("advance", ["no", 1, 0])
def test_advance_takes_bools_only(advance):
    g = tg.TrackGenerator(presets.track(2, "cpu"), seeds=0)
    with pytest.raises(TypeError, match="advance"):
        g.enqueue(advance=advance)
    assert np.all(g.generation.numpy() == 0)
    course = Course.track(presets.track(2, "cpu"), checkpoint_spacing=1.0, seeds=1)
    with pytest.raises(TypeError, match="advance"):
        course.regenerate(advance=advance)


@pytest.mark.parametrize("field, value", [("max_grade", -1.0), ("base_height", float("nan")),
                                          ("height_amplitude", "x"), ("max_grade", 1e39)])
def test_elevation_fields_checked_when_flat(field, value):
    with pytest.raises((TypeError, ValueError), match=field):
        presets.track(2, "cpu", elevated=False, **{field: value})


def test_enqueue_with_a_positional_device_is_refused_clearly():
    g = tg.TrackGenerator(presets.track(2, "cpu"), seeds=0)
    with pytest.raises(TypeError, match="enqueue"):
        g.enqueue("cpu")
    assert np.all(g.generation.numpy() == 0)


# ---------------------------------------------------------------------------------------------
# every field: refused with its name, or every valid course is finite and checks out
BAD_VALUES = st.sampled_from([
    0.0, -0.0, -1.0, 1e-30, 1e-6, 0.5, 2.0, 1e6, 3.5e38, 1e39, -1e39, float("nan"), float("inf"),
    float("-inf"), 2**31, 2**63, np.float32(0.7), np.int64(3), np.float64(1e39), "abc", None, True, (1.0, 2.0),
])
TRACK_FIELDS = ["size", "num_points", "control_points", "radius_min", "radius_max", "angle_jitter", "half_width",
                "half_width_variation", "min_turn_radius", "clearance", "min_length", "max_length", "max_attempts",
                "base_height", "height_amplitude", "max_grade"]
GATE_FIELDS = ["size", "min_gates", "max_gates", "min_spacing", "max_spacing", "height_min", "height_max",
               "yaw_jitter", "max_turn", "spacing_jitter", "radius_min", "radius_max", "angle_jitter",
               "control_points", "max_attempts", "gate_width", "gate_height", "frame_thickness"]


def _named(err: BaseException, *names: str) -> bool:
    return any(n in str(err) for n in names)


def _accepted_tracks_check_out(gen) -> None:
    r = gen.result
    valid = r.valid.numpy() == 1
    for name in ("xy", "half_width", "z", "tangent", "normal", "s", "curvature", "length", "start_pos"):
        a = getattr(r, name).numpy()[valid]
        assert np.all(np.isfinite(a)), f"{name}: non-finite values in a valid course"
    check_tracks(gen)


def _accepted_gates_check_out(gen) -> None:
    r = gen.result
    valid = r.valid.numpy() == 1
    for name in ("pos", "yaw", "normal", "width", "height", "thickness", "length", "start_pos"):
        a = getattr(r, name).numpy()[valid]
        assert np.all(np.isfinite(a)), f"{name}: non-finite values in a valid course"
    check_gates(gen)


HYP = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@HYP
@given(field=st.sampled_from(TRACK_FIELDS), value=BAD_VALUES, elevated=st.booleans(),
       how=st.sampled_from(["config", "param", "randomize"]))
def test_every_track_field(field, value, elevated, how):
    gname = {"height_amplitude": "amplitude"}.get(field, field)
    stage = "elevation" if field in ("base_height", "height_amplitude", "max_grade") else "centerline"
    try:
        if how == "config":
            gen = tg.TrackGenerator(presets.track(8, "cpu", elevated=elevated, **{field: value}), seeds=1)
        else:
            gen = tg.TrackGenerator(presets.track(8, "cpu", elevated=elevated), seeds=1)
            key = f"{stage}.{gname}"
            gen.params[key] = value      # the reference checks against the base value...
            if how == "randomize":       # ...which a degenerate range (v, v) draws for every env
                gen.randomizers[key] = (value, value) if not isinstance(value, tuple) else value
            gen.enqueue(advance=True)
    except (TypeError, ValueError, KeyError) as err:
        assert _named(err, field, gname), f"refusal does not name {field}: {err}"
        return
    _accepted_tracks_check_out(gen)


@HYP
@given(field=st.sampled_from(GATE_FIELDS), value=BAD_VALUES, how=st.sampled_from(["config", "param", "randomize"]))
def test_every_gate_field(field, value, how):
    stage = "gate_frames" if field in ("gate_width", "gate_height", "frame_thickness") else "gates"
    try:
        if how == "config":
            kw = {"gate_width": 1.0, field: value}
            gen = tg.GateGenerator(presets.gates(8, "cpu", **kw), seeds=1)
        else:
            gen = tg.GateGenerator(presets.gates(8, "cpu", gate_width=1.0), seeds=1)
            key = f"{stage}.{field}"
            gen.params[key] = value
            if how == "randomize":
                gen.randomizers[key] = (value, value) if not isinstance(value, tuple) else value
            gen.enqueue(advance=True)
    except (TypeError, ValueError, KeyError) as err:
        assert _named(err, field), f"refusal does not name {field}: {err}"
        return
    _accepted_gates_check_out(gen)


@HYP
@given(points=st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True, width=32),
                                 st.floats(allow_nan=True, allow_infinity=True, width=32)),
                       min_size=6, max_size=6),
       scale=st.sampled_from([1.0, 1e-3, 1e10, 1e30]))
def test_every_hand_drawn_input(points, scale):
    pts = np.asarray(points, np.float64) * scale
    with np.errstate(over="ignore", invalid="ignore"):
        pts32 = pts.astype(np.float32)
    g = tg.TrackGenerator(presets.track_from_points(1, "cpu", control_points=6, size=1e3, max_length=1e4,
                                                    min_length=0.0), seeds=0)
    g.inputs["centerline.points"].assign(pts32[None])
    g.enqueue(advance=True)
    r = g.result
    if r.valid.numpy()[0] == 1:
        for name in ("xy", "half_width", "tangent", "normal", "s", "curvature", "length", "start_pos"):
            assert np.all(np.isfinite(getattr(r, name).numpy()[0])), f"{name}: non-finite in a valid course"
        kw = {n: g.params[f"centerline.{n}"] for n in ("size", "min_turn_radius", "clearance", "min_length",
                                                        "max_length")}
        assert not track_violations(r.xy.numpy()[0], r.half_width.numpy()[0], **kw, rel_tol=1e-4)
    if not np.all(np.isfinite(pts32)):
        assert g.result.valid.numpy()[0] == 0
        assert g.result.status.numpy()[0] & int(tg.TrackStatus.NONFINITE)
