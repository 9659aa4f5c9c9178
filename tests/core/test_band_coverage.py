"""Band-track coverage (issue 31): the features of a constructed stadium against hand values, a generated
track covered by its own distribution, the shipped circuits against the default band track, the
command line with band-track files."""

from __future__ import annotations

import math

import numpy as np
import pytest

import track_gen as tg
from track_gen import layouts as L
from track_gen.layouts.__main__ import main as layouts_main
from track_gen.layouts.band_features import CORNER_MIN_TURN, band_features, polyline_curvature, straight_curvature
from track_gen.pipeline import presets


def stadium(straight=30.0, radius=10.0, step=0.25) -> np.ndarray:
    """A closed stadium [N, 2]: two straights of ``straight`` m joined by half circles of ``radius``,
    counter-clockwise, points every ``step`` m."""
    n_s, n_a = int(round(straight / step)), int(round(math.pi * radius / step))
    xs = np.arange(n_s) * straight / n_s
    th = np.arange(n_a) * math.pi / n_a - math.pi / 2
    arc = np.stack([straight + radius * np.cos(th), radius + radius * np.sin(th)], 1)
    top = np.stack([straight - xs, np.full(n_s, 2 * radius)], 1)
    back = np.stack([radius * np.cos(th + math.pi), radius + radius * np.sin(th + math.pi)], 1)
    return np.concatenate([np.stack([xs, np.zeros(n_s)], 1), arc, top, back])


def test_polyline_curvature_of_a_circle_is_one_over_its_radius():
    th = np.linspace(0, 2 * np.pi, 97, endpoint=False)
    k, seg = polyline_curvature(7.0 * np.stack([np.cos(th), np.sin(th)], 1))
    chord = 2 * 7.0 * math.sin(math.pi / 97)
    np.testing.assert_allclose(k, (2 * math.pi / 97) / chord, rtol=1e-12)      # turn / segment length
    assert k == pytest.approx(1 / 7.0, rel=1e-3) and seg.sum() == pytest.approx(97 * chord)


def test_band_features_of_a_stadium_match_a_hand_computation():
    xy = stadium()
    f = band_features(xy, 1.0, straight_curvature(1.0))          # straight: radius above 100 m
    length = 60.0 + 2 * math.pi * 10.0
    assert f["length"][0] == pytest.approx(length, rel=1e-3)
    assert sorted(f["straight_length"]) == pytest.approx([30.0, 30.0], abs=0.5)
    assert f["corners_per_100m"][0] == pytest.approx(2 * 100.0 / length, rel=1e-3)
    k = f["curvature"]
    assert np.sum(k < 1e-9) == 238 and k[k > 0.06] == pytest.approx(0.1, rel=1e-3) and np.sum(k > 0.06) == 250
    assert k[(k > 1e-9) & (k < 0.06)] == pytest.approx([0.05] * 4, rel=2e-3)   # the 4 joints: half a step's turn
    np.testing.assert_array_equal(f["half_width"], 1.0)
    # a threshold above the arcs' curvature makes the whole loop one straight, with no corner
    flat = band_features(xy, 1.0, 0.2)
    assert flat["corners_per_100m"][0] == 0.0 and flat["straight_length"] == pytest.approx([length], rel=1e-3)


@pytest.mark.parametrize("sides, corners", [(36, 0), (18, 18)])
def test_a_corner_turns_by_at_least_15_degrees(sides, corners):
    """A regular polygon: each vertex is a bend of 360 / sides degrees between straight sides."""
    th = 2 * np.pi * np.arange(sides) / sides
    corner = 100.0 * np.stack([np.cos(th), np.sin(th)], 1)
    u = np.arange(10)[:, None] / 10.0                         # ten points along each side
    xy = np.concatenate([(1 - u) * corner[i] + u * corner[(i + 1) % sides] for i in range(sides)])
    f = band_features(xy, 1.0, 0.01)
    assert CORNER_MIN_TURN == pytest.approx(math.radians(15))
    assert f["corners_per_100m"][0] * f["length"][0] / 100.0 == pytest.approx(corners)
    assert f["straight_length"].size == sides


