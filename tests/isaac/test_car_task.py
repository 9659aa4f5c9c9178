"""The car task (issue 31): TrackGen-Car-Track-v0 and its twins are registered, build and step in both
runtimes with the car's pose exactly CarDynamics' state, leaving the band ends the episode with the crash
penalty; the main job trains it (2 iterations) and the benchmark evaluates it on a 4-course suite and on a
shipped circuit at the task's scale; band and gate layouts are refused for the other kind of task (real
kitless envs, CPU, a few envs)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
import warp as wp

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "OMP_NUM_THREADS": "1"}
TASK = "TrackGen-Car-Track-v0"
CIRCUITS = ROOT / "track_gen" / "layouts" / "data" / "circuits"


def _make(task: str, num_envs: int = 4, seed: int = 3, start: bool = False):
    import gymnasium as gym
    from isaaclab.managers import EventTermCfg
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401
    from track_gen_isaac import mdp

    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs, cfg.sim.device, cfg.seed = num_envs, "cpu", seed
    if start:
        cfg.events.place = EventTermCfg(func=mdp.place_at_course_start, mode="reset")
    return gym.make(task, cfg=cfg)


def test_car_tasks_are_registered_with_their_agent_suite_and_budget():
    import gymnasium as gym

    from track_gen_isaac.evaluate import suite_of_task
    from track_gen_isaac.main_job import default_iterations
    from track_gen_isaac.task_ids import play_task_of, task_family
    from track_gen_isaac.tasks import TASKS, agents

    for runtime in ("", "-Warp"):
        for play in ("", "-Play"):
            tid = f"TrackGen-Car-Track{runtime}{play}-v0"
            assert tid in gym.registry and tid in TASKS
            assert gym.registry[tid].entry_point.endswith("ManagerBasedRLEnvWarp" if runtime else ":ManagerBasedRLEnv")
            assert gym.registry[tid].kwargs["rsl_rl_cfg_entry_point"].endswith("car_track_ppo")
            assert task_family(tid) == "Car-Track"
    assert task_family("TrackGen-Drone-Track-v0") == "Track"  # the drone's band task keeps its family
    ppo = agents.car_track_ppo()
    assert ppo.experiment_name == "trackgen_car_track" and ppo.algorithm.gamma == 0.995
    dist = ppo.actor.distribution_cfg
    assert dist.init_std == 0.3 and tuple(dist.std_range) == (1e-6, 1e6)  # the noise is free (v14's bound: not kept)
    assert play_task_of(TASK) == "TrackGen-Car-Track-Play-v0"
    assert default_iterations(TASK, "cpu") == 700
    s = suite_of_task(TASK)
    assert s.name == "car-track-v1" and s.laps == 1 and s.env_overrides == {"course.half_extents": (0.29, 0.155)}


def test_the_tasks_band_tracks_are_valid_at_least_99_percent():
    """The task's generator (presets.track_car at 0.1, 1024 attempts) on 512 envs: >= 99 % valid."""
    import track_gen as tg
    from track_gen_isaac.tasks.car_track import car_course

    cfg = car_course().generator_config(512, "cpu")
    gen = tg.TrackGenerator(cfg, seeds=5)
    assert float(gen.result.valid.numpy().mean()) >= 0.99


def _yaw(q: torch.Tensor) -> np.ndarray:
    x, y, z, w = q.unbind(-1)
    return torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)).numpy()


