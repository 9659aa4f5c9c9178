"""track_gen_isaac.report: tfevents reading, learning curve, trajectory panels, summary files, CLI
(and the course drawing of track_gen.plot it uses under the flight paths).

Runs on real files (a tfevents file written by torch's SummaryWriter with rsl_rl's tag names,
real PNGs read back with matplotlib); no env is built.
"""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys

import matplotlib.image as mpimg
import numpy as np
import pytest

from track_gen import plot as tg_plot  # draws the courses under the flight paths
from track_gen_isaac import report

ROOT = pathlib.Path(__file__).resolve().parents[2]
ITERS = 20
DPI = 110  # report's savefig dpi: figure inches * DPI = PNG pixels


def _series(tag: str) -> np.ndarray:
    it = np.arange(ITERS, dtype=np.float64)
    seed = sum(map(ord, tag)) % 97
    return np.sin(0.3 * it + seed) * (1 + seed / 10) + 0.05 * it


# rsl_rl 5.5.1 (rsl_rl/utils/logger.py) + Isaac Lab's reward/termination manager extras
ITER_TAGS = [
    "Train/mean_reward", "Train/mean_episode_length",
    "Loss/value", "Loss/surrogate", "Loss/entropy", "Loss/learning_rate",
    "Policy/mean_std", "Perf/total_fps", "Perf/collection_time", "Perf/learning_time",
    "Episode_Reward/gate_pass", "Episode_Reward/progress", "Episode_Reward/crash",
    "Episode_Termination/time_out", "Episode_Termination/crashed",
]
TIME_TAG = "Train/mean_reward/time"  # rsl_rl's wall-time twin: step = whole seconds
TIME_STEPS = np.arange(ITERS) // 3


def _write_run(run: pathlib.Path, tags: list[str], *, with_time: bool = True) -> pathlib.Path:
    from torch.utils.tensorboard import SummaryWriter

    run.mkdir(parents=True)
    writer = SummaryWriter(log_dir=str(run), flush_secs=1)
    for it in range(ITERS):
        for tag in tags:
            writer.add_scalar(tag, float(_series(tag)[it]), it)
        if with_time:
            writer.add_scalar(TIME_TAG, float(_series(TIME_TAG)[it]), int(TIME_STEPS[it]))
    writer.close()
    params = run / "params"
    params.mkdir()
    # Isaac Lab dumps tuples with a python/tuple tag, which yaml.safe_load refuses
    (params / "agent.yaml").write_text(
        "seed: 42\nnum_steps_per_env: 24\nactor:\n  hidden_dims: !!python/tuple\n  - 64\n  - 64\n")
    (params / "env.yaml").write_text(
        "sim:\n  gravity: !!python/tuple\n  - 0.0\n  - 0.0\n  - -9.81\nscene:\n  num_envs: 64\n")
    return run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> pathlib.Path:
    return _write_run(tmp_path_factory.mktemp("logs") / "rsl_rl" / "drone_gates" / "2026-01-02_03-04-05", ITER_TAGS)


def _png_shape(path: pathlib.Path) -> tuple[int, ...]:
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[2] in (3, 4)
    assert float(img[..., :3].std()) > 0.01, "blank image"
    return img.shape[:2]


# -- read_scalars -------------------------------------------------------------------------------
def test_read_scalars_returns_every_point(run_dir):
    scalars = report.read_scalars(run_dir)
    assert set(scalars) == set(ITER_TAGS) | {TIME_TAG}
    for tag in ITER_TAGS:
        steps, values = scalars[tag]
        assert steps.dtype == np.int64 and values.dtype == np.float64
        np.testing.assert_array_equal(steps, np.arange(ITERS))
        np.testing.assert_array_equal(values, _series(tag).astype(np.float32))  # tfevents stores float32
    steps, values = scalars[TIME_TAG]
    np.testing.assert_array_equal(steps, TIME_STEPS)
    np.testing.assert_array_equal(values, _series(TIME_TAG).astype(np.float32))


