"""TrackGen-Drone-Gates-Curriculum-v0: harder gate courses with pole obstacles at a per-env
difficulty curriculum; a pole ends the episode like a frame (mdp.collided reads both)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from .helpers import teleport


def _make(task: str, num_envs: int = 8):
    import gymnasium as gym
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401

    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs = num_envs
    cfg.sim.device = "cpu"
    cfg.seed = 5
    return gym.make(task, cfg=cfg)


@pytest.mark.parametrize("task", ["TrackGen-Drone-Gates-Curriculum-v0", "TrackGen-Drone-Gates-Curriculum-Warp-v0"])
def test_levels_rise_with_laps_and_poles_end_episodes(task):
    env = _make(task)
    base = env.unwrapped
    ec = base.track_gen_courses["course"]
    gen = ec.course.generator
    try:
        env.reset()
        assert "obstacles" in ec.course.components           # Course.gates added the pole collision
        for _ in range(3):
            env.step(torch.zeros(base.num_envs, 4))
        # half the envs "completed" a lap: their next course is drawn one step harder
        ec.torch(ec.result.events.laps)[:4] = 1
        ec.torch(ec.result.events.laps)[4:] = 0
        base.episode_length_buf[:] = 5
        env.reset()
        level = gen.inputs["gates.difficulty_offset"].numpy()
        np.testing.assert_allclose(level, [0.1] * 4 + [0.0] * 4, atol=1e-6)
        np.testing.assert_allclose(gen.result.difficulty.numpy(), level, atol=1e-6)
        # push every env far up the curriculum, then put each drone inside its first pole
        gen.inputs["gates.difficulty_offset"].fill_(1.0)
        ec.regenerate(None, advance=True)
        count = gen.result.obstacle_count.numpy()
        assert (count > 0).mean() >= 0.5, count
        poles = gen.result.obstacle_pos.numpy()[:, 0].copy()
        poles[:, 2] = 1.0                                     # mid-height of a >= 1.5 m pole
        teleport(base, ec, poles)
        env.step(torch.zeros(base.num_envs, 4))
        crash = np.asarray(torch.as_tensor(base.termination_manager.get_term("crash")).cpu()).astype(bool)
        assert crash[count > 0].all(), (crash, count)      # the pole counts as a crash
    finally:
        env.close()


def test_hard_suite_flies_difficulty_one_courses_with_the_curriculum_off():
    from track_gen_isaac.evaluate import get_suite, suite_of_task
    from track_gen_isaac.evaluate.rollout import build_env

    suite = get_suite("gates-hard-v1")
    assert suite_of_task("TrackGen-Drone-Gates-Curriculum-v0") is suite
    env, _agent = build_env(suite, 8, "cpu")
    try:
        base = env.unwrapped
        assert base.cfg.curriculum is None                    # the suite's courses stay as drawn
        env.reset()
        gen = base.track_gen_courses["course"].course.generator
        np.testing.assert_array_equal(gen.result.difficulty.numpy(), np.ones(8, np.float32))
        assert (gen.result.obstacle_count.numpy() > 0).all() and gen.result.valid.numpy().all()
    finally:
        env.close()


def test_tasks_without_a_suite_fly_their_familys_courses():
    from track_gen_isaac.evaluate import get_suite, suite_of_task

    race = suite_of_task("TrackGen-Drone-Gates-Race-v0")
    gates = get_suite("gates-v1")
    assert race.name == "gates-v1" and race.seed == gates.seed and race.course == gates.course
    assert race.task == "TrackGen-Drone-Gates-Race-Play-v0"           # the racer's own -Play env (its centre plant)
    assert suite_of_task("TrackGen-Drone-Gates-v0") is gates
    with pytest.raises(ValueError, match="no benchmark suite"):
        suite_of_task("Acme-Rover-v0")