@pytest.mark.parametrize("task", [TASK, "TrackGen-Car-Track-Warp-v0"])
def test_env_steps_and_the_car_is_exactly_its_dynamics(task):
    """Observations [E, 70]; after every step the body's root pose and velocity are CarDynamics' state,
    and that state equals a separate CarDynamics driven by the same scaled actions, bit for bit."""
    from track_gen_isaac.car import F1TENTH, CarDynamics

    env = _make(task)
    try:
        base = env.unwrapped
        obs, _ = env.reset()
        assert obs["policy"].shape == (4, 70) and torch.isfinite(obs["policy"]).all()
        drv = base.action_manager.get_term("car").driver
        robot = base.scene["robot"]
        twin = CarDynamics(F1TENTH, 4, "cpu", steering="angle")
        for a, b in zip(twin.state(), drv.dyn.state()):
            a.assign(b)
        gen = torch.Generator().manual_seed(0)
        kept = np.ones(4, bool)
        for _ in range(25):
            act = torch.rand(4, 2, generator=gen) * torch.tensor([0.4, 0.6]) + torch.tensor([-0.2, 0.2])
            before = base.episode_length_buf.clone()
            obs, rew, term, trunc, _ = env.step(act)
            kept &= (base.episode_length_buf == before + 1).numpy()  # no reset in between
            scaled = (act * torch.tensor([F1TENTH.steer_max, F1TENTH.accel_max])).contiguous()
            twin.step(wp.from_torch(scaled), 0.02)
            d = drv.dyn
            np.testing.assert_array_equal(robot.data.root_pos_w.torch[:, :2].numpy(), d.pos.numpy())
            np.testing.assert_allclose(_yaw(robot.data.root_quat_w.torch), d.yaw.numpy(), atol=2e-6)
            v = robot.data.root_lin_vel_w.torch.numpy()
            np.testing.assert_allclose(np.hypot(v[:, 0], v[:, 1]), np.abs(d.speed.numpy()), atol=1e-5)
            np.testing.assert_allclose(robot.data.root_ang_vel_w.torch[:, 2].numpy(), d.yaw_rate.numpy(), atol=1e-6)
            for a, b in zip(twin.state(), d.state()):
                np.testing.assert_array_equal(a.numpy()[kept], b.numpy()[kept])
            for a, b in zip(twin.state(), d.state()):  # a reset env: the twin follows it from its new start
                a.assign(b)
        assert kept.any() and (drv.dyn.speed.numpy()[kept] > 0.5).all()
        assert float(robot.data.root_pos_w.torch[:, 2].std()) == 0.0  # the kinematic body keeps its height
    finally:
        env.close()


def test_leaving_the_band_ends_the_episode_with_the_crash_penalty():
    """Full lock and full throttle from the course start: every car leaves the band (off_track) within
    3 s; that step's reward carries the crash term (-5000 x 0.02 s = -100)."""
    env = _make(TASK, start=True)
    try:
        base = env.unwrapped
        env.reset()
        tm = base.termination_manager
        ended = np.zeros(4, bool)
        for _ in range(150):
            obs, rew, term, trunc, _ = env.step(torch.tensor([[1.0, 1.0]] * 4))
            off = tm.get_term("off_track").numpy() | tm.get_term("spun").numpy()
            hit = off & ~ended
            assert (term.numpy()[hit]).all() and (rew.numpy()[hit] < -25.0).all()
            ended |= off
            if ended.all():
                break
        assert ended.all(), "a car stayed in the band at full lock"
    finally:
        env.close()


@pytest.mark.parametrize("change, match", [
    ({"grip_steering": -1.0}, r"grip_steering: expected a finite number >= 0 \(0: off\), got -1.0"),
    ({"grip_steering": 1.0, "steering": "rate"}, r"grip_steering limits a target steering angle: it needs "
                                                  r"steering='angle', got steering='rate'"),
])
def test_a_bad_grip_steering_is_refused_when_the_env_is_built(change, match):
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401

    cfg = load_cfg_from_registry(TASK, "env_cfg_entry_point")
    cfg.scene.num_envs, cfg.sim.device = 2, "cpu"
    for k, v in change.items():
        setattr(cfg.actions.car, k, v)
    with pytest.raises(ValueError, match=match):
        env = gym.make(TASK, cfg=cfg)
        env.reset()


def corner_index_reference(curvature, s, length, cp_s, cp_count, lead):
    """numpy: the last checkpoint at or before ``s_peak - lead`` (the loop wraps; none: the last one),
    ``s_peak`` the arc length of the first largest ``|curvature|``."""
    out = []
    for e in range(len(length)):
        j = int(np.argmax(np.abs(curvature[e])))
        s0 = (float(s[e, j]) - float(lead[e])) % float(length[e])
        cs = cp_s[e, :cp_count[e]]
        before = np.nonzero(cs <= s0)[0]
        out.append(int(before.max()) if before.size else int(cp_count[e]) - 1)
    return np.array(out)