def test_a_generated_track_is_covered_by_its_own_distribution():
    spec = presets.track(256, "cpu", half_width_variation=0.3)
    gen = tg.TrackGenerator(spec, seeds=5)
    e = int(np.flatnonzero(gen.result.valid.numpy())[0])
    cov = L.coverage(L.export(gen, e), spec, num_envs=256, seed=5, percentiles=(0.0, 100.0), tolerance=0.0)
    assert cov.covered, str(cov)
    assert list(cov.features) == ["half_width", "curvature", "straight_length", "corners_per_100m", "length"]
    assert cov.num_courses == int(gen.result.valid.numpy().sum())


def test_a_built_track_generator_is_measured_with_its_live_values():
    gen = tg.TrackGenerator(presets.track(64, "cpu"), seeds=0)
    gen.params["centerline.half_width"] = 0.6
    lay = L.TrackLayout(centerline=np.c_[stadium(6.0, 3.0), np.zeros(len(stadium(6.0, 3.0)))], half_width=0.6)
    cov = L.coverage(lay, gen, num_envs=128)
    assert cov.features["half_width"].lo == pytest.approx(0.6) and "half_width" not in cov.outside
    assert gen.num_envs == 64


@pytest.mark.parametrize("name", ["tum_budapest", "tum_monza", "tum_spa"])
def test_the_default_band_track_does_not_cover_a_circuit_at_car_scale(name):
    """At 1/10 scale a circuit is 440-700 m long with straights up to 118 m and half widths of 0.38-0.85 m;
    the default band track is 10-40 m long, 0.4 m in half width, with straights of about a metre."""
    lay = L.load(L.shipped("track")[name], scale=0.1)
    cov = L.coverage(lay, tg.TrackGenConfig(), num_envs=256)
    assert {"half_width", "straight_length", "length"} <= set(cov.outside), str(cov)
    assert "curvature" not in cov.outside
    assert cov.features["length"].values[0] > 400.0 > 40.0 >= cov.features["length"].hi


def test_track_car_covers_the_circuits_but_their_tightest_hairpins():
    """presets.track_car at the circuits' scale covers half widths, straights, corners and lengths of every
    shipped circuit; its turns stop short of the circuits' hairpins (radius 0.8-1.2 m at 1/10 scale)."""
    spec = presets.track_car(1024, "cpu", scale=0.1)
    gen = tg.TrackGenerator(spec, seeds=0)
    assert gen.result.valid.numpy().mean() > 0.7
    for name, path in L.shipped("track").items():
        cov = L.coverage(L.load(path, scale=0.1), gen, num_envs=1024)
        assert cov.outside == ["curvature"], (name, str(cov))
        assert cov.features["curvature"].values.max() > 0.8 > cov.features["curvature"].hi
    with pytest.raises(ValueError, match="scale"):
        presets.track_car(8, "cpu", scale=0.0)


def test_command_line_takes_band_tracks_with_a_track_preset(capsys, tmp_path):
    lay = L.TrackLayout(centerline=np.c_[stadium(6.0, 3.0), np.zeros(len(stadium(6.0, 3.0)))], half_width=0.4,
                        name="stadium")
    lay.save(tmp_path / "stadium.toml")
    rc = layouts_main(["coverage", str(L.shipped("track")["tum_monza"]), str(L.shipped()["lsy_level0"]),
                       "--scale", "0.1", "--num_envs", "128"])
    out = capsys.readouterr().out
    assert rc == 1 and "coverage of tum_monza by preset track" in out and "by preset gates_real" in out
    assert "straight_length" in out
    rc = layouts_main(["coverage", str(L.shipped("track")["tum_monza"]), "--preset", "track_car", "--scale", "0.1",
                       "--num_envs", "512"])
    out = capsys.readouterr().out
    assert rc == 1 and "by preset track_car" in out and "NOT covered (curvature)" in out
    layouts_main(["coverage", str(tmp_path), "--preset", "track_hard", "--num_envs", "128", "--set", "size=12.0"])
    assert "coverage of stadium by preset track_hard" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="is a band track; --preset gates draws gate courses"):
        layouts_main(["coverage", str(tmp_path / "stadium.toml"), "--preset", "gates"])
    with pytest.raises(SystemExit, match="is a gate layout; --preset track draws band tracks"):
        layouts_main(["coverage", str(L.shipped()["lsy_level0"]), "--preset", "track"])
    with pytest.raises(SystemExit, match="scale"):
        layouts_main(["coverage", str(tmp_path / "stadium.toml"), "--scale", "-1"])
