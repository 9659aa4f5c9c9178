"""Layout files never lie (issue 32): every field of a layout -- read from a file (both formats) or built
in Python -- is checked, unknown keys are refused with the nearest known name, and a file the reader
accepts gives a sane layout; a fuzz test feeds the reader broken files."""

from __future__ import annotations

import collections
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen import layouts as L
from track_gen.pipeline import presets

LSY_DATA = Path(__file__).resolve().parents[1] / "data" / "lsy"
LSY_FILES = sorted(LSY_DATA.glob("*.toml"))


def level0() -> L.GateLayout:
    return L.load(L.shipped()["lsy_level0"])


def f32(x):
    return np.asarray(x, dtype=np.float32)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def own_text(tmp_path: Path) -> str:
    return level0().save(tmp_path / "good.toml").read_text()


def aigp_text() -> str:
    return (LSY_DATA / "competition_swift.toml").read_text()


def refused(path: Path, match: str, **kw) -> str:
    """Load ``path``, expecting a LayoutFormatError naming the file and matching ``match``; the message."""
    with pytest.raises(L.LayoutFormatError, match=match) as info:
        L.load(path, **kw)
    assert str(path) in str(info.value)
    return str(info.value)


def valid(layout: L.GateLayout, envs: int = 2) -> np.ndarray:
    return tg.GateGenerator(presets.gates_from_layouts([layout], envs, "cpu"), seeds=1).result.valid.numpy()


# -- a gate opening of zero or negative height ------------------------------------------------------
@pytest.mark.parametrize("change", [{"height": 0.0}, {"height": -0.2}, {"frame_thickness": -0.19},
                                    {"width": 0.0}, {"height": [0.4, 0.4, 1e-9, 0.4]}])
def test_opening_and_frame_sizes_are_checked_in_python(change):
    field = next(iter(change))
    key = {"frame_thickness": "gates.frame_thickness"}.get(field, f"gates.{field}")
    with pytest.raises(ValueError, match=rf"{re.escape(key)}.*expected a (size|length)"):
        level0().replace(**change)


def test_opening_height_is_checked_in_files(tmp_path):
    p = write(tmp_path, "h0.toml", own_text(tmp_path).replace("height = 0.4", "height = 0.0"))
    refused(p, r"key 'gates\.height' \(line \d+\): expected a size of at least 0\.001 m")
    lsy = write(tmp_path, "lsy_h0.toml", aigp_text().replace("height = 0.75", "height = 0.0"))
    refused(lsy, r"key 'env\.track\.gate_size\.height' \(line \d+\): expected a size")


def test_the_generator_flags_an_opening_of_no_height():
    """A layout's opening height <= 0 reaching the device (its table edited) is OPENING and valid = 0, as a width
    <= 0 is: a frame whose bars are thicker than half the opening is not an opening."""
    g = tg.GateGenerator(presets.gates_from_layouts([level0()], 2, "cpu"), seeds=1)
    assert g.result.valid.numpy().all()
    for h in (0.0, -0.2):
        g.inputs["gates.table_height"].assign(np.full(1, h, np.float32))
        g.enqueue(advance=True)
        assert g.result.valid.numpy().tolist() == [0, 0], h
        assert all(tg.GateStatus(int(s)) & tg.GateStatus.OPENING for s in g.result.status.numpy()), h


# -- infinite and huge numbers -----------------------------------------------------------------------
@pytest.mark.parametrize("value", ["inf", "-inf", "1e39", "1" + "0" * 40, "1" + "0" * 400, "nan", "-nan"],
                         ids=["inf", "-inf", "1e39", "40 digits", "401 digits", "nan", "-nan"])
def test_infinite_huge_and_nan_numbers_name_their_key(tmp_path, value):
    p = write(tmp_path, "w.toml", own_text(tmp_path).replace("width = 0.4", f"width = {value}"))
    refused(p, r"key 'gates\.width' \(line 27\): expected (a finite number|finite numbers|a size)")
    lsy = write(tmp_path, "lsy_w.toml", aigp_text().replace("width = 0.75", f"width = {value}"))
    refused(lsy, r"key 'env\.track\.gate_size\.width' \(line \d+\): expected")
    row = write(tmp_path, "row.toml", own_text(tmp_path).replace("[1.05, 0.75, 1.2]", f"[1.05, {value}, 1.2]"))
    refused(row, r"key 'gates\.pos\[1\]' \(line 17\): expected")