@pytest.mark.parametrize("task", [TASK, "TrackGen-Car-Track-Warp-v0"])
def test_corner_starts_put_the_car_before_its_tracks_tightest_turn(task):
    """place_at_start_or_checkpoint(corner_share=1): every car starts at rest on the checkpoint the
    drawn lead before its track's tightest turn (the numpy reference, with a fixed lead), facing the
    checkpoint's normal, that checkpoint counted as passed; then, with leads in (2, 10) m, every start
    is 2 to 10 m + one spacing before the turn, also at the resets inside 200 steps at full lock."""
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401
    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.tasks.car_track import CHECKPOINT_SPACING

    E = 8
    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs, cfg.sim.device, cfg.seed = E, "cpu", 3
    cfg.events.place.params.update(start_share=0.0, corner_share=1.0, corner_lead=(3.0, 3.0), jitter=(0.0, 0.0, 0.0))
    env = gym.make(task, cfg=cfg)
    try:
        base = env.unwrapped
        env.reset()
        ec = get_course(base)
        r, cp = ec.course.result, ec.course.checkpoint_sampler.checkpoints
        curv, arc, length, cps, count = (a.numpy() for a in (r.curvature, r.s, r.length, cp.s, cp.count))
        idx = ec.pose_index.numpy()
        np.testing.assert_array_equal(idx, corner_index_reference(curv, arc, length, cps, count, np.full(E, 3.0)))
        pos = (base.scene["robot"].data.root_pos_w.torch - base.scene.env_origins).numpy()
        np.testing.assert_allclose(pos[:, :2], cp.pos.numpy()[np.arange(E), idx][:, :2], atol=1e-5)
        n = cp.normal.numpy()[np.arange(E), idx]
        np.testing.assert_allclose(_yaw(base.scene["robot"].data.root_quat_w.torch), np.arctan2(n[:, 1], n[:, 0]),
                                   atol=1e-5)
        np.testing.assert_array_equal(ec.course.progress.next_index.numpy(), (idx + 1) % count)
        assert len(set((1 / np.abs(curv).max(1)).round(3))) > 1  # different tracks, different turns

        base.event_manager.get_term_cfg("place").params["corner_lead"] = (2.0, 10.0)
        env.reset()
        resets = 0
        for step in range(200):
            if step:
                env.step(torch.tensor([[1.0, 1.0]] * E))  # full lock and throttle: cars leave and are reset
                resets += int((base.episode_length_buf == 0).sum())
            idx = ec.pose_index.numpy()
            curv, arc, length, cps = (a.numpy() for a in (r.curvature, r.s, r.length, cp.s))
            peak = arc[np.arange(E), np.abs(curv).argmax(1)]
            ahead = (peak - cps[np.arange(E), idx]) % length
            assert np.all(ahead >= 2.0 - 1e-3) and np.all(ahead <= 10.0 + CHECKPOINT_SPACING + 1e-3), ahead
        assert resets >= E  # the placement ran again inside env.step, on new tracks
    finally:
        env.close()


def corner_index_distribution(curvature, s, length, cp_s, cp_count, lead, power):
    """numpy: per env, the probability of each checkpoint index when the turn point is drawn with
    probability proportional to ``|curvature|^power`` and the start is ``lead`` before it."""
    out = []
    for e in range(len(length)):
        w = np.abs(curvature[e]).astype(np.float64) ** power
        cs = cp_s[e, :cp_count[e]]
        s0 = (s[e] - lead) % float(length[e])
        k = np.searchsorted(cs, s0, side="right") - 1
        k[k < 0] = cp_count[e] - 1
        out.append(np.bincount(k, weights=w, minlength=cp_count[e]) / w.sum())
    return out


