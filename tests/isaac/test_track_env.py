"""A band-track env (stable runtime) built as rank 1: seeds offset by rank, placement on a sampled
checkpoint, off-track / collision terms against the core, the curriculum, term parameter checks."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import track_gen as tg

from .envs import HALF, TrackEnvCfg
from .helpers import Reference, env_frame_pos, quat_rotate_inv, step, teleport, yaw_of

E = 8


@pytest.fixture(scope="module")
def env():
    from isaaclab.envs import ManagerBasedRLEnv

    old = os.environ.get("RANK")
    os.environ["RANK"] = "1"  # read once, when the course is built (during env construction)
    try:
        env = ManagerBasedRLEnv(TrackEnvCfg())
    finally:
        if old is None:
            del os.environ["RANK"]
        else:
            os.environ["RANK"] = old
    env.reset()
    yield env
    env.close()


@pytest.fixture(scope="module")
def ec(env):
    return env.track_gen_courses["course"]


def test_seeds_are_offset_by_rank(env, ec):
    assert ec.rank == 1 and ec.seed == 11  # env.cfg.seed
    seeds = ec.course.seeds.seeds.numpy()
    np.testing.assert_array_equal(seeds, tg.SeedState(E, "cpu", 11, env_offset=E).seeds.numpy())
    # rank 1's envs are envs E..2E-1 of one 2E-env run, so no two ranks share a course
    np.testing.assert_array_equal(seeds, tg.SeedState(2 * E, "cpu", 11).seeds.numpy()[E:])
    assert not np.intersect1d(seeds, tg.SeedState(E, "cpu", 11).seeds.numpy()).size


def test_placed_on_a_sampled_checkpoint(env, ec):
    env.reset()
    cp = ec.course.checkpoints
    idx = ec.pose_index.numpy().copy()
    count = cp.count.numpy()
    assert ((idx >= 0) & (idx < count)).all()
    e = np.arange(E)
    c, n = cp.pos.numpy()[e, idx], cp.normal.numpy()[e, idx]
    d = env_frame_pos(env, ec) - c
    lat = np.stack([-n[:, 1], n[:, 0], np.zeros(E)], -1)
    lat /= np.linalg.norm(lat, axis=-1, keepdims=True)
    np.testing.assert_allclose(np.sum(d * n, -1), 0.0, atol=1e-5)  # on the checkpoint's plane
    assert np.abs(np.sum(d * lat, -1)).max() <= 0.1 + 1e-5  # lateral jitter
    np.testing.assert_allclose(d[:, 2], HALF[2], atol=1e-5)  # z_offset
    yaw = yaw_of(ec.asset.data.root_quat_w.torch.numpy())
    dyaw = yaw - np.arctan2(n[:, 1], n[:, 0])
    assert np.abs(np.arctan2(np.sin(dyaw), np.cos(dyaw))).max() <= 0.2 + 1e-5  # yaw jitter
    # the drawn checkpoint is behind: the next one is the target
    np.testing.assert_array_equal(ec.course.progress.next_index.numpy(), (idx + 1) % count)
    # a partial reset draws again for those envs only
    before = env_frame_pos(env, ec)
    env.reset(env_ids=torch.tensor([0, 3], dtype=torch.int32))
    after = env_frame_pos(env, ec)
    np.testing.assert_array_equal(after[[1, 2, 4, 5, 6, 7]], before[[1, 2, 4, 5, 6, 7]])
    assert not np.array_equal(after[[0, 3]], before[[0, 3]])


def test_checkpoint_observation(env, ec):
    obs = env.observation_manager.compute()["policy"]["cps"].numpy().reshape(E, 3, 3)
    p, q = env_frame_pos(env, ec), ec.asset.data.root_quat_w.torch.numpy()
    cp = ec.course.checkpoints
    nxt, count = ec.course.progress.next_index.numpy(), cp.count.numpy()
    for e in range(E):
        for i in range(3):
            c = cp.pos.numpy()[e, (nxt[e] + i) % count[e]]
            np.testing.assert_allclose(obs[e, i], quat_rotate_inv(q[e], c - p[e]), atol=1e-4)


def test_off_track_and_collision_against_the_core(env, ec):
    env.reset()
    step(env)  # the first step after the reset stores the pose
    ref = Reference(env, ec)
    ref.step()
    # each env moves sideways from its checkpoint by a different offset: inside, on and beyond the band
    offsets = np.array([0.0, 0.2, 0.3, 0.45, 0.7, 0.95, 1.3, -1.1], np.float32)
    cp = ec.course.checkpoints
    idx = ec.pose_index.numpy()
    e = np.arange(E)
    c, n = cp.pos.numpy()[e, idx], cp.normal.numpy()[e, idx]
    lat = np.stack([-n[:, 1], n[:, 0], np.zeros(E)], -1)
    lat /= np.linalg.norm(lat, axis=-1, keepdims=True)
    target = (c + offsets[:, None] * lat + np.array([0, 0, HALF[2]])).astype(np.float32)
    yaw = np.arctan2(n[:, 1], n[:, 0]).astype(np.float32)
    teleport(env, ec, target, yaw)
    quat = ec.asset.data.root_quat_w.torch.numpy().copy()
    _, _, term, _, _ = step(env)
    res = ref.step(target, quat)  # the pose the terms saw (the kinematic robot stays where it was put)
    hw = ec.course.result.half_width.numpy()[0, 0]  # constant band half width
    lateral = res.frame.lateral.numpy()
    np.testing.assert_allclose(np.abs(lateral), np.abs(offsets), atol=1e-3)
    rm, tm = env.reward_manager, env.termination_manager
    off_rew = rm._step_reward[:, rm.active_terms.index("off")].numpy() / rm.get_term_cfg("off").weight
    np.testing.assert_array_equal(off_rew, (np.abs(lateral) > hw).astype(np.float32))
    np.testing.assert_array_equal(tm.get_term("off").numpy(), np.abs(lateral) > hw + 0.5)
    np.testing.assert_array_equal(term.numpy(), np.abs(lateral) > hw + 0.5)
    crash = rm._step_reward[:, rm.active_terms.index("crash")].numpy() / rm.get_term_cfg("crash").weight
    np.testing.assert_allclose(crash, res.contacts.depth.numpy(), atol=1e-6)
    assert (res.contacts.depth.numpy() > 0).any() and (res.contacts.depth.numpy() == 0).any()
    progress = rm._step_reward[:, rm.active_terms.index("progress")].numpy()
    np.testing.assert_allclose(progress, res.events.delta.numpy(), atol=1e-5)


def test_curriculum_moves_the_generator_parameter_without_recording(env, ec):
    params = ec.course.generator.params
    assert params["centerline.size"] == 10.0  # the first value, written at the first call
    graphs = dict(ec.course._graphs)
    term = env.curriculum_manager._term_cfgs[0].func
    assert term.level == 0 and term.ended < 4  # earlier tests' resets: failures (no laps), window restarted
    term.ended = term.succeeded = 0
    step(env)
    ec.torch(ec.result.events.laps)[:] = 2  # every episode "succeeded" (2 laps)
    env.episode_length_buf[:] = 5
    env.reset()  # 8 ended episodes >= min_episodes=4 at success 1.0 -> next stage, then regeneration
    assert params["centerline.size"] == 12.0
    assert env.extras["log"]["Curriculum/size/level"] == 1.0
    assert env.extras["log"]["Curriculum/size/value"] == 12.0
    assert ec.course._graphs.keys() == graphs.keys()  # the same recorded regeneration replayed
    xy = ec.course.result.xy.numpy()
    assert np.abs(xy).max() > 5.0  # courses of the new size (a 10 m square held |xy| <= 5)


def test_bad_term_parameters_fail_with_the_term_named(env):
    from isaaclab.managers import CurriculumTermCfg, ObservationTermCfg, RewardTermCfg, TerminationTermCfg

    from track_gen_isaac import mdp

    cases = [
        (mdp.next_checkpoints, ObservationTermCfg, {"corners": True}, "corners=True needs a gate course"),
        (mdp.next_gates, ObservationTermCfg, {}, r"supports course modes \('gates',\)"),
        (mdp.lookahead_points, ObservationTermCfg, {"distances": ()}, "distances"),
        (mdp.laps_done, TerminationTermCfg, {"laps": 0}, "laps: expected an int >= 1"),
        (mdp.progress_delta, RewardTermCfg, {"course_name": "nope"}, "has no attribute 'nope'"),
        (mdp.course_schedule, CurriculumTermCfg, {"param": "centerline.num_points", "values": (1.0,)}, "is static"),
        (mdp.course_schedule, CurriculumTermCfg, {"param": "centerline.sise", "values": (1.0,)}, "unknown"),
    ]
    for cls, cfg_cls, params, message in cases:
        kwargs = {"weight": 1.0} if cfg_cls is RewardTermCfg else {}
        with pytest.raises((ValueError, TypeError, AttributeError), match=message) as info:
            cls(cfg_cls(func=cls, params=dict(params), **kwargs), env)
        assert cls.__name__ in str(info.value)
