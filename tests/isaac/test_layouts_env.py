"""Real layouts in Isaac Lab envs (issue 13): ``CourseCfg(layouts=...)`` in a kitless env (both
runtimes), its errors, and ``evaluate --layout`` end to end on a 2-iteration checkpoint (CPU)."""

from __future__ import annotations

import copy
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

from track_gen import layouts
from track_gen_isaac import CourseCfg

from .envs import HALF, GatesEnvCfg
from .helpers import Schedule, env_frame_pos, step

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
SHIPPED = layouts.shipped()
PAIR = [str(SHIPPED["lsy_level0"]), str(SHIPPED["aigp_competition_swift"])]  # 4 and 7 gates, both one pass
LAYS = [layouts.load(p) for p in PAIR]
E = 8
STEPS = 150


def layout_env_cfg(assign=None, **course) -> GatesEnvCfg:
    """The test suite's gate env flying the two shipped layouts (a per-env draw, or ``assign``)."""
    cfg = GatesEnvCfg()
    cfg.scene.num_envs = E
    cfg.course = CourseCfg(layouts=PAIR, layout_options={} if assign is None else {"assign": list(assign)},
                           collision="frame", half_extents=HALF[:2], half_height=HALF[2], seed=7, **course)
    return cfg


def check_gates(ec) -> np.ndarray:
    """Every env's gates are its layout's float32 numbers exactly; returns each env's layout index."""
    r = ec.course.result
    idx = ec.course.generator.outputs()["gates.layout"].numpy().copy()
    pos, yaw, count = r.pos.numpy(), r.yaw.numpy(), r.count.numpy()
    for e in range(ec.num_envs):
        lay = LAYS[idx[e]]
        n = lay.num_gates
        assert count[e] == n, (e, idx[e])
        np.testing.assert_array_equal(pos[e, :n], lay.pos, err_msg=f"env {e}")
        np.testing.assert_array_equal(yaw[e, :n], lay.yaw, err_msg=f"env {e}")
        assert not pos[e, n:].any()
        assert r.width.numpy()[e] == lay.width[0] and r.height.numpy()[e] == lay.height[0]
        assert r.thickness.numpy()[e] == lay.frame_thickness[0]
        np.testing.assert_array_equal(r.start_pos.numpy()[e], lay.start_pos)
        m = len(lay.obstacles)
        assert r.obstacle_count.numpy()[e] == m
        np.testing.assert_array_equal(r.obstacle_pos.numpy()[e, :m], lay.obstacles.pos)
    assert r.valid.numpy().all()
    return idx


def run(env, steps: int) -> list[dict]:
    """Reset, then ``steps`` steps of the test Schedule; after every step each env's gates are checked
    against its layout. Returns per-step records (for comparing runtimes)."""
    from track_gen_isaac import get_course

    env.reset()
    ec = get_course(env)
    sched = Schedule(env, ec)
    out = []
    for k in range(steps):
        sched.move(k)
        obs, rew, term, trunc, _ = step(env)
        idx = check_gates(ec)
        out.append({"rew": rew.cpu().numpy().copy(), "term": term.cpu().numpy().copy(), "layout": idx,
                    "gen": ec.course.generator.generation.numpy().copy(), "pos": env_frame_pos(env, ec),
                    **{f"obs.{n}": v.cpu().numpy().copy() for n, v in obs["policy"].items()}})
        sched.done(out[-1]["term"] | trunc.cpu().numpy())
    return out


