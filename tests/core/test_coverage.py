"""``track_gen.layouts.coverage``: features against a float64 reference, constructed cases inside and
outside, the command line, errors."""

from __future__ import annotations

import numpy as np
import pytest

import track_gen as tg
from track_gen import layouts as L
from track_gen.layouts.__main__ import main as layouts_main
from track_gen.layouts.coverage import gate_features
from track_gen.pipeline import presets


def square_layout(side=4.0, z=(1.0, 1.5, 1.0, 2.0), width=1.0, closed=True, **kw) -> L.GateLayout:
    """Four gates on a square, passed counter-clockwise, the start 2 m before gate 0."""
    pos = np.array([[side, 0, z[0]], [side, side, z[1]], [0, side, z[2]], [0, 0, z[3]]], np.float32)
    yaw = np.array([np.pi / 2, np.pi, -np.pi / 2, 0.0], np.float32)
    rpy = np.zeros((4, 3), np.float32)
    rpy[:, 2] = yaw
    return L.GateLayout(pos=pos, rpy=rpy, width=width, height=width, closed=closed,
                        start_pos=np.array([side, -2.0, z[0]], np.float32), name="square", **kw)


def test_gate_features_of_a_square_match_a_hand_computation():
    lay = square_layout()
    f = gate_features(lay.pos, lay.yaw, lay.width, lay.start_pos, closed=True)
    np.testing.assert_allclose(f["leg_length"], np.hypot(4.0, [0.5, -0.5, 1.0, -1.0]), rtol=1e-7)
    np.testing.assert_allclose(f["climb"], [0.5, -0.5, 1.0, -1.0], atol=1e-7)
    np.testing.assert_allclose(f["turn"], [np.pi / 2] * 4, atol=1e-6)
    np.testing.assert_allclose(f["gate_height"], [1.0, 1.5, 1.0, 2.0])
    assert f["start_distance"].tolist() == [2.0] and f["start_height"].tolist() == [1.0]
    assert f["num_gates"].tolist() == [4.0] and f["opening"].tolist() == [1.0] * 4
    # one pass: no closing leg
    g = gate_features(lay.pos, lay.yaw, lay.width, lay.start_pos, closed=False)
    assert g["leg_length"].size == 3 and g["turn"].size == 3
    # a turn is the smallest angle: +170 deg then -170 deg is a 20 deg turn
    h = gate_features(np.zeros((2, 3)), np.radians([170.0, -170.0]), 1.0, np.zeros(3), closed=False)
    np.testing.assert_allclose(h["turn"], np.radians([20.0]), atol=1e-9)


def test_a_course_of_the_distribution_is_covered_by_its_full_range():
    """An exported course's numbers are part of the sample: with the 0th..100th percentile it is inside."""
    spec = presets.gates(256, "cpu", gate_width=1.0)
    gen = tg.GateGenerator(spec, seeds=3)
    e = int(np.flatnonzero(gen.result.valid.numpy())[0])
    cov = L.coverage(L.export(gen, e), spec, num_envs=256, seed=3, percentiles=(0.0, 100.0), tolerance=0.0)
    assert cov.covered and cov.outside == [], str(cov)
    assert cov.num_courses == int(gen.result.valid.numpy().sum())
    assert set(cov.features) == {"opening", "leg_length", "gate_height", "climb", "turn", "start_distance",
                                 "start_height", "num_gates"}


def test_features_outside_the_distribution_are_named():
    spec = presets.gates(512, "cpu", gate_width=1.0, size=10.0)
    lay = square_layout(side=30.0, width=0.4, z=(0.3, 1.5, 1.0, 2.0))   # long legs, small opening, a low gate
    cov = L.coverage(lay, spec, num_envs=512)
    assert not cov.covered
    assert {"opening", "leg_length", "gate_height", "num_gates"} <= set(cov.outside)
    assert cov.features["opening"].lo == pytest.approx(1.0) and cov.features["opening"].hi == pytest.approx(1.0)
    assert cov.features["opening"].outside_values.tolist() == pytest.approx([0.4] * 4)
    assert "turn" not in cov.outside       # right angles: well inside
    text = str(cov)
    assert "NOT covered" in text and "leg_length" in text and "no: 0.4" in text


def test_poles_count_only_where_the_layout_has_them():
    spec = presets.gates(256, "cpu", gate_width=1.0)
    plain = L.coverage(square_layout(), spec, num_envs=256)
    assert "pole_radius" not in plain.features
    poles = L.Poles(pos=[[2.0, 2.0, 0.0]], radius=0.02, height=2.0)
    with_poles = L.coverage(square_layout(obstacles=poles), spec, num_envs=256)
    assert {"pole_radius", "pole_height"} <= set(with_poles.outside)   # a source without poles covers none
    hard = presets.gates(256, "cpu", gate_width=1.0, max_obstacles=4, difficulty=1.0, obstacle_radius_min=0.01)
    cov = L.coverage(square_layout(obstacles=poles), hard, num_envs=256)
    assert cov.features["pole_radius"].lo < 0.05 and not {"pole_radius", "pole_height"} & set(cov.outside)