def test_weighted_corner_starts_follow_the_curvature_weights():
    """EnvCourse.corner_poses(power=p), drawn 400 times on the same 8 tracks: the checkpoint indices
    follow the numpy distribution of |curvature|^p (total variation < 0.12 per env over ten stretches of
    the lap, at p = 3 and 0), which differs from the other power's by more than 0.3; power None stays the
    tightest turn."""
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401
    from track_gen_isaac.env_course import get_course

    E, draws = 8, 400
    cfg = load_cfg_from_registry(TASK, "env_cfg_entry_point")
    cfg.scene.num_envs, cfg.sim.device, cfg.seed = E, "cpu", 5
    env = gym.make(TASK, cfg=cfg)
    try:
        env.reset()
        ec = get_course(env.unwrapped)
        r, cp = ec.course.result, ec.course.checkpoint_sampler.checkpoints
        args = [a.numpy() for a in (r.curvature, r.s, r.length, cp.s, cp.count)]
        every = wp.ones(E, dtype=wp.int32)
        want = {p: corner_index_distribution(*args, 3.0, p) for p in (0.0, 3.0)}
        for p in (0.0, 3.0):
            seen = np.zeros((E, cp.s.shape[1]))
            for _ in range(draws):
                ec.corner_poses(every, (3.0, 3.0), power=p)
                seen[np.arange(E), ec.pose_index.numpy()] += 1
            for e in range(E):
                n = int(args[4][e])
                bins = np.arange(n) * 10 // n  # ten stretches of the lap: the counts per checkpoint are too thin
                coarse = lambda x: np.bincount(bins, weights=x, minlength=10)  # noqa: E731
                tv = 0.5 * np.abs(coarse(seen[e, :n] / draws) - coarse(want[p][e])).sum()
                other = 0.5 * np.abs(coarse(want[0.0][e]) - coarse(want[3.0][e])).sum()
                assert tv < 0.12 and other > 0.3, (p, e, tv, other)
        ec.corner_poses(every, (3.0, 3.0))
        np.testing.assert_array_equal(ec.pose_index.numpy(), corner_index_reference(*args, np.full(E, 3.0)))
    finally:
        env.close()


def corner_speed_limit(curvature, s, length, cp_s, index, brake):
    """numpy (float64): per env, the top of the corner start's speed draw, ``sqrt(brake / |k| + 2 brake d)``
    with ``d`` the arc length from the start checkpoint to the tightest turn."""
    rows = np.arange(len(length))
    peak = np.abs(curvature).argmax(1)
    k = np.abs(curvature[rows, peak]).astype(np.float64)
    d = (s[rows, peak].astype(np.float64) - cp_s[rows, index]) % length.astype(np.float64)
    return np.sqrt(brake / k + 2.0 * brake * d)


@pytest.mark.parametrize("task", [TASK, "TrackGen-Car-Track-Warp-v0"])
def test_corner_starts_at_speed_brake_into_the_turn(task):
    """``corner_brake=9``: every corner start rolls straight ahead at a speed between 0 and the numpy
    limit (the speed from which braking at 9 m/s^2 meets the tightest turn at ``sqrt(9 / |k|)``), the
    body's root velocity along its heading; the draws (8 tracks x 300) are uniform over that range
    (mean 0.5, every quarter 20-30 %); a start without ``corner_brake``, or at the course start, is at
    rest again (the env-level part in the stable runtime: the warp one replays its recorded reset)."""
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401
    from track_gen_isaac.env_course import get_course

    E = 8
    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs, cfg.sim.device, cfg.seed = E, "cpu", 3
    cfg.events.place.params.update(start_share=0.0, corner_share=1.0, corner_lead=(3.0, 3.0), jitter=(0.0, 0.0, 0.0),
                                   corner_brake=9.0)
    env = gym.make(task, cfg=cfg)
    try:
        base = env.unwrapped
        env.reset()
        ec = get_course(base)
        d = base.action_manager.get_term("car").driver.dyn
        r, cp = ec.course.result, ec.course.checkpoint_sampler.checkpoints
        args = [a.numpy() for a in (r.curvature, r.s, r.length, cp.s)]
        top = corner_speed_limit(*args, ec.pose_index.numpy(), 9.0)
        v = d.speed.numpy()
        assert (v > 0.0).all() and (v <= top + 1e-4).all() and (top > 4.0).all(), (v, top)
        vel = base.scene["robot"].data.root_lin_vel_w.torch.numpy()
        yaw = d.yaw.numpy()
        np.testing.assert_allclose(vel[:, 0], v * np.cos(yaw), atol=1e-4)
        np.testing.assert_allclose(vel[:, 1], v * np.sin(yaw), atol=1e-4)
        np.testing.assert_array_equal(ec.pose_speed.numpy(), 0.0)  # spent by the placement

        every = wp.ones(E, dtype=wp.int32)
        ratios = []
        for _ in range(300):
            ec.corner_poses(every, (0.0, 12.0), brake=9.0)
            ratios.append(ec.pose_speed.numpy() / corner_speed_limit(*args, ec.pose_index.numpy(), 9.0))
        ratios = np.concatenate(ratios)
        assert ratios.min() >= 0.0 and ratios.max() <= 1.0 + 1e-5
        assert abs(ratios.mean() - 0.5) < 0.03
        assert (np.abs(np.histogram(ratios, bins=4, range=(0, 1))[0] / ratios.size - 0.25) < 0.05).all()

        ec.corner_poses(every, (0.0, 12.0))
        np.testing.assert_array_equal(ec.pose_speed.numpy(), 0.0)
        if task == TASK:  # the warp runtime replays its recorded reset: its event parameters are fixed
            params = base.event_manager.get_term_cfg("place").params
            params["corner_brake"] = None
            env.reset()
            np.testing.assert_array_equal(d.speed.numpy(), 0.0)
            params.update(corner_brake=9.0, start_share=1.0, corner_share=0.0)
            env.reset()
            np.testing.assert_array_equal(d.speed.numpy(), 0.0)
    finally:
        env.close()