@pytest.mark.parametrize("value", [math.inf, 1e39, 10**40, 10**400, math.nan],
                         ids=["inf", "1e39", "40 digits", "401 digits", "nan"])
def test_infinite_huge_and_nan_numbers_name_their_field_in_python(value):
    with pytest.raises(ValueError, match=r"gates\.width: expected (finite numbers|a size)"):
        level0().replace(width=value)


def test_a_layout_file_with_an_infinite_width_is_refused_by_the_presets(tmp_path):
    p = write(tmp_path, "inf.toml", own_text(tmp_path).replace("width = 0.4", "width = inf"))
    with pytest.raises(L.LayoutFormatError, match=r"inf\.toml: key 'gates\.width'"):
        presets.gates_from_layouts(p, 2, "cpu")


@pytest.mark.parametrize("edit", ["width", "start_pos", "pole"])
def test_a_layout_edited_in_place_is_checked_again_by_the_presets(edit):
    lay = level0()
    {"width": lambda: lay.width.fill(np.inf), "start_pos": lambda: lay.start_pos.fill(1e39),
     "pole": lambda: lay.obstacles.radius.fill(np.nan)}[edit]()
    field = {"width": r"gates\.width", "start_pos": r"start\.pos", "pole": r"obstacles\.radius"}[edit]
    with pytest.raises(ValueError, match=rf"gates_from_layouts: layouts\[0\]: .*{field}.*expected"):
        presets.gates_from_layouts([lay], 2, "cpu")
    track = L.TrackLayout(ring(4.0), 0.5)
    track.half_width[3] = np.inf
    with pytest.raises(ValueError, match=r"track_from_layouts: layouts\[0\]: .*track\.half_width\[3\]"):
        presets.track_from_layouts([track], 2, "cpu")


# -- byte order mark ---------------------------------------------------------------------------------
def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    text = own_text(tmp_path)
    bom = write(tmp_path, "bom.toml", "\ufeff".encode() + text.encode())
    assert L.load(bom) == L.load(write(tmp_path, "plain.toml", text)).replace(name="bom")
    lsy = write(tmp_path, "bom_lsy.toml", "\ufeff".encode() + aigp_text().encode())
    assert L.load(lsy).num_gates == 7


# -- misspelled keys and tables ----------------------------------------------------------------------
@pytest.mark.parametrize("old, new, match", [
    ("[obstacles]", "[obstacle]", r"key 'obstacle' \(line \d+\):.*did you mean 'obstacles'\?"),
    ("tolerance = 0", "tolerence = 0", r"key 'gates\.tolerence' \(line \d+\):.*did you mean 'tolerance'\?"),
    ("frame_thickness =", "frame_thicknes =", r"did you mean 'frame_thickness'\?"),
    ("[start]", "[strat]", r"key 'strat'.*did you mean 'start'\?"),
    ('gate_axis = "+x"', 'gate_axis = "+x"\ngate_axes = "+y"', r"'layout\.gate_axes'.*did you mean 'gate_axis'\?"),
    ("[obstacles]", "[extra]\nnote = 1\n[obstacles]", r"key 'extra'.*tables of format version 1"),
    ('kind = "gates"', 'kind = "gates"\n[track]\nhalf_width = 1', r"key 'track'.*kind = 'gates'"),
])
def test_unknown_keys_and_tables_are_refused_with_the_nearest_name(tmp_path, old, new, match):
    text = own_text(tmp_path)
    assert old in text
    refused(write(tmp_path, "typo.toml", text.replace(old, new, 1)), match)


@pytest.mark.parametrize("old, new, match", [
    ("[[env.track.obstacles]]", "[[env.track.obstacle]]", r"key 'env\.track\.obstacle'.*did you mean 'obstacles'"),
    ("rpy = [0.0, 0.0, 2.35]", "rpi = [0.0, 0.0, 2.35]", r"key 'env\.track\.gates\[1\]\.rpi' \(line 58\).*'rpy'"),
    ("[[env.track.drones]]", "[env.track.drone]", r"'env\.track\.drone'.*did you mean 'drones'"),
    ("vel = [0, 0, 0]", "vel = [0, 0, 1]", r"'env\.track\.drones\[0\]\.vel'.*at rest"),
])
def test_unknown_keys_of_lsy_tracks_are_refused(tmp_path, old, new, match):
    text = (LSY_DATA / "level0.toml").read_text()
    assert old in text
    refused(write(tmp_path, "lsy_typo.toml", text.replace(old, new, 1)), match, lsy_axis="x")


