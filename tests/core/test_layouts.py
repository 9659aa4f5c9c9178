"""Layouts in and out: the file format, the lsy_drone_racing reader, layouts as a generator source, export."""

from __future__ import annotations

import math
import tomllib
import warnings

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen import layouts as L
from track_gen.capture import strict
from track_gen.course import Course
from track_gen.generators.layouts import LayoutWarning
from track_gen.pipeline import presets

# lsy_drone_racing config/level0.toml @ eb891d061cea7bb881b969784a6bdd953c0d4720 (its [env] and [env.track] part)
LSY_LEVEL0 = """
[env]
id = "DroneRacing-v0"
freq = 50
[env.track]
randomize = false
[[env.track.gates]]
pos = [0.5 , 0.25, 0.7]
rpy = [0.0, 0.0, -0.78]
[[env.track.gates]]
pos = [1.05, 0.75, 1.2]
rpy = [0.0, 0.0, 2.35]
[[env.track.gates]]
pos = [-1.0, -0.25, 0.7]
rpy = [0.0, 0.0, 3.14]
[[env.track.gates]]
pos = [0.0, -0.75, 1.2]
rpy = [0.0, 0.0, 0.0]
[[env.track.obstacles]]
pos = [0.0, 0.75, 1.55]
[[env.track.obstacles]]
pos = [1.0, 0.25, 1.55]
[[env.track.obstacles]]
pos = [-1.5, -0.25, 1.55]
[[env.track.obstacles]]
pos = [-0.5, -0.75, 1.55]
[[env.track.drones]]
pos = [-1.5, 0.75, 0.01]
rpy = [0.0, 0.0, 0.0]
vel = [0, 0, 0]
ang_vel = [0, 0, 0]
[env.track.safety_limits]
pos_limit_low = [-2.5, -1.5, -1e-3]
pos_limit_high = [2.5, 1.5, 2.0]
[env.disturbances.action]
fn = "normal"
"""

# the same file before lsy_drone_racing commit 23415dc (gates passed along local +y)
LSY_LEVEL0_OLD_YAWS = [-2.35, 0.78, 1.57, -1.57]

# lsy_drone_racing config/aigp_tracks/competition_swift.toml @ 152a50e7e5e5e815da20d2e85da17946efbe6f4c (part)
LSY_AIGP = """
[env]
id = "AIGPDroneRacing-v0"
[env.track]
randomize = false
obstacles = []
[[env.track.gates]]
pos = [ 5.0, 0.0, 1.5,]
rpy = [ 0.0, 0.0, 0.0,]
[[env.track.gates]]
pos = [ 20.0, 4.0, 1.6,]
rpy = [ 0.0, 0.0, 0.35,]
[[env.track.gates]]
pos = [ 36.0, 3.0, 1.4,]
rpy = [ 0.0, 0.0, -0.15,]
[[env.track.drones]]
pos = [ 0.0, 0.0, 1.5,]
rpy = [ 0.0, 0.0, 0.0,]
[env.track.gate_size]
width = 0.75
height = 0.75
tolerance = 0.2
"""


def f32(x):
    return np.asarray(x, dtype=np.float32)


