"""TUM racetrack-database circuits in (issue 31): the CSV reader against an analytic reference, ``scale=``,
its errors (file, line, column), the shipped circuits reproduced byte for byte from the raw CSVs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from track_gen import layouts as L
from track_gen.layouts.tum import COLUMNS, TUM_COMMIT, circuit_text

TUM = Path(__file__).resolve().parents[1] / "data" / "tum"
HEADER = "# " + ",".join(COLUMNS)
#: shipped name -> (raw file, loop length [m], half width range [m]) as measured on the files
CIRCUITS = {"tum_budapest": ("Budapest.csv", 4380.0, (3.81, 8.05)), "tum_monza": ("Monza.csv", 5793.0, (3.76, 6.21)),
            "tum_spa": ("Spa.csv", 7005.0, (3.93, 8.21))}


def circle_csv(path: Path, n=200, radius=50.0, w_right=3.0, w_left=5.0) -> tuple[np.ndarray, Path]:
    """A counter-clockwise circle of reference points (the left normal points at the centre)."""
    th = 2 * np.pi * np.arange(n) / n
    xy = radius * np.stack([np.cos(th), np.sin(th)], 1)
    wr, wl = np.broadcast_to(w_right, n), np.broadcast_to(w_left, n)
    rows = [f"{x!r},{y!r},{a!r},{b!r}" for (x, y), a, b in zip(xy.tolist(), wr.tolist(), wl.tolist())]
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return th, path


def test_centre_and_half_width_of_a_circle_match_the_analytic_reference(tmp_path):
    """On a circle the left normal is exactly -(cos, sin): the centre is the reference point moved by
    (w_left - w_right) / 2 towards the middle, the half width (w_right + w_left) / 2, per point."""
    rng = np.random.default_rng(0)
    wr, wl = rng.uniform(2, 8, 200), rng.uniform(2, 8, 200)
    th, path = circle_csv(tmp_path / "ring.csv", w_right=wr, w_left=wl)
    lay = L.load(path)
    want = (50.0 - 0.5 * (wl - wr))[:, None] * np.stack([np.cos(th), np.sin(th)], 1)
    np.testing.assert_allclose(lay.centerline[:, :2], want, rtol=0, atol=2e-5)
    np.testing.assert_array_equal(lay.centerline[:, 2], 0.0)
    np.testing.assert_allclose(lay.half_width, 0.5 * (wr + wl), rtol=1e-6)
    assert lay.closed and lay.name == "ring" and "TUM racetrack-database" in lay.source
    small = L.load(path, scale=0.1)
    np.testing.assert_allclose(small.centerline, lay.centerline.astype(np.float64) * 0.1, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(small.half_width, lay.half_width.astype(np.float64) * 0.1, rtol=1e-6)
    assert "lengths x 0.1" in small.source


@pytest.mark.parametrize("text, match", [
    ("x_m,y_m,w_tr_right_m,w_tr_left_m\n0,0,1,1\n", "line 1: expected the header"),
    ("# x_m,y_m,w_tr_left_m,w_tr_right_m\n0,0,1,1\n", "line 1: expected the header"),
    (f"{HEADER}\n0,0,1,1\n1,0,1,1\n1,1,1\n", "line 4: expected 4 comma-separated numbers"),
    (f"{HEADER}\n0,0,1,1\n1,0,abc,1\n1,1,1,1\n", "line 3, column 'w_tr_right_m': expected a finite width"),
    (f"{HEADER}\n0,0,1,1\n1,0,1,-2\n1,1,1,1\n", "line 3, column 'w_tr_left_m': expected a finite width >= 0"),
    (f"{HEADER}\n0,nan,1,1\n1,0,1,1\n1,1,1,1\n", "line 2, column 'y_m': expected a finite number"),
    (f"{HEADER}\n0,0,1,1\n1,0,1,1\n", "expected at least 3 rows"),
    (f"{HEADER}\n0,0,1,1\n1,0,1,1\n0,0,1,1\n1,1,1,1\n", "line 3: expected the points on either side"),
    (f"{HEADER}\n0,0,1,1\n1,0,0,0\n1,1,1,1\n", "line 3: expected a track width"),
    (f"{HEADER}\n0,0,1,1\n40000,0,1,1\n1,1,1,1\n", "line 3: expected positions within"),
])
def test_malformed_rows_are_refused_naming_file_line_and_column(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(L.LayoutFormatError, match=match) as err:
        L.load(path)
    assert str(path) in str(err.value)


def test_bad_scale_and_arguments_are_refused(tmp_path):
    _, path = circle_csv(tmp_path / "ring.csv")
    for bad, err in ((0.0, ValueError), (-1.0, ValueError), (float("nan"), ValueError), ("0.1", TypeError)):
        with pytest.raises(err, match="scale"):
            L.load(path, scale=bad)
    with pytest.raises(ValueError, match="lsy_axis"):
        L.load(path, lsy_axis="x")
    with pytest.raises(L.LayoutFormatError, match="cannot read"):
        L.load(tmp_path / "missing.csv")


def test_scale_resizes_any_layout():
    gates = L.load(L.shipped()["lsy_level0"])
    half = L.load(L.shipped()["lsy_level0"], scale=0.5)
    np.testing.assert_allclose(half.pos, gates.pos * 0.5, rtol=1e-6)
    np.testing.assert_allclose(half.width, gates.width * 0.5, rtol=1e-6)
    np.testing.assert_allclose(half.obstacles.height, gates.obstacles.height * 0.5, rtol=1e-6)
    np.testing.assert_array_equal(half.rpy, gates.rpy)
    spa = L.load(L.shipped("track")["tum_spa"], scale=0.1)
    assert spa == L.load(TUM / "Spa.csv").replace(name="tum_spa").scaled(0.1).replace(source=spa.source)


def test_shipped_circuits_are_the_raw_files_written_by_the_library():
    """Each shipped circuit is ``circuit_text`` of its raw CSV (tests/data/tum, unmodified) byte for byte,
    cites repository, path, commit and licence, and loads to the CSV's numbers."""
    assert sorted(L.shipped("track")) == sorted(CIRCUITS)
    assert not set(L.shipped()) & set(CIRCUITS)           # the gate list is unchanged
    for name, path in L.shipped("track").items():
        raw, length, (lo, hi) = CIRCUITS[name]
        text = path.read_text(encoding="utf-8")
        assert text == circuit_text(TUM / raw, name), name
        assert f"TUMFTM/racetrack-database/blob/{TUM_COMMIT}/tracks/{raw}" in text and "LGPL-3.0" in text
        lay, csv = L.load(path), L.load(TUM / raw)
        np.testing.assert_array_equal(lay.centerline, csv.centerline)
        np.testing.assert_array_equal(lay.half_width, csv.half_width)
        seg = np.linalg.norm(np.diff(np.vstack([lay.centerline, lay.centerline[:1]]), axis=0), axis=1)
        assert seg.sum() == pytest.approx(length, abs=1.0)
        assert (lay.half_width.min(), lay.half_width.max()) == pytest.approx((lo, hi), abs=0.005)
    assert (path.parent / "LICENSE").read_text().startswith(" " * 19 + "GNU LESSER GENERAL PUBLIC LICENSE")
    with pytest.raises(ValueError, match="kind"):
        L.shipped("circuits")


