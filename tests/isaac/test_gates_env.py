"""A gate-course env (stable ManagerBasedRLEnv, Newton, CPU): build, zero-copy binding, terms against
the core, masked regeneration, placement, the stepping rule."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from .envs import GatesEnvCfg
from .helpers import Reference, env_frame_pos, generation_state, quat_rotate_inv, step, teleport, yaw_of

E = 8


@pytest.fixture(scope="module")
def env():
    from isaaclab.envs import ManagerBasedRLEnv

    env = ManagerBasedRLEnv(GatesEnvCfg())
    env.reset()
    yield env
    env.close()


@pytest.fixture(scope="module")
def ec(env):
    return env.track_gen_courses["course"]


def test_one_course_per_env_built_at_construction(env, ec):
    from track_gen_isaac import get_course
    from track_gen_isaac.mdp._base import CourseTerm

    assert list(env.track_gen_courses) == ["course"]
    assert get_course(env) is ec
    assert ec.mode == "gates" and ec.num_envs == E and ec.seed == 7 and ec.rank == 0
    assert list(ec.course.components) == ["checkpoints", "centerline", "progress", "collision", "localizer"]
    assert type(ec.course.components["collision"]).__name__ == "FrameCollision"
    # every course term of every manager reads this one course
    terms = [t.func for m in (env.observation_manager, env.reward_manager, env.termination_manager)
             for t in (m._group_obs_term_cfgs["policy"] if m is env.observation_manager else m._term_cfgs)
             if isinstance(t.func, CourseTerm)]
    assert len(terms) == 4 + 7 + 4
    assert all(t.ec is ec for t in terms)
    assert ec.course.result.valid.numpy().all()


def test_binding_is_zero_copy_and_stable(env, ec):
    data = ec.asset.data
    bound = ec.course.components["progress"].bound
    assert bound["position"] is ec.position and bound["origin"] is ec.origin
    assert ec.course.components["collision"].bound["orientation"] is ec.orientation
    ptrs = (data.root_pos_w.warp.ptr, data.root_quat_w.warp.ptr, env.scene.env_origins.data_ptr())
    assert (ec.position.ptr, ec.orientation.ptr, ec.origin.ptr) == ptrs
    assert ec.position.strides[0] != 12  # a strided view into the physics state, not a copy
    assert data.root_quat_w.warp.ptr == data.root_pos_w.warp.ptr + 12  # (x, y, z, w) after (x, y, z)
    step(env, 3)
    env.reset(env_ids=torch.tensor([2, 5], dtype=torch.int32))
    step(env, 2)
    env.reset()
    assert (data.root_pos_w.warp.ptr, data.root_quat_w.warp.ptr, env.scene.env_origins.data_ptr()) == ptrs
    assert ec.course.components["progress"].bound["position"] is ec.position


def test_course_steps_once_per_env_step(env, ec):
    before = ec.steps
    step(env, 4)  # 4 obs + 7 reward + 4 termination course terms read it every step
    assert ec.steps == before + 4
    assert ec.stepped_at == env.common_step_counter


def test_terms_equal_the_core_step_result(env, ec):
    env.reset()
    ref = Reference(env, ec)
    ref.relocalize()
    line = ec.course.course_line.line
    pts, cnt = line.points.numpy(), line.count.numpy()
    rm, tm = env.reward_manager, env.termination_manager
    rew_idx = {n: i for i, n in enumerate(rm.active_terms)}
    checked = 0
    clear_seen = []
    for k in range(0, 30):  # along the course line, through the gate centres (no lap, no miss, no crash)
        if k:  # step 0: at the start pose, which the first step after the reset stores
            target = pts[np.arange(E), np.minimum(k, cnt - 1)]
            teleport(env, ec, target, np.full(E, 0.3 * k, np.float32))
        obs, rew, term, trunc, _ = step(env)
        assert not (term | trunc).any()
        res = ref.step()
        mine = ec.result
        for field in ("next", "passed", "missed", "wrong_way", "lap", "laps", "total"):
            np.testing.assert_array_equal(getattr(mine.events, field).numpy(), getattr(res.events, field).numpy())
        for field in ("progress", "delta"):
            np.testing.assert_allclose(getattr(mine.events, field).numpy(), getattr(res.events, field).numpy(),
                                       atol=1e-5)
        np.testing.assert_array_equal(mine.contacts.hit.numpy(), res.contacts.hit.numpy())
        np.testing.assert_allclose(mine.contacts.clearance.numpy(), res.contacts.clearance.numpy(), atol=1e-5)
        for field in ("s", "lateral", "heading", "distance"):
            np.testing.assert_allclose(getattr(mine.frame, field).numpy(), getattr(res.frame, field).numpy(),
                                       atol=1e-5)
        ev = res.events
        expect_rew = {"progress": ev.delta.numpy(), "passed": ev.passed.numpy(), "lap": ev.lap.numpy(),
                      "crash": res.contacts.hit.numpy(), "off": res.frame.distance.numpy() > 2.0,
                      "wrong": ev.wrong_way.numpy(),
                      "clear": np.clip(1.0 - res.contacts.clearance.numpy().astype(np.float64), 0.0, 1.0)}
        for name, val in expect_rew.items():
            w = rm.get_term_cfg(name).weight
            np.testing.assert_allclose(rm._step_reward[:, rew_idx[name]].numpy() / w, val, atol=1e-5, err_msg=name)
        near = rm._step_reward[:, rew_idx["clear"]].numpy()
        clear_seen.append(((near < -1e-3) & (near > -0.5 + 1e-3)).any())  # inside the margin, not touching
        np.testing.assert_array_equal(tm.get_term("crash").numpy(), res.contacts.hit.numpy() != 0)
        np.testing.assert_array_equal(tm.get_term("missed").numpy(), ev.missed.numpy() != 0)
        np.testing.assert_array_equal(tm.get_term("laps").numpy(), ev.laps.numpy() >= 1)
        np.testing.assert_array_equal(tm.get_term("invalid").numpy(), res.valid.numpy() == 0)
        # observations, from the reference course in numpy
        p, q = ref.pos.numpy(), ref.quat.numpy()
        cp = ref.course.checkpoints
        cpos, cn, chw, chh, ccount = (cp.pos.numpy(), cp.normal.numpy(), cp.half_width.numpy(),
                                      cp.half_height.numpy(), cp.count.numpy())
        expect = np.zeros((E, 30), np.float32)
        for e in range(E):
            for i in range(2):
                g = (ev.next.numpy()[e] + i) % ccount[e]
                n = cn[e, g]
                lat = np.array([-n[1], n[0], 0.0]) / np.hypot(n[0], n[1])
                up = np.cross(n, lat)
                pts_w = [cpos[e, g]] + [cpos[e, g] + a * chw[e, g] * lat + b * chh[e, g] * up
                                        for a, b in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
                expect[e, 15 * i:15 * i + 15] = quat_rotate_inv(q[e], np.asarray(pts_w) - p[e]).reshape(-1)
        np.testing.assert_allclose(obs["policy"]["gates"].numpy(), expect, atol=1e-4)
        f = res.frame
        frame = np.stack([f.s.numpy() / ref.course.course_line.line.length.numpy(), f.lateral.numpy(),
                          np.sin(f.heading.numpy()), np.cos(f.heading.numpy())], -1)
        np.testing.assert_allclose(obs["policy"]["frame"].numpy(), frame, atol=1e-5)
        np.testing.assert_allclose(obs["policy"]["laps"].numpy()[:, 0],
                                   ev.progress.numpy() / cp.length.numpy(), atol=1e-5)
        if k:  # headings follow the written yaw (the course reads the real quaternion buffer)
            want = 0.3 * k - 2 * np.pi * np.round(0.3 * k / (2 * np.pi))
            np.testing.assert_allclose(yaw_of(q), want, atol=1e-4)
        checked += 1
    assert checked and ec.result.events.total.numpy().min() >= 2  # every env passed gates
    assert any(clear_seen)  # the clearance term was inside its margin at some gate pass
    assert ec.result.events.delta.numpy().max() > 0


def test_lookahead_points_lie_on_the_course_line(env, ec):
    obs = env.observation_manager.compute()["policy"]["ahead"].numpy().reshape(E, 3, 3)
    p, q = env_frame_pos(env, ec), ec.asset.data.root_quat_w.torch.numpy()
    f = ec.result.frame
    line = ec.course.course_line.line
    pts, ls, L = line.points.numpy(), line.s.numpy(), line.length.numpy()
    for e in range(E):
        n = line.count.numpy()[e]
        for i, d in enumerate((0.5, 1.5, 3.0)):
            s = (f.s.numpy()[e] + d) % L[e]
            j = np.searchsorted(ls[e, :n], s, side="right") - 1
            s1 = ls[e, j + 1] if j + 1 < n else L[e]
            t = (s - ls[e, j]) / (s1 - ls[e, j])
            expect = pts[e, j] + t * (pts[e, (j + 1) % n] - pts[e, j])
            np.testing.assert_allclose(obs[e, i], quat_rotate_inv(q[e], expect - p[e]), atol=2e-4)


def test_reset_regenerates_only_the_reset_envs_and_places_the_robot(env, ec):
    step(env)
    before = generation_state(ec.course)
    pos_before = env_frame_pos(env, ec)
    ids = [1, 4, 6]
    others = [e for e in range(E) if e not in ids]
    env.reset(env_ids=torch.tensor(ids, dtype=torch.int32))
    after = generation_state(ec.course)
    for name, arr in before.items():
        assert arr[others].tobytes() == after[name][others].tobytes(), name
    np.testing.assert_array_equal(after["generation"][ids], before["generation"][ids] + 1)
    assert all(not np.array_equal(after["gen.gates.pos"][e], before["gen.gates.pos"][e]) for e in ids)
    # the robot is on its new course's start pose (env frame), facing the start heading, at rest
    pos = env_frame_pos(env, ec)
    start = ec.course.result.start_pos.numpy()
    np.testing.assert_allclose(pos[ids], start[ids], atol=1e-5)
    np.testing.assert_array_equal(pos[others], pos_before[others])
    yaw = yaw_of(ec.asset.data.root_quat_w.torch.numpy())
    d = yaw[ids] - ec.course.result.start_yaw.numpy()[ids]
    np.testing.assert_allclose(np.arctan2(np.sin(d), np.cos(d)), 0.0, atol=1e-5)
    assert np.abs(ec.asset.data.root_lin_vel_w.torch.numpy()[ids]).max() == 0.0
    # progress of the reset envs restarted; the first observation is in the new course's frame
    np.testing.assert_array_equal(ec.course.progress.next_index.numpy()[ids], 0)
    ref = Reference(env, ec)  # an independent course at the same generations: the same courses, byte for byte
    ref_state = generation_state(ref.course)
    for name, arr in after.items():
        assert ref_state[name].tobytes() == arr.tobytes(), name
    ref.relocalize()
    for field in ("s", "lateral", "vertical", "heading", "segment"):
        np.testing.assert_allclose(getattr(ec.result.frame, field).numpy()[ids],
                                   getattr(ref.course.localizer.result, field).numpy()[ids], atol=1e-5)
    assert ec.relocalizations > 0


def test_step_after_reset_stores_the_placed_pose(env, ec):
    env.reset()
    obs, rew, *_ = step(env)
    # first step after a reset: no events, progress 0 (the sim may have moved the body: it is kinematic here)
    assert ec.result.events.progress.numpy().tolist() == [0.0] * E
    assert ec.result.events.passed.numpy().tolist() == [0] * E
    assert torch.all(obs["policy"]["laps"] == 0)