# -- the cfg (no sim) -----------------------------------------------------------------------------
def test_cfg_keeps_layouts_as_plain_data_and_takes_the_mode_from_them():
    from isaaclab.utils import configclass

    obj = LAYS[0]
    cfg = CourseCfg(layouts=[pathlib.Path(PAIR[1]), obj], collision="frame")
    assert cfg.mode == "gates" and cfg.layouts[0] == PAIR[1] and isinstance(cfg.layouts[1], dict)
    assert cfg.load_layouts() == [LAYS[1], obj]  # dicts of Python floats read back exactly at float32
    cfg.validate_config()
    only_paths = CourseCfg(layouts=PAIR[0])
    assert only_paths.mode is None and only_paths.layouts == [PAIR[0]]
    only_paths.validate_config()
    assert only_paths.mode == "gates"

    @configclass
    class Holder:  # as in an env cfg: deep-copied and walked by configclass
        course: CourseCfg = CourseCfg(layouts=[obj], layout_options={"jitter_pos": 0.1}, collision="frame")

    h = Holder()
    d = h.to_dict()["course"]
    assert d["layouts"][0]["pos"] == obj.pos.tolist() and d["layout_options"] == {"jitter_pos": 0.1}
    assert copy.deepcopy(h).course.load_layouts() == [obj]
    h.from_dict({"course": {"layouts": [PAIR[1]], "layout_options": {"jitter_pos": 0.2}}})
    assert h.course.load_layouts() == [LAYS[1]]
    assert Holder().course.layout_options == {"jitter_pos": 0.1}  # instances share nothing
    # the procedural generator's checks do not apply to a layout course (the layout has its opening)
    CourseCfg(layouts=PAIR, generator={"gate_width": 0.0}, mode="gates").validate_config()


def test_recenter_puts_the_layout_middle_on_the_env_origin():
    from track_gen_isaac.course_build import build_course

    cfg = CourseCfg(layouts=PAIR[1], layout_recenter=True, collision=0.05)
    lay = cfg.load_layouts()[0]
    xy = np.concatenate([lay.pos[:, :2], lay.start_pos[None, :2]])
    np.testing.assert_allclose(0.5 * (xy.min(0) + xy.max(0)), 0.0, atol=1e-5)
    np.testing.assert_array_equal(lay.pos[:, 2], LAYS[1].pos[:, 2])
    course = build_course(cfg, 2, "cpu", seed=0)
    np.testing.assert_array_equal(course.result.pos.numpy()[1, :7], lay.pos)


@pytest.mark.parametrize("course, error, message", [
    ({"layouts": "/nowhere/track.toml"}, layouts.LayoutFormatError, r"CourseCfg.layouts\[0\]: /nowhere/track.toml: cannot read"),
    ({"layouts": "BAD"}, layouts.LayoutFormatError, r"CourseCfg.layouts\[0\]: .*bad.toml: key 'layout.angle_unit' \(line 12\)"),
    ({"layouts": [PAIR[0], "BAD"]}, layouts.LayoutFormatError, r"CourseCfg.layouts\[1\]: .*bad.toml"),
    ({"layouts": str(SHIPPED["aigp_competition_a2rl"]), "layout_options": {"max_gates": 8}}, ValueError,
     r"CourseCfg.layout_options.*'aigp_competition_a2rl' has 11 gates, more than the capacity max_gates=8"),
    ({"layouts": PAIR, "layout_options": {"jitter": 0.1}}, TypeError, r"CourseCfg.layout_options.*unknown field"),
    ({"layouts": PAIR, "layout_options": {"assign": [0, 2]}}, ValueError, r"CourseCfg.layout_options.*assign holds"),
    ({"layouts": PAIR, "mode": "track"}, ValueError, r"CourseCfg.layouts: 'lsy_level0' is a gate layout but mode='track'"),
    ({"layouts": [3]}, TypeError, r"CourseCfg.layouts\[0\]: expected a layout file"),
    ({"layouts": []}, ValueError, r"CourseCfg.layouts: an empty list"),
    ({"layouts": PAIR, "layout_options": 3}, TypeError, r"CourseCfg.layout_options: expected a dict"),
])
def test_cfg_errors_name_the_field(tmp_path, course, error, message):
    bad = tmp_path / "bad.toml"
    bad.write_text(SHIPPED["lsy_level0"].read_text().replace('angle_unit = "rad"', 'angle_unit = "deg"'))
    fix = lambda v: str(bad) if v == "BAD" else v  # noqa: E731
    course = {k: ([fix(x) for x in v] if isinstance(v, list) else fix(v)) for k, v in course.items()}
    cfg = CourseCfg(collision="frame", **course)
    with pytest.raises(error, match=message):
        cfg.validate_config()