def test_the_tolerance_admits_edge_values_of_a_continuous_range():
    """A straight leg turns by exactly 0, a value a continuous draw never produces."""
    spec = presets.gates(512, "cpu", gate_width=1.0)
    pos = np.array([[2.0, 0, 1.2], [5.0, 0, 1.2], [8.0, 0, 1.2]], np.float32)
    lay = L.GateLayout(pos=pos, rpy=np.zeros((3, 3)), width=1.0, height=1.0, closed=False,
                       start_pos=np.array([0.0, 0.0, 1.2], np.float32))
    strict = L.coverage(lay, spec, num_envs=512, tolerance=0.0)
    loose = L.coverage(lay, spec, num_envs=512)
    assert strict.features["turn"].lo > 0.0 and "turn" in strict.outside
    assert "turn" not in loose.outside


def test_a_built_generator_is_measured_with_its_live_values():
    gen = tg.GateGenerator(presets.gates(64, "cpu", gate_width=1.0), seeds=0)
    gen.params["gate_frames.gate_width"] = 0.5
    gen.randomizers["gates.size"] = (8.0, 12.0)
    cov = L.coverage(square_layout(width=0.5), gen, num_envs=128)
    assert cov.features["opening"].lo == pytest.approx(0.5) and "opening" not in cov.outside
    assert gen.num_envs == 64   # the user's generator is left alone


def test_every_shipped_layout_is_covered_by_gates_real():
    """The generalist's training distribution spans every real layout we ship (none is an input to it)."""
    spec = presets.gates_real(4096, "cpu")
    for name, path in L.shipped().items():
        cov = L.coverage(path, spec)
        assert cov.covered, str(cov)


def test_command_line_prints_one_table_per_file_and_exits_1_when_one_is_not_covered(capsys, tmp_path):
    square_layout().save(tmp_path / "sq.toml")
    rc = layouts_main(["coverage", str(tmp_path / "sq.toml"), str(L.shipped()["lsy_level0"]), "--preset", "gates",
                       "--num_envs", "256"])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.count("coverage of") == 2 and "by preset gates" in out
    rc = layouts_main(["coverage", str(tmp_path), "--preset", "gates", "--num_envs", "256",
                       "--set", "size=6.0", "--set", "min_gates=4", "--set", "max_gates=4"])
    assert "coverage of square" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        layouts_main(["coverage", str(tmp_path / "missing.toml")])
    with pytest.raises(SystemExit):
        layouts_main(["coverage", str(tmp_path / "sq.toml"), "--set", "oops"])


@pytest.mark.parametrize("kwargs, err, match", [
    ({"layout": 3}, TypeError, "GateLayout, a TrackLayout or a layout file"),
    ({"source": presets.track(8, "cpu")}, ValueError, "gate-course source"),
    ({"source": "gates"}, TypeError, "GateGenConfig, a PipelineSpec or a GateGenerator"),
    ({"num_envs": 0}, ValueError, "num_envs"),
    ({"percentiles": (99.0, 1.0)}, ValueError, "percentiles"),
    ({"tolerance": -0.1}, ValueError, "tolerance"),
])
def test_bad_arguments_are_refused(kwargs, err, match):
    args = {"layout": square_layout(), "source": presets.gates(8, "cpu", gate_width=1.0), **kwargs}
    layout, source = args.pop("layout"), args.pop("source")
    with pytest.raises(err, match=match):
        L.coverage(layout, source, **args)


def test_a_band_track_layout_needs_a_band_track_source():
    track = L.TrackLayout(centerline=np.c_[np.cos(np.arange(8)), np.sin(np.arange(8)), np.zeros(8)], half_width=0.5)
    with pytest.raises(ValueError, match="band-track layout needs a band-track source"):
        L.coverage(track, presets.gates(8, "cpu", gate_width=1.0))