def test_lsy_tables_outside_the_track_are_not_read(tmp_path):
    text = (LSY_DATA / "level0.toml").read_text() + "\n[sim.anything_new]\nx = 1\n"
    assert L.load(write(tmp_path, "extra_sim.toml", text), lsy_axis="x").num_gates == 4


# -- tolerance, start pose and poles -------------------------------------------------------------------
PYTHON_CASES = {
    "tolerance nan": ({"tolerance": math.nan}, r"gates\.tolerance.*finite"),
    "tolerance inf": ({"tolerance": math.inf}, r"gates\.tolerance.*finite"),
    "tolerance -inf": ({"tolerance": -math.inf}, r"gates\.tolerance.*finite"),
    "tolerance < 0": ({"tolerance": -0.1}, r"gates\.tolerance.*a length of 0 to"),
    "start below ground": ({"start_pos": [0.0, 0.0, -2.0]}, r"start\.pos.*on or above the ground"),
    "start roll nan": ({"start_rpy": [math.nan, 0.0, 0.0]}, r"start\.rpy\[0\].*finite"),
    "start yaw 1e30": ({"start_rpy": [0.0, 0.0, 1e30]}, r"start\.rpy\[2\].*within \+-2 pi"),
    "gate yaw 1e30": ({"rpy": [[0.0, 0.0, 1e30]] * 4}, r"gates\.rpy\[0\].*within \+-2 pi"),
}


@pytest.mark.parametrize("name", sorted(PYTHON_CASES))
def test_tolerance_and_start_are_checked(name):
    change, match = PYTHON_CASES[name]
    with pytest.raises(ValueError, match=match):
        level0().replace(**change)


@pytest.mark.parametrize("poles, match", [
    ({"pos": [[0.0, 0.0, 0.0]], "radius": 0.0, "height": 1.0}, r"obstacles\.radius.*a size"),
    ({"pos": [[0.0, 0.0, 0.0]], "radius": -0.1, "height": 1.0}, r"obstacles\.radius.*a size"),
    ({"pos": [[0.0, 0.0, 0.0]], "radius": 0.1, "height": 0.0}, r"obstacles\.height.*a size"),
    ({"pos": [[0.0, 0.0, -3.0]], "radius": 0.1, "height": 1.0}, r"obstacles\.pos\[0\].*entirely underground"),
    ({"pos": [[0.0, 0.0, 0.0]], "radius": [0.1, 0.1], "height": 1.0}, r"obstacles\.radius.*shape \[1\]"),
])
def test_poles_are_checked(poles, match):
    with pytest.raises(ValueError, match=match):
        L.Poles(**poles)


@pytest.mark.parametrize("old, new, key", [
    ("tolerance = 0.0", "tolerance = nan", r"gates\.tolerance"),
    ("tolerance = 0.0", "tolerance = -0.1", r"gates\.tolerance"),
    ("tolerance = 0.0", "tolerance = -inf", r"gates\.tolerance"),
    ("pos = [-1.5, 0.75, 0.01]", "pos = [-1.5, 0.75, -2.0]", r"start\.pos"),
    ("rpy = [0.0, 0.0, 0.0]", "rpy = [nan, 0.0, 0.0]", r"start\.rpy\[0\]"),
    ("rpy = [0.0, 0.0, 0.0]", "rpy = [0.0, 0.0, 1e30]", r"start\.rpy\[2\]"),
    ("radius = 0.015", "radius = 0", r"obstacles\.radius"),
    ("height = 1.55", "height = -1", r"obstacles\.height"),
])
def test_tolerance_start_and_poles_are_checked_in_files(tmp_path, old, new, key):
    text = own_text(tmp_path)
    assert old in text, old
    refused(write(tmp_path, "bad.toml", text.replace(old, new, 1)), rf"key '{key}' \(line \d+\): expected")


def test_an_lsy_pole_whose_top_is_underground_is_refused(tmp_path):
    text = (LSY_DATA / "level0.toml").read_text().replace("pos = [-1.5, -0.25, 1.55]", "pos = [-1.5, -0.25, 0.0]")
    msg = refused(write(tmp_path, "sunk.toml", text), r"key 'env\.track\.obstacles\[2\]\.pos' \(line \d+\)",
                  lsy_axis="x")
    assert "underground" in msg
    line = int(re.search(r"line (\d+)", msg).group(1))
    assert "[-1.5, -0.25, 0.0]" in text.splitlines()[line - 1]      # the line of that pole, not the first one


