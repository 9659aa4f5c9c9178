"""mdp.course_mixture: a mixed generator reweighted toward the kinds of course the policy fails, in
real kitless envs of both runtimes, without recording the regeneration again."""

from __future__ import annotations

import numpy as np
import pytest

import track_gen as tg

from .envs import GatesEnvCfg
from .helpers import step

#: two kinds of course, weights 1 : 3
MIX = {"small": (1.0, {"gates.size": (8.0, 10.0)}), "big": (3.0, {"gates.size": (14.0, 16.0)})}


def _cfg(num_envs=32, **params):
    from isaaclab.managers import CurriculumTermCfg
    from isaaclab.utils import configclass

    from track_gen_isaac import mdp

    @configclass
    class Curr:
        mixture = CurriculumTermCfg(func=mdp.course_mixture, params=params)

    cfg = GatesEnvCfg()
    cfg.scene.num_envs = num_envs
    cfg.course = cfg.course.replace(generator=tg.GateGenConfig(gate_width=1.0, gate_height=1.0, size=12.0,
                                                               mixture=MIX))
    cfg.curriculum = Curr()
    return cfg


def _end_all(env, ok_component: int):
    """End every env's episode; those whose course came from ``ok_component`` completed a lap."""
    ec = env.track_gen_courses["course"]
    comp = ec.course.generator.mixture_component.numpy()
    step(env, 2)
    laps = ec.torch(ec.result.events.laps)
    laps[:] = 0
    laps[np.flatnonzero(comp == ok_component).tolist()] = 1
    env.episode_length_buf[:] = 5
    env.reset()
    return comp


@pytest.mark.parametrize("runtime", ["stable", "warp"])
def test_weights_follow_each_kinds_success_and_the_next_draws_use_them(runtime):
    if runtime == "stable":
        from isaaclab.envs import ManagerBasedRLEnv as Env
    else:
        from isaaclab_experimental.envs import ManagerBasedRLEnvWarp as Env
    env = Env(_cfg(num_envs=32, floor=0.25, min_episodes=32, smoothing=0.5))
    try:
        ec = env.track_gen_courses["course"]
        gen = ec.course.generator
        env.reset()
        graphs = set(ec.course._graphs)
        assert gen.mixture_weights == {"small": 1.0, "big": 3.0}
        comp = _end_all(env, ok_component=0)       # every small course finished, every big one failed
        assert {0, 1} <= set(np.unique(comp).tolist())
        # first window: rates 1 and 0 -> small 1 * 0.25, big 3 * 1
        assert gen.mixture_weights == pytest.approx({"small": 0.25, "big": 3.0})
        log = env.extras["log"]
        assert log["Curriculum/mixture/success_small"] == 1.0 and log["Curriculum/mixture/success_big"] == 0.0
        assert log["Curriculum/mixture/share_small"] == pytest.approx(0.25 / 3.25)
        # the same reset's regeneration drew with the new weights: the generator's float64 reference
        want = tg.GateGenerator(gen.spec, seeds=gen.seeds.seeds.numpy().copy())
        want.set_mixture_weights({"small": 0.25})
        for _ in range(int(gen.generation.numpy()[0])):
            want.enqueue(advance=True)
        np.testing.assert_array_equal(gen.mixture_component.numpy(), want.mixture_component.numpy())
        # second window, the other way round: the average of the two windows (smoothing 0.5)
        _end_all(env, ok_component=1)
        w = gen.mixture_weights
        assert w["small"] == pytest.approx(1.0 * (0.25 + 0.75 * 0.5))
        assert w["big"] == pytest.approx(3.0 * (0.25 + 0.75 * 0.5))
        if runtime == "stable":
            assert set(ec.course._graphs) == graphs                # nothing recorded again
    finally:
        env.close()


def test_a_window_waits_for_min_episodes():
    from isaaclab.envs import ManagerBasedRLEnv

    env = ManagerBasedRLEnv(_cfg(num_envs=16, min_episodes=40))
    try:
        gen = env.track_gen_courses["course"].course.generator
        env.reset()
        _end_all(env, ok_component=0)
        _end_all(env, ok_component=0)                           # 32 episodes: not yet
        assert gen.mixture_weights == {"small": 1.0, "big": 3.0}
        assert np.isnan(env.extras["log"]["Curriculum/mixture/success_small"])
        _end_all(env, ok_component=0)                           # 48: one window
        assert gen.mixture_weights == pytest.approx({"small": 0.3, "big": 3.0})
    finally:
        env.close()


