"""mdp.course_difficulty: a per-env difficulty that rises on success and falls on failure, in real
kitless envs of both runtimes, without recording the regeneration again."""

from __future__ import annotations

import numpy as np
import pytest

from .envs import GatesEnvCfg
from .helpers import step


def _cfg():
    from isaaclab.managers import CurriculumTermCfg
    from isaaclab.utils import configclass

    from track_gen_isaac import mdp

    @configclass
    class Curr:
        difficulty = CurriculumTermCfg(func=mdp.course_difficulty,
                                       params={"up": 0.25, "down": 0.1, "laps": 1, "start": 0.5})

    cfg = GatesEnvCfg()
    cfg.curriculum = Curr()
    return cfg


def _run(env):
    """Success for envs 0-3, failure for 4-7, twice; returns (levels after each reset, difficulty
    each env's new course was drawn at, recorded graphs before / after)."""
    ec = env._track_gen_courses["course"]
    gen = ec.course.generator
    env.reset()
    graphs = set(ec.course._graphs)
    levels, drawn = [], []
    for _ in range(2):
        step(env, 3)
        ec.torch(ec.result.events.laps)[:4] = 1     # envs 0-3 "completed" a lap, 4-7 did not
        ec.torch(ec.result.events.laps)[4:] = 0
        env.episode_length_buf[:] = 5
        env.reset()
        levels.append(gen.inputs["gates.difficulty_offset"].numpy().copy())
        drawn.append(gen.result.difficulty.numpy().copy())
    return levels, drawn, graphs, set(ec.course._graphs), env.extras["log"]


@pytest.mark.parametrize("runtime", ["stable", "warp"])
def test_levels_follow_success_and_courses_follow_levels(runtime):
    if runtime == "stable":
        from isaaclab.envs import ManagerBasedRLEnv as Env
    else:
        from isaaclab_experimental.envs import ManagerBasedRLEnvWarp as Env
    env = Env(_cfg())
    try:
        params = env._track_gen_courses["course"].course.generator.params
        levels, drawn, before, after, log = _run(env)
        assert params["gates.difficulty"] == 0.0          # the knob is driven by the per-env offset alone
        want1 = np.array([0.75] * 4 + [0.4] * 4, np.float32)
        want2 = np.array([1.0] * 4 + [0.3] * 4, np.float32)   # clamped at max_level 1
        np.testing.assert_allclose(levels[0], want1, atol=1e-6)
        np.testing.assert_allclose(levels[1], want2, atol=1e-6)
        # the regeneration of the same reset drew each env's course at its new level
        np.testing.assert_allclose(drawn[0], want1, atol=1e-6)
        np.testing.assert_allclose(drawn[1], want2, atol=1e-6)
        if runtime == "stable":
            assert before == after                              # nothing recorded again
        assert log["Curriculum/difficulty/success_rate"] == pytest.approx(0.5)
        assert log["Curriculum/difficulty/mean"] == pytest.approx(float(want2.mean()), abs=1e-6)
        assert log["Curriculum/difficulty/max"] == pytest.approx(1.0)
    finally:
        env.close()


def test_bad_parameters_are_refused_at_construction():
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.managers import CurriculumTermCfg
    from isaaclab.utils import configclass

    from track_gen_isaac import mdp

    @configclass
    class Curr:
        difficulty = CurriculumTermCfg(func=mdp.course_difficulty, params={"up": 2.0})

    cfg = GatesEnvCfg()
    cfg.curriculum = Curr()
    with pytest.raises(ValueError, match="up"):
        ManagerBasedRLEnv(cfg)
