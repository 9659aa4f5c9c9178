"""What a task author reaches for (issue 19), in a kitless env of the suite's own -- a ground rover
on a flat band track (``envs.RoverEnvCfg``) -- in both runtimes, against references:

* the env-bound course refuses a second ``course.step()`` in one env step, naming the read API;
* ``Episode_Course/*`` in ``extras["log"]`` for the envs that reset: equal to Isaac Lab's own
  episode sums of the matching reward terms, to numpy means of the course state for an explicit
  reset, and equal between the runtimes (the warp one replayed from the recorded stages);
* ``progress_rate`` against finite differences of the course's progress / dt;
* ``track_frame_velocity`` against the world velocity rotated into the track frame by hand;
* the placement height: ``z_offset`` defaults to ``CourseCfg.half_height`` on a track course.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import track_gen as tg

from .envs import HALF, RoverEnvCfg
from .helpers import Schedule, env_frame_pos, step

E = 8
STEPS = 240
KEYS = ("Episode_Course/checkpoints", "Episode_Course/laps", "Episode_Course/progress_m")


def _step_rewards(env) -> np.ndarray:
    """[E, T] weighted per-term rewards of the last step (no dt), in either runtime."""
    rm = env.reward_manager
    t = getattr(rm, "_step_reward_tensor_view", None)
    return (rm._step_reward if t is None else t).cpu().numpy().copy()


def _velocity_by_hand(ec, vel_w: np.ndarray) -> np.ndarray:
    """[along, lateral, vertical]: the world velocity against the localizer's segment, whose
    direction is taken from the course line's points (not from the localizer's tangent)."""
    line = ec.course.course_line.line
    pts, cnt, closed = line.points.numpy(), line.count.numpy(), line.closed.numpy()
    seg = ec.result.frame.segment.numpy()
    out = np.zeros((E, 3))
    for e in range(E):
        j = int(seg[e])
        if j < 0:
            continue
        k = j + 1 if j + 1 < cnt[e] else 0
        assert k > 0 or closed[e]
        t = pts[e, k].astype(np.float64) - pts[e, j]
        t /= np.linalg.norm(t)
        h = np.array([t[0], t[1], 0.0]) / np.hypot(t[0], t[1])
        left = np.array([-h[1], h[0], 0.0])  # travel direction turned +90 deg about z
        v = vel_w[e].astype(np.float64)
        out[e] = [v @ t, v @ left, v[2]]
    return out


def drive(env, steps: int) -> dict:
    """Reset, then ``steps`` env steps of :class:`helpers.Schedule` (each env along its course line,
    some off to the side), the root velocity set to each step's displacement / dt; per step: the
    velocity observation and its hand reference, the step rewards, dones, the course's progress,
    and at steps that reset envs the ``Episode_Course/*`` and ``Episode_Reward/*`` log entries."""
    from track_gen_isaac import get_course

    env.reset()
    ec = get_course(env)
    sched = Schedule(env, ec)
    dt = env.step_dt
    ids = torch.arange(E, dtype=torch.int32)
    rec = {"vel": [], "vel_ref": [], "rew": [], "done": [], "progress": [], "logs": []}
    for k in range(steps):
        before = env_frame_pos(env, ec)
        sched.move(k)
        vel = torch.zeros(E, 6)
        vel[:, :3] = torch.as_tensor((env_frame_pos(env, ec) - before) / dt)
        vel[:, 2] += 0.1 * np.sin(0.2 * k)  # a vertical component too
        ec.asset.write_root_velocity_to_sim_index(root_velocity=vel, env_ids=ids)
        obs, _, term, trunc, extras = step(env)
        done = (term | trunc).cpu().numpy()
        rec["vel"].append(obs["policy"]["vel"].cpu().numpy().copy())
        rec["vel_ref"].append(_velocity_by_hand(ec, ec.asset.data.root_lin_vel_w.torch.cpu().numpy()))
        rec["rew"].append(_step_rewards(env))
        rec["done"].append(done)
        rec["progress"].append(ec.result.events.progress.numpy().copy())
        log = extras.get("log", {})
        rec["logs"].append({k: float(v) for k, v in log.items() if k.startswith("Episode_")} if done.any() else None)
        sched.done(done)
    rec = {k: (np.stack(v) if k != "logs" else v) for k, v in rec.items()}
    rec["terms"] = list(env.reward_manager.active_terms)
    return rec


def explicit_reset(env, ec) -> dict:
    """Twelve steps along the course, then ``env.reset(env_ids=[1, 4, 6])`` and again ``[4]``: the
    logged means, and the numpy means of the course state just before."""
    env.reset()
    sched = Schedule(env, ec)
    sched.LATERAL = np.zeros(E, np.float32)  # every env on its band: no reset in these steps
    for k in range(12):
        sched.move(k)
        _, _, term, trunc, _ = step(env)
        assert not (term | trunc).any()
    ev = ec.result.events
    state = np.stack([ev.total.numpy(), ev.laps.numpy(), ev.progress.numpy()], 1).astype(np.float64)
    ids = [1, 4, 6]
    env.reset(env_ids=torch.tensor(ids, dtype=torch.int32))
    got = np.array([float(env.extras["log"][k]) for k in KEYS])
    env.reset(env_ids=torch.tensor([4], dtype=torch.int32))
    again = np.array([float(env.extras["log"][k]) for k in KEYS])
    return {"got": got, "ref": state[ids].mean(0), "again": again}


def double_step(env, ec) -> dict:
    """After an env step: a second ``course.step()`` (refused?), and the read API."""
    step(env)
    res = ec.step()
    before = {k: getattr(res.events, k).numpy().copy() for k in ("delta", "passed", "progress")}
    try:
        ec.course.step()
        error = None
    except RuntimeError as exc:
        error = str(exc)
    same = all(np.array_equal(getattr(ec.result.events, k).numpy(), v) for k, v in before.items())
    return {"error": error, "unchanged": same, "read": ec.step() is ec.result is res}


def exercise(env) -> dict:
    """Everything the tests check, on one env (Isaac Lab hosts one env per process at a time)."""
    from track_gen_isaac import get_course

    out = {"drive": drive(env, STEPS)}
    ec = get_course(env)
    out["double"] = double_step(env, ec)
    out["explicit"] = explicit_reset(env, ec)
    env.reset()
    out["placed"], out["start"] = env_frame_pos(env, ec), ec.course.result.start_pos.numpy().copy()
    out["course_steps"] = ec.steps
    out["obs_terms"] = [type(c.func) for c in env.observation_manager._group_obs_term_cfgs["policy"]]
    out["rew_terms"] = [type(c.func) for c in env.reward_manager._term_cfgs]
    if not ec.warp_runtime:  # no term has stepped the course in this env step: course.step() is that step
        step(env)
        n = ec.steps
        ec.stepped_at = None
        first = ec.course.step() is ec.result and ec.steps == n + 1 and ec.stepped_at == env.common_step_counter
        try:
            ec.course.step()
            second = None
        except RuntimeError as exc:
            second = str(exc)
        out["first_direct"] = (first, second)
    return out


@pytest.fixture(scope="module")
def runs():
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab_experimental.envs import ManagerBasedRLEnvWarp

    env = ManagerBasedRLEnv(RoverEnvCfg())
    stable = exercise(env)
    env.close()
    env = ManagerBasedRLEnvWarp(RoverEnvCfg())  # the same cfg, its terms swapped to the warp twins
    warp = exercise(env)
    env.close()
    return stable, warp


# -- 1. the read API and the guarded course.step() ------------------------------------------------
def test_a_second_course_step_in_one_env_step_is_refused(runs):
    for run, why in zip(runs, ("already stepped in this env step", "owner term steps it inside the recorded stage")):
        d = run["double"]
        assert d["error"] is not None and why in d["error"], d["error"]
        assert "get_course(env, 'course').step()" in d["error"] and "get_course(env, 'course').result" in d["error"]
        assert "second step would overwrite" in d["error"]
        assert d["unchanged"] and d["read"]  # nothing overwritten; the read API: the same results


def test_stable_course_step_counts_as_the_env_steps_first_step(runs):
    """With no term having stepped it in this env step, course.step() is that step (as ec.step())."""
    first, second = runs[0]["first_direct"]
    assert first
    assert second is not None and "already stepped in this env step" in second


# -- 2. Episode_Course/* in extras["log"] -----------------------------------------------------------
def test_episode_course_log_equals_isaac_labs_episode_sums(runs):
    """Isaac Lab's reward manager logs Episode_Reward/<term> = mean episode sum / episode_length_s,
    an episode sum being weight * dt per event: for weight-1 terms counting passes, laps and
    metres, that is the same mean as Episode_Course/* (computed from the course state)."""
    stable = runs[0]["drive"]
    cfg = RoverEnvCfg()
    scale = cfg.episode_length_s / (cfg.sim.dt * cfg.decimation)
    resets = [log for log in stable["logs"] if log is not None]
    assert len(resets) >= 4
    for log in resets:
        assert set(KEYS) <= set(log)
        np.testing.assert_allclose(log["Episode_Course/checkpoints"], log["Episode_Reward/passed"] * scale, atol=1e-3)
        np.testing.assert_allclose(log["Episode_Course/laps"], log["Episode_Reward/lap"] * scale, atol=1e-4)
        np.testing.assert_allclose(log["Episode_Course/progress_m"], log["Episode_Reward/progress"] * scale,
                                   rtol=1e-4, atol=2e-3)
    # the run exercised it: episodes that passed checkpoints, completed laps, went far
    assert max(log["Episode_Course/checkpoints"] for log in resets) > 5
    assert max(log["Episode_Course/laps"] for log in resets) > 0
    assert max(log["Episode_Course/progress_m"] for log in resets) > 5


def test_episode_course_log_is_the_same_in_both_runtimes(runs):
    stable, warp = (r["drive"] for r in runs)
    np.testing.assert_array_equal(warp["done"], stable["done"])
    for k, (a, b) in enumerate(zip(stable["logs"], warp["logs"])):
        if a is None:
            assert b is None
            continue
        for key in KEYS:
            np.testing.assert_allclose(b[key], a[key], atol=1e-5, rtol=1e-5, err_msg=f"step {k}: {key}")
    # warp: the course step and the reduction were replayed from the recorded stages (the views
    # the log holds are rewritten in place at each reset)
    assert runs[1]["course_steps"] == 2
    assert len({round(b["Episode_Course/progress_m"], 4) for b in warp["logs"] if b is not None}) > 2


def test_an_explicit_reset_logs_the_means_of_the_envs_it_resets(runs):
    for run in runs:
        x = run["explicit"]
        np.testing.assert_allclose(x["got"], x["ref"], rtol=1e-6, atol=1e-6)
        assert x["got"][0] > 0 and x["got"][2] > 0
        np.testing.assert_array_equal(x["again"], 0.0)  # reset again before any step: nothing done
    np.testing.assert_allclose(runs[1]["explicit"]["got"], runs[0]["explicit"]["got"], atol=1e-6)


# -- 3. progress_rate and track_frame_velocity ----------------------------------------------------
def test_progress_rate_is_the_finite_difference_of_progress_over_dt(runs):
    for rec in (r["drive"] for r in runs):
        terms = rec["terms"]
        rate = rec["rew"][:, :, terms.index("rate")]
        delta = rec["rew"][:, :, terms.index("progress")]
        dt = RoverEnvCfg().sim.dt * RoverEnvCfg().decimation
        prev = np.concatenate([np.zeros((1, E), np.float32), rec["progress"][:-1]])
        fd = (rec["progress"] - prev) / dt
        keep = ~rec["done"]  # a reset env's progress is already back to 0 when the step returns
        np.testing.assert_allclose(rate[keep], fd[keep], rtol=1e-4, atol=2e-3)
        np.testing.assert_allclose(rate, delta / dt, rtol=1e-5, atol=1e-4)  # m/s, whatever the dt
        assert np.abs(rate[keep]).max() > 5.0


def test_track_frame_velocity_is_the_world_velocity_in_the_track_frame(runs):
    for rec in (r["drive"] for r in runs):
        np.testing.assert_allclose(rec["vel"], rec["vel_ref"], atol=1e-4, rtol=1e-5)
        moving = np.abs(rec["vel_ref"]).max(-1) > 0.1
        assert moving.mean() > 0.8
        assert np.abs(rec["vel_ref"][..., 1]).max() > 0.5 and np.abs(rec["vel_ref"][..., 2]).max() > 0.05
    np.testing.assert_allclose(runs[1]["drive"]["vel"], runs[0]["drive"]["vel"], atol=1e-5)


def test_new_terms_are_swapped_to_their_warp_twins(runs):
    stable, warp = runs
    for run, module in ((stable, "track_gen_isaac.mdp"), (warp, "track_gen_isaac.experimental.mdp")):
        names = {t.__name__: t.__module__ for t in run["obs_terms"] + run["rew_terms"]}
        assert names["track_frame_velocity"] == f"{module}.observations"
        assert names["progress_rate"] == f"{module}.rewards"


# -- 4. placement height --------------------------------------------------------------------------
def test_placement_defaults_to_half_height_above_a_track(runs):
    for run in runs:
        pos, start = run["placed"], run["start"]
        np.testing.assert_allclose(pos[:, :2], start[:, :2], atol=1e-5)
        np.testing.assert_allclose(pos[:, 2], start[:, 2] + HALF[2], atol=1e-6)  # CourseCfg.half_height
        np.testing.assert_allclose(start[:, 2], 0.0)  # a flat track: the start pose is at ground level


def test_z_offset_default_follows_the_course_kind():
    import types

    from isaaclab.managers import EventTermCfg

    from track_gen_isaac import CourseCfg, mdp

    env = types.SimpleNamespace(cfg=RoverEnvCfg(), num_envs=E, device="cpu")  # the terms' checks need no sim
    place = mdp.place_at_course_start(EventTermCfg(func=mdp.place_at_course_start, mode="reset"), env)
    assert place.z_of(None) == HALF[2] and place.z_of(0.25) == 0.25
    with pytest.raises(ValueError, match="z_offset"):
        mdp.place_at_checkpoint(EventTermCfg(func=mdp.place_at_checkpoint, mode="reset",
                                             params={"z_offset": float("nan")}), env)
    # a gate course: 0, the start pose is at the gate centres' height (GatesEnvCfg places the robot
    # exactly there: test_gates_env, test_drone_tasks)
    env.cfg.course = CourseCfg(generator=tg.GateGenConfig(gate_width=1.0), half_height=0.3)
    gates = mdp.place_at_checkpoint(EventTermCfg(func=mdp.place_at_checkpoint, mode="reset"), env)
    assert gates.mode == "gates" and gates.z_of(None) == 0.0
