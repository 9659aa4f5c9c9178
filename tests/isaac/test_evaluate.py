"""track_gen_isaac.evaluate: suites, metrics against a scripted course-line follower, determinism,
the errors, and the CLI end to end on a 2-iteration checkpoint (real kitless envs, CPU)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from track_gen_isaac.evaluate import SUITES, evaluate, get_suite, list_suites
from track_gen_isaac.evaluate.suites import RESERVED_SEEDS, HeldOutWarning, training_overlap

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _short(name: str, seconds: float) -> object:
    """A suite like ``name`` with a shorter time limit (the tests' horizons)."""
    s = SUITES[name]
    return dataclasses.replace(s, name=f"{s.family}-short-v{s.version}", time_limit_s=seconds)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> pathlib.Path:
    """A 2-iteration checkpoint of the gate task, trained by Isaac Lab's own entry point."""
    cwd = tmp_path_factory.mktemp("train")
    cmd = [sys.executable, "-m", "isaaclab", "train", "--rl_library", "rsl_rl", "--task", "TrackGen-Drone-Gates-v0",
           "--num_envs", "16", "--max_iterations", "2", "--device", "cpu", "--seed", "3", "agent.device=cpu"]
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    runs = list((cwd / "logs" / "rsl_rl" / "trackgen_drone_gates").iterdir())
    assert len(runs) == 1 and list(runs[0].glob("model_*.pt"))
    return runs[0]


# -- suites -------------------------------------------------------------------------------------
def test_suites_are_named_versioned_and_held_out():
    assert {"gates-v1", "track-v1"} <= set(SUITES)
    for s in SUITES.values():
        assert s.seed in RESERVED_SEEDS and s.version >= 1 and s.task.startswith(("TrackGen-Drone-", "TrackGen-Car-"))
    assert len(list_suites()) == len(SUITES)
    with pytest.raises(ValueError, match="unknown suite 'nope'.*gates-v1.*track-v1"):
        get_suite("nope")
    assert len({s.seed for s in SUITES.values()}) == len(SUITES)  # no two suites share courses


def test_the_cars_validation_suite_is_the_test_suites_twin_on_other_courses():
    """car-val-v1 (for choosing among checkpoints) flies car-track-v1's generator and env on courses of
    its own seed; the car task's benchmark stays car-track-v1."""
    from track_gen_isaac.evaluate import suite_of_task

    val, test = SUITES["car-val-v1"], SUITES["car-track-v1"]
    assert val.seed != test.seed and dataclasses.replace(val, name=test.name, seed=test.seed, description="") == \
        dataclasses.replace(test, description="")
    assert suite_of_task("TrackGen-Car-Track-v0") is test


def test_suite_records_any_override_as_json():
    """A suite whose overrides hold an event cfg (classes, functions) still writes eval.json."""
    from track_gen_isaac.tasks.drone_racer import RaceEventsCfg

    suite = dataclasses.replace(SUITES["gates-v1"], env_overrides={"events": RaceEventsCfg(), "events.dynamics": None,
                                                                    "sim.dt": 0.01, "x": (1, 2)})
    d = json.loads(json.dumps(suite.to_dict()))
    assert d["env_overrides"]["events.dynamics"] is None and d["env_overrides"]["sim.dt"] == 0.01
    assert d["env_overrides"]["x"] == [1, 2] and "RaceEventsCfg" in d["env_overrides"]["events"]
    assert d["name"] == "gates-v1" and d["family"] == "gates" and d["version"] == 1


def test_overlapping_training_seed_warns_and_says_which(tmp_path):
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "env.yaml").write_text(
        "seed: 1000000101\nsim:\n  gravity: !!python/tuple\n  - 0.0\n  - -9.81\ncourse:\n  seed: null\n")
    with pytest.warns(HeldOutWarning, match="gates-v1"):
        assert "1000000101" in training_overlap(tmp_path, SUITES["gates-v1"])
    (tmp_path / "params" / "env.yaml").write_text("seed: 1\ncourse:\n  seed: null\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert training_overlap(tmp_path, SUITES["gates-v1"]) is None


# -- metrics against a scripted policy ----------------------------------------------------------
class LineFollower:
    """Moves every drone along its course line at ``speed`` (writes the root pose and velocity
    before each step; the zero action hovers): known lap times, no failures."""

    def __init__(self, env, speed: float):
        from track_gen_isaac.env_course import get_course
        from track_gen_isaac.evaluate.reference import project_on_line

        self.base = env.unwrapped
        self.ec = get_course(self.base)
        line = self.ec.course.course_line.line
        self.lines = []
        start = self.ec.course.result.start_pos.numpy()
        for e in range(self.base.num_envs):
            p = line.points.numpy()[e, : int(line.count.numpy()[e])].astype(np.float64)
            seg = np.linalg.norm(np.roll(p, -1, 0) - p, axis=1)
            s = np.concatenate([[0.0], np.cumsum(seg)])
            self.lines.append((np.concatenate([p, p[:1]]), s, project_on_line(p, True, start[e])))
        self.u = np.array([u0 for *_, u0 in self.lines])
        self.speed, self.dt = speed, float(self.base.step_dt)

    def __call__(self, obs):
        self.u += self.speed * self.dt
        pos, vel = [], []
        for e, (p, s, _) in enumerate(self.lines):
            u = self.u[e] % s[-1]
            q = np.array([np.interp(u, s, p[:, k]) for k in range(3)])
            d = np.array([np.interp(u + 0.05, s, p[:, k]) for k in range(3)]) - q
            d /= np.linalg.norm(d)
            pos.append(q)
            vel.append(self.speed * d)
        E = self.base.num_envs
        origins = self.base.scene.env_origins.numpy()
        pose = torch.zeros(E, 7)
        pose[:, :3] = torch.as_tensor(np.asarray(pos) + origins, dtype=torch.float32)
        yaw = np.arctan2([v[1] for v in vel], [v[0] for v in vel])
        pose[:, 5], pose[:, 6] = torch.as_tensor(np.sin(yaw / 2)), torch.as_tensor(np.cos(yaw / 2))
        v6 = torch.zeros(E, 6)
        v6[:, :3] = torch.as_tensor(np.asarray(vel), dtype=torch.float32)
        ids = torch.arange(E, dtype=torch.int32)
        self.ec.asset.write_root_pose_to_sim_index(root_pose=pose, env_ids=ids)
        self.ec.asset.write_root_velocity_to_sim_index(root_velocity=v6, env_ids=ids)
        return torch.zeros(E, 4)


def test_metrics_of_a_course_line_follower_match_its_known_lap_times():
    from track_gen_isaac.evaluate import metrics as M
    from track_gen_isaac.evaluate import reference as R
    from track_gen_isaac.evaluate import rollout as F

    suite = _short("gates-v1", 12.0)
    env, _ = F.build_env(suite, 3, "cpu")
    try:
        env.reset()
        follower = LineFollower(env, speed=5.0)
        ec = follower.ec
        limits = R.vehicle_limits(env.unwrapped.cfg.actions.rotors.model)
        crefs = R.course_references(ec, limits)
        refs = [R.reference_row(r) for r in crefs]
        flight = F.fly(env, follower, suite.laps)
        cps = ec.course.checkpoints
        finish = [float(cps.s.numpy()[e, int(cps.count.numpy()[e]) - 1]) for e in range(3)]
    finally:
        env.close()
    rows = M.course_rows(flight, refs, suite.laps)
    dt = flight.step_dt
    for e, r in enumerate(rows):
        p, s, u0 = follower.lines[e]
        assert r["completed"] and r["end"] == "laps", {k: r[k] for k in ("end", "gates", "first_lap_s", "lap_s", "duration_s")}
        assert r["gates"] == 2 * int(ec.course.checkpoints.count.numpy()[e])
        assert r["lap_s"] == pytest.approx(s[-1] / 5.0, abs=2 * dt)  # one loop of the line at 5 m/s
        first = (finish[e] - u0) % s[-1]
        assert r["first_lap_s"] == pytest.approx(first / 5.0, abs=2 * dt)
        assert r["mean_speed_mps"] == pytest.approx(5.0, rel=0.05)
        assert r["lap_time_ratio"] == pytest.approx(r["lap_s"] / r["reference_lap_s"])
        assert r["line_lap_time_ratio"] == pytest.approx(r["lap_s"] / r["line_reference_lap_s"])
        assert r["lap_length_m"] == pytest.approx(s[-1], rel=0.02)
        # the path reference cuts inside the openings: faster than the course line, on a shorter loop
        assert r["reference_lap_s"] < r["line_reference_lap_s"]
        assert r["reference_first_lap_s"] <= r["line_reference_first_lap_s"]
        assert r["reference_lap_length_m"] < r["lap_length_m"]
        # the pictures' reference path is the loop the reference time was flown on
        path = R.reference_path(crefs[e])
        loop = np.linalg.norm(np.diff(path, axis=0), axis=1).sum() + np.linalg.norm(path[-1] - path[0])
        assert loop == pytest.approx(r["reference_lap_length_m"], rel=0.01)
    agg = M.aggregate(rows)
    assert agg["completion_rate"] == 1.0 and agg["completion_rate_ci95"] == [1.0, 1.0]
    assert agg["crash_rate"] == 0.0
    assert agg["line_lap_time_ratio"] < agg["lap_time_ratio"]
    lo, hi = agg["lap_time_mean_s_ci95"]
    assert lo <= agg["lap_time_mean_s"] <= hi


def test_bootstrap_interval_is_deterministic_and_covers_the_mean():
    from track_gen_isaac.evaluate.metrics import bootstrap_ci

    x = np.random.default_rng(0).normal(2.0, 0.5, 200)
    a, b = bootstrap_ci(x), bootstrap_ci(x)
    assert a == b and a[0] < x.mean() < a[1] and a[1] - a[0] < 0.2
    assert bootstrap_ci(np.array([np.nan, 1.0, np.nan, 3.0]))[0] >= 1.0
    assert all(math.isnan(v) for v in bootstrap_ci(np.array([np.nan])))


# -- the function: determinism, errors ----------------------------------------------------------
def test_evaluate_is_deterministic(run, tmp_path):
    suite = _short("gates-v1", 1.5)
    a = evaluate(run, suite, num_courses=3, out=tmp_path / "a", device="cpu", figures=False)
    b = evaluate(run, suite, num_courses=3, out=tmp_path / "b", device="cpu", figures=False)
    ja, jb = (json.loads((tmp_path / k / "eval.json").read_text()) for k in "ab")
    for j in (ja, jb):
        j.pop("timing")
    assert ja == jb
    s = a["suites"][suite.name]
    for key in ("completion_rate", "gates_per_course", "lap_time_mean_s", "reference_lap_time_mean_s",
                "lap_time_ratio", "crash_rate"):
        assert key in s and key + "_ci95" in s
    assert len(s["courses"]) == 3 and set(s["baselines"]) == {"zero", "random"}
    assert s["baselines"]["zero"]["timeout_rate"] == 1.0  # hovering never ends a run early
    assert b["out"] == str(tmp_path / "b")


def test_errors_name_the_path_and_the_shapes(run, tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        evaluate(tmp_path / "nowhere", "gates-v1")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="empty"):
        evaluate(tmp_path / "empty", "gates-v1")
    with pytest.raises(ValueError, match="unknown suite"):
        evaluate(run, "gates-v9")
    # a gate checkpoint on the band-track suite: both named, before any env is built
    with pytest.raises(ValueError, match=r"suite 'track-short-v1' holds band-track courses, but task "
                                         r"'TrackGen-Drone-Gates-v0' races gate courses"):
        evaluate(run, _short("track-v1", 0.5), num_courses=2, device="cpu")
    # flown by another task's env (task=): both observation shapes named
    with pytest.raises(ValueError, match=r"takes 44 observations.*has 50 observations"):
        evaluate(run, _short("gates-v1", 0.5), num_courses=2, device="cpu", task="TrackGen-Drone-Gates-Race-v0")
    with pytest.raises(ValueError, match="not an rsl_rl checkpoint"):   # refused before any env is built
        bogus = tmp_path / "bogus"
        bogus.mkdir()
        (bogus / "model_1.pt").write_text("not a checkpoint")
        evaluate(bogus, "gates-v1")
    assert not (run / "eval").exists()


# -- the CLI ------------------------------------------------------------------------------------
def test_cli_end_to_end(run):
    out = subprocess.run([sys.executable, "-m", "track_gen_isaac.evaluate", "--list"], env=ENV,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "gates-v1" in out.stdout and "track-v1" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "track_gen_isaac.evaluate", "--checkpoint", str(run), "--suite", "x"],
                         env=ENV, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "gates-v1" in bad.stderr
    cmd = [sys.executable, "-m", "track_gen_isaac.evaluate", "--checkpoint", str(run), "--suite", "gates-v1",
           "--num_courses", "4", "--device", "cpu"]
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    folder = run / "eval" / "gates-v1"
    for name in ("eval.json", "eval.md", "lap_time_ratio.png", "best_worst.png"):
        assert (folder / name).stat().st_size > 0, name
    data = json.loads((folder / "eval.json").read_text())
    s = data["suites"]["gates-v1"]
    assert s["num_courses"] == 4 and len(s["courses"]) == 4
    assert all(r["reference_lap_s"] > 0 for r in s["courses"])
    assert "| completion rate |" in (folder / "eval.md").read_text()
