"""The generalist racer (``TrackGen-Drone-Gates-Real-v0``, issue 29): its courses, the mixed start
placement in a real env against the course's own start and checkpoints, both runtimes step for step,
the evaluation of a run's own task."""

from __future__ import annotations

import numpy as np
import pytest

from .test_racer import _cfg

TASK = "TrackGen-Drone-Gates-Real-v0"


def test_the_task_races_gates_real_from_the_start_or_a_gate():
    from track_gen.pipeline.presets import REAL_MIXTURE
    from track_gen_isaac import mdp
    from track_gen_isaac.tasks.drone_generalist import ALTITUDE, START_SHARE
    from track_gen_isaac.tasks.drone_racer import SAFETY_MARGIN

    cfg = _cfg(TASK, 4)
    gen = cfg.course.generator
    assert [n for n in gen["mixture"]] == list(REAL_MIXTURE) and gen["closed"] is False and gen["max_obstacles"] == 4
    assert cfg.events.place.func is mdp.place_at_start_or_checkpoint
    assert cfg.events.place.params["start_share"] == START_SHARE
    assert cfg.terminations.laps.params["laps"] == 1
    alt = cfg.terminations.altitude.params
    assert (alt["min_height"], alt["max_height"]) == ALTITUDE
    assert cfg.course.half_height == pytest.approx(0.015 + SAFETY_MARGIN)
    play = _cfg(TASK.replace("-v0", "-Play-v0"), 4)
    assert play.events.place.func is mdp.place_at_course_start and play.course.half_height == pytest.approx(0.015)
    assert play.events.dynamics.params["latency"] == (1, 1)   # the centre plant
    assert play.curriculum is None                             # the -Play env flies the spec's arenas


def test_the_arena_ladder_starts_the_arenas_easy_in_a_real_env():
    """The task's curriculum ladders the arena kind: after the first reset its arenas draw the easy
    ranges (``ARENA_LADDER``), the other kinds their own; its level is logged."""
    import gymnasium as gym

    from track_gen.pipeline.presets import REAL_MIXTURE
    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.tasks.drone_generalist import ARENA_LADDER, LADDER_STEPS

    cfg = _cfg(TASK, 64)
    kinds = cfg.curriculum.kinds.params
    assert kinds["ladder"] == {"arena": ARENA_LADDER}
    assert (kinds["promote"], kinds["demote"], kinds["step"]) == LADDER_STEPS
    env = gym.make(TASK, cfg=cfg)
    try:
        env.reset()
        gen = get_course(env.unwrapped).course.generator
        easy = {k: (v, v) if not isinstance(v, tuple) else v for k, v in ARENA_LADDER.items()}
        assert gen.mixture_ranges("arena") == {**gen.mixture_ranges("arena"), **{
            k: pytest.approx(v) for k, v in easy.items()}}
        field = {k: (v, v) if not isinstance(v, tuple) else v for k, v in REAL_MIXTURE["field"][1].items()}
        assert gen.mixture_ranges("field") == {k: pytest.approx(v) for k, v in field.items()}
        comp, width = gen.mixture_component.numpy(), gen.result.width.numpy()
        arena = comp == list(REAL_MIXTURE).index("arena")
        assert arena.any() and (width[arena] >= 0.8 - 1e-6).all()   # the easy openings, not 0.35-0.65 m
    finally:
        env.close()


def _placed(share: float, num_envs: int = 64):
    """Reset a real env with ``start_share=share``: (root positions in the env frame, course start, pose index,
    progress next index, the course's valid flags)."""
    import gymnasium as gym

    from track_gen_isaac.env_course import get_course

    cfg = _cfg(TASK, num_envs)
    cfg.events.place.params.update({"start_share": share, "jitter": (0.0, 0.0, 0.0), "start_jitter": (0.0, 0.0, 0.0)})
    env = gym.make(TASK, cfg=cfg)
    try:
        env.reset()
        base = env.unwrapped
        ec = get_course(base)
        pos = (base.scene["robot"].data.root_pos_w.torch - base.scene.env_origins).numpy().copy()
        res = ec.course.result
        out = (pos, res.start_pos.numpy().copy(), ec.pose_index.numpy().copy(),
               ec.course.progress.next_index.numpy().copy(), res.valid.numpy().copy(),
               ec.start_mask.numpy().copy(), ec.course.checkpoints.count.numpy().copy())
    finally:
        env.close()
    return out


