"""The warp-first runtime (ManagerBasedRLEnvWarp, every manager stage recorded and replayed on the CPU)
runs the stable gate-course cfg through the twin swap and equals the stable runtime step for step."""

from __future__ import annotations

import numpy as np
import pytest

from .envs import GatesEnvCfg
from .helpers import run_schedule

STEPS = 200


@pytest.fixture(scope="module")
def runs():
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab_experimental.envs import ManagerBasedRLEnvWarp

    env = ManagerBasedRLEnv(GatesEnvCfg())
    stable = run_schedule(env, STEPS)
    env.close()
    env = ManagerBasedRLEnvWarp(GatesEnvCfg())  # the same stable cfg: its terms are swapped to the warp twins
    warp = run_schedule(env, STEPS)
    info = {
        "terms": [type(cfg.func) for m in (env.reward_manager, env.termination_manager) for cfg in m._term_cfgs],
        "obs_terms": [type(c.func) for c in env.observation_manager._group_obs_term_cfgs["policy"]],
        "event_terms": [type(c.func) for c in env.event_manager._mode_term_cfgs["reset"]],
        "stages": sorted(env._manager_call_switch._graph_cache._graphs),
        "course_steps": env.track_gen_courses["course"].steps,
    }
    env.close()
    return stable, warp, info


def test_stable_terms_are_swapped_to_their_warp_twins(runs):
    from isaaclab_experimental.envs.frontend import WarpFrontend

    _, _, info = runs
    assert WarpFrontend.MIRROR_ROOTS["track_gen_isaac"] == "track_gen_isaac.experimental"
    assert "track_gen_isaac.experimental" in WarpFrontend.WARP_ROOT_PREFIXES
    ours = [t for t in info["obs_terms"] + info["event_terms"] + info["terms"]
            if t.__module__.startswith("track_gen_isaac")]
    assert len(ours) == 4 + 2 + 7 + 4
    assert all(t.__module__.startswith("track_gen_isaac.experimental.mdp.") for t in ours)


def test_every_manager_stage_is_recorded_and_replayed(runs):
    _, _, info = runs
    for stage in ("TerminationManager_compute", "RewardManager_compute", "EventManager_apply_reset",
                  "ObservationManager_compute_update_history"):
        assert any(s.startswith(stage) for s in info["stages"]), (stage, info["stages"])
    # the course was stepped from Python only while its stage was recorded (warm-up + capture):
    # every later step is a graph replay
    assert info["course_steps"] == 2


def test_warp_runtime_equals_stable_runtime(runs):
    stable, warp, _ = runs
    resets = 0
    for k, (a, b) in enumerate(zip(stable, warp)):
        for key in a:
            if key in ("term", "trunc", "gen"):
                np.testing.assert_array_equal(b[key], a[key], err_msg=f"step {k}: {key}")
            else:
                np.testing.assert_allclose(b[key], a[key], atol=1e-5, rtol=1e-5, err_msg=f"step {k}: {key}")
        resets += int(a["term"].sum())
    # the run exercised what it compares: resets (regeneration + placement), passes, rewards
    assert resets >= 5
    assert stable[-1]["gen"].sum() >= 8 + 5
    assert any(np.abs(r["rew"]).max() > 0 for r in stable)