# -- legs, jointly -------------------------------------------------------------------------------
def test_leg_features_of_a_square_match_a_hand_computation():
    lay = square_layout()
    legs = L.leg_features(lay.pos, lay.yaw, lay.width, closed=True)
    assert legs.shape == (4, len(L.LEG_FEATURES))
    col = {n: legs[:, i] for i, n in enumerate(L.LEG_FEATURES)}
    np.testing.assert_allclose(col["opening"], 1.0)
    np.testing.assert_allclose(col["leg_length"], np.hypot(4.0, [0.5, -0.5, 1.0, -1.0]), rtol=1e-7)
    np.testing.assert_allclose(col["turn"], np.pi / 2, atol=1e-6)
    # each gate faces along the side it stands at the start of: the leg leaves along the gate's axis
    # (exit 0) and meets the next gate side on (entry pi / 2)
    np.testing.assert_allclose(col["exit"], 0.0, atol=1e-6)
    np.testing.assert_allclose(col["entry"], np.pi / 2, atol=1e-6)
    np.testing.assert_allclose(col["climb"], [0.5, -0.5, 1.0, -1.0], atol=1e-7)
    # a stacked pair (plan length below MIN_PLAN) has no direction
    st = L.leg_features([[0, 0, 1], [0.05, 0, 3]], [0.0, np.pi], [0.8, 0.6], closed=False)
    assert np.isnan(st[0, 3]) and np.isnan(st[0, 4]) and st[0, 0] == pytest.approx(0.6)


def test_leg_support_counts_the_legs_inside_the_box():
    leg = np.array([[0.4, 1.0, 3.0, 1.5, 1.5, 0.5]])
    box = L.LEG_BOX
    inside = leg[0] + np.array([0.24 * 0.4, -0.24, 0.39, -0.39, 0.39, -0.49])
    out_len = leg[0] + np.array([0.0, 0.26, 0, 0, 0, 0])         # 26 % longer: outside the 25 % box
    out_exit = leg[0] + np.array([0.0, 0.0, 0, 0, 0.41, 0])
    nan_dir = np.r_[leg[0, :3], np.nan, np.nan, leg[0, 5]]
    dist = np.stack([leg[0], inside, out_len, out_exit, nan_dir])
    np.testing.assert_allclose(L.leg_support(leg, dist, box), [2 / 5])
    # a leg with no direction is matched on the other four features only
    np.testing.assert_allclose(L.leg_support(nan_dir[None], dist, box), [4 / 5])
    assert L.leg_support(leg, np.zeros((0, 6))).tolist() == [0.0]


def test_legs_of_a_course_of_the_distribution_are_supported():
    spec = presets.gates(256, "cpu", gate_width=1.0)
    gen = tg.GateGenerator(spec, seeds=3)
    e = int(np.flatnonzero(gen.result.valid.numpy())[0])
    cov = L.coverage(L.export(gen, e), spec, num_envs=256, seed=3, percentiles=(0.0, 100.0), tolerance=0.0,
                     min_support=1e-4)
    assert cov.supported and cov.unsupported_legs == [] and (cov.leg_support > 0).all()
    assert cov.legs.shape == (int(gen.result.count.numpy()[e]), 6)   # a loop: one leg per gate


def test_a_covered_layout_can_be_unsupported_leg_by_leg():
    """lsy_level0's marginals lie inside gates_real, but legs like its U-turns between 0.4 m gates
    a metre apart are (nearly) absent: covered, not supported, the legs named in the table."""
    cov = L.coverage(L.shipped()["lsy_level0"], presets.gates_real(1024, "cpu"), num_envs=1024)
    assert cov.covered and not cov.supported and cov.unsupported_legs
    text = str(cov)
    assert "legs, jointly" in text and "  no" in text
    loose = L.coverage(L.shipped()["lsy_level0"], presets.gates_real(1024, "cpu"), num_envs=1024, min_support=0.0)
    assert loose.supported
    with pytest.raises(ValueError, match="min_support"):
        L.coverage(square_layout(), presets.gates(8, "cpu", gate_width=1.0), min_support=2.0)


def test_command_line_strict_exits_1_on_an_unsupported_leg(capsys):
    path = str(L.shipped()["lsy_level0"])
    assert layouts_main(["coverage", path, "--num_envs", "1024"]) == 0
    assert layouts_main(["coverage", path, "--num_envs", "1024", "--strict"]) == 1
    assert layouts_main(["coverage", path, "--num_envs", "1024", "--strict", "--min_support", "0"]) == 0
    assert "legs, jointly" in capsys.readouterr().out


def test_gates_real_supports_the_legs_of_the_held_out_gate_loops():
    """The generalist is scored on ``gates-v1`` too: metre-wide gate loops in a 10 m square. Its
    ``loop`` entry puts such legs into ``gates_real``: over 8 loops drawn as that suite draws them
    (its held-out seed), the median leg is like 1.5 % or more of the distribution's legs and none is
    unsupported (without the entry: a median of 0.7 % and legs with no support at all)."""
    from track_gen.layouts.export import export

    g = tg.GateGenerator(tg.GateGenConfig(num_envs=8, device="cpu", gate_width=1.0, gate_height=1.0,
                                          size=10.0).to_spec(), seeds=tg.SeedState(8, "cpu", 1_000_000_101))
    spec = presets.gates_real(4096, "cpu")
    support = np.concatenate([np.asarray(L.coverage(lay, spec).leg_support) for lay in export(g, env=None)])
    assert np.median(support) >= 0.015 and support.min() >= 0.001, support