def test_start_or_checkpoint_placement_in_a_real_env():
    from track_gen_isaac.tasks.drone_gates_track import _HALF_HEIGHT

    # everyone at the start: the course's start pose, lifted by the body's half height
    pos, start, _, nxt, valid, at_start, _ = _placed(1.0)
    assert at_start.all()
    np.testing.assert_allclose(pos, start + np.array([0.0, 0.0, _HALF_HEIGHT], np.float32), atol=1e-5)
    assert (nxt[valid == 1] == 0).all()                 # nothing passed yet
    assert (start[:, 2] == 0.0).any() and (start[:, 2] > 0.5).any()   # take-offs and air starts
    # everyone on a gate: counted as passed, never the finish gate
    pos, start, idx, nxt, valid, at_start, count = _placed(0.0)
    ok = valid == 1
    assert not at_start.any() and (idx[ok] >= 0).all() and (idx[ok] < count[ok] - 1).all()
    np.testing.assert_array_equal(nxt[ok], idx[ok] + 1)
    # a mix: about the share, and the same env draws the same way whatever the others do
    _, _, _, _, _, mixed, _ = _placed(0.25, 256)
    assert 0.15 < mixed.mean() < 0.35
    _, _, _, _, _, again, _ = _placed(0.25, 128)
    np.testing.assert_array_equal(again, mixed[:128])


def test_bad_start_share_is_refused_when_the_env_is_built():
    import gymnasium as gym

    cfg = _cfg(TASK, 4)
    cfg.events.place.params["start_share"] = 1.5
    with pytest.raises(ValueError, match=r"start_share: expected a number in \[0, 1\], got 1.5"):
        env = gym.make(TASK, cfg=cfg)
        env.reset()


def test_corner_starts_on_a_gate_course_are_refused_when_the_env_is_built():
    import gymnasium as gym

    cfg = _cfg(TASK, 4)
    cfg.events.place.params["corner_share"] = 0.2
    with pytest.raises(ValueError, match=r"corner_share: course 'course' is a gates course; starts before the "
                                         r"tightest turn need a band track"):
        env = gym.make(TASK, cfg=cfg)
        env.reset()


def test_a_gate_frames_previous_that_is_not_a_bool_is_refused_when_the_env_is_built():
    import gymnasium as gym

    cfg = _cfg(TASK, 4)
    cfg.observations.policy.gates.params["previous"] = 1
    with pytest.raises(ValueError, match=r"previous: expected a bool, got 1"):
        env = gym.make(TASK, cfg=cfg)
        env.reset()