@pytest.mark.parametrize("change, match", [
    ({"corner_share": 0.9}, r"corner_share: expected a number in \[0, 1 - start_share\] = \[0, 0.75\], got 0.9"),
    ({"corner_share": 0.2, "corner_lead": (5.0, 2.0)}, r"corner_lead: expected finite 0 <= min <= max \[m\]"),
    ({"corner_share": 0.2, "corner_power": -1.0}, r"corner_power: expected None \(the tightest turn\) or a finite "
                                                  r"number >= 0, got -1.0"),
    ({"corner_share": 0.2, "corner_brake": 0.0}, r"corner_brake: expected None \(corner starts at rest\) or a finite "
                                                 r"deceleration > 0 \[m/s\^2\], got 0.0"),
    ({"corner_share": 0.2, "corner_brake": float("nan")}, r"corner_brake: expected None"),
])
def test_bad_corner_starts_are_refused_when_the_env_is_built(change, match):
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401

    cfg = load_cfg_from_registry(TASK, "env_cfg_entry_point")
    cfg.scene.num_envs, cfg.sim.device = 2, "cpu"
    cfg.events.place.params.update(change)
    with pytest.raises(ValueError, match=match):
        env = gym.make(TASK, cfg=cfg)
        env.reset()


def test_band_and_gate_layouts_are_refused_by_the_other_kind_of_task():
    from track_gen.layouts import data_dir
    from track_gen_isaac.evaluate.flown import flown_suite

    with pytest.raises(ValueError, match=r"layout 'lsy_level0' is a gate layout, but task 'TrackGen-Car-Track-v0' "
                                         r"races band-track courses"):
        flown_suite(TASK, layout=data_dir() / "lsy_level0.toml")
    with pytest.raises(ValueError, match=r"layout 'tum_monza' is a band-track layout, but task "
                                         r"'TrackGen-Drone-Gates-v0' races gate courses"):
        flown_suite("TrackGen-Drone-Gates-v0", layout=CIRCUITS / "tum_monza.toml")
    with pytest.raises(ValueError, match="holds gate courses.*TrackGen-Car-Track-v0.*band-track"):
        flown_suite(TASK, suite="gates-v1")
    s = flown_suite(TASK, layout=CIRCUITS / "tum_monza.toml")
    assert (s.task, s.scale, s.laps, s.start_jitter) == ("TrackGen-Car-Track-Play-v0", 0.1, 1, (0.1, 0.0, 0.1))
    assert flown_suite(TASK, layout=CIRCUITS / "tum_monza.toml", scale=0.2).scale == 0.2