# -- coordinates far from the origin -------------------------------------------------------------------
def test_coordinates_losing_a_millimetre_in_float32_are_refused(tmp_path):
    far = level0().pos.astype(np.float64) + [691234.37, 5334567.81, 0.0]      # UTM-like
    with pytest.raises(ValueError, match=r"gates\.pos\[0\].*within \+-32768 m.*local origin"):
        level0().replace(pos=far)
    text = own_text(tmp_path).replace("[0.5, 0.25, 0.7]", "[691234.37, 0.25, 0.7]")
    refused(write(tmp_path, "utm.toml", text),
            r"key 'gates\.pos\[0\]' \(line 16\):.*shift the layout to a local origin")
    near = level0().replace(pos=level0().pos + f32([30000.0, -30000.0, 0.0]))      # within 1 mm: kept
    assert np.abs(near.pos.astype(np.float64) - (level0().pos + [30000.0, -30000.0, 0.0])).max() <= 1e-3


# -- NaN, None and the round trip ----------------------------------------------------------------------
def test_nan_is_refused_on_input_and_accepted_layouts_round_trip_exactly(tmp_path):
    for value in ("nan", "-nan", "+nan"):
        text = own_text(tmp_path).replace("[0.0, 0.0, -0.78]", f"[0.0, {value}, -0.78]")
        refused(write(tmp_path, "nan.toml", text), r"key 'gates\.rpy\[0\]' \(line 22\): expected finite numbers")
    odd = level0().replace(start_pos=[-0.0, 1 / 3, 0.0], start_rpy=[-0.0, 0.0, -math.pi], tolerance=-0.0)
    back = L.load(odd.save(tmp_path / "odd.toml"))
    assert back == odd and np.signbit(back.start_pos[0]) and np.signbit(back.tolerance).all()


def test_a_layout_edited_in_place_is_checked_again_before_it_is_saved(tmp_path):
    lay = level0()
    lay.height[2] = np.nan
    with pytest.raises(ValueError, match=r"gates\.height\[2\].*finite"):
        lay.save(tmp_path / "edited.toml")
    assert not (tmp_path / "edited.toml").exists()


@pytest.mark.parametrize("field, value", [("width", None), ("height", None), ("pos", None), ("width", "0.4"),
                                          ("width", [True] * 4), ("closed", 1), ("source", None)])
def test_wrong_types_are_refused_naming_the_field(field, value):
    with pytest.raises(TypeError, match=rf"\b{field}\b.*expected"):
        level0().replace(**{field: value})


# -- degenerate courses -------------------------------------------------------------------------------
def ring(radius: float, n: int = 16) -> np.ndarray:
    t = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    return np.c_[radius * np.cos(t), radius * np.sin(t), np.zeros(n)]


def test_degenerate_tracks_and_loops_are_refused_or_invalid():
    with pytest.raises(ValueError, match=r"track\.half_width.*a size"):
        L.TrackLayout(ring(4.0), half_width=0.0)
    with pytest.raises(ValueError, match=r"closed: expected false for a single gate"):
        L.GateLayout(pos=[[0.0, 0.0, 1.0]], rpy=[[0.0, 0.0, 0.0]], width=0.5, height=0.5, closed=True)
    with pytest.raises(ValueError, match=r"track\.centerline: expected a loop at least 0\.001 m long"):
        L.TrackLayout(ring(25e-6 / (2 * np.pi)), half_width=1e-3)      # a 25 um loop
    # a loop above the resolution but too tight for its band: built, and invalid (TURN) on the course
    tight = L.TrackLayout(ring(0.002 / (2 * np.pi)), half_width=1e-3)      # a 2 mm loop, a 2 mm wide band
    r = tg.TrackGenerator(presets.track_from_layouts([tight], 2, "cpu"), seeds=1).result
    assert r.valid.numpy().tolist() == [0, 0] and all(tg.TrackStatus(int(s)) & tg.TrackStatus.TURN
                                                      for s in r.status.numpy())
    # a single gate flown once is a course (aigp_stage0_single_gate)
    assert L.GateLayout(pos=[[0.0, 0.0, 1.0]], rpy=[[0.0, 0.0, 0.0]], width=0.5, height=0.5, closed=False)