def test_read_scalars_keeps_more_than_default_reservoir(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    # tensorboard keeps 10000 scalars per tag by default (sampled); we keep them all
    writer = SummaryWriter(log_dir=str(tmp_path))
    for it in range(10050):
        writer.add_scalar("Train/mean_reward", float(it), it)
    writer.close()
    steps, values = report.read_scalars(tmp_path)["Train/mean_reward"]
    assert len(steps) == 10050
    np.testing.assert_array_equal(values, np.arange(10050, dtype=np.float64))


def test_read_scalars_clear_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "model_0.pt").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="no events.out.tfevents"):
        report.read_scalars(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        report.read_scalars(tmp_path / "missing")


def test_term_count_scale_turns_a_logged_reward_term_into_events_per_episode(tmp_path):
    params = tmp_path / "params"
    params.mkdir()
    (params / "env.yaml").write_text(
        "sim:\n  dt: 0.01\n  gravity: !!python/tuple\n  - 0.0\n  - 0.0\n  - -9.81\ndecimation: 2\n"
        "episode_length_s: 15.0\nrewards:\n  gate:\n    weight: 250.0\n  off:\n    weight: 0.0\n")
    # an episode with 4 gates logs 4 * 250 * 0.02 / 15 = 1.333...; the scale brings it back to 4
    assert report.term_count_scale(tmp_path, "gate") * (4 * 250 * 0.02 / 15) == pytest.approx(4.0)
    assert report.term_count_scale(tmp_path, "off") is None      # weight 0
    assert report.term_count_scale(tmp_path, "missing") is None
    assert report.term_count_scale(tmp_path / "nope", "gate") is None


def test_steps_per_iteration_from_params(run_dir, tmp_path):
    assert report.steps_per_iteration_from_params(run_dir) == 24 * 64
    assert report.steps_per_iteration_from_params(tmp_path) is None


# -- learning curve -----------------------------------------------------------------------------
def test_learning_curve_default_panels(run_dir, tmp_path):
    out = report.plot_learning_curve(run_dir, tmp_path / "sub" / "curve.png", steps_per_iteration=24 * 64)
    assert out == tmp_path / "sub" / "curve.png"
    # 4 default panels (reward, length, Episode_Reward/*, Episode_Termination/*) in a 2x2 grid
    assert _png_shape(out) == (round((3.4 * 2 + 0.6) * DPI), round(12.0 * DPI))


def test_learning_curve_tags_and_default_out(run_dir):
    out = report.plot_learning_curve(run_dir, tags=["Loss/*"])
    try:
        assert out == run_dir / "learning_curve.png"
        assert _png_shape(out) == (round(4.0 * DPI), round(6.0 * DPI))  # one panel
    finally:
        out.unlink()
    with pytest.raises(ValueError, match="'Nope/\\*' matches no scalar"):
        report.plot_learning_curve(run_dir, run_dir.parent / "x.png", tags=["Nope/*"])
    with pytest.raises(TypeError, match="sequence of tag patterns"):
        report.plot_learning_curve(run_dir, run_dir.parent / "x.png", tags="Loss/*")
    with pytest.raises(ValueError, match="steps_per_iteration"):
        report.plot_learning_curve(run_dir, run_dir.parent / "x.png", steps_per_iteration=0)


def test_learning_curve_falls_back_to_losses_before_any_episode(tmp_path):
    # rsl_rl writes Train/* only once an episode has finished
    run = _write_run(tmp_path / "exp" / "run", ["Loss/value", "Loss/surrogate", "Loss/entropy"], with_time=False)
    out = report.plot_learning_curve(run, tmp_path / "c.png")
    assert _png_shape(out) == (round((3.4 * 2 + 0.6) * DPI), round(12.0 * DPI))  # 3 panels, 2x2 grid


def test_curve_cli(run_dir, tmp_path, capsys):
    out = tmp_path / "cli.png"
    assert report.main(["curve", str(run_dir), "--out", str(out), "--list"]) == 0
    printed = capsys.readouterr().out
    assert str(out) in printed and "Episode_Reward/gate_pass: 20 points" in printed
    assert _png_shape(out)[1] == round(12.0 * DPI)
    assert report.main(["curve", str(tmp_path / "nothing_here")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_curve_cli_as_module(run_dir, tmp_path):
    out = tmp_path / "mod.png"
    proc = subprocess.run(
        [sys.executable, "-m", "track_gen_isaac.report", "curve", str(run_dir), "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    _png_shape(out)


# -- trajectories -------------------------------------------------------------------------------
def _circle(n: int, r: float) -> np.ndarray:
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([r * np.cos(a), r * np.sin(a), np.full(n, 1.5)], axis=1)


def test_gate_bars_span_yaw_plus_90():
    pos = np.array([[1.0, 2.0], [0.0, 0.0]])
    bars, fwd = tg_plot._gate_bars(pos, np.array([0.0, np.pi / 2]), 2.0)
    np.testing.assert_allclose(bars[0], [[1.0, 1.0], [1.0, 3.0]], atol=1e-12)  # yaw 0: opening along y
    np.testing.assert_allclose(bars[1], [[1.0, 0.0], [-1.0, 0.0]], atol=1e-12)  # yaw 90°: along -x..x
    np.testing.assert_allclose(fwd, [[1.0, 0.0], [0.0, 1.0]], atol=1e-12)


def test_band_edges_of_a_circle():
    xy = _circle(64, 10.0)[:, :2]
    left, right = tg_plot._band_edges(xy, np.full(64, 2.0), closed=True)
    # counter-clockwise loop: left (tangent + 90°) is inside
    np.testing.assert_allclose(np.linalg.norm(left, axis=1), 8.0, rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(right, axis=1), 12.0, rtol=1e-9)


def test_draw_course_on_own_axes():
    """The report's courses are drawn by track_gen.plot.draw_course; it works on any axes."""
    from matplotlib.figure import Figure

    pos = _circle(4, 5.0)
    course = {"gates": {"pos": pos, "yaw": np.zeros(4), "width": 1.0, "count": 3}, "line": _circle(40, 5.0),
              "half_width": 0.8}
    checked = tg_plot.course_arrays(course)
    assert checked["gates"]["pos"].shape == (3, 2) and checked["half_width"].shape == (40,)
    assert tg_plot.course_arrays(checked)["gates"]["pos"].shape == (3, 2)  # a checked course passes again
    ax = Figure().add_subplot()
    extent = tg_plot.draw_course(ax, course)
    pts = np.vstack(extent)
    assert pts.shape[1] == 2 and np.abs(pts).max() == pytest.approx(5.8, rel=1e-3)  # the band's outer edge
    assert [t.get_text() for t in ax.texts] == ["0", "1", "2"]
    with pytest.raises(ValueError, match=r"^course: needs a 'gates'"):
        tg_plot.course_arrays({})


def test_plot_trajectories_three_courses(tmp_path):
    gates_pos = _circle(6, 8.0)
    gates_yaw = np.arctan2(gates_pos[:, 0], -gates_pos[:, 1])  # tangent of the ccw circle
    gate_course = {"gates": {"pos": gates_pos, "yaw": gates_yaw, "width": 1.5, "count": 5}}
    line = _circle(80, 12.0)
    band = {"line": line[:, :2], "half_width": np.full(80, 1.2)}
    both = {"gates": {"pos": gates_pos[:3], "yaw": gates_yaw[:3], "width": 1.0, "count": 3},
            "line": line, "closed": False}
    t = np.linspace(0, 2 * np.pi, 200)
    paths = [np.stack([r * np.cos(t), r * np.sin(t), 1.5 + 0.1 * np.sin(3 * t)], axis=1) for r in (8.0, 12.3, 11.0)]
    out = report.plot_trajectories(
        tmp_path / "traj" / "paths.png", [gate_course, band, both], paths,
        titles=["gates", "band", "both"], crashes=[None, [paths[1][-1]], np.zeros((0, 3))], dt=0.02,
    )
    assert out.exists()
    assert _png_shape(out) == (round(4.2 * DPI), round((4.2 * 3 + 0.8) * DPI))
    out8 = report.plot_trajectories(tmp_path / "eight.png", [band] * 8, [paths[1]] * 8, color_by="time")
    assert _png_shape(out8) == (round(4.2 * 2 * DPI), round((4.2 * 4 + 0.8) * DPI))


def test_plot_trajectories_clear_errors(tmp_path):
    course = {"line": _circle(10, 5.0)}
    path = _circle(20, 5.0)
    png = tmp_path / "bad.png"
    with pytest.raises(ValueError, match="2 courses and 1 paths"):
        report.plot_trajectories(png, [course, course], [path])
    with pytest.raises(ValueError, match="at most 8"):
        report.plot_trajectories(png, [course] * 9, [path] * 9)
    with pytest.raises(ValueError, match="titles has 2 entries for 1"):
        report.plot_trajectories(png, [course], [path], titles=["a", "b"])
    with pytest.raises(ValueError, match="crashes has 0 entries"):
        report.plot_trajectories(png, [course], [path], crashes=[])
    with pytest.raises(ValueError, match=r"courses\[0\]: needs a 'gates' and/or a 'line'"):
        report.plot_trajectories(png, [{"half_width": [1.0]}], [path])
    with pytest.raises(ValueError, match="half_width has 3 values for a line of 10"):
        report.plot_trajectories(png, [dict(course, half_width=[1.0, 1.0, 1.0])], [path])
    with pytest.raises(ValueError, match="needs 'width'"):
        report.plot_trajectories(png, [{"gates": {"pos": path[:3], "yaw": np.zeros(3)}}], [path])
    with pytest.raises(ValueError, match=r"paths\[0\] must be \[T,3\]"):
        report.plot_trajectories(png, [course], [np.zeros(5)])
    with pytest.raises(TypeError, match=r"courses\[0\]: expected a dict"):
        report.plot_trajectories(png, [[1, 2]], [path])
    assert not png.exists()


# -- summary ------------------------------------------------------------------------------------
def test_write_summary_round_trip(tmp_path):
    stats = {
        "task": "TrackGen-Drone-Gates-v0", "checkpoint": "logs/rsl_rl/x/model_299.pt", "num_envs": np.int64(64),
        "steps": 1000, "episodes": 123, "gates_per_episode": np.float32(3.4567891234), "gates_per_episode_max": 9,
        "lap_rate": 1 / 3, "crash_rate": 0.25, "timeout_rate": 0.4166666666, "env_steps_per_s": 12345.6789,
        "mean_speed": math.nan, "per_gate": np.array([1.0, 2.0]),
        "baselines": {"zero": {"gates_per_episode": 0.0, "crash_rate": 1.0, "lap_rate": 0.0},
                      "random": {"gates_per_episode": 0.12, "crash_rate": 0.9, "extra_only": 7}},
    }
    json_path, md_path = report.write_summary(tmp_path / "out", stats)
    assert (json_path, md_path) == (tmp_path / "out" / "summary.json", tmp_path / "out" / "summary.md")
    data = json.loads(json_path.read_text())
    assert data["num_envs"] == 64 and isinstance(data["num_envs"], int)
    assert data["lap_rate"] == 0.333333 and data["env_steps_per_s"] == 12345.7
    assert data["gates_per_episode"] == pytest.approx(3.45679, abs=1e-9)
    assert data["mean_speed"] is None and data["per_gate"] == [1.0, 2.0]
    assert data["baselines"]["random"] == {"gates_per_episode": 0.12, "crash_rate": 0.9, "extra_only": 7}
    assert set(data) == set(stats)
    md = md_path.read_text()
    assert md.startswith("# Playback summary: TrackGen-Drone-Gates-v0")
    assert "| metric | policy | zero | random |" in md
    for key in [*report.SUMMARY_KEYS, "mean_speed", "per_gate", "extra_only"]:
        assert f"| {key} |" in md, key
    assert "| crash_rate | 0.25 | 1 | 0.9 |" in md
    assert "| extra_only | — | — | 7 |" in md


def test_write_summary_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="crash_rate must be a fraction"):
        report.write_summary(tmp_path, {"crash_rate": 1.5})
    with pytest.raises(ValueError, match="zero lap_rate must be a fraction"):
        report.write_summary(tmp_path, {"baselines": {"zero": {"lap_rate": -0.1}}})
    with pytest.raises(TypeError, match="stats must be a dict"):
        report.write_summary(tmp_path, [("task", "x")])
    with pytest.raises(TypeError, match="baselines"):
        report.write_summary(tmp_path, {"baselines": {"zero": 3}})
    with pytest.raises(TypeError, match=r"stats\['obj'\]: cannot write a object"):
        report.write_summary(tmp_path, {"obj": object()})
    assert not (tmp_path / "summary.json").exists()


# -- course statistics (Episode_Course/*) -------------------------------------------------------
COURSE_TAGS = ["Episode_Course/checkpoints", "Episode_Course/laps", "Episode_Course/progress_m"]


def test_course_scalars_are_read_as_logged_and_get_their_panel(tmp_path):
    run = _write_run(tmp_path / "exp" / "new", ITER_TAGS + COURSE_TAGS, with_time=False)
    got = report.course_scalars(run)
    assert sorted(got) == COURSE_TAGS
    np.testing.assert_allclose(got["Episode_Course/laps"][1], _series("Episode_Course/laps"), rtol=1e-6)
    out = report.plot_learning_curve(run, tmp_path / "c.png")
    # 5 default panels (reward, length, Episode_Course/*, Episode_Reward/*, Episode_Termination/*): 3x2
    assert _png_shape(out) == (round((3.4 * 3 + 0.6) * DPI), round(12.0 * DPI))


def test_course_scalars_of_an_older_run_come_from_its_pass_reward_term(tmp_path):
    """A run logged before Episode_Course/*: passes per episode = Episode_Reward/gate x term_count_scale."""
    run = _write_run(tmp_path / "exp" / "old", ITER_TAGS + ["Episode_Reward/gate"], with_time=False)
    (run / "params" / "env.yaml").write_text(
        "sim:\n  dt: 0.01\ndecimation: 2\nepisode_length_s: 15.0\nscene:\n  num_envs: 64\n"
        "rewards:\n  gate:\n    weight: 250.0\n")
    got = report.course_scalars(run)
    assert list(got) == ["Episode_Course/checkpoints"]
    steps, values = got["Episode_Course/checkpoints"]
    np.testing.assert_array_equal(steps, np.arange(ITERS))
    np.testing.assert_allclose(values, _series("Episode_Reward/gate") * 15.0 / (250.0 * 0.02), rtol=1e-5)
    out = report.plot_learning_curve(run, tmp_path / "old.png")
    assert _png_shape(out) == (round((3.4 * 3 + 0.6) * DPI), round(12.0 * DPI))  # the derived panel too
    # without the params (or the term), nothing is derived
    (run / "params" / "env.yaml").unlink()
    assert report.course_scalars(run) == {}