def test_too_many_gates_fails_at_env_construction():
    from isaaclab.envs import ManagerBasedRLEnv

    cfg = layout_env_cfg()
    cfg.course.layout_options = {"max_gates": 5}
    with pytest.raises(ValueError, match="'aigp_competition_swift' has 7 gates, more than the capacity max_gates=5"):
        ManagerBasedRLEnv(cfg)


# -- the env: each env's gates are its layout's numbers, through resets, in both runtimes -----------
def test_fixed_assignment_keeps_each_env_on_its_layout_through_resets():
    from isaaclab.envs import ManagerBasedRLEnv

    from track_gen_isaac import get_course

    assign = [0, 1, 1, 0, 1, 0, 0, 1]
    env = ManagerBasedRLEnv(layout_env_cfg(assign))
    try:
        env.reset()
        ec = get_course(env)
        assert ec.mode == "gates" and list(check_gates(ec)) == assign
        gen0 = ec.course.generator.generation.numpy().copy()
        # the robot starts at its layout's start pose (env frame)
        np.testing.assert_allclose(env_frame_pos(env, ec), np.stack([LAYS[a].start_pos for a in assign]), atol=1e-5)
        step(env, 3)
        env.reset(env_ids=torch.tensor([1, 2, 6], dtype=torch.int32))  # regenerates those three
        gen = ec.course.generator.generation.numpy()
        assert list(gen - gen0) == [0, 1, 1, 0, 0, 0, 1, 0]
        assert list(check_gates(ec)) == assign
        step(env, 2)
        assert list(check_gates(ec)) == assign
    finally:
        env.close()


@pytest.fixture(scope="module")
def runs():
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab_experimental.envs import ManagerBasedRLEnvWarp

    env = ManagerBasedRLEnv(layout_env_cfg())
    stable = run(env, STEPS)
    env.close()
    env = ManagerBasedRLEnvWarp(layout_env_cfg())
    warp = run(env, STEPS)
    env.close()
    return stable, warp


def test_regenerations_draw_layouts_and_keep_their_numbers(runs):
    stable, _ = runs
    resets = sum(int(r["term"].sum()) for r in stable)
    gen = stable[-1]["gen"] - stable[0]["gen"]
    assert resets >= 4 and gen.sum() >= 4  # laps=1: a finished pass ends the episode -> a new course
    seen = np.stack([r["layout"] for r in stable])
    assert set(np.unique(seen)) == {0, 1}  # both layouts flown
    changed = (seen[1:] != seen[:-1]).any(axis=0)
    assert changed.any()  # a regeneration drew the other layout for some env (gates checked every step)


def test_warp_runtime_equals_stable_runtime_on_layouts(runs):
    stable, warp = runs
    for k, (a, b) in enumerate(zip(stable, warp)):
        for key in a:
            if key in ("term", "gen", "layout"):
                np.testing.assert_array_equal(b[key], a[key], err_msg=f"step {k}: {key}")
            else:
                np.testing.assert_allclose(b[key], a[key], atol=1e-5, rtol=1e-5, err_msg=f"step {k}: {key}")


# -- evaluate --layout ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    """A 2-iteration checkpoint of the gate task, trained by Isaac Lab's own entry point."""
    cwd = tmp_path_factory.mktemp("train")
    cmd = [sys.executable, "-m", "isaaclab", "train", "--rl_library", "rsl_rl", "--task", "TrackGen-Drone-Gates-v0",
           "--num_envs", "16", "--max_iterations", "2", "--device", "cpu", "--seed", "3", "agent.device=cpu"]
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run_dir,) = list((cwd / "logs" / "rsl_rl" / "trackgen_drone_gates").iterdir())
    return run_dir