# -- every public file loads unchanged -------------------------------------------------------------------
@pytest.mark.parametrize("path", LSY_FILES, ids=[p.stem for p in LSY_FILES])
def test_public_lsy_files_load_with_their_numbers(path):
    doc = tomllib.loads(path.read_text())["env"]
    track = doc["track"]
    axes = ["x"] if doc["id"] == "AIGPDroneRacing-v0" else ["x", "y"]
    for axis in axes:
        lay = L.load(path, lsy_axis=axis)
        assert np.array_equal(lay.pos, f32([g["pos"] for g in track["gates"]]))
        if axis == "x":
            assert np.array_equal(lay.rpy, f32([g["rpy"] for g in track["gates"]]))
        tops = f32([o["pos"] for o in track.get("obstacles", [])]).reshape(-1, 3)
        assert np.array_equal(lay.obstacles.height, tops[:, 2]) and not lay.obstacles.pos[:, 2].any()
        assert np.array_equal(lay.start_pos, f32(track["drones"][0]["pos"]))
        size = track.get("gate_size", {"width": 0.4, "height": 0.4, "tolerance": 0.0})
        assert np.all(lay.width == f32(size["width"])) and np.all(lay.tolerance == f32(size["tolerance"]))


def test_public_lsy_data_carries_its_licence():
    readme = (LSY_DATA / "README.md").read_text()
    assert "utiasDSL/lsy_drone_racing" in readme and "152a50e7e5e5e815da20d2e85da17946efbe6f4c" in readme
    assert "MIT License" in readme and "competition" in readme


def test_shipped_layouts_load_and_fly(tmp_path):
    for name, path in L.shipped().items():
        lay = L.load(path)
        assert L.load(lay.save(tmp_path / f"{name}.toml")) == lay
        assert valid(lay).all(), name


# -- the fuzz test ------------------------------------------------------------------------------------
BAD_VALUES = ["nan", "-nan", "inf", "-inf", "1e39", "-1e39", "1" + "0" * 40, "-" + "1" * 400, "1e-50", "-0.0",
              "0", "-1", "691234.5", "3.5e38", "1e30", '"text"', "true", "[]", "[1, 2]", "[[1, 2, 3]]",
              "{ a = 1 }", "0.4", "2.0", "7", "[0.0, 0.0, 0.0]", "[1e9, 0, 0]", "[0, 0, -5]"]
NAMES = ["obstacles", "obstacle", "gates", "gate", "start", "tolerance", "tolerence", "extra", "pos", "rpy",
         "width", "height", "radius", "half_width", "frame_thickness", "closed", "kind", "track", "drones"]
OUTCOMES: collections.Counter = collections.Counter()


def _base_texts() -> list[tuple[str, str, str | None]]:
    """(name, text, lsy_axis) of the files the fuzz test mutates: both formats, both kinds."""
    lv = level0()
    track = L.TrackLayout(ring(4.0, 24), 0.5, name="oval")
    loop = lv.replace(closed=True, tolerance=[0.0, 0.1, 0.2, 0.0], name="loop")
    from track_gen.layouts.writer import layout_text

    return [("level0", layout_text(lv), None), ("loop", layout_text(loop), None), ("oval", layout_text(track), None),
            ("lsy_level0", (LSY_DATA / "level0.toml").read_text(), "x"),
            ("lsy_aigp", aigp_text(), None), ("lsy_single", (LSY_DATA / "aigp_stage0_single_gate.toml").read_text(),
                                                 None)]


BASES = _base_texts()
_NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e-?\d+)?(?![\w.])")