def test_folders_of_csv_files_load(tmp_path):
    for name in ("Monza.csv", "Spa.csv"):
        (tmp_path / name).write_bytes((TUM / name).read_bytes())
    lays = L.load_all(tmp_path, scale=0.1)
    assert [lay.name for lay in lays] == ["Monza", "Spa"]
    assert L.layout_files(tmp_path) == [tmp_path / "Monza.csv", tmp_path / "Spa.csv"]
    assert all(lay.half_width.max() < 1.0 for lay in lays)


def test_a_circuit_drives_a_layout_generator():
    """At 1/10 scale, at their own points, Budapest and Monza are valid band tracks; Spa breaks the TURN
    rule (La Source: a 0.79 m radius against its widest half width, 0.82 m)."""
    import warnings

    import track_gen as tg
    from track_gen.pipeline import presets

    got = {}
    for name, path in L.shipped("track").items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the layout warning for Spa (once per session)
            gen = tg.TrackGenerator(presets.track_from_layouts(L.load(path, scale=0.1), 1, "cpu"), seeds=0)
        got[name] = (int(gen.result.valid.numpy()[0]), float(gen.result.length.numpy()[0]))
    assert {n: v for n, (v, _) in got.items()} == {"tum_budapest": 1, "tum_monza": 1, "tum_spa": 0}
    assert [got[n][1] for n in ("tum_budapest", "tum_monza")] == pytest.approx([437.9, 579.3], abs=0.2)