def same(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture(scope="module")
def shipped():
    return {name: L.load(path) for name, path in L.shipped().items()}


# -- the file format ------------------------------------------------------------------------------
def test_shipped_layouts_cite_their_source(shipped):
    assert len(shipped) >= 4
    for name, path in L.shipped().items():
        text = path.read_text()
        assert "github.com/utiasDSL/lsy_drone_racing" in text and "commit" in text, name
        assert shipped[name].name == name and "lsy_drone_racing" in shipped[name].source
        assert isinstance(shipped[name], L.GateLayout)


def test_round_trip_is_byte_exact(shipped, tmp_path):
    for name, lay in shipped.items():
        back = L.load(lay.save(tmp_path / f"{name}.toml"))
        assert back == lay, name
        for f in ("pos", "rpy", "width", "height", "frame_thickness", "start_pos", "start_rpy", "tolerance"):
            assert same(getattr(back, f), getattr(lay, f)), (name, f)
        assert (tmp_path / f"{name}.toml").read_text() == back.save(tmp_path / "again.toml").read_text()
    # awkward float32 values, -0.0, per-gate sizes, the extremes of the ranges, a loop (NaN is refused on input:
    # tests/core/test_layout_files.py)
    rng = np.random.default_rng(0)
    lay = L.GateLayout(pos=rng.normal(size=(5, 3)) * 1e3, rpy=np.c_[np.zeros((5, 2)), rng.normal(size=5)],
                       width=rng.uniform(0.3, 2.0, 5), height=[1.0, 1.0, 1 / 3, 1e-3, 32768.0], frame_thickness=0.05,
                       closed=True, start_pos=[-0.0, 1 / 3, 2.0], start_rpy=[0, 0, -math.pi], source='a "quoted"\nline')
    back = L.load(lay.save(tmp_path / "odd.toml"))
    assert back == lay and back.source == lay.source and np.signbit(back.start_pos[0])


def test_track_layout_round_trip(tmp_path):
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    lay = L.TrackLayout(np.c_[3 * np.cos(t), 2 * np.sin(t), 0.1 * t], half_width=0.4 + 0.01 * t, source="ellipse")
    back = L.load(lay.save(tmp_path / "t.toml"))
    assert isinstance(back, L.TrackLayout) and back == lay


# -- lsy_drone_racing configs ---------------------------------------------------------------------
def test_lsy_level_parsed_against_the_files_numbers(tmp_path, shipped):
    path = tmp_path / "level0.toml"
    path.write_text(LSY_LEVEL0)
    doc = tomllib.loads(LSY_LEVEL0)["env"]["track"]
    lay = L.load(path, lsy_axis="x")
    assert same(lay.pos, f32([g["pos"] for g in doc["gates"]]))
    assert same(lay.rpy, f32([g["rpy"] for g in doc["gates"]]))           # +x: the file's rotation as it is
    tops = f32([o["pos"] for o in doc["obstacles"]])
    assert same(lay.obstacles.pos[:, :2], tops[:, :2]) and not lay.obstacles.pos[:, 2].any()  # base on the ground
    assert same(lay.obstacles.height, tops[:, 2]) and np.all(lay.obstacles.radius == f32(0.015))
    assert same(lay.start_pos, f32(doc["drones"][0]["pos"])) and same(lay.start_rpy, f32(doc["drones"][0]["rpy"]))
    assert lay.closed is False and np.all(lay.width == f32(0.4)) and np.all(lay.frame_thickness == f32(0.16))
    assert lay.replace(source=shipped["lsy_level0"].source) == shipped["lsy_level0"]


def test_lsy_axis_conventions(tmp_path):
    path = tmp_path / "old.toml"
    old = LSY_LEVEL0
    for new_yaw, old_yaw in zip(["-0.78]", "2.35]", "3.14]", "0.0]"], LSY_LEVEL0_OLD_YAWS):
        old = old.replace(f"rpy = [0.0, 0.0, {new_yaw}", f"rpy = [0.0, 0.0, {old_yaw}]", 1)  # gates come first
    path.write_text(old)
    y = L.load(path, lsy_axis="y")
    expect = np.angle(np.exp(1j * (np.array(LSY_LEVEL0_OLD_YAWS) + np.pi / 2)))
    assert np.allclose(y.yaw, expect, atol=1e-6) and not y.rpy[:, :2].any()
    # the old file (+y) and the current one (+x) describe the same gates (the files round pi/2 to 1.57)
    assert np.allclose(y.yaw, [-0.78, 2.35, 3.14, 0.0], atol=1e-3)
    with pytest.raises(L.LayoutFormatError, match=r"env\.id.*lsy_axis='x'.*23415dc"):
        L.load(path)                                # DroneRacing-v0: the axis is not guessed
    aigp = tmp_path / "aigp.toml"
    aigp.write_text(LSY_AIGP)
    a = L.load(aigp)                                # AIGPDroneRacing-v0: travel along +x
    doc = tomllib.loads(LSY_AIGP)["env"]["track"]
    assert same(a.rpy, f32([g["rpy"] for g in doc["gates"]])) and len(a.obstacles) == 0
    assert np.all(a.width == f32(0.75)) and np.all(a.tolerance == f32(0.2))


# -- layouts as a generator source ----------------------------------------------------------------
def gate_result(g):
    r = g.result
    return {n: getattr(r, n).numpy().copy() for n in ("pos", "yaw", "normal", "count", "width", "height", "thickness",
                                                       "length", "start_pos", "start_yaw", "attempts", "status",
                                                       "valid")} | {
        n: v.numpy().copy() for n, v in g.outputs().items() if "table" not in n}


def test_batch_mixing_gate_counts_is_exact(shipped):
    lays = list(shipped.values())
    E = 2 * len(lays) + 1
    assign = np.arange(E) % len(lays)
    g = tg.GateGenerator(presets.gates_from_layouts(lays, E, "cpu", assign=assign), seeds=3)
    r = g.result
    G = g.layout.gates
    assert G == max(x.num_gates for x in lays) and len({x.num_gates for x in lays}) > 1
    assert same(g.outputs()["gates.layout"].numpy(), assign.astype(np.int32))
    for e, k in enumerate(assign):
        lay = lays[k]
        n = lay.num_gates
        assert r.count.numpy()[e] == n and r.valid.numpy()[e] == 1, (e, r.status.numpy()[e])
        assert same(r.pos.numpy()[e, :n], lay.pos) and same(r.yaw.numpy()[e, :n], lay.yaw)
        assert not r.pos.numpy()[e, n:].any() and not r.yaw.numpy()[e, n:].any()
        assert r.width.numpy()[e] == lay.width[0] and r.height.numpy()[e] == lay.height[0]
        assert r.thickness.numpy()[e] == lay.frame_thickness[0]
        assert same(r.start_pos.numpy()[e], lay.start_pos) and r.start_yaw.numpy()[e] == lay.start_rpy[2]
        nrm = r.normal.numpy()[e, :n]
        assert np.allclose(nrm[:, :2], np.c_[np.cos(lay.yaw), np.sin(lay.yaw)], atol=1e-6)
        m = len(lay.obstacles)
        assert r.obstacle_count.numpy()[e] == m and same(r.obstacle_pos.numpy()[e, :m], lay.obstacles.pos)
        assert same(r.obstacle_radius.numpy()[e, :m], lay.obstacles.radius)
        back = L.export(g, e)                    # a layout flown and exported: the same layout
        assert back.replace(source=lay.source, tolerance=lay.tolerance) == lay   # tolerance is not in a result
    assert r.closed is False


def test_seed_draw_is_per_env(shipped):
    lays = list(shipped.values())
    small = tg.GateGenerator(presets.gates_from_layouts(lays, 6, "cpu"), seeds=11)
    big = tg.GateGenerator(presets.gates_from_layouts(lays, 64, "cpu"), seeds=11)
    a, b = gate_result(small), gate_result(big)
    for k in a:
        assert same(a[k], b[k][:6]), k           # an env's course does not depend on num_envs
    assert len(set(b["gates.layout"])) == len(lays)
    big.enqueue(advance=True)
    assert not same(b["gates.layout"], big.outputs()["gates.layout"].numpy())


def randomized(E=16):
    lays = [L.load(p) for p in L.shipped().values()]
    return presets.gates_from_layouts(lays, E, "cpu", shift=0.3, rotate=0.2, jitter_pos=0.05, jitter_height=0.05,
                                      jitter_yaw=0.1, size=150.0)


def test_randomization_is_rigid_plus_bounded_jitter(shipped):
    lays = list(shipped.values())
    base = presets.gates_from_layouts(lays, 16, "cpu", assign=np.arange(16) % len(lays), size=150.0)
    g0 = tg.GateGenerator(base, seeds=2)
    g1 = tg.GateGenerator(base.with_params({"gates.shift": 0.5, "gates.rotate": 0.3}), seeds=2)
    for e in range(16):
        n = int(g0.result.count.numpy()[e])
        p0, p1 = g0.result.pos.numpy()[e, :n].astype(np.float64), g1.result.pos.numpy()[e, :n].astype(np.float64)
        d0 = np.linalg.norm(p0[:, None] - p0[None], axis=-1)
        d1 = np.linalg.norm(p1[:, None] - p1[None], axis=-1)
        assert np.allclose(d0, d1, atol=1e-4)                     # rigid: distances kept
        turn = g1.result.yaw.numpy()[e, :n] - g0.result.yaw.numpy()[e, :n]
        assert np.allclose(turn, turn[0], atol=1e-5) and abs(turn[0]) <= 0.3 + 1e-6
        assert np.allclose(p1[:, 2], p0[:, 2])
    g2 = tg.GateGenerator(base.with_params({"gates.jitter_pos": 0.1, "gates.jitter_yaw": 0.05}), seeds=2)
    dp = np.abs(g2.result.pos.numpy() - g0.result.pos.numpy())
    assert dp[..., :2].max() <= 0.1 + 1e-5 and dp[..., :2].max() > 0
    assert np.abs(g2.result.yaw.numpy() - g0.result.yaw.numpy()).max() <= 0.05 + 1e-6


def test_masked_regeneration_equals_a_full_one_on_masked_rows():
    a = tg.GateGenerator(randomized(), seeds=5)
    b = tg.GateGenerator(randomized(), seeds=5)
    before = gate_result(a)
    mask_np = np.arange(16) % 3 == 1
    a.enqueue(advance=True, mask=wp.array(mask_np, dtype=wp.bool, device="cpu"))
    b.enqueue(advance=True)
    got, full = gate_result(a), gate_result(b)
    for k in got:
        assert same(got[k][mask_np], full[k][mask_np]), k
        assert same(got[k][~mask_np], before[k][~mask_np]), k
    a.enqueue(advance=True, mask=wp.zeros(16, dtype=wp.bool, device="cpu"))    # all-zero mask: identity
    for k, v in gate_result(a).items():
        assert same(v, got[k]), k


def test_graph_replay_equals_eager():
    eager = tg.GateGenerator(randomized(), seeds=9)
    rec = tg.GateGenerator(randomized(), seeds=9)
    mask = wp.array(np.arange(16) % 2 == 0, dtype=wp.bool, device="cpu")
    with wp.ScopedCapture(device="cpu") as cap, strict():
        rec.enqueue(advance=True, mask=mask)
    for _ in range(3):
        wp.capture_launch(cap.graph)
        eager.enqueue(advance=True, mask=mask)
        for k, v in gate_result(rec).items():
            assert same(v, gate_result(eager)[k]), k
    source = L.export(tg.TrackGenerator(presets.track(4, "cpu"), seeds=1), None)
    spec = presets.track_from_layouts(source, 4, "cpu", rotate=0.5, shift=0.5, size=20.0)
    eager, rec = tg.TrackGenerator(spec, seeds=1), tg.TrackGenerator(spec, seeds=1)
    with wp.ScopedCapture(device="cpu") as cap, strict():
        rec.enqueue(advance=True)
    for _ in range(2):
        wp.capture_launch(cap.graph)
        eager.enqueue(advance=True)
        for k, v in rec.outputs().items():
            assert same(v.numpy(), eager.outputs()[k].numpy()), k
    assert rec.generation.numpy().tolist() == [2] * 4 and rec.result.valid.numpy().all()


def test_course_gates_steps_over_layouts(shipped):
    lay = shipped["lsy_level0"]
    E = 4
    course = Course.gates(presets.gates_from_layouts([lay], E, "cpu"), collision=0.02, seeds=1)
    pos = wp.zeros(E, dtype=wp.vec3f, device="cpu")
    quat = wp.array(np.tile([0, 0, 0, 1], (E, 1)).astype(np.float32), dtype=wp.quatf, device="cpu")
    he = wp.array(np.full((E, 2), 0.05, np.float32), dtype=wp.vec2f, device="cpu")
    course.bind(position=pos, orientation=quat, half_extents=he)
    n0 = np.array([math.cos(lay.yaw[0]), math.sin(lay.yaw[0]), 0.0])
    pos.assign(np.tile(lay.pos[0] - 0.3 * n0, (E, 1)).astype(np.float32))
    course.step()
    pos.assign(np.tile(lay.pos[0] + 0.3 * n0, (E, 1)).astype(np.float32))
    res = course.step()
    assert res.valid.numpy().all()
    assert res.events.passed.numpy().tolist() == [1] * E


# -- export ---------------------------------------------------------------------------------------
def test_export_procedural_courses_round_trip(tmp_path):
    gates = tg.GateGenerator(presets.gates(6, "cpu", gate_width=1.0), seeds=4)
    r = gates.result
    for e, lay in enumerate(L.export(gates, None)):
        back = L.load(lay.save(tmp_path / f"g{e}.toml"))
        n = int(r.count.numpy()[e])
        assert back == lay and same(back.pos, r.pos.numpy()[e, :n]) and same(back.yaw, r.yaw.numpy()[e, :n])
        assert back.width[0] == r.width.numpy()[e] and same(back.start_pos, r.start_pos.numpy()[e])
    # a batch of exported courses flown again: the same gates, exactly
    lays = [L.load(tmp_path / f"g{e}.toml") for e in range(6)]
    spec = presets.gates_from_layouts(lays, 6, "cpu", assign=range(6), max_gates=gates.layout.gates)
    again = tg.GateGenerator(spec, seeds=0)
    assert same(again.result.pos.numpy(), r.pos.numpy())
    assert same(again.result.yaw.numpy(), r.yaw.numpy()) and same(again.result.count.numpy(), r.count.numpy())
    tracks = tg.TrackGenerator(presets.track(3, "cpu"), seeds=4)
    t = tracks.result
    tl = L.export(tracks, [0, 2])
    back = [L.load(x.save(tmp_path / f"t{i}.toml")) for i, x in enumerate(tl)]
    assert back == tl and same(back[1].centerline[:, :2], t.xy.numpy()[2])
    flown = tg.TrackGenerator(presets.track_from_layouts(back, 2, "cpu", assign=[0, 1]), seeds=0)
    assert same(flown.result.xy.numpy(), t.xy.numpy()[[0, 2]])
    assert same(flown.result.half_width.numpy(), t.half_width.numpy()[[0, 2]])
    assert flown.result.valid.numpy().all() and "elevation" not in [s.name for s in flown.spec.stages]


def test_track_layouts_resampled_and_elevated():
    t = np.linspace(0, 2 * np.pi, 50, endpoint=False)
    ring = L.TrackLayout(np.c_[4 * np.cos(t), 3 * np.sin(t), 1.0 + 0.2 * np.sin(t)], 0.5, name="ring")
    g = tg.TrackGenerator(presets.track_from_layouts([ring], 2, "cpu", num_points=128), seeds=0)
    r = g.result
    assert r.xy.shape == (2, 128) and r.valid.numpy().all()
    assert np.allclose(np.hypot(r.xy.numpy()[0, :, 0] / 4, r.xy.numpy()[0, :, 1] / 3), 1.0, atol=0.01)
    assert np.allclose(r.z.numpy()[0], 1.0 + 0.2 * r.xy.numpy()[0, :, 1] / 3, atol=0.01)
    assert r.start_pos.numpy()[0, 2] == r.z.numpy()[0, 0]
    course = Course.track(presets.track_from_layouts([ring.replace(centerline=ring.centerline * [1, 1, 0])], 2, "cpu"),
                          checkpoint_spacing=0.5, seeds=0)
    course.bind(position=wp.zeros(2, dtype=wp.vec3f, device="cpu"))
    assert course.step().valid.numpy().all()


# -- bad input ------------------------------------------------------------------------------------
def test_malformed_files_name_file_key_and_line(tmp_path, shipped):
    good = shipped["lsy_level0"].save(tmp_path / "good.toml").read_text()
    cases = {
        "syntax": (good.replace("width = 0.4", "width = = 0.4"), r"syntax\.toml: not valid TOML: .*line \d+"),
        "units": (good.replace('length_unit = "m"', 'length_unit = "mm"'), r"'layout\.length_unit' \(line 6\).*\"m\""),
        "version": (good.replace("version = 1", "version = 7"), r"'layout\.version'.*update track_gen"),
        "row": (good.replace("[1.05, 0.75, 1.2]", "[1.05, 0.75]"), r"'gates\.pos\[1\]' \(line \d+\).*3 numbers"),
        "rpy": (good.replace("  [0.0, 0.0, 2.35],\n", ""), r"'gates\.rpy'.*4 rows"),
        "missing": (good.replace("[start]\npos = [-1.5, 0.75, 0.01]\n", "[start]\n"), r"'start\.pos'.*missing"),
        "width": (good.replace("width = 0.4", "width = [0.4, 0.4]"), r"'gates\.width'.*4 numbers"),
        "neither": ("[foo]\nx = 1\n", r"neither|expected a track_gen layout"),
    }
    for name, (text, match) in cases.items():
        p = tmp_path / f"{name}.toml"
        p.write_text(text)
        with pytest.raises(L.LayoutFormatError, match=match) as info:
            L.load(p)
        assert str(p) in str(info.value), name
    lsy = tmp_path / "nodrone.toml"
    lsy.write_text(LSY_AIGP.split("[[env.track.drones]]")[0])
    with pytest.raises(L.LayoutFormatError, match=r"nodrone\.toml: key 'env\.track\.drones'"):
        L.load(lsy)


def test_capacity_and_construction_errors(shipped):
    lays = list(shipped.values())
    with pytest.raises(ValueError, match=r"'aigp_competition_a2rl' has 11 gates.*max_gates=5"):
        presets.gates_from_layouts(lays, 4, "cpu", max_gates=5)
    with pytest.raises(ValueError, match=r"has 11 gates.*max_gates=5"):     # a spec edited past the preset
        tg.GateGenerator(presets.gates_from_layouts(lays, 4, "cpu").with_params({"gates.max_gates": 5}))
    lvl = shipped["lsy_level0"]
    with pytest.raises(ValueError, match="tilted"):
        presets.gates_from_layouts([lvl.replace(rpy=lvl.rpy + [0.1, 0, 0])], 2, "cpu")
    with pytest.raises(ValueError, match="different width"):
        presets.gates_from_layouts([lvl.replace(width=[0.4, 0.5, 0.4, 0.4])], 2, "cpu")
    with pytest.raises(ValueError, match="mix loops"):
        presets.gates_from_layouts([lvl, lvl.replace(closed=True)], 2, "cpu")
    with pytest.raises(ValueError, match=r"assign.*\[0, 0\]"):
        presets.gates_from_layouts([lvl], 2, "cpu", assign=[0, 1])
    with pytest.raises(TypeError, match="unknown field"):
        presets.gates_from_layouts([lvl], 2, "cpu", gate_width=1.0)
    with pytest.raises(TypeError, match="track_from_layouts"):
        presets.gates_from_layouts([L.TrackLayout(np.eye(4, 3), 0.3)], 2, "cpu")


def test_a_layout_breaking_the_rules_warns_once_and_is_invalid(shipped):
    lvl = shipped["lsy_level0"]
    crowded = lvl.replace(pos=np.r_[lvl.pos[:1], lvl.pos[:1] + [0.1, 0, 0], lvl.pos[2:]], name="crowded")
    poled = lvl.replace(obstacles=L.Poles(pos=[lvl.pos[2] * [1, 1, 0]], radius=0.02, height=2.0), name="poled")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = tg.GateGenerator(presets.gates_from_layouts([lvl, crowded, poled], 6, "cpu", assign=[0, 1, 2] * 2),
                             seeds=0)
        g.enqueue(advance=True)
    ours = [w for w in caught if issubclass(w.category, LayoutWarning)]
    assert len(ours) == 1 and "'crowded'" in str(ours[0].message) and "'poled'" in str(ours[0].message)
    assert "lsy_level0" not in str(ours[0].message)
    assert g.result.valid.numpy().tolist() == [1, 0, 0] * 2
    status = [tg.GateStatus(int(s)) for s in g.result.status.numpy()]
    assert status[1] & tg.GateStatus.CROWDED and status[2] == tg.GateStatus.OBSTACLE   # a pole in gate 2's opening
    assert g.inputs["gates.table_status"].numpy().tolist()[0] == 0