@st.composite
def mutated(draw) -> tuple[str, bytes, str | None]:
    """A base file with 1-3 edits a careless or hostile user makes: a value or one number of a row replaced
    by a bad one (NaN, inf, huge, text, a wrong shape), a key renamed (a typo or another known name), a line
    deleted or repeated, a table added or renamed, a byte order mark."""
    name, text, axis = draw(st.sampled_from(BASES))
    lines = text.splitlines()
    bom = False
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["value", "number", "number", "key", "delete", "table", "duplicate", "header",
                                     "bom"]))
        where = {"value": [i for i, x in enumerate(lines) if "=" in x],
                 "key": [i for i, x in enumerate(lines) if "=" in x],
                 "number": [i for i, x in enumerate(lines) if _NUMBER.search(x)],
                 "header": [i for i, x in enumerate(lines) if x.startswith("[") and "=" not in x and
                            not x.startswith("  ")]}.get(kind, list(range(len(lines))))
        if not where:
            continue
        i = draw(st.sampled_from(where))
        line = lines[i]
        if kind == "value":
            lines[i] = line.split("=", 1)[0] + "= " + draw(st.sampled_from(BAD_VALUES))
        elif kind == "number":
            a, b = draw(st.sampled_from([m.span() for m in _NUMBER.finditer(line)]))
            lines[i] = line[:a] + draw(st.sampled_from(BAD_VALUES)) + line[b:]
        elif kind == "key":
            key, rest = line.split("=", 1)
            new = draw(st.sampled_from(NAMES)) if draw(st.booleans()) else key.strip()[:-1] or "x"
            lines[i] = f"{new} ={rest}"
        elif kind == "delete":
            del lines[i]
        elif kind == "table":
            lines.insert(i, f"[{draw(st.sampled_from(NAMES))}]\nx = 1")
        elif kind == "duplicate":
            lines.insert(i, line)
        elif kind == "header":
            lines[i] = line.replace(line.strip("[] "), draw(st.sampled_from(NAMES)), 1)
        elif kind == "bom":
            bom = True
        if not lines:
            lines = [""]
    return name, ("\ufeff" * bom + "\n".join(lines)).encode("utf-8"), axis


def _sane(lay) -> None:
    """A layout the reader accepted: finite float32 arrays in range, an exact round trip, and a generator whose
    ``valid`` agrees with the numbers."""
    arrays = ([lay.centerline, lay.half_width] if isinstance(lay, L.TrackLayout) else
              [lay.pos, lay.rpy, lay.width, lay.height, lay.frame_thickness, lay.tolerance, lay.start_pos,
               lay.start_rpy, lay.obstacles.pos, lay.obstacles.radius, lay.obstacles.height])
    for a in arrays:
        assert a.dtype == np.float32 and np.isfinite(a).all()
    assert lay.check() is lay
    if isinstance(lay, L.TrackLayout):
        assert (lay.half_width >= 1e-3).all() and np.abs(lay.centerline).max() <= 32768.0
        return
    assert (lay.width >= 1e-3).all() and (lay.height >= 1e-3).all() and (lay.frame_thickness >= 0).all()
    assert lay.start_pos[2] >= 0 and np.abs(lay.rpy).max() <= 2 * np.pi + 1e-6
    upright = not np.abs(lay.rpy[:, :2]).any()
    uniform = all(len(set(getattr(lay, f).tolist())) == 1 for f in ("width", "height", "frame_thickness"))
    if upright and uniform and lay.num_gates <= 16 and len(lay.obstacles) <= 16:
        ok = valid(lay, envs=1)
        opening_bottom = lay.pos[:, 2] - 0.5 * lay.height
        if ok.all():
            assert (opening_bottom >= -1e-6).all()    # a valid course's openings are above the ground (a gate's lower bar may rest on it)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@pytest.mark.filterwarnings("ignore:.*break the course rules")
@given(case=mutated())
def test_fuzz_every_outcome_is_a_clear_refusal_or_a_sane_layout(tmp_path, case):
    name, raw, axis = case
    path = tmp_path / f"{name}.toml"
    path.write_bytes(raw)
    try:
        lay = L.load(path, lsy_axis=axis)
    except L.LayoutFormatError as exc:
        msg = str(exc)
        assert msg.startswith(str(path)), msg
        assert re.search(r"key '[^']+'|not valid TOML|expected a track_gen layout|not UTF-8", msg), msg
        OUTCOMES["refused: " + ("key" if "key '" in msg else "TOML" if "TOML" in msg else "kind")] += 1
        return
    except (ValueError, TypeError) as exc:          # only lsy_axis on a track_gen file may raise so
        assert "lsy_axis" in str(exc), repr(exc)
        OUTCOMES["refused: lsy_axis"] += 1
        return
    _sane(lay)
    back = L.load(lay.save(tmp_path / "again.toml"))
    assert back == lay.replace(name=back.name)
    OUTCOMES["sane"] += 1


def test_fuzz_outcomes_were_counted():
    """Runs after the fuzz test (file order): both outcomes occur; the counts are printed with -s."""
    print(f"\nfuzz outcomes: {dict(OUTCOMES)}")
    if OUTCOMES:
        assert OUTCOMES["sane"] > 0 and sum(v for k, v in OUTCOMES.items() if k.startswith("refused")) > 0