def test_both_runtimes_fly_the_generalist_the_same():
    from isaaclab.managers import ObservationTermCfg as ObsTerm

    from track_gen_isaac import mdp
    from track_gen_isaac.experimental import mdp as warp_mdp

    from .test_racer_runtimes import _fly

    def with_remaining(term):
        # the privileged course_remaining term appended to the policy's values, in its runtime's twin
        return lambda cfg: setattr(cfg.observations.policy, "left", ObsTerm(func=term))

    stable = _fly(TASK, steps=40, edit=with_remaining(mdp.course_remaining))
    warp = _fly(TASK.replace("-v0", "-Warp-v0"), steps=40, edit=with_remaining(warp_mdp.course_remaining))
    assert stable["obs"].shape[-1] == 60 + 2
    assert np.unique(stable["obs"][:, :, -2]).size > 2      # gates passed and resets: the count changes
    np.testing.assert_array_equal(stable["done"], warp["done"])
    np.testing.assert_allclose(warp["pos"], stable["pos"], atol=1e-4)
    np.testing.assert_allclose(warp["rew"], stable["rew"], atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(warp["obs"], stable["obs"], atol=1e-3, rtol=1e-3)


def test_the_evaluation_flies_the_runs_own_task(tmp_path):
    """``run.json`` names the task; gates-v1 keeps its own courses when the generalist flies them; a
    band-track layout is refused for a gate task, naming both."""
    import dataclasses
    import json

    from track_gen_isaac.evaluate.flown import flown_suite, run_task
    from track_gen_isaac.evaluate.suites import get_suite

    (tmp_path / "run.json").write_text(json.dumps({"task": TASK}))
    assert run_task(tmp_path) == TASK and run_task(tmp_path / "nowhere") is None
    s = flown_suite(TASK)
    assert s.name == "gates-v1" and s.task == "TrackGen-Drone-Gates-Real-Play-v0"
    assert s.courses_of == "TrackGen-Drone-Gates-v0"
    assert dataclasses.replace(get_suite("gates-v1"), task=s.task) == s
    with pytest.raises(ValueError, match="holds band-track courses"):
        flown_suite(TASK, suite="track-v1")
    from track_gen.layouts import TrackLayout

    ang = np.arange(16) / 2.55
    band = TrackLayout(centerline=np.c_[4 * np.cos(ang), 4 * np.sin(ang), np.zeros(16)], half_width=0.5, name="ring")
    band.save(tmp_path / "ring.toml")
    with pytest.raises(ValueError, match=r"layout 'ring' is a band-track layout, but task .*Real.* races gate"):
        flown_suite(TASK, layout=tmp_path / "ring.toml")


def test_gates_v1_courses_are_the_gate_tasks_whoever_flies_them():
    """The suite env of the generalist flies the gate task's generator on the suite's seed."""
    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.evaluate.flown import flown_suite
    from track_gen_isaac.evaluate.rollout import build_env

    positions = []
    for task in ("TrackGen-Drone-Gates-v0", TASK):
        env, _ = build_env(flown_suite(task), 4, "cpu")
        try:
            res = get_course(env.unwrapped).course.result
            positions.append((res.pos.numpy().copy(), res.count.numpy().copy()))
        finally:
            env.close()
    assert positions[0][1].tolist() == positions[1][1].tolist()
    np.testing.assert_array_equal(positions[0][0], positions[1][0][:, : positions[0][0].shape[1]])


def test_an_evaluated_take_off_starts_on_the_ground_as_in_training():
    """A suite of take-off courses (arenas that all start on the ground): the evaluation env puts the
    body where the task's own placement does (its centre half its height above the ground), and
    hovering there does not end the run at once (with the body's centre on the ground every
    take-off was an altitude failure at its first step)."""
    import torch

    from track_gen.pipeline.presets import REAL_MIXTURE
    from track_gen_isaac.evaluate.rollout import build_env
    from track_gen_isaac.evaluate.suites import Suite
    from track_gen_isaac.tasks.drone_gates_track import _HALF_HEIGHT

    arena = {**REAL_MIXTURE["arena"][1], "gates.ground_start": 1.0}
    suite = Suite("take-off", "TrackGen-Drone-Gates-Real-Play-v0", 1_000_000_990, laps=1,
                  course={"mixture": {"arena": (1.0, arena)}}, courses_of=TASK)
    env, _ = build_env(suite, 4, "cpu")
    try:
        base = env.unwrapped
        env.reset()
        res = get_course_result(base)
        assert (res.start_pos.numpy()[:, 2] == 0.0).all()           # every course starts on the ground
        z = (base.scene["robot"].data.root_pos_w.torch[:, 2] - base.scene.env_origins[:, 2]).numpy()
        np.testing.assert_allclose(z, _HALF_HEIGHT, atol=1e-6)
        for _ in range(3):
            _, _, dones, _ = env.step(torch.zeros(4, 4))
            assert not dones.any()
    finally:
        env.close()


def get_course_result(env):
    from track_gen_isaac.env_course import get_course

    return get_course(env).course.generator.result


def test_a_layout_that_breaks_a_rule_is_refused_before_anything_flies():
    """lsy_drone_racing's level 3 holds placeholder gates (drawn at run time): the error names the rule
    and the gates; a low AlphaPilot gate standing on the ground is flown."""
    from pathlib import Path

    from track_gen_isaac.evaluate.layout_suite import layout_suite

    data = Path(__file__).resolve().parents[1] / "data" / "lsy"
    with pytest.raises(ValueError, match=r"layout 'level3' breaks the course rules.*CROWDED: gates 0 and 1"):
        layout_suite(data / "level3.toml", lsy_axis="x")
    assert layout_suite(data / "competition_alphapilot.toml").name == "competition_alphapilot"


def _nearest_poles_reference(p, q, base, radius, height, count, valid, num, max_range=np.inf):
    """float64 numpy: the ``num`` poles nearest in plan view (ties: lower index) within ``max_range``,
    5 values a pole."""
    from .helpers import rotate_inv

    out = np.zeros(num * 5)
    if not valid or count <= 0:
        return out
    d = ((base[:count, :2] - p[:2]) ** 2).sum(axis=1)
    order = [k for k in sorted(range(count), key=lambda k: (d[k], k)) if d[k] <= max_range ** 2]
    for i, k in enumerate(order[:num]):
        z = np.clip(p[2], base[k, 2], base[k, 2] + height[k])
        out[5 * i: 5 * i + 5] = [1.0, *rotate_inv(q, np.array([base[k, 0], base[k, 1], z]) - p), radius[k]]
    return out


def test_nearest_poles_match_the_reference():
    """In a real env of the generalist (poles on many courses): the clean term against numpy after
    random flight, with 1 to 5 slots (more slots than poles give zeros)."""
    import gymnasium as gym
    import torch
    from isaaclab.managers import ObservationTermCfg as ObsTerm

    from track_gen_isaac import mdp
    from track_gen_isaac.env_course import get_course

    cfg = _cfg(TASK, 32)
    pol = cfg.observations.policy
    pol.concatenate_terms = False
    for n in (1, 2, 5):
        setattr(pol, f"clean{n}", ObsTerm(func=mdp.nearest_poles, params={"num": n}))
    pol.near = ObsTerm(func=mdp.nearest_poles, params={"num": 5, "max_range": 3.0})
    e = gym.make(TASK, cfg=cfg)
    try:
        env = e.unwrapped
        e.reset()
        gen = torch.Generator().manual_seed(3)
        for _ in range(5):
            obs, *_ = e.step(torch.rand(32, 4, generator=gen) * 1.2 - 0.6)
        obs = {k: v.numpy().copy() for k, v in obs["policy"].items()}
        g = get_course(env).course.generator.result
        base, rad, hgt = g.obstacle_pos.numpy(), g.obstacle_radius.numpy(), g.obstacle_height.numpy()
        cnt, valid = g.obstacle_count.numpy(), get_course(env).course.result.valid.numpy()
        d = env.scene["robot"].data
        p = (d.root_pos_w.torch - env.scene.env_origins).numpy().astype(np.float64)
        q = d.root_quat_w.torch.numpy().astype(np.float64)
        assert (cnt > 0).sum() > 5 and (cnt == 0).sum() > 0     # courses with poles and without
        for n in (1, 2, 5):
            for i in range(32):
                ref = _nearest_poles_reference(p[i], q[i], base[i], rad[i], hgt[i], cnt[i], valid[i], n)
                np.testing.assert_allclose(obs[f"clean{n}"][i], ref, rtol=1e-4, atol=1e-5)
        near = [_nearest_poles_reference(p[i], q[i], base[i], rad[i], hgt[i], cnt[i], valid[i], 5, 3.0)
                for i in range(32)]
        np.testing.assert_allclose(obs["near"], np.stack(near), rtol=1e-4, atol=1e-5)
        # the range drops poles: fewer present than with no range, on some course
        assert (obs["near"][:, 0::5].sum() < obs["clean5"][:, 0::5].sum())
        assert obs["poles"].shape == (32, 10)       # the task's own term, with noise
    finally:
        e.close()


def _course_remaining_reference(p, cp_pos, cp_s, count, length, closed, valid, nxt):
    """float64 numpy: (checkpoints left, straight distance to the next one + course-line arc from it
    to the finish: the last checkpoint, or the lap's end on a loop); zeros when done or invalid."""
    n = min(int(count), cp_pos.shape[0])
    if not valid or n <= 0 or not 0 <= nxt < n:
        return np.zeros(2)
    end = float(length) if closed else float(cp_s[n - 1])
    return np.array([n - nxt, max(end - cp_s[nxt], 0.0) + np.linalg.norm(cp_pos[nxt] - p)])


def test_course_remaining_matches_the_reference():
    """In a real env of the generalist: the privileged term against numpy after random flight
    (gates passed, envs reset to random gates, so ``next`` varies); in the same flights the gate
    frames with the gate passed last on these one-pass courses (gate 0 before any pass)."""
    from .test_racer import gate_frames_reference
    import gymnasium as gym
    import torch
    from isaaclab.managers import ObservationTermCfg as ObsTerm

    from track_gen_isaac import mdp
    from track_gen_isaac.env_course import get_course

    n_env = 48
    cfg = _cfg(TASK, n_env)
    pol = cfg.observations.policy
    pol.concatenate_terms = False
    pol.left = ObsTerm(func=mdp.course_remaining)
    pol.prev = ObsTerm(func=mdp.gate_frames, params={"num": 2, "previous": True})
    pol.prev_corners = ObsTerm(func=mdp.gate_frames, params={"num": 1, "corners": True, "previous": True})
    e = gym.make(TASK, cfg=cfg)
    try:
        env = e.unwrapped
        obs, _ = e.reset()
        gen = torch.Generator().manual_seed(5)
        nexts = set()
        for _ in range(12):
            obs, *_ = e.step(torch.rand(n_env, 4, generator=gen) * 1.2 - 0.6)
            ec = get_course(env)
            cp = ec.course.checkpoints
            pos, s, cnt = cp.pos.numpy(), cp.s.numpy(), cp.count.numpy()
            length, closed = cp.length.numpy(), cp.closed.numpy()
            valid, nxt = ec.course.result.valid.numpy(), ec.course.progress.next_index.numpy()
            d = env.scene["robot"].data
            p = (d.root_pos_w.torch - env.scene.env_origins).numpy().astype(np.float64)
            ref = np.stack([_course_remaining_reference(p[i], pos[i], s[i], cnt[i], length[i], closed[i], valid[i],
                                                        nxt[i]) for i in range(n_env)])
            np.testing.assert_allclose(obs["policy"]["left"].numpy(), ref, rtol=1e-4, atol=1e-4)
            q = d.root_quat_w.torch.numpy().astype(np.float64)
            for name, num, corners in (("prev", 2, False), ("prev_corners", 1, True)):
                ref = np.stack([gate_frames_reference(p[i], q[i], cp, i, nxt[i], valid[i], num, corners, previous=True)
                                for i in range(n_env)])
                np.testing.assert_allclose(obs["policy"][name].numpy(), ref, rtol=1e-4, atol=1e-4)
            nexts |= set(nxt.tolist())
        assert len(nexts) >= 3, f"the flights should stand before several different gates, saw {sorted(nexts)}"
    finally:
        e.close()


def test_a_layout_run_is_not_ended_by_the_course_line_tube():
    """Flown on a real layout through the evaluation's own env, a drone far from the course line
    flies on (the tube is lifted: ``LAYOUT_OFF_COURSE``); on ``gates-v1`` the same task's env ends
    it ``off_course``."""
    import dataclasses
    from pathlib import Path

    import torch

    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.evaluate.layout_suite import layout_suite
    from track_gen_isaac.evaluate.rollout import build_env
    from track_gen_isaac.evaluate.suites import get_suite

    from .helpers import teleport

    path = Path(__file__).resolve().parents[2] / "track_gen/layouts/data/aigp_competition_swift.toml"
    play = "TrackGen-Drone-Gates-Real-Play-v0"
    for suite, lifted in ((dataclasses.replace(get_suite("gates-v1"), task=play), False),
                          (dataclasses.replace(layout_suite(str(path)), task=play), True)):
        env, _ = build_env(suite, 2, "cpu")
        try:
            base = env.unwrapped
            env.reset()
            ec = get_course(base)
            pos = (ec.asset.data.root_pos_w.torch - base.scene.env_origins).cpu().numpy().copy()
            pos[:, 1] += 30.0                              # 30 m sideways of the start, 1.5 m up
            pos[:, 2] = 1.5
            teleport(base, ec, pos)
            env.step(torch.zeros(2, 4))
            off = base.termination_manager.get_term("off_course")
            assert (bool(off.any()), bool(off.all())) == ((False, False) if lifted else (True, True)), suite.name
        finally:
            env.close()
