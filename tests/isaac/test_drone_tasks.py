"""The registered drone-racing tasks: discovery through the ``isaaclab.tasks`` entry point, each task
built and stepped in both runtimes (equal step for step), and the main job end to end (a 2-iteration
``isaaclab train`` run, playback of its checkpoint, the report files)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
STEPS = 40


def test_tasks_are_discoverable_through_the_isaaclab_entry_point():
    import gymnasium as gym

    eps = [e for e in entry_points(group="isaaclab.tasks") if e.value == "track_gen_isaac.tasks"]
    assert eps, "run scripts/setup.sh: it registers the package's isaaclab.tasks entry point"
    eps[0].load()
    from track_gen_isaac.tasks import TASKS

    for family in ("Gates", "Track"):
        for runtime in ("", "-Warp"):
            for play in ("", "-Play"):
                tid = f"TrackGen-Drone-{family}{runtime}{play}-v0"
                assert tid in gym.registry and tid in TASKS
                spec = gym.registry[tid]
                assert spec.entry_point.endswith("ManagerBasedRLEnvWarp" if runtime else ":ManagerBasedRLEnv")
                assert spec.kwargs["rsl_rl_cfg_entry_point"].endswith(f"drone_{family.lower()}_ppo")


def test_racer_tasks_are_registered_beside_the_others():
    import gymnasium as gym

    from track_gen_isaac.main_job import play_task_of
    from track_gen_isaac.tasks import TASKS, agents

    for family in ("Gates-Race", "Gates-Race-Curriculum"):
        for runtime in ("", "-Warp"):
            for play in ("", "-Play"):
                tid = f"TrackGen-Drone-{family}{runtime}{play}-v0"
                assert tid in gym.registry and tid in TASKS
                assert gym.registry[tid].kwargs["rsl_rl_cfg_entry_point"].endswith("drone_race_ppo")
    assert play_task_of("TrackGen-Drone-Gates-Race-v0") == "TrackGen-Drone-Gates-Race-Play-v0"
    assert agents.drone_race_ppo().experiment_name == "trackgen_drone_race"


def test_racer_crash_term_is_the_gate_tasks_at_twice_the_weight():
    from track_gen_isaac.tasks.drone_racer import RaceRewardsCfg
    from track_gen_isaac.tasks.drone_gates_track import GatesRewardsCfg

    race, gates = RaceRewardsCfg().crash, GatesRewardsCfg().crash
    assert race.weight == -500.0 == 2 * gates.weight
    assert race.func is gates.func and race.params == gates.params


@pytest.mark.parametrize("flag, value", [("--play_steps", "0"), ("--play_envs", "0"), ("--num_envs", "-4"),
                                         ("--max_iterations", "0"), ("--eval_courses", "-1")])
def test_main_job_refuses_bad_sizes_before_training(flag, value, capsys):
    from track_gen_isaac.main_job import main

    with pytest.raises(SystemExit) as exc:  # argparse's error exit, before any `isaaclab train`
        main(["--task", "TrackGen-Drone-Gates-v0", flag, value])
    assert exc.value.code == 2
    out = capsys.readouterr()
    assert f"{flag}: expected an integer >=" in out.err and "[main]" not in out.out


def test_main_job_iteration_budget_per_task_and_device():
    from track_gen_isaac.main_job import CPU_DEFAULTS, GPU_DEFAULTS, default_iterations

    for tid in ("TrackGen-Drone-Gates-Race-v0", "TrackGen-Drone-Gates-Race-Warp-v0", "TrackGen-Drone-Gates-Race-Play-v0",
                "TrackGen-Drone-Gates-Race-Curriculum-v0", "TrackGen-Drone-Gates-Race-Curriculum-Warp-v0",
                "TrackGen-Drone-Gates-Real-v0", "TrackGen-Drone-Gates-Real-Warp-Play-v0"):
        assert default_iterations(tid, "cpu") == 900
        assert default_iterations(tid, "cuda:0") == GPU_DEFAULTS["max_iterations"]
    # the other families keep the shared budget
    for tid in ("TrackGen-Drone-Gates-v0", "TrackGen-Drone-Track-Warp-v0", "TrackGen-Drone-Gates-Curriculum-v0",
                "TrackGen-Drone-Gates-Depth-v0", "MyLab-Other-v1"):
        assert default_iterations(tid, "cpu") == CPU_DEFAULTS["max_iterations"]


def test_runner_cfg_follows_the_toml_and_the_default_device(tmp_path, monkeypatch):
    from track_gen_isaac.tasks import agents

    cfg = agents.drone_gates_ppo()
    assert cfg.device == ("cuda:0" if torch.cuda.is_available() else "cpu")
    assert cfg.experiment_name == "trackgen_drone_gates" and agents.drone_track_ppo().experiment_name.endswith("track")
    bad = tmp_path / "bad.toml"
    bad.write_text('[runner]\nnum_steps_per_env = 8\n[gates.runnr]\nx = 1\n')
    with pytest.raises(ValueError, match="runnr"):
        agents.load_ppo("gates", bad)
    with pytest.raises(KeyError, match="track"):
        agents.load_ppo("track", bad)
    with pytest.raises(FileNotFoundError):
        agents.load_ppo("gates", tmp_path / "missing.toml")
    dist = agents.drone_gates_ppo().actor.distribution_cfg
    assert dist.init_std == 0.5 and tuple(dist.std_range) == (1e-6, 1e6)  # no clamp unless the table sets one
    capped = tmp_path / "capped.toml"
    capped.write_text(agents.CONFIG.read_text() + '\n[gates.actor]\ninit_std = 0.3\nstd_range = [0.01, 0.15]\n')
    dist = agents.load_ppo("gates", capped).actor.distribution_cfg
    assert dist.init_std == 0.3 and tuple(dist.std_range) == (0.01, 0.15)


def _run(task: str, num_envs: int = 8):
    """Build ``task`` from the registry, step it with a seeded random action sequence, close it."""
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401

    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs = num_envs
    cfg.sim.device = "cpu"
    cfg.seed = 3
    env = gym.make(task, cfg=cfg)
    base = env.unwrapped
    gen = torch.Generator().manual_seed(0)
    obs, _ = env.reset()
    out = {"obs0": obs["policy"].clone().numpy(), "pos": [], "rew": [], "done": []}
    for _ in range(STEPS):
        a = torch.rand(num_envs, 4, generator=gen) * 1.2 - 0.6
        obs, rew, term, trunc, _ = env.step(a)
        out["pos"].append((base.scene["robot"].data.root_pos_w.torch - base.scene.env_origins).clone())
        out["rew"].append(torch.as_tensor(rew).clone())
        out["done"].append((torch.as_tensor(term) | torch.as_tensor(trunc)).clone())
    out["obs"] = obs["policy"].clone().numpy()
    out["type"] = type(base).__name__
    env.close()
    return {k: torch.stack(v).numpy() if isinstance(v, list) else v for k, v in out.items()}


@pytest.fixture(scope="module", params=["Gates", "Track"])
def pair(request):
    fam = request.param
    return fam, _run(f"TrackGen-Drone-{fam}-v0"), _run(f"TrackGen-Drone-{fam}-Warp-v0")


def test_each_task_builds_and_steps_in_both_runtimes(pair):
    fam, stable, warp = pair
    assert stable["type"] == "ManagerBasedRLEnv" and warp["type"] == "ManagerBasedRLEnvWarp"
    dims = {"Gates": 14 + 30, "Track": 14 + 5 + 12}[fam]
    for run in (stable, warp):
        assert run["obs"].shape == (8, dims)
        assert np.isfinite(run["obs"]).all() and np.isfinite(run["rew"]).all() and np.isfinite(run["pos"]).all()
    assert stable["done"].any(), "random actions for 0.8 s should end some episodes (resets exercised)"


def test_both_runtimes_fly_the_same(pair):
    _, stable, warp = pair
    np.testing.assert_array_equal(stable["done"], warp["done"])
    np.testing.assert_allclose(warp["pos"], stable["pos"], atol=1e-4)
    np.testing.assert_allclose(warp["rew"], stable["rew"], atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(warp["obs"], stable["obs"], atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("task", ["TrackGen-Drone-Gates-Play-v0", "TrackGen-Drone-Track-Play-v0",
                                  "TrackGen-Drone-Gates-Warp-Play-v0", "TrackGen-Drone-Track-Warp-Play-v0"])
def test_play_variants_start_every_episode_at_the_course_start(task):
    from track_gen_isaac.env_course import get_course

    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401

    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    assert cfg.course.debug_vis and cfg.episode_length_s == 30.0
    cfg.scene.num_envs = 4
    cfg.sim.device = "cpu"
    env = gym.make(task, cfg=cfg)
    env.reset()
    base = env.unwrapped
    ec = get_course(base)
    pos = (base.scene["robot"].data.root_pos_w.torch - base.scene.env_origins).numpy()
    start = ec.course.result.start_pos.numpy().copy()
    if ec.mode == "track":  # z_offset defaults to CourseCfg.half_height on a track course
        start[:, 2] += ec.cfg.half_height
    np.testing.assert_allclose(pos, start, atol=1e-5)
    for _ in range(3):  # and it steps (hovering: a zero action)
        obs, rew, *_ = env.step(torch.zeros(4, 4))
    assert np.isfinite(obs["policy"].numpy()).all() and np.isfinite(np.asarray(rew)).all()
    env.close()


def test_progress_line_reads_the_course_statistics():
    """One line per rsl_rl iteration block; passes, laps and progress come from Episode_Course/*."""
    from track_gen_isaac.main_job import _passes_of, _progress

    block = ["\x1b[1m Learning iteration 4/10 \x1b[0m", "  Mean reward: 12.50", "  Mean episode length: 311.00",
             "  Episode_Reward/gate: 1.3333", "  Episode_Course/checkpoints: 3.2500", "  Episode_Course/laps: 0.1250",
             "  Episode_Course/progress_m: 27.4321", "  Steps per second: 2048", "  ETA: 0:01:02"]
    state: dict = {}
    lines = [msg for ln in block if (msg := _progress(ln, state, _passes_of("TrackGen-Drone-Gates-v0")))]
    assert lines == ["iter 5/10 | reward 12.50 | episode 311.00 steps | gates/episode 3.2 | laps/episode 0.12 | "
                     "progress 27.4 m | 2048 steps/s | ETA 0:01:02"]
    # no course statistics logged (no episode ended yet): dashes; a track task counts checkpoints
    lines = [msg for ln in block if "Episode_" not in ln
             and (msg := _progress(ln, state, _passes_of("TrackGen-Drone-Track-v0")))]
    assert lines and "checkpoints/episode - | laps/episode - | progress - m" in lines[0]


def test_main_job_trains_plays_and_reports(tmp_path):
    """`bash scripts/main.sh` in small: 2 iterations of `isaaclab train` of the default task (the
    generalist), playback, held-out suite, every shipped real layout, report files."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "track_gen_isaac.main_job", "--num_envs", "32", "--max_iterations", "2",
           "--device", "cpu", "--play_steps", "30", "--play_envs", "4", "--eval_courses", "4", "--eval_layouts", "2",
           "agent.critic.hidden_dims=[32,32]"]   # a Hydra override of the network: playback follows the checkpoint
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[train] iter ")]
    assert [ln.split()[2] for ln in lines] == ["1/2", "2/2"], proc.stdout[-2000:]  # one line per iteration
    assert all(re.search(r"gates/episode (-|\d+\.\d) \| laps/episode (-|\d+\.\d\d) \| progress (-|-?\d+\.\d) m",
                         ln) for ln in lines), lines
    runs = list((tmp_path / "logs" / "rsl_rl" / "trackgen_drone_real").iterdir())
    assert len(runs) == 1
    run = runs[0]
    assert sorted(p.name for p in run.glob("model_*.pt")), "no checkpoint written"
    from track_gen_isaac.evaluate.rollout import checkpoint_shapes

    assert checkpoint_shapes(sorted(run.glob("model_*.pt"))[-1])["critic"] == [32, 32]
    assert (run / "train.log").stat().st_size > 0 and list(run.glob("events.out.tfevents.*"))
    rep = run / "report"
    for name in ("learning_curve.png", "trajectories.png", "summary.json", "summary.md"):
        assert (rep / name).stat().st_size > 0, name
    summary = json.loads((rep / "summary.json").read_text())
    assert summary["task"] == "TrackGen-Drone-Gates-Real-Play-v0" and summary["checkpoint"].endswith(".pt")
    assert summary["num_envs"] == 4 and summary["steps"] == 30
    assert set(summary["baselines"]) == {"zero", "random"}
    ev = json.loads((rep / "eval" / "eval.json").read_text())          # the held-out evaluation
    assert set(ev["suites"]) == {"gates-v1"} and ev["suites"]["gates-v1"]["num_courses"] == 4
    assert ev["suites"]["gates-v1"]["suite"]["task"] == "TrackGen-Drone-Gates-Real-Play-v0"  # the run's own task
    assert "held-out gates-v1" in proc.stdout
    from track_gen.layouts import shipped

    lay = json.loads((rep / "layouts" / "layouts.json").read_text())   # every shipped layout, zero-shot
    assert set(lay["layouts"]) == set(shipped()) and lay["num_courses"] == 2
    assert (rep / "layouts" / "layouts.md").stat().st_size > 0
    assert sum(ln.startswith("[main] real layout ") for ln in proc.stdout.splitlines()) == len(shipped())
    for key in ("gates_per_episode", "lap_rate", "crash_rate", "env_steps_per_s"):
        assert key in summary