@pytest.mark.parametrize("params, match", [
    ({"floor": 0.0}, "floor"), ({"smoothing": 1.5}, "smoothing"), ({"laps": 0}, "laps"),
    ({"min_episodes": 0}, "min_episodes"),
])
def test_bad_parameters_are_refused_when_the_env_is_built(params, match):
    from isaaclab.envs import ManagerBasedRLEnv

    with pytest.raises(ValueError, match=match):
        ManagerBasedRLEnv(_cfg(num_envs=4, **params))


def test_a_generator_without_a_mixture_is_refused():
    from isaaclab.envs import ManagerBasedRLEnv

    cfg = _cfg(num_envs=4)
    cfg.course = GatesEnvCfg().course
    with pytest.raises(ValueError, match="no mixture"):
        ManagerBasedRLEnv(cfg)


def test_a_laddered_kind_starts_easy_and_its_ranges_follow_its_success():
    """``ladder``: the small kind starts at its easy ranges (level 0), a finished window raises its
    level by ``step`` and moves both ends toward the spec's, a failed one lowers it; the next draws
    of that kind lie in the written range, the other kind keeps its own."""
    from isaaclab.envs import ManagerBasedRLEnv

    env = ManagerBasedRLEnv(_cfg(num_envs=32, min_episodes=32, ladder={"small": {"gates.size": (10.0, 11.0)}},
                                 promote=0.5, demote=0.2, step=0.5, min_ladder_episodes=1))
    try:
        ec = env.track_gen_courses["course"]
        gen = ec.course.generator
        env.reset()
        assert gen.mixture_ranges("small")["gates.size"] == (10.0, 11.0)
        assert gen.mixture_ranges("big")["gates.size"] == (14.0, 16.0)
        comp = _end_all(env, ok_component=0)                      # small finished: level 0.5
        assert env.extras["log"]["Curriculum/mixture/level_small"] == 0.5
        assert gen.mixture_ranges("small")["gates.size"] == pytest.approx((9.0, 10.5))
        comp = gen.mixture_component.numpy()
        arena = gen.result.arena.numpy()
        assert (comp == 0).any() and (comp == 1).any()
        assert ((arena[comp == 0] >= 9.0) & (arena[comp == 0] <= 10.5)).all()
        assert ((arena[comp == 1] >= 14.0) & (arena[comp == 1] <= 16.0)).all()
        _end_all(env, ok_component=0)                             # level 1: the spec's range exactly
        assert gen.mixture_ranges("small")["gates.size"] == (8.0, 10.0)
        comp = _end_all(env, ok_component=1)                      # small failed: back to 0.5
        assert (comp == 0).any()
        assert env.extras["log"]["Curriculum/mixture/level_small"] == 0.5
        assert gen.mixture_ranges("small")["gates.size"] == pytest.approx((9.0, 10.5))
        assert "Curriculum/mixture/level_big" not in env.extras["log"]
    finally:
        env.close()


@pytest.mark.parametrize("params, err, match", [
    ({"ladder": {"tiny": {"gates.size": 9.0}}}, KeyError, "unknown component 'tiny'"),
    ({"ladder": {"small": {"gates.yaw_jitter": 0.1}}}, KeyError, "not set by the component's spec"),
    ({"ladder": {"small": {"gates.size": (9.0, 8.0)}}}, ValueError, "lo=9 > hi=8"),
    ({"ladder": {"small": {}}}, TypeError, "ladder"),
    ({"ladder": {"small": {"gates.size": 9.0}}, "demote": 0.6, "promote": 0.5}, ValueError, "demote"),
    ({"step": 0.0}, ValueError, "step"),
])
def test_bad_ladders_are_refused_when_the_env_is_built(params, err, match):
    from isaaclab.envs import ManagerBasedRLEnv

    with pytest.raises(err, match=match):
        ManagerBasedRLEnv(_cfg(num_envs=4, **params))
