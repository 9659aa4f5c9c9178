"""mdp.course_difficulty: a per-env difficulty that rises on success and falls on failure, in real
kitless envs of both runtimes, without recording the regeneration again."""

from __future__ import annotations

import numpy as np
import pytest

from .envs import GatesEnvCfg
from .helpers import step


def _cfg(**extra):
    from isaaclab.managers import CurriculumTermCfg
    from isaaclab.utils import configclass

    from track_gen_isaac import mdp

    @configclass
    class Curr:
        difficulty = CurriculumTermCfg(func=mdp.course_difficulty,
                                       params={"up": 0.25, "down": 0.1, "laps": 1, "start": 0.5, **extra})

    cfg = GatesEnvCfg()
    cfg.curriculum = Curr()
    return cfg


def _run(env):
    """Success for envs 0-3, failure for 4-7, twice; returns (levels after each reset, difficulty
    each env's new course was drawn at, recorded graphs before / after)."""
    ec = env.track_gen_courses["course"]
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
        params = env.track_gen_courses["course"].course.generator.params
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


def _revisit_run(revisit: float, resets: int = 12, num_envs: int = 64):
    """Envs 0..E/2-1 always succeed, the rest always fail, ``resets`` times. Per reset: the levels
    and revisit flags just before it, the levels after it, the difficulty each new course was drawn
    at, and whether it is a revisit."""
    from isaaclab.envs import ManagerBasedRLEnv

    cfg = _cfg(revisit=revisit, up=0.1, down=0.05, start=0.3)
    cfg.scene.num_envs = num_envs
    cfg.seed = 11
    env = ManagerBasedRLEnv(cfg)
    ec = env.track_gen_courses["course"]
    gen = ec.course.generator
    term = env.curriculum_manager._term_cfgs[0].func
    rows = []
    try:
        env.reset()
        half = num_envs // 2
        for _ in range(resets):
            step(env, 1)             # (a drone that fails in this step is reset here too)
            before, was = term.level.cpu().numpy().copy(), term.revisiting.cpu().numpy().copy()
            ec.torch(ec.result.events.laps)[:half] = 1
            ec.torch(ec.result.events.laps)[half:] = 0
            env.episode_length_buf[:] = 5
            env.reset()
            rows.append((before, was, term.level.cpu().numpy().copy(), gen.result.difficulty.numpy().copy(),
                         term.revisiting.cpu().numpy().copy()))
        return [np.array(r) for r in zip(*rows)]
    finally:
        env.close()


def test_revisit_draws_easier_courses_and_keeps_the_level():
    before, was, after, drawn, now = _revisit_run(0.5)
    up = np.arange(before.shape[1]) < before.shape[1] // 2
    # an episode flown at the level moves it (+0.1 on success, -0.05 on failure, within [0, 1]) ...
    want = np.where(up, np.minimum(before + 0.1, 1.0), np.maximum(before - 0.05, 0.0))
    np.testing.assert_allclose(after[~was], want[~was], atol=1e-6)
    # ... a revisit's ending does not
    assert was.any()
    np.testing.assert_array_equal(after[was], before[was])
    # each new course: at the level, or on a revisit uniformly below it (about half the time)
    np.testing.assert_allclose(drawn[~now], after[~now], atol=1e-6)
    assert (drawn[now] <= after[now] + 1e-6).all() and (drawn[now] < after[now] - 1e-3).mean() > 0.8
    assert 0.35 < now.mean() < 0.65, now.mean()
    # deterministic: the same seed draws the same revisits
    for x, y in zip((before, was, after, drawn, now), _revisit_run(0.5)):
        np.testing.assert_array_equal(x, y)


def test_no_revisit_flies_every_course_at_the_level():
    before, was, after, drawn, now = _revisit_run(0.0, resets=3, num_envs=8)
    assert not was.any() and not now.any()
    np.testing.assert_allclose(drawn, after, atol=1e-6)


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
    cfg.curriculum.difficulty.params = {"revisit": 1.5}
    with pytest.raises(ValueError, match="revisit: expected a probability"):
        ManagerBasedRLEnv(cfg)
