"""The head-to-head task (``TrackGen-Drone-Gates-Duel-v0``, issue 30): K = 2 drones per course in real
kitless envs, both runtimes; the race (contact crashes both drones and ends their race only); the
main job's training path; the duel suite flown against itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from .test_racer import _cfg

TASK = "TrackGen-Drone-Gates-Duel-v0"
ROOT = Path(__file__).resolve().parents[2]
N = 8  # drones: 4 races of 2


def _fly(e, steps: int = 60):
    """Reset ``e`` and fly ``steps`` seeded random actions: observations, rewards, dones, race status, positions."""
    from track_gen_isaac.mdp.duel import get_race

    base = e.unwrapped
    race = get_race(base)
    obs, _ = e.reset()
    gen = torch.Generator().manual_seed(0)
    out = {"obs": [obs["policy"].numpy().copy()], "rew": [], "done": [], "status": [], "pos": []}
    for _ in range(steps):
        obs, rew, term, trunc, _ = e.step(torch.rand(N, 4, generator=gen) * 1.2 - 0.6)
        out["obs"].append(obs["policy"].numpy().copy())
        out["rew"].append(np.asarray(rew).copy())
        out["done"].append((term | trunc).numpy().copy())
        out["status"].append(race.status.numpy().copy())
        out["pos"].append(base.scene["robot"].data.root_pos_w.torch.numpy().copy())
    return {k: np.asarray(v) for k, v in out.items()}


#: the stable runtime's flight, for the warp runtime's test (one env at a time: Isaac Lab's one simulation)
_STABLE: dict = {}


def _check_rows_and_grid(base):
    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.mdp.duel import get_race, rivals_dim
    from track_gen_isaac.tasks.drone_duel import AGENTS, GRID_SPACING, SOLO_OBS

    ec, race = get_course(base), get_race(base)
    assert (ec.agents, ec.num_races, ec.num_envs) == (AGENTS, N // AGENTS, N)
    assert base.observation_manager.group_obs_dim["policy"] == (SOLO_OBS + rivals_dim(AGENTS),) == (71,)
    # per-agent results are [E*K], the course [E]
    assert ec.result.events.progress.shape == (N,) and ec.course.result.valid.shape == (N // AGENTS,)
    assert race.status.shape == (N,) and (race.status.numpy() == 0).all()
    # the grid: the two drones of a race side by side, 0.6 m apart (up to their jitter), at one origin
    pos = base.scene["robot"].data.root_pos_w.torch.numpy().reshape(-1, 2, 3)
    gap = np.linalg.norm(pos[:, 0, :2] - pos[:, 1, :2], axis=1)
    assert np.all(np.abs(gap - GRID_SPACING) < 0.45), gap
    assert torch.all(base.scene.env_origins == 0)


def _check_contact_crashes_both(env):
    """Two drones placed together: both crash, their race (only) ends and restarts."""
    from track_gen_isaac.mdp.duel import get_race

    base = env.unwrapped
    race = get_race(base)
    env.reset()
    robot = base.scene["robot"]
    pose = robot.data.root_pose_w.torch.clone()
    pose[1, :3] = pose[0, :3] + torch.tensor([0.05, 0.0, 0.0])  # drone 1 onto drone 0: race 0
    robot.write_root_pose_to_sim_index(root_pose=pose[1:2], env_ids=torch.tensor([1], dtype=torch.int32))
    _, rew, term, trunc, _ = env.step(torch.zeros(N, 4))
    assert term[:2].tolist() == [True, True] and not trunc[:2].any()   # both out: their race is over
    assert not term[2:].any(), "no other race ends"
    crash = base.reward_manager.get_term_cfg("crash").weight * base.step_dt
    assert rew[:2].max().item() <= crash + 1.0, rew[:2]                # the crash penalty, both
    assert (race.status.numpy()[:2] == 0).all()                        # restarted: racing again


def _check_out_is_held(env):
    """A drone that crashed is held where it stopped, earns nothing, and its rival sees it absent."""
    from track_gen_isaac.mdp.duel import CRASHED, RACING, get_race

    base = env.unwrapped
    race = get_race(base)
    env.reset()
    robot = base.scene["robot"]
    pose = robot.data.root_pose_w.torch.clone()
    pose[2, 2] = -5.0  # drone 2 below the ground: it crashes, drone 3 races on
    robot.write_root_pose_to_sim_index(root_pose=pose[2:3], env_ids=torch.tensor([2], dtype=torch.int32))
    env.step(torch.zeros(N, 4))
    assert race.status.numpy()[2:4].tolist() == [CRASHED, RACING]
    held = robot.data.root_pos_w.torch[2].clone()
    for _ in range(3):
        obs, rew, term, _, _ = env.step(torch.ones(N, 4) * 0.5)
        assert rew[2].item() == 0.0 and not term[2:4].any()
    assert torch.allclose(robot.data.root_pos_w.torch[2], held, atol=1e-4)
    assert obs["policy"][3, 61].item() == 0.0 and obs["policy"][2, 60].item() == 0.0   # absent; not racing


def test_the_duel_env_races_two_drones_per_course():
    import gymnasium as gym

    e = gym.make(TASK, cfg=_cfg(TASK, N))
    try:
        _STABLE.update(_fly(e))  # first, on the fresh env: the warp runtime's test flies a fresh one
        e.reset()
        _check_rows_and_grid(e.unwrapped)
        _check_contact_crashes_both(e)
        _check_out_is_held(e)
    finally:
        e.close()


def test_the_warp_runtime_flies_the_same():
    import gymnasium as gym

    if not _STABLE:  # run alone
        e = gym.make(TASK, cfg=_cfg(TASK, N))
        try:
            _STABLE.update(_fly(e))
        finally:
            e.close()
    task = TASK.replace("-Duel-", "-Duel-Warp-")
    e = gym.make(task, cfg=_cfg(task, N))
    try:
        warp = _fly(e)
    finally:
        e.close()
    stable = _STABLE
    assert stable["obs"].shape == warp["obs"].shape == (61, N, 71)
    # exercised: a drone out (held, in a replayed graph in the warp runtime) while its rival races on
    st = stable["status"].reshape(len(stable["status"]), -1, 2)
    assert ((st[..., 0] == 0) != (st[..., 1] == 0)).any()
    np.testing.assert_array_equal(stable["status"], warp["status"])
    np.testing.assert_array_equal(stable["done"], warp["done"])
    np.testing.assert_allclose(warp["pos"], stable["pos"], atol=1e-4)
    np.testing.assert_allclose(warp["rew"], stable["rew"], atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(warp["obs"], stable["obs"], atol=1e-3, rtol=1e-3)
    d = stable["done"].reshape(len(stable["done"]), -1, 2)
    assert (d[..., 0] == d[..., 1]).all()  # the K envs of a race end together, always


def test_main_job_trains_the_duel_task_and_races_it_against_itself(tmp_path):
    """`bash scripts/main.sh --task TrackGen-Drone-Gates-Duel-v0` in small: 2 iterations of self-play through
    `isaaclab train`, then `python -m track_gen_isaac.evaluate --suite duel-v1 --opponent self` on 2 races."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "track_gen_isaac.main_job", "--task", TASK, "--num_envs", "16",
           "--max_iterations", "2", "--device", "cpu", "--eval_courses", "0"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[train] iter ")]
    assert [ln.split()[2] for ln in lines] == ["1/2", "2/2"], proc.stdout[-2000:]
    runs = list((tmp_path / "logs" / "rsl_rl" / "trackgen_drone_duel").iterdir())
    assert len(runs) == 1 and list(runs[0].glob("model_*.pt"))
    cmd = [sys.executable, "-m", "track_gen_isaac.evaluate", "--checkpoint", str(runs[0]), "--suite", "duel-v1",
           "--opponent", "self", "--num_courses", "2", "--device", "cpu"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = runs[0] / "eval" / "duel-v1-vs-self"
    res = json.loads((out / "eval.json").read_text())
    s = res["suites"]["duel-v1"]
    for key in ("win_rate", "agent_collision_rate", "completion_rate", "loss_rate"):
        assert key in s and len(s[f"{key}_ci95"]) == 2
    assert len(s["races"]) == 2 and {r["checkpoint_slot"] for r in s["races"]} == {0, 1}   # sides alternate
    assert all(r["winner"] in ("checkpoint", "opponent", "none") for r in s["races"])
    assert (out / "best_worst.png").stat().st_size > 10_000 and (out / "eval.md").is_file()


def test_a_race_needs_whole_races_of_drones():
    import gymnasium as gym

    cfg = _cfg(TASK, 7)
    with pytest.raises(ValueError, match="num_envs=7 is not a multiple of 2"):
        gym.make(TASK, cfg=cfg)


def test_the_duel_task_starts_from_a_solo_generalist_run(tmp_path):
    """`main_job --task ...Duel-v0 --init_from RUN`: a 2-iteration solo generalist run (60 values) is widened
    to the duel's 71 (zero weights and a 0 / 1 normalizer for the 11 rival values, so the networks compute
    what the solo ones did whatever the rival values hold) and self-play trains from it; a checkpoint wider
    than the task is refused by name."""
    from track_gen_isaac.warm_start import latest_checkpoint, widen_checkpoint

    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    base = [sys.executable, "-m", "track_gen_isaac.main_job", "--num_envs", "16", "--max_iterations", "2",
            "--device", "cpu", "--eval_courses", "0"]
    solo = subprocess.run([*base, "--task", "TrackGen-Drone-Gates-Real-v0", "--eval_layouts", "0", "--play_steps", "5",
                           "--play_envs", "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert solo.returncode == 0, solo.stdout[-3000:] + solo.stderr[-3000:]
    (run,) = (tmp_path / "logs" / "rsl_rl" / "trackgen_drone_real").iterdir()
    duel = subprocess.run([*base, "--task", TASK, "--init_from", str(run)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert duel.returncode == 0, duel.stdout[-3000:] + duel.stderr[-3000:]
    assert f"starting from {latest_checkpoint(run)}" in duel.stdout
    (init,) = (tmp_path / "logs").glob("init_*.pt")
    (drun,) = (tmp_path / "logs" / "rsl_rl" / "trackgen_drone_duel").iterdir()
    assert f"Loading model checkpoint from: {init}" in (drun / "train.log").read_text()
    assert [ln.split()[2] for ln in duel.stdout.splitlines() if ln.startswith("[train] iter ")] == ["1/2", "2/2"]

    src = torch.load(latest_checkpoint(run), weights_only=False)
    wide = torch.load(init, weights_only=False)
    assert wide["iter"] == 0 and "optimizer_state_dict" not in wide
    gen = torch.Generator().manual_seed(0)
    for net in ("actor", "critic"):
        s, w = src[f"{net}_state_dict"], wide[f"{net}_state_dict"]
        assert s["mlp.0.weight"].shape[1] == 60 and w["mlp.0.weight"].shape[1] == 71
        obs = torch.randn(32, 71, generator=gen) * 3.0

        def first_layer(sd, x):
            return ((x - sd["obs_normalizer._mean"]) / (sd["obs_normalizer._std"] + 1e-2)) @ sd["mlp.0.weight"].T

        torch.testing.assert_close(first_layer(w, obs), first_layer(s, obs[:, :60]), rtol=1e-5, atol=1e-5)
        for key in w:
            if key not in ("mlp.0.weight", "obs_normalizer._mean", "obs_normalizer._var", "obs_normalizer._std"):
                assert torch.equal(w[key], s[key]), key
    with pytest.raises(ValueError, match="sees 71 values, the task 60"):
        widen_checkpoint(init, tmp_path / "narrow.pt", {"actor": 60, "critic": 60})
    with pytest.raises(FileNotFoundError, match="no model_"):
        latest_checkpoint(tmp_path)


def test_init_from_a_folder_without_a_checkpoint_is_refused_before_training(tmp_path):
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run([sys.executable, "-m", "track_gen_isaac.main_job", "--task", TASK, "--device", "cpu",
                           "--init_from", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and "--init_from: no model_*.pt checkpoint in" in proc.stderr, proc.stderr
    assert not (tmp_path / "logs" / "rsl_rl").exists()
