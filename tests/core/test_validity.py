"""Generated courses against the independent float64 numpy reference (``tests/core/reference.py``).

* every course the library calls valid satisfies every constraint of the contract, and every
  course it rejects violates at least one; its status bits name the violated constraints;
* the valid fraction at default settings is high;
* the derived outputs (tangents, normals, arc length, curvature, length, start pose, gate
  normals and frame sizes) match the definitions;
* no output of a valid course holds NaN/inf, and every output row is rewritten by a generation.

Run ``pytest -s`` to see the valid fractions. Comparisons shade bounds by ``TOL`` (relative):
``+TOL`` (lenient) when confirming an accepted course, ``-TOL`` (strict) when confirming a
rejection, so float32 round-off right at a bound cannot fail a test.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen.pipeline import presets

from .reference import band_reference, gate_normals, gate_violations, seg_seg_dist, track_violations, wrap_angle

TOL = 1e-4
TRACK_NAMES = {b.name for b in tg.TrackStatus if b}
GATE_NAMES = {b.name for b in tg.GateStatus if b}
CENTERLINE_NAMES = {"LENGTH", "BOUNDS", "TURN", "OVERLAP", "DEGENERATE"}


def bit_names(bits: int, flags) -> set[str]:
    return {b.name for b in flags if b and int(bits) & int(b)}


def _vec(a: wp.array) -> np.ndarray:
    return a.numpy().astype(np.float64)


# ---------------------------------------------------------------------------------------------
# checking whole generators against the reference
def track_kwargs(gen) -> tuple[dict, float | None]:
    p = gen.params
    kw = {n: p[f"centerline.{n}"] for n in ("size", "min_turn_radius", "clearance", "min_length", "max_length")}
    grade = p["elevation.max_grade"] if "elevation.z" in gen.outputs() else None
    return kw, grade


def check_tracks(gen) -> tuple[np.ndarray, Counter]:
    """Check every env of a track generator; returns the valid mask and a Counter of the
    library's failure names over the rejected envs. Asserts, per env:

    valid: the lenient checker finds nothing and the status is 0;
    invalid: the strict checker finds something; every status bit names a (nearly) violated
    constraint; every clearly violated constraint is in the status (OVERLAP only when no other
    centerline bit is set: the library skips the overlap test once a draw has failed).
    """
    r = gen.result
    kw, grade = track_kwargs(gen)
    xy, hw, z = _vec(r.xy), _vec(r.half_width), _vec(r.z)
    valid, status, attempts = r.valid.numpy(), r.status.numpy(), r.attempts.numpy()
    assert set(np.unique(valid)) <= {0, 1}
    assert np.array_equal(valid == 1, status == 0), "status 0 if and only if valid"
    assert np.all((attempts >= 1) & (attempts <= gen.params["centerline.max_attempts"]))
    if grade is None:
        assert np.all(z == 0.0), "a flat track has z == 0"
    problems, names = [], Counter()
    for e in range(gen.num_envs):
        zkw = {"z": z[e], "max_grade": grade} if grade is not None else {}
        lib = bit_names(status[e], tg.TrackStatus)
        lenient = track_violations(xy[e], hw[e], **kw, **zkw, rel_tol=TOL)
        if valid[e]:
            if lenient or lib:
                problems.append(f"env {e}: valid, but the checker finds {lenient} (status {lib})")
            continue
        names.update(lib)
        strict = track_violations(xy[e], hw[e], **kw, **zkw, rel_tol=-TOL)
        if not strict:
            problems.append(f"env {e}: invalid (status {lib}), but the checker finds no violation")
        if not lib <= strict:
            problems.append(f"env {e}: status {lib} names constraints that hold (checker: {strict})")
        missing = lenient - lib
        if lib & (CENTERLINE_NAMES - {"OVERLAP"}):
            missing.discard("OVERLAP")
        if missing:
            problems.append(f"env {e}: status {lib} misses violated {missing}")
    assert not problems, f"{len(problems)} envs disagree, e.g.:\n" + "\n".join(problems[:8])
    return valid.astype(bool), names


def gate_kwargs(gen, e, width, thickness) -> dict:
    p = gen.params
    kw = {n: p[f"gates.{n}"] for n in ("size", "min_spacing", "max_spacing", "max_turn")}
    kw.update(closed=bool(p["gates.closed"]), gate_width=float(width[e]), thickness=float(thickness[e]),
              gate_height=p["gate_frames.gate_height"])
    return kw


def check_gates(gen) -> tuple[np.ndarray, Counter]:
    """Check every env of a gate generator (same contract as :func:`check_tracks`; every bit is
    evaluated by the library, so the status must equal the violated set up to the tolerance)."""
    r = gen.result
    pos, yaw = _vec(r.pos), _vec(r.yaw)
    count, valid, status = r.count.numpy(), r.valid.numpy(), r.status.numpy()
    width, thickness = r.width.numpy(), r.thickness.numpy()
    p = gen.params
    assert set(np.unique(valid)) <= {0, 1}
    assert np.array_equal(valid == 1, status == 0), "status 0 if and only if valid"
    assert np.all((count >= p["gates.min_gates"]) & (count <= p["gates.max_gates"]))
    problems, names = [], Counter()
    for e in range(gen.num_envs):
        kw = gate_kwargs(gen, e, width, thickness)
        lib = bit_names(status[e], tg.GateStatus)
        lenient = gate_violations(pos[e], yaw[e], count[e], **kw, tol=TOL)
        extra = lenient - GATE_NAMES  # PADDING, COUNT, NONFINITE: never allowed, valid or not
        if extra:
            problems.append(f"env {e}: {extra}")
        if valid[e]:
            if lenient or lib:
                problems.append(f"env {e}: valid, but the checker finds {lenient} (status {lib})")
            continue
        names.update(lib)
        strict = gate_violations(pos[e], yaw[e], count[e], **kw, tol=-TOL)
        if not strict:
            problems.append(f"env {e}: invalid (status {lib}), but the checker finds no violation")
        if not (lenient <= lib <= strict):
            problems.append(f"env {e}: status {lib}, checker {lenient} (strict {strict})")
    assert not problems, f"{len(problems)} envs disagree, e.g.:\n" + "\n".join(problems[:8])
    return valid.astype(bool), names


def assert_new_courses(before: np.ndarray, after: np.ndarray):
    changed = np.any(before.reshape(len(before), -1) != after.reshape(len(after), -1), axis=1)
    assert changed.mean() > 0.99, "enqueue(advance=True) should draw new courses"


# ---------------------------------------------------------------------------------------------
# the reference itself, on shapes with known answers
def circle(r, n=256, center=(0.0, 0.0)):
    phi = 2.0 * np.pi * np.arange(n) / n
    return np.stack([center[0] + r * np.cos(phi), center[1] + r * np.sin(phi)], axis=1), phi


CIRCLE_KW = dict(size=10.0, min_turn_radius=0.6, clearance=0.1, min_length=10.0, max_length=40.0)


def test_reference_on_known_tracks():
    xy, phi = circle(3.0)
    hw = np.full(len(xy), 0.4)
    assert track_violations(xy, hw, **CIRCLE_KW) == set()
    t, n, s, k, length = band_reference(xy)
    dphi = 2 * np.pi / len(xy)
    chord = 2 * 3.0 * math.sin(dphi / 2)
    np.testing.assert_allclose(t, np.stack([-np.sin(phi), np.cos(phi)], 1), atol=1e-12)
    np.testing.assert_allclose(n, -np.stack([np.cos(phi), np.sin(phi)], 1), atol=1e-12)  # left of CCW: inward
    np.testing.assert_allclose(s, chord * np.arange(len(xy)), rtol=1e-12)
    np.testing.assert_allclose(k, dphi / chord, rtol=1e-12)
    assert length == pytest.approx(len(xy) * chord, rel=1e-12)
    _, _, _, k_cw, _ = band_reference(xy[::-1])
    np.testing.assert_allclose(k_cw, -dphi / chord, rtol=1e-12)  # clockwise: negative curvature

    assert track_violations(xy, hw, **{**CIRCLE_KW, "max_length": 15.0}) == {"LENGTH"}
    assert track_violations(xy, hw, **{**CIRCLE_KW, "min_length": 20.0}) == {"LENGTH"}
    assert track_violations(circle(3.0, center=(1.7, 0.0))[0], hw, **CIRCLE_KW) == {"BOUNDS"}
    small = circle(1.0)[0]
    assert track_violations(small, hw, **{**CIRCLE_KW, "min_length": 0.0}) == set()
    assert track_violations(small, hw, **{**CIRCLE_KW, "min_length": 0.0, "min_turn_radius": 1.5}) == {"TURN"}
    # R is at least the widest half width
    assert track_violations(small, np.full(len(xy), 1.2), **{**CIRCLE_KW, "min_length": 0.0}) == {"TURN"}
    # a figure eight crosses itself: overlap (its lobes are wide enough for the turn bound)
    u = 2 * np.pi * np.arange(256) / 256
    eight = np.stack([4.0 * np.sin(u), 2.0 * np.sin(2 * u)], axis=1)
    assert "OVERLAP" in track_violations(eight, np.full(256, 0.2), **{**CIRCLE_KW, "min_turn_radius": 0.0})
    # a long thin stadium: straights 1.0 apart, band 2 * 0.4 + clearance 0.1 = 0.9 fits, 0.5 wide does not
    for half_w, overlap in ((0.4, False), (0.5, True)):
        top = np.stack([np.linspace(-4, 4, 100), np.full(100, 0.5)], 1)  # left to right at y = 0.5
        a = np.linspace(0, np.pi, 30)[1:-1]
        right = np.stack([4 + 0.5 * np.sin(a), 0.5 * np.cos(a)], 1)  # half circles of radius 0.5
        loop = np.concatenate([top, right, -top, -right])  # a clockwise loop
        got = track_violations(loop, np.full(len(loop), half_w), **{**CIRCLE_KW, "min_turn_radius": 0.0,
                                                                      "min_length": 0.0})
        assert ("OVERLAP" in got) == overlap, (half_w, got)
    # elevation
    z = 1.0 + 0.4 * np.sin(phi)  # |dz/ds| <= 0.4 / 3 < 0.15
    assert track_violations(xy, hw, **CIRCLE_KW, z=z, max_grade=0.15) == set()
    assert track_violations(xy, hw, **CIRCLE_KW, z=z - 1.3, max_grade=0.15) == {"GROUND"}
    assert track_violations(xy, hw, **CIRCLE_KW, z=1.0 + 0.5 * np.sin(phi), max_grade=0.15) == {"GRADE"}
    bad = xy.copy()
    bad[7, 1] = np.nan
    assert track_violations(bad, hw, **CIRCLE_KW) == {"NONFINITE"}
    rep = np.concatenate([xy[:5], xy[4:]])
    assert "DEGENERATE" in track_violations(rep, np.full(len(rep), 0.4), **CIRCLE_KW)


def test_reference_tolerance_semantics():
    xy, _ = circle(3.0)
    hw = np.full(len(xy), 0.4)
    # rightmost band edge at exactly size/2 * (1 + 5e-5): lenient passes it, strict refuses it
    shifted = xy + np.array([5.0 * (1 + 5e-5) - 3.4, 0.0])
    assert track_violations(shifted, hw, **CIRCLE_KW, rel_tol=1e-4) == set()
    assert track_violations(shifted, hw, **CIRCLE_KW, rel_tol=0.0) == {"BOUNDS"}
    assert track_violations(xy, hw, **CIRCLE_KW, rel_tol=-1e-4) == set()


def test_reference_seg_seg_dist():
    rng = np.random.default_rng(0)
    a0, a1, b0, b1 = (rng.uniform(-1, 1, (100, 2)) for _ in range(4))
    d = seg_seg_dist(a0, a1, b0, b1)
    u = np.linspace(0, 1, 201)
    pa = a0[:, None, :] + (a1 - a0)[:, None, :] * u[None, :, None]
    pb = b0[:, None, :] + (b1 - b0)[:, None, :] * u[None, :, None]
    brute = np.linalg.norm(pa[:, :, None, :] - pb[:, None, :, :], axis=-1).min(axis=(1, 2))
    assert np.all(d <= brute + 1e-12)
    assert np.all(brute - d <= 2.9 / 200)  # sampling error of the brute force only
    assert seg_seg_dist(np.array([0.0, 0]), np.array([2.0, 0]), np.array([3.0, 0]), np.array([5.0, 0])) == 1.0


GATE_KW = dict(closed=True, size=10.0, min_spacing=1.5, max_spacing=6.0, max_turn=1.2, gate_width=1.0,
               gate_height=0.0, thickness=0.05)


def test_reference_on_known_gates():
    g, cap = 8, 10
    phi = 2 * np.pi * np.arange(g) / g
    pos = np.zeros((cap, 3))
    pos[:g] = np.stack([3 * np.cos(phi), 3 * np.sin(phi), np.full(g, 1.5)], 1)
    yaw = np.zeros(cap)
    yaw[:g] = wrap_angle(phi + np.pi / 2)
    assert gate_violations(pos, yaw, g, **GATE_KW) == set()

    def bad(change, **kw):
        p, y = pos.copy(), yaw.copy()
        change(p, y)
        return gate_violations(p, y, g, **{**GATE_KW, **kw})

    assert bad(lambda p, y: y.__setitem__(3, y[3] + np.pi)) == {"TURN"}
    assert bad(lambda p, y: None, max_turn=0.3) == {"TURN"}
    assert bad(lambda p, y: p.__setitem__((2, 2), 0.5)) == {"GROUND"}
    assert bad(lambda p, y: None, gate_height=2.8) == set()  # bottom at 1.5 - 1.4 - 0.05 >= 0
    assert bad(lambda p, y: None, gate_height=3.0) == {"GROUND"}
    assert bad(lambda p, y: p.__setitem__((2, 2), 1.0), gate_width=2.0) == {"GROUND"}  # height 0: h = width
    assert bad(lambda p, y: p.__setitem__(slice(0, g), p[:g] * [1.5, 1.5, 1]), max_spacing=10.0) == {"BOUNDS"}
    assert bad(lambda p, y: None, size=6.0) == {"BOUNDS"}
    assert bad(lambda p, y: None, min_spacing=2.5) == {"SPACING", "CROWDED"}
    assert bad(lambda p, y: None, max_spacing=2.0) == {"SPACING"}
    assert bad(lambda p, y: None, gate_width=2.3) == {"CROWDED"}  # 2.3 + 0.1 > 2.296, the chord
    assert bad(lambda p, y: p.__setitem__(g, [0.0, 0.0, 0.1])) == {"PADDING"}
    assert bad(lambda p, y: y.__setitem__(g + 1, 0.5)) == {"PADDING"}
    assert bad(lambda p, y: p.__setitem__((1, 0), np.inf)) == {"NONFINITE"}
    assert bad(lambda p, y: None, gate_width=0.0) == {"OPENING"}
    assert gate_violations(pos, yaw, 1, **GATE_KW) == {"COUNT"}
    np.testing.assert_allclose(gate_normals(yaw)[:g, :2], np.stack([-np.sin(phi), np.cos(phi)], 1), atol=1e-12)
    # an open course has no closing leg: half a circle is a fine sprint, not a loop
    a = np.pi * np.arange(5) / 4
    half = np.zeros((cap, 3))
    half[:5] = np.stack([3 * np.cos(a), 3 * np.sin(a), np.full(5, 1.5)], 1)
    hyaw = np.zeros(cap)
    hyaw[:5] = wrap_angle(a + np.pi / 2)
    assert gate_violations(half, hyaw, 5, **{**GATE_KW, "closed": False}) == set()
    assert gate_violations(half, hyaw, 5, **GATE_KW) >= {"TURN"}  # the closing leg turns by pi / 2


# ---------------------------------------------------------------------------------------------
# valid courses pass; one advanced generation too
TRACK_CASES = {
    "default": ({}, 1500),
    "width_variation": ({"half_width_variation": 0.3}, 1000),
    "elevated": ({"elevated": True}, 1000),
}


@pytest.mark.parametrize("case", list(TRACK_CASES))
def test_valid_tracks_pass_the_checker(device, case):
    kw, num_envs = TRACK_CASES[case]
    gen = tg.TrackGenerator(presets.track(num_envs, device, **kw), seeds=42)
    for generation in range(2):
        valid, _ = check_tracks(gen)
        assert valid.mean() > 0.95, f"{case}: too few valid courses to test ({valid.mean():.3f})"
        if generation == 0:
            before = gen.result.xy.numpy().copy()
            gen.enqueue(advance=True)
            assert np.all(gen.generation.numpy() == 1)
    assert_new_courses(before, gen.result.xy.numpy())


GATE_CASES = {"closed": {}, "sprint": {"closed": False}}


@pytest.mark.parametrize("case", list(GATE_CASES))
def test_valid_gates_pass_the_checker(device, case):
    gen = tg.GateGenerator(presets.gates(1500, device, gate_width=1.0, **GATE_CASES[case]), seeds=1)
    for generation in range(2):
        valid, _ = check_gates(gen)
        assert valid.mean() > 0.95, f"{case}: too few valid courses to test ({valid.mean():.3f})"
        if generation == 0:
            before = gen.result.pos.numpy().copy()
            gen.enqueue(advance=True)
    assert_new_courses(before, gen.result.pos.numpy())


# ---------------------------------------------------------------------------------------------
# invalid courses fail, with the right status bits
HARSH_TRACKS = {
    "turn": ({"min_turn_radius": 1.5, "max_attempts": 1}, {"TURN"}),
    "overlap": ({"half_width": 0.2, "min_turn_radius": 0.0, "clearance": 2.0, "radius_min": 0.0,
                 "max_attempts": 1}, {"OVERLAP", "TURN"}),
    "length": ({"size": 16.0, "max_attempts": 1}, {"LENGTH"}),
    "wide_varying": ({"half_width": 0.6, "half_width_variation": 0.9, "radius_min": 0.0, "clearance": 0.4,
                      "max_attempts": 1}, {"TURN", "LENGTH"}),
    "ground": ({"elevated": True, "base_height": 0.1, "max_attempts": 1}, {"GROUND"}),
    # a band wider than the square: the control-point square (half side size/2 - half width)
    # turns negative; the only way to reach BOUNDS, which the construction otherwise rules out
    "bounds": ({"size": 6.0, "half_width": 3.1, "min_length": 0.0, "max_attempts": 1}, {"BOUNDS", "TURN"}),
}


@pytest.mark.parametrize("case", list(HARSH_TRACKS))
def test_invalid_tracks_fail_the_checker(device, case):
    kw, expected = HARSH_TRACKS[case]
    gen = tg.TrackGenerator(presets.track(400, device, **kw), seeds=5)
    valid, names = check_tracks(gen)
    assert (~valid).sum() >= 4, f"{case}: the harsh settings should reject some courses"
    assert np.all(gen.result.attempts.numpy() == 1)
    assert expected <= set(names), f"{case}: expected failures {expected}, got {dict(names)}"


HARSH_GATES = {
    "closed": ({"max_attempts": 1, "max_turn": 0.5, "yaw_jitter": 0.6, "min_spacing": 2.5, "max_spacing": 3.5,
                "height_min": 0.3, "size": 8.0}, {"SPACING", "CROWDED", "TURN", "GROUND"}),
    "sprint": ({"max_attempts": 1, "closed": False, "max_turn": 0.4, "min_spacing": 2.0, "max_spacing": 3.0,
                "height_min": 0.2}, {"SPACING", "CROWDED", "TURN", "GROUND"}),
    "tall": ({"max_attempts": 1, "gate_height": 2.0, "height_min": 0.5, "min_gates": 8, "max_gates": 14},
             {"GROUND", "SPACING"}),
    # frames wider than the square: the only way to reach BOUNDS
    "bounds": ({"size": 4.0, "gate_width": 4.5, "gate_height": 0.5, "max_attempts": 1}, {"BOUNDS", "CROWDED"}),
}


@pytest.mark.parametrize("case", list(HARSH_GATES))
def test_invalid_gates_fail_the_checker(device, case):
    kw, expected = HARSH_GATES[case]
    gen = tg.GateGenerator(presets.gates(600, device, **{"gate_width": 1.0, **kw}), seeds=5)
    valid, names = check_gates(gen)
    assert (~valid).sum() >= 10, f"{case}: the harsh settings should reject some courses"
    assert expected <= set(names), f"{case}: expected failures {expected}, got {dict(names)}"


def test_elevated_status_names_ground_failures(device):
    # regression: TrackResult.status once carried the centerline's bits only, so a course the
    # elevation stage rejected (GROUND/GRADE) reported status 0 with valid = 0
    gen = tg.TrackGenerator(presets.track(200, device, elevated=True, base_height=0.1, max_attempts=1), seeds=3)
    r = gen.result
    invalid = r.valid.numpy() == 0
    assert invalid.any()
    status = r.status.numpy()
    assert np.all(status[invalid] != 0), "status 0 means a valid course"
    assert np.any(status & int(tg.TrackStatus.GROUND))


def test_gates_without_opening_are_refused(device):
    gen = tg.GateGenerator(presets.gates(64, device, gate_width=0.0), seeds=3)
    valid, names = check_gates(gen)
    assert not valid.any() and names["OPENING"] == 64


# ---------------------------------------------------------------------------------------------
# valid fraction at default settings
def test_valid_fraction_at_defaults(device):
    tracks = tg.TrackGenerator(presets.track(10_000, device), seeds=2024)
    gates = tg.GateGenerator(presets.gates(10_000, device, gate_width=1.0), seeds=2024)
    ft, fg = tracks.valid_fraction(), gates.valid_fraction()
    at, ag = tracks.result.attempts.numpy().mean(), gates.result.attempts.numpy().mean()
    print(f"\nvalid fraction over 10,000 envs: tracks {ft:.4f} (mean attempts {at:.2f}), "
          f"gates {fg:.4f} (mean attempts {ag:.2f})")
    assert ft >= 0.99 and fg >= 0.99
    assert np.array_equal(tracks.result.valid.numpy() == 1, tracks.result.status.numpy() == 0)
    check_gates(gates)  # all 10,000 gate courses (cheap)
    # a random sample of the tracks (the overlap test is O(N^2) per env in numpy)
    sample = np.random.default_rng(0).choice(10_000, 400, replace=False)
    r = tracks.result
    kw, _ = track_kwargs(tracks)
    xy, hw, valid = _vec(r.xy), _vec(r.half_width), r.valid.numpy()
    bad = [e for e in sample if valid[e] and track_violations(xy[e], hw[e], **kw, rel_tol=TOL)]
    assert not bad


# ---------------------------------------------------------------------------------------------
# derived outputs
@pytest.mark.parametrize("case", ["default", "width_variation", "elevated"])
def test_derived_track_outputs(device, case):
    kw, _ = TRACK_CASES[case]
    gen = tg.TrackGenerator(presets.track(300, device, **kw), seeds=11)
    gen.enqueue(advance=True)
    r = gen.result
    xy32, z32 = r.xy.numpy(), r.z.numpy()
    xy = xy32.astype(np.float64)
    tan, nrm, s, curv, length = (_vec(a) for a in (r.tangent, r.normal, r.s, r.curvature, r.length))
    start_pos, start_yaw = r.start_pos.numpy(), _vec(r.start_yaw)
    for e in range(gen.num_envs):
        t, n, s_ref, k, total = band_reference(xy[e])
        np.testing.assert_allclose(tan[e], t, atol=2e-6, err_msg=f"tangent env {e}")
        np.testing.assert_allclose(nrm[e], n, atol=2e-6, err_msg=f"normal env {e}")
        np.testing.assert_allclose(s[e], s_ref, atol=1e-5 * total, rtol=0, err_msg=f"s env {e}")
        np.testing.assert_allclose(curv[e], k, atol=1e-5, rtol=1e-5, err_msg=f"curvature env {e}")
        assert length[e] == pytest.approx(total, rel=1e-5)
        assert abs(wrap_angle(start_yaw[e] - math.atan2(t[0, 1], t[0, 0]))) < 2e-6
        # bitwise: the start pose is point 0 with its height
        assert start_pos[e].tolist() == [xy32[e, 0, 0], xy32[e, 0, 1], z32[e, 0]]
    np.testing.assert_allclose(np.linalg.norm(tan, axis=-1), 1.0, atol=1e-6)
    assert np.all(np.diff(s, axis=1) > 0) and np.all(s[:, 0] == 0)
    if case == "elevated":
        p = gen.params
        amp, base = p["elevation.amplitude"], p["elevation.base_height"]
        assert np.all(np.abs(z32 - base) <= amp * (1 + 1e-5)) and np.ptp(z32, axis=1).min() > 0
    else:
        assert np.all(z32 == 0)


@pytest.mark.parametrize("gate_height", [0.0, 1.4])
def test_derived_gate_outputs(device, gate_height):
    ranges = {"gate_frames.gate_width": (0.6, 1.2), "gate_frames.frame_thickness": (0.02, 0.08)}
    spec = presets.gates(400, device, gate_width=1.0, gate_height=gate_height).with_randomize(ranges)
    gen = tg.GateGenerator(spec, seeds=9)
    for generation in range(2):
        r = gen.result
        yaw = _vec(r.yaw)
        np.testing.assert_allclose(_vec(r.normal), gate_normals(yaw), atol=2e-6)
        width, height, thick = r.width.numpy(), r.height.numpy(), r.thickness.numpy()
        assert np.all((width >= 0.6) & (width <= 1.2)) and np.ptp(width) > 0.3
        assert np.all((thick >= 0.02) & (thick <= 0.08)) and np.ptp(thick) > 0.03
        np.testing.assert_array_equal(height, width if gate_height == 0 else np.float32(gate_height))
        pos, count, length = r.pos.numpy().astype(np.float64), r.count.numpy(), _vec(r.length)
        start = r.start_pos.numpy()
        assert np.array_equal(start[:, 2], r.pos.numpy()[:, 0, 2]), "start height is gate 0's"
        for e in range(gen.num_envs):
            # gates sit in order on the path: their horizontal legs are chords of its length
            q = pos[e, : count[e], :2]
            legs = np.linalg.norm(np.diff(np.concatenate([q, q[:1]]), axis=0), axis=1).sum()
            assert legs <= length[e] * (1 + 1e-5)
        check_gates(gen)  # with each env's own width and thickness
        gen.enqueue(advance=True)


# ---------------------------------------------------------------------------------------------
# random parameters within the documented bounds
HYP = settings(max_examples=15, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@HYP
@given(
    size=st.floats(6.0, 20.0),
    half_width=st.floats(0.1, 1.0),
    min_turn_radius=st.floats(0.0, 2.0),
    clearance=st.floats(0.0, 1.0),
    half_width_variation=st.floats(0.0, 0.9),
    elevated=st.booleans(),
    max_attempts=st.sampled_from([1, 4, 16]),
    seed=st.integers(0, 2**20),
)
def test_random_track_params(device, size, half_width, min_turn_radius, clearance, half_width_variation,
                             elevated, max_attempts, seed):
    spec = presets.track(64, device, size=size, half_width=half_width, min_turn_radius=min_turn_radius,
                         clearance=clearance, half_width_variation=half_width_variation, elevated=elevated,
                         max_attempts=max_attempts)
    check_tracks(tg.TrackGenerator(spec, seeds=seed))


@HYP
@given(
    size=st.floats(6.0, 20.0),
    min_spacing=st.floats(0.5, 2.5),
    spacing_range=st.floats(0.5, 6.0),
    clearance_above=st.floats(-0.2, 1.5),
    height_range=st.floats(0.0, 2.0),
    yaw_jitter=st.floats(0.0, 1.0),
    max_turn=st.floats(0.4, 3.1416),
    gate_width=st.floats(0.3, 1.6),
    closed=st.booleans(),
    max_attempts=st.sampled_from([1, 4, 16]),
    seed=st.integers(0, 2**20),
)
def test_random_gate_params(device, size, min_spacing, spacing_range, clearance_above, height_range, yaw_jitter,
                            max_turn, gate_width, closed, max_attempts, seed):
    # the lowest gate centre is drawn relative to the lowest allowed one (half the frame above
    # ground), so examples mix valid and invalid courses
    height_min = max(0.0, 0.5 * gate_width + 0.05 + clearance_above)
    spec = presets.gates(64, device, gate_width=gate_width, size=size, min_spacing=min_spacing,
                         max_spacing=min_spacing + spacing_range, height_min=height_min,
                         height_max=height_min + height_range, yaw_jitter=yaw_jitter, max_turn=max_turn,
                         closed=closed, max_attempts=max_attempts)
    check_gates(tg.GateGenerator(spec, seeds=seed))


# ---------------------------------------------------------------------------------------------
# no NaN/inf, and a generation rewrites every row
def _poison(arr: wp.array) -> None:
    a = arr.numpy()
    a[...] = np.nan if np.issubdtype(a.dtype, np.floating) else -123457
    arr.assign(a)


def _finite_rows(name: str, arr: np.ndarray, rows: np.ndarray) -> None:
    if np.issubdtype(arr.dtype, np.floating):
        sub = arr[rows]
        bad = ~np.isfinite(sub.reshape(len(sub), -1)).all(axis=1)
        assert not bad.any(), f"{name}: non-finite values in valid envs {np.flatnonzero(rows)[bad][:5]}"


POISON_CASES = {
    "track": lambda dev: tg.TrackGenerator(presets.track(128, dev, half_width_variation=0.3), seeds=4),
    "elevated": lambda dev: tg.TrackGenerator(presets.track(128, dev, elevated=True), seeds=4),
    "harsh_track": lambda dev: tg.TrackGenerator(presets.track(128, dev, min_turn_radius=1.5, max_attempts=1),
                                                 seeds=4),
    "gates": lambda dev: tg.GateGenerator(presets.gates(128, dev, gate_width=1.0), seeds=4),
    "sprint": lambda dev: tg.GateGenerator(presets.gates(128, dev, gate_width=1.0, closed=False), seeds=4),
}


@pytest.mark.parametrize("case", list(POISON_CASES))
def test_outputs_finite_and_fully_rewritten(device, case):
    gen, twin = POISON_CASES[case](device), POISON_CASES[case](device)
    # Poison the committed results (public, stable arrays) and the stages' working buffers
    # (private: Program._work), so an element a kernel or the commit forgot to write shows up.
    for arr in [*gen.outputs().values(), gen.result.valid, *gen._work.values()]:
        _poison(arr)
    for g in (gen, twin):
        g.enqueue(advance=True)
    valid = gen.result.valid.numpy()
    assert set(np.unique(valid)) <= {0, 1}
    assert np.array_equal(valid, twin.result.valid.numpy())
    rows = valid == 1
    assert rows.any()
    result = {f.name: getattr(gen.result, f.name) for f in dataclasses.fields(gen.result)}
    arrays = {n: a for n, a in {**gen.outputs(), **result}.items() if isinstance(a, wp.array)}
    assert len(arrays) > len(gen.outputs())
    for name, arr in arrays.items():
        _finite_rows(name, arr.numpy(), rows)
    for name, arr in gen.outputs().items():
        assert arr.numpy().tobytes() == twin.outputs()[name].numpy().tobytes(), f"{name} kept poisoned values"