def test_spa_is_driven_with_its_widest_points_inside_its_tightest_turn():
    """fit_band narrows Spa's half width below its tightest turn radius (La Source), so its course is
    valid; Monza is left as it is."""
    import track_gen as tg
    from track_gen.layouts import load
    from track_gen.pipeline import presets
    from track_gen_isaac.evaluate.layout_suite import fit_band

    spa, narrowed = fit_band(load(CIRCUITS / "tum_spa.toml", scale=0.1))
    assert 0 < narrowed < 0.1 * spa.num_points and float(spa.half_width.max()) < 0.8
    assert fit_band(load(CIRCUITS / "tum_monza.toml", scale=0.1))[1] == 0
    gen = tg.TrackGenerator(presets.track_from_layouts([spa], 1, "cpu"), seeds=0)
    assert int(gen.result.valid.numpy()[0]) == 1


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> pathlib.Path:
    """`bash scripts/main.sh --task TrackGen-Car-Track-v0` in small: 2 iterations, playback, report."""
    cwd = tmp_path_factory.mktemp("car_main")
    cmd = [sys.executable, "-m", "track_gen_isaac.main_job", "--task", TASK, "--num_envs", "16", "--max_iterations",
           "2", "--device", "cpu", "--play_steps", "20", "--play_envs", "2", "--eval_courses", "0",
           "--eval_layouts", "0"]
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[train] iter ")]
    assert [ln.split()[2] for ln in lines] == ["1/2", "2/2"] and all("checkpoints/episode" in ln for ln in lines)
    runs = list((cwd / "logs" / "rsl_rl" / "trackgen_car_track").iterdir())
    assert len(runs) == 1 and list(runs[0].glob("model_*.pt"))
    # the car's main job flies the mean of its last checkpoints (here the two a 2-iteration run saves):
    # the playback and every evaluation of the run folder below load that average into the real policy
    avg = runs[0] / "model_average.pt"
    assert torch.load(avg, map_location="cpu", weights_only=False)["averaged_from"] == ["model_0.pt", "model_1.pt"]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("[main] policy: ")]
    assert line == [f"[main] policy: the mean of 2 checkpoints (model_0.pt, model_1.pt): "
                    f"{avg.relative_to(cwd)}"], line
    summary = json.loads((runs[0] / "report" / "summary.json").read_text())
    assert summary["task"] == "TrackGen-Car-Track-Play-v0" and summary["steps"] == 20
    return runs[0]


def test_main_job_trains_and_the_benchmark_evaluates_a_suite(run):
    from track_gen_isaac.evaluate import SUITES, evaluate

    suite = dataclasses.replace(SUITES["car-track-v1"], name="car-track-short-v1", time_limit_s=3.0)
    res = evaluate(run, suite, num_courses=4, device="cpu", baselines=False)
    s = res["suites"]["car-track-short-v1"]
    assert s["num_courses"] == 4 and len(s["courses"]) == 4 and s["suite"]["task"] == TASK
    veh = res["vehicle"]
    assert veh["kind"] == "car" and veh["max_accel_mps2"] == pytest.approx(1.0489 * 9.81, rel=1e-6)
    for row in s["courses"]:
        # a 300-800 m band track: the friction-limited reference laps it in 20-70 s, below the centre line's
        assert 300.0 < row["lap_length_m"] < 800.0 and 15.0 < row["reference_first_lap_s"] < 80.0
        assert row["reference_first_lap_s"] <= row["line_reference_first_lap_s"]
        assert row["end"] in ("off_track", "spun", "stalled", "time_out") and not row["completed"]
    for name in ("eval.json", "eval.md", "lap_time_ratio.png", "best_worst.png"):
        assert (pathlib.Path(res["out"]) / name).stat().st_size > 0
    assert "|a| <= mu g" in (pathlib.Path(res["out"]) / "eval.md").read_text()


