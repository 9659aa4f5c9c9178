"""``progress_rate(leg_accel=...)``: the rate capped by the leg behind the next gate, in a gate-course
env (:class:`envs.GatesEnvCfg`, the robot walked along its course line by :class:`helpers.Schedule`),
in both runtimes, against a float64 numpy reference built from the course's checkpoints and each
env's next-gate index at every step; the uncapped term of the same env is its input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from isaaclab.managers import RewardTermCfg as RewTerm

import track_gen as tg

from track_gen_isaac import mdp

from .envs import GatesEnvCfg
from .helpers import Schedule, step

E = 8
STEPS = 160
ACCEL = 3.0     # [m/s^2]: caps of 1.7-4 m/s on these 12 m courses, below what the schedule walks
CLIP = 3.0      # [m/s]: the clip wins on the longer legs


def _cfg(closed: bool):
    cfg = GatesEnvCfg()
    cfg.course = cfg.course.replace(generator=tg.GateGenConfig(gate_width=1.0, gate_height=1.0, size=12.0, closed=closed))
    cfg.rewards.rate = RewTerm(func=mdp.progress_rate, weight=1.0)
    cfg.rewards.capped = RewTerm(func=mdp.progress_rate, weight=1.0, params={"leg_accel": ACCEL})
    cfg.rewards.both = RewTerm(func=mdp.progress_rate, weight=1.0, params={"leg_accel": ACCEL, "clip": CLIP})
    return cfg


def _drive(runtime: str, closed: bool) -> dict:
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab_experimental.envs import ManagerBasedRLEnvWarp

    from track_gen_isaac import get_course

    env = (ManagerBasedRLEnv if runtime == "stable" else ManagerBasedRLEnvWarp)(_cfg(closed))
    env.reset()
    ec = get_course(env)
    sched = Schedule(env, ec)
    rm = env.reward_manager
    names = list(rm.active_terms)
    rec = {k: [] for k in ("rew", "next", "pos", "count", "closed", "valid", "done")}
    for k in range(STEPS):
        cp = ec.course.checkpoints   # the course the step is measured on (before a reset regenerates it)
        rec["pos"].append(cp.pos.numpy().astype(np.float64))
        rec["count"].append(cp.count.numpy().copy())
        rec["closed"].append(cp.closed.numpy().copy())
        rec["valid"].append(ec.course.result.valid.numpy().copy())
        sched.move(k)
        _, _, term, trunc, _ = step(env)
        t = getattr(rm, "_step_reward_tensor_view", None)
        rec["rew"].append((rm._step_reward if t is None else t).cpu().numpy().copy())
        # the next gate the step's reward saw: after a reset it is back to 0, so those steps are skipped
        rec["next"].append(ec.course.progress.next_index.numpy().copy())
        done = (term | trunc).cpu().numpy()
        rec["done"].append(done)
        sched.done(done)
    env.close()
    out = {k: np.stack(v) for k, v in rec.items()}
    out["names"] = names
    return out


def _reference(rate, nxt, pos, count, closed, valid, accel, clip=None):
    cap = np.full(rate.shape, np.inf if clip is None else clip)
    for e in range(rate.shape[0]):
        n = min(int(count[e]), pos.shape[1])
        k = int(nxt[e])
        if not valid[e] or n < 2 or not 0 <= k < n:
            continue
        k2 = (k + 1) % n if closed[e] else k + 1
        if k2 < n:
            cap[e] = min(cap[e], np.sqrt(accel * np.linalg.norm(pos[e, k2] - pos[e, k])))
    return np.clip(rate, -cap, cap)


@pytest.fixture(scope="module", params=[("stable", True), ("warp", False)], ids=["stable-loop", "warp-one-pass"])
def run(request):
    return _drive(*request.param)


def test_capped_progress_rate_matches_the_reference(run):
    names, rew = run["names"], run["rew"]
    rate, capped, both = (rew[:, :, names.index(n)] for n in ("rate", "capped", "both"))
    keep = ~run["done"]
    checked = 0
    for t in range(STEPS):
        ref = _reference(rate[t], run["next"][t], run["pos"][t], run["count"][t], run["closed"][t], run["valid"][t],
                         ACCEL)
        ref2 = _reference(rate[t], run["next"][t], run["pos"][t], run["count"][t], run["closed"][t],
                          run["valid"][t], ACCEL, CLIP)
        m = keep[t]
        np.testing.assert_allclose(capped[t][m], ref[m], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(both[t][m], ref2[m], rtol=1e-5, atol=1e-5)
        checked += int(m.sum())
    assert checked > STEPS * E // 2
    # the cap bites (the schedule walks faster than the short legs allow) and leaves slower steps alone
    bites = keep & (np.abs(capped - rate) > 1e-3)
    assert bites.mean() > 0.1 and (keep & ~bites).mean() > 0.1
    assert (np.abs(both) <= np.abs(capped) + 1e-6).all()


def test_the_one_pass_course_has_no_cap_behind_its_last_gate():
    # a one-pass course's last gate has no leg behind it: only the clip applies (reference, by hand)
    pos = np.zeros((1, 3, 3))
    pos[0, 1, 0], pos[0, 2, 0] = 1.0, 5.0
    rate = np.array([10.0])
    assert _reference(rate, [2], pos, [3], [0], [1], 4.0)[0] == 10.0
    assert _reference(rate, [1], pos, [3], [0], [1], 4.0)[0] == pytest.approx(4.0)
    assert _reference(rate, [2], pos, [3], [1], [1], 4.0)[0] == pytest.approx(np.sqrt(20.0))


@pytest.mark.parametrize("bad", [0.0, -1.0, True, "fast"])
def test_a_bad_leg_accel_is_refused_when_the_env_is_built(bad):
    from isaaclab.envs import ManagerBasedRLEnv

    cfg = _cfg(True)
    cfg.rewards.capped.params["leg_accel"] = bad
    with pytest.raises(ValueError, match="leg_accel"):
        ManagerBasedRLEnv(cfg)
