"""The depth observation terms and ``TrackGen-Drone-Gates-Depth-v0`` (issue 16): the terms equal the core
camera's image (and a float64 brute-force image) for every env in both runtimes, ``[E, H*W]`` is the
row-major flatten of ``[E, H, W]``, the task steps the same in both runtimes, its image follows the drone,
the cfg refuses bad cameras naming the field, a CNN reads the image group, and the main job trains it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.core.depth_reference import scene_depth

from .helpers import Reference, env_frame_pos

ROOT = Path(__file__).resolve().parents[2]
TASK = "TrackGen-Drone-Gates-Depth-v0"
E, STEPS, STATE = 8, 50, 20


def _cfg(task, num_envs=E):
    from isaaclab.managers import ObservationGroupCfg as ObsGroup
    from isaaclab.managers import ObservationTermCfg as ObsTerm
    from isaaclab.utils import configclass
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401
    from track_gen_isaac import mdp

    @configclass
    class ImageCfg(ObsGroup):  # the [E, H, W] term (warp: [E, H * W])
        image = ObsTerm(func=mdp.depth_image)

    @configclass
    class FlatCfg(ObsGroup):  # the [E, H * W] term, unscaled
        flat = ObsTerm(func=mdp.depth_flat)

    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.observations.image = ImageCfg()
    cfg.observations.raw = FlatCfg()
    cfg.scene.num_envs = num_envs
    cfg.sim.device = "cpu"
    cfg.seed = 3
    return cfg


def _fly(task):
    """Reset, then STEPS steps of seeded random actions; at every step the observations, the camera's
    own image, the image an independent core course casts at the same poses, and a float64 image."""
    import gymnasium as gym

    from track_gen_isaac import get_course

    env = gym.make(task, cfg=_cfg(task))
    base = env.unwrapped
    gen = torch.Generator().manual_seed(0)
    obs, _ = env.reset()
    ec = get_course(base)
    cam = ec.course.depth_camera
    ref = Reference(base, ec)
    rcam = ref.course.depth_camera
    out = {k: [] for k in ("flat", "raw", "image", "camera", "core", "numpy", "rew", "done", "pos", "state")}
    for k in range(STEPS):
        obs, rew, term, trunc, _ = env.step(torch.rand(E, 4, generator=gen) * 1.2 - 0.6)
        ref.match_generation()  # the same courses (resets regenerate some)
        ref.sync()
        rcam.cast(ref.course.context)
        out["flat"].append(obs["policy"][:, STATE:].numpy().copy())
        out["state"].append(obs["policy"][:, :STATE].numpy().copy())
        out["image"].append(obs["image"].numpy().copy())
        out["raw"].append(obs["raw"].numpy().copy())
        out["camera"].append(cam.result.depth.numpy().copy())
        out["core"].append(rcam.result.depth.numpy().copy())
        if k % 10 == 9:  # the float64 brute force is slow: every 10th step
            p = env_frame_pos(base, ec).astype(np.float64)
            q = ec.asset.data.root_quat_w.torch.numpy().astype(np.float64)
            out["numpy"].append(scene_depth(ref.course, rcam, p, q))
        out["rew"].append(np.asarray(rew).copy())
        out["done"].append((term | trunc).numpy().copy())
        out["pos"].append(env_frame_pos(base, ec))
    out["type"] = type(base).__name__
    out["far"], out["hw"] = cam.far, (cam.height, cam.width)
    out["generation"] = ec.course.generator.generation.numpy().copy()
    env.close()
    return {k: np.asarray(v) if isinstance(v, list) else v for k, v in out.items()}


@pytest.fixture(scope="module")
def runs():
    return _fly(TASK), _fly("TrackGen-Drone-Gates-Depth-Warp-v0")


def test_terms_equal_the_core_camera_in_both_runtimes(runs):
    for run in runs:
        H, W = run["hw"]
        far = run["far"]
        assert run["flat"].shape == (STEPS, E, H * W) and (H, W) == (12, 16)
        # the task's term is the camera's image, row-major, divided by far (its ObsTerm scale)
        np.testing.assert_allclose(run["flat"] * far, run["camera"].reshape(STEPS, E, H * W), rtol=1e-6)
        # and the camera drew what an independent core course draws at the same poses, every env, every step
        np.testing.assert_allclose(run["camera"], run["core"], rtol=1e-6, atol=1e-6)
        # the image term is the camera's image: [E, H, W] in the stable runtime, row-major [E, H * W] in the
        # warp one; the flat term is its row-major flatten
        img = run["image"]
        assert img.shape == ((STEPS, E, H, W) if run["type"] == "ManagerBasedRLEnv" else (STEPS, E, H * W))
        np.testing.assert_array_equal(img.reshape(STEPS, E, H, W), run["camera"])
        np.testing.assert_array_equal(run["raw"], img.reshape(STEPS, E, H * W))
        assert run["raw"].shape == (STEPS, E, H * W)
        # against the float64 brute force (a few pixels graze an edge)
        got = run["camera"][9::10]
        want = run["numpy"]
        assert (want < far).mean() > 0.3 and (want < far - 0.5).any()
        close = np.abs(got - want) <= 5e-3 * np.maximum(1.0, want)
        assert close.mean() >= 0.995, close.mean()


def test_task_steps_the_same_in_both_runtimes(runs):
    stable, warp = runs
    assert stable["type"] == "ManagerBasedRLEnv" and warp["type"] == "ManagerBasedRLEnvWarp"
    assert stable["done"].any(), "random actions for 1 s should end some episodes (resets exercised)"
    assert (stable["generation"] > 1).any()  # some envs flew a regenerated course
    np.testing.assert_array_equal(stable["done"], warp["done"])
    np.testing.assert_allclose(warp["pos"], stable["pos"], atol=1e-4)
    np.testing.assert_allclose(warp["rew"], stable["rew"], atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(warp["state"], stable["state"], atol=1e-3, rtol=1e-3)
    np.testing.assert_allclose(warp["flat"], stable["flat"], atol=1e-4)


def test_depth_follows_the_drone(runs):
    stable, _ = runs
    flat, done, pos = stable["flat"], stable["done"], stable["pos"]
    moved = np.linalg.norm(pos[1:] - pos[:-1], axis=-1) > 1e-3
    changed = np.abs(flat[1:] - flat[:-1]).max(-1) > 1e-4
    assert moved.mean() > 0.9 and changed[moved].mean() > 0.95, "the image changes as the drone moves"
    # a reset env's first observation shows its new start (the term casts after the resets): it is the
    # camera's image at the new pose, which the comparisons above check, and it differs from the last one
    for t, e in np.argwhere(done[1:]) + np.array([1, 0]):
        assert not np.array_equal(flat[t, e], flat[t - 1, e])


def test_the_image_moves_with_a_teleport_as_the_plane_formula_says():
    """Lift the drone over open ground, pitched down 90 deg: every pixel sees the ground, and the
    observation (recomputed after the move) is the plane formula at the new height."""
    import gymnasium as gym

    from track_gen.tools.depth import camera_rays
    from track_gen_isaac import get_course

    from .helpers import teleport

    cfg = _cfg(TASK, 2)
    env = gym.make(TASK, cfg=cfg)
    base = env.unwrapped
    env.reset()
    ec = get_course(base)
    cam = ec.course.depth_camera
    rays, _ = camera_rays(cam.width, cam.height, cam.fov_deg, cam.pitch_deg)
    s = np.sin(np.pi / 4)
    for h in (2.0, 3.0):
        pos = np.array([[100.0, 100.0, h]] * 2, np.float32)  # far from every gate
        teleport(base, ec, pos)
        pose = ec.asset.data.root_pose_w.torch.clone()
        pose[:, 3:7] = torch.tensor([0.0, s, 0.0, s])  # pitched 90 deg nose down: body x points down
        ec.asset.write_root_pose_to_sim_index(root_pose=pose, env_ids=torch.arange(2, dtype=torch.int32))
        base.scene.update(0.0)
        img = base.observation_manager.compute()["policy"][:, STATE:].numpy() * cam.far
        # body x -> world -z (body y -> y, body z -> x): a unit ray's downward component is its body x,
        # and the camera sits offset[0] below the body centre
        want = np.minimum((h - cam.offset[0]) / rays[:, 0], cam.far)
        assert (want < cam.far).all()
        np.testing.assert_allclose(img, np.broadcast_to(want, img.shape), rtol=1e-4)
    env.close()


def test_depth_tasks_are_registered_with_their_agent():
    import gymnasium as gym

    from track_gen_isaac.main_job import play_task_of
    from track_gen_isaac.tasks import TASKS, agents

    for runtime in ("", "-Warp"):
        for play in ("", "-Play"):
            tid = f"TrackGen-Drone-Gates-Depth{runtime}{play}-v0"
            assert tid in gym.registry and tid in TASKS
            spec = gym.registry[tid]
            assert spec.entry_point.endswith("ManagerBasedRLEnvWarp" if runtime else ":ManagerBasedRLEnv")
            assert spec.kwargs["rsl_rl_cfg_entry_point"].endswith("drone_depth_ppo")
    assert play_task_of(TASK) == "TrackGen-Drone-Gates-Depth-Play-v0"
    ppo = agents.drone_depth_ppo()
    assert ppo.experiment_name == "trackgen_drone_depth" and list(ppo.actor.hidden_dims) == [256, 128]
    assert ppo.obs_groups == {"actor": ["policy"], "critic": ["policy"]}


def test_course_cfg_refuses_bad_cameras_naming_the_field():
    import track_gen as tg
    from track_gen_isaac import CourseCfg, DepthCameraCfg

    gen = tg.GateGenConfig(gate_width=1.0)
    for kw, field in ((dict(width=0), "width"), (dict(far=0.01), "far"), (dict(fov_deg=200.0), "fov_deg"),
                      (dict(offset=(0.0, float("nan"), 0.0)), r"offset\[1\]"), (dict(grid=(0, 2)), "grid")):
        with pytest.raises((TypeError, ValueError), match=rf"CourseCfg\.depth_camera\.{field}"):
            CourseCfg(generator=gen, depth_camera=DepthCameraCfg(**kw)).validate_config()
    with pytest.raises(TypeError, match="CourseCfg.depth_camera"):
        CourseCfg(generator=gen, depth_camera={"width": 8}).validate_config()
    cam = DepthCameraCfg(width=8, height=6, grid=(2, 3)).build()
    assert (cam.width, cam.height, cam.grid, cam.cast_on_step, cam.name) == (8, 6, (2, 3), False, "depth_camera")


def test_a_depth_term_without_a_camera_fails_at_construction():
    import gymnasium as gym

    cfg = _cfg(TASK, 2)
    cfg.course.depth_camera = None
    with pytest.raises(ValueError, match="no depth camera.*depth_camera=DepthCameraCfg"):
        gym.make(TASK, cfg=cfg)


def test_a_cnn_reads_the_image_group_in_the_stable_runtime():
    """rsl_rl's CNNModel over a [E, 1, H, W] group (``depth_image(channel_first=True)``) plus the state group."""
    import gymnasium as gym
    from isaaclab.managers import ObservationGroupCfg as ObsGroup
    from isaaclab.managers import ObservationTermCfg as ObsTerm
    from isaaclab.utils import configclass
    from rsl_rl.models import CNNModel
    from tensordict import TensorDict

    from track_gen_isaac import mdp

    @configclass
    class StateCfg(ObsGroup):
        state = ObsTerm(func=mdp.racer_state)

    @configclass
    class CnnImageCfg(ObsGroup):
        image = ObsTerm(func=mdp.depth_image, params={"channel_first": True}, scale=0.1)

    cfg = _cfg(TASK, 4)
    cfg.observations.policy = StateCfg()
    cfg.observations.image = CnnImageCfg()
    env = gym.make(TASK, cfg=cfg)
    obs, _ = env.reset()
    td = TensorDict(dict(obs), batch_size=[4])
    assert td["image"].shape == (4, 1, 12, 16)
    model = CNNModel(td, {"actor": ["policy", "image"]}, "actor", 4, hidden_dims=[32],
                     cnn_cfg=dict(output_channels=[8, 8], kernel_size=[3, 3], stride=[2, 2], activation="elu"))
    assert model(td).shape == (4, 4) and model.obs_groups_2d == ["image"]
    env.close()


def test_main_job_trains_the_depth_task(tmp_path):
    """`bash scripts/main.sh --task TrackGen-Drone-Gates-Depth-v0` in small: 2 iterations, playback, report."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "track_gen_isaac.main_job", "--task", TASK, "--num_envs", "32",
           "--max_iterations", "2", "--device", "cpu", "--play_steps", "30", "--play_envs", "4", "--eval_courses", "4"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[train] iter ")]
    assert [ln.split()[2] for ln in lines] == ["1/2", "2/2"], proc.stdout[-2000:]
    runs = list((tmp_path / "logs" / "rsl_rl" / "trackgen_drone_depth").iterdir())
    assert len(runs) == 1 and sorted(p.name for p in runs[0].glob("model_*.pt"))
    agent = (runs[0] / "params" / "agent.yaml").read_text()
    assert "hidden_dims:\n  - 256\n  - 128" in agent
    summary = json.loads((runs[0] / "report" / "summary.json").read_text())
    assert summary["task"] == "TrackGen-Drone-Gates-Depth-Play-v0" and set(summary["baselines"]) == {"zero", "random"}
    assert "held-out gates-v1" in proc.stdout