def test_layout_suite_of_a_shipped_file():
    from track_gen_isaac.evaluate.layout_suite import DEFAULT_JITTER, LAYOUT_SEED, layout_suite
    from track_gen_isaac.evaluate.suites import RESERVED_SEEDS

    s = layout_suite(SHIPPED["aigp_competition_swift"])
    assert s.name == "aigp_competition_swift" and s.task == "TrackGen-Drone-Gates-v0" and s.laps == 1
    assert s.course == {"jitter_pos": 0.2} and s.seed == LAYOUT_SEED and s.seed in RESERVED_SEEDS
    assert s.family == "aigp_competition_swift" and s.version is None and s.to_dict()["layout"] == s.layout
    lsy = layout_suite(SHIPPED["lsy_level0"])  # no tolerance in the file: the default jitter
    assert lsy.course == {"jitter_pos": DEFAULT_JITTER} and "gives no tolerance" in lsy.description
    assert layout_suite(SHIPPED["lsy_level0"], jitter=0.0).course == {}  # the nominal gates
    assert layout_suite(SHIPPED["aigp_competition_swift"], jitter=0.1).course == {"jitter_pos": 0.1}
    with pytest.raises(ValueError, match="jitter"):
        layout_suite(SHIPPED["lsy_level0"], jitter=-1.0)
    with pytest.raises(ValueError, match="is a folder"):
        layout_suite(layouts.data_dir())


def test_evaluate_on_a_layout_flies_jittered_copies_with_a_reference(checkpoint, tmp_path):
    from track_gen_isaac.evaluate import evaluate
    from track_gen_isaac.evaluate import rollout as F
    from track_gen_isaac.evaluate.layout_suite import layout_suite

    suite = layout_suite(SHIPPED["aigp_competition_swift"], time_limit_s=1.0)
    env, _ = F.build_env(suite, 3, "cpu")
    try:
        from track_gen_isaac import get_course

        base = env.unwrapped
        r = get_course(base).course.result
        pos = r.pos.numpy()[:, :7]
        nominal = LAYS[1].pos
        assert np.abs(pos[..., :2] - nominal[..., :2]).max() <= 0.2 + 1e-6  # jittered within the tolerance
        assert np.array_equal(pos[..., 2], np.broadcast_to(nominal[:, 2], (3, 7)))
        assert not np.array_equal(pos[0], pos[1]) and r.valid.numpy().all()
        alt = base.cfg.terminations.altitude.params
        assert alt["max_height"] >= 4.0 and alt["min_height"] == 0.1
    finally:
        env.close()
    res = evaluate(checkpoint, suite, num_courses=3, out=tmp_path / "swift", device="cpu", baselines=False)
    s = res["suites"]["aigp_competition_swift"]
    assert s["num_courses"] == 3 and s["suite"]["layout"] == suite.layout and set(s["baselines"]) == set()
    rows = s["courses"]
    assert all(row["reference_first_lap_s"] > 0 and row["lap_length_m"] > 50.0 for row in rows)
    for name in ("eval.json", "eval.md", "paths.png", "best_worst.png"):
        assert (tmp_path / "swift" / name).stat().st_size > 0, name


def test_cli_layout_end_to_end(checkpoint, tmp_path):
    level0 = str(SHIPPED["lsy_level0"])
    both = subprocess.run([sys.executable, "-m", "track_gen_isaac.evaluate", "--checkpoint", str(checkpoint),
                           "--suite", "gates-v1", "--layout", level0], env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert both.returncode == 2 and "not both" in both.stderr
    axis = subprocess.run([sys.executable, "-m", "track_gen_isaac.evaluate", "--checkpoint", str(checkpoint),
                           "--layout", level0, "--lsy_axis", "y", "--device", "cpu"], env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert axis.returncode == 2 and "drop lsy_axis" in axis.stderr  # a track_gen file states its axis
    cmd = [sys.executable, "-m", "track_gen_isaac.evaluate", "--checkpoint", str(checkpoint), "--layout", level0,
           "--num_courses", "2", "--device", "cpu", "--no-baselines", "--out", str(tmp_path / "level0")]
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((tmp_path / "level0" / "eval.json").read_text())
    s = data["suites"]["lsy_level0"]
    # the file gives no tolerance: the gates are jittered by 5 cm
    assert s["num_courses"] == 2 and s["suite"]["laps"] == 1 and s["suite"]["course"] == {"jitter_pos": 0.05}
    assert all(r["reference_first_lap_s"] > 0 for r in s["courses"])
    assert (tmp_path / "level0" / "paths.png").stat().st_size > 0
    assert "paths.png" in (tmp_path / "level0" / "eval.md").read_text()