def test_the_benchmark_drives_a_shipped_circuit_at_the_tasks_scale(run, tmp_path):
    """A full-size circuit flown at the task's scale (0.1) by the run's own -Play task, with jittered
    starts and the paths picture (a 3 s horizon: the untrained car would stand still for 150 s); the
    CLI's --scale belongs to --layout."""
    from track_gen_isaac.evaluate import evaluate
    from track_gen_isaac.evaluate.flown import flown_suite

    suite = dataclasses.replace(flown_suite(TASK, layout=CIRCUITS / "tum_budapest.toml"), time_limit_s=3.0)
    res = evaluate(run, suite, num_courses=2, device="cpu", baselines=False, out=tmp_path / "b")
    s = res["suites"]["tum_budapest"]
    assert s["suite"]["scale"] == 0.1 and s["suite"]["task"] == "TrackGen-Car-Track-Play-v0"
    row = s["courses"][0]
    assert 430.0 < row["lap_length_m"] < 445.0 and math.isfinite(row["reference_first_lap_s"])  # 4.38 km / 10
    assert (tmp_path / "b" / "paths.png").stat().st_size > 0
    bad = subprocess.run([sys.executable, "-m", "track_gen_isaac.evaluate", "--checkpoint", str(run), "--scale", "0.1"],
                         cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--scale applies to --layout" in bad.stderr


@pytest.mark.parametrize("task", [TASK, "TrackGen-Car-Track-Warp-v0"])
def test_a_parked_car_stalls_after_the_patience_with_the_stall_penalty(task):
    """Zero action from the course start: the car stays at rest, and on the step at which it has been below
    0.3 m/s for 2 s (100 steps of 0.02 s; a float32 sum of the step times, as the kernel keeps it) every env
    ends with ``stalled`` and the stall term alone (-8500 x 0.02 s = -170, not the crash's -100 on top), not
    before; then the timer starts again from 0. A driven car (half throttle) never stalls."""
    from track_gen_isaac.tasks.car_track import STALL

    dt32, t, due = np.float32(0.02), np.float32(0.0), 0
    while t < np.float32(STALL[1]):
        t, due = np.float32(t + dt32), due + 1
    env = _make(task, start=True)
    try:
        base = env.unwrapped
        env.reset()
        tm = base.termination_manager
        term_of = lambda: tm.get_term("stalled").numpy()  # noqa: E731
        for k in range(1, due + 1):
            _, rew, term, _, _ = env.step(torch.zeros(4, 2))
            stalled = np.asarray(term_of(), bool)
            if k < due:
                assert not stalled.any() and not term.numpy().any(), f"stalled early at step {k}"
            else:
                assert stalled.all() and term.numpy().all()
                np.testing.assert_allclose(rew.numpy(), -170.0, atol=0.5)
        _, _, term, _, _ = env.step(torch.zeros(4, 2))  # the reset cars start their wait again
        assert not np.asarray(term_of(), bool).any()
        env.reset()
        for _ in range(due + 20):
            _, _, term, _, _ = env.step(torch.tensor([[0.0, 0.5]] * 4))
            assert not np.asarray(term_of(), bool).any()
    finally:
        env.close()


@pytest.mark.parametrize("task", [TASK, "TrackGen-Car-Track-Warp-v0"])
def test_the_rolling_slip_penalty_charges_only_the_slip_beyond_the_steering_geometry(task):
    """``car_slip_l2(rolling=True)`` against a float64 reference, ``(beta - atan(l_r tan(delta) / l))^2``,
    on random driving in both runtimes; a car turning at full lock below the kinematic speed (it rolls:
    no tyre slip) pays ~0.051 rad^2 without ``rolling`` and nothing with it; a bad ``rolling`` is refused."""
    from track_gen_isaac.car import F1TENTH
    from track_gen_isaac.mdp.car_safety import car_slip_sq

    env = _make(task, start=True)
    try:
        base = env.unwrapped
        env.reset()
        d = base.action_manager.get_term("car").driver.dyn
        out = wp.zeros(4, dtype=wp.float32, device="cpu")

        def penalties():
            beta, delta = d.slip.numpy().astype(np.float64), d.steer.numpy().astype(np.float64)
            car_slip_sq(base, out, rolling=True)
            rolled = out.numpy().copy()
            car_slip_sq(base, out)
            return rolled, out.numpy().copy(), beta, delta

        gen = torch.Generator().manual_seed(1)
        seen = 0.0
        for _ in range(60):
            env.step(torch.rand(4, 2, generator=gen) * 2.0 - 1.0)
            rolled, plain, beta, delta = penalties()
            ref = (beta - np.arctan(F1TENTH.lr * np.tan(delta) / (F1TENTH.lf + F1TENTH.lr))) ** 2
            np.testing.assert_allclose(rolled, ref, rtol=1e-5, atol=1e-9)
            np.testing.assert_allclose(plain, beta ** 2, rtol=1e-6, atol=1e-12)
            seen = max(seen, float(np.abs(rolled - plain).max()))
        assert seen > 1e-3  # the two differ on this driving
        env.reset()
        for _ in range(40):  # full lock at a crawl: the kinematic model, a rolling car
            env.step(torch.tensor([[1.0, 0.05]] * 4))
        rolled, plain, _, _ = penalties()
        assert (np.abs(d.speed.numpy()) < F1TENTH.kinematic_speed).all()
        full_lock = math.atan(F1TENTH.lr * math.tan(F1TENTH.steer_max) / (F1TENTH.lf + F1TENTH.lr))
        np.testing.assert_allclose(plain, full_lock ** 2, rtol=1e-4)
        assert (rolled < 1e-10).all() and (plain > 0.04).all()
        with pytest.raises(TypeError, match="car_slip_l2: rolling must be a bool, got 1"):
            car_slip_sq(base, out, rolling=1)
    finally:
        env.close()
