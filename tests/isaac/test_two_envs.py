"""Two env instances alive at once in one process: Isaac Lab 3.0 cannot host them.

``ManagerBasedEnv.__init__`` uses one process-wide ``SimulationContext`` singleton. When one
already exists, a second env is refused, in whichever way the host is set up (observed here,
kitless on the CPU):

* kitless (no ``AppLauncher``, so ``builtins.ISAAC_LAUNCHED_FROM_TERMINAL`` is never set): an
  ``AttributeError`` on that flag;
* the flag False (launched from a terminal): ``RuntimeError: Simulation context already exists``;
* the flag True ("extension mode", reuse the running sim): the scene clone fails with
  ``RuntimeError: Clone preparation requires a simulation without an existing clone plan``.

So "two envs never share course state" cannot be exercised with two live envs. What is checked
instead: every refused second construction leaves the first env's course untouched (same object,
same arrays, byte for byte) and still bound to, and following, the first env's own root pose
buffers. Per-instance ownership itself (``env.track_gen_courses``) is covered by test_gates_env.
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest

from .envs import GatesEnvCfg
from .helpers import Reference, arrays_of, generation_state, step, teleport

E = 4


def _cfg(seed: int) -> GatesEnvCfg:
    cfg = GatesEnvCfg()
    cfg.scene.num_envs = E
    cfg.course.seed = seed
    return cfg


@pytest.fixture(scope="module")
def env():
    from isaaclab.envs import ManagerBasedRLEnv

    env = ManagerBasedRLEnv(_cfg(3))
    env.reset()
    step(env, 2)
    yield env
    env.close()


def _snapshot(ec) -> dict[str, bytes]:
    out = {k: v.tobytes() for k, v in generation_state(ec.course).items()}
    for part in ("events", "contacts", "frame"):
        out.update({f"{part}.{k}": v.tobytes() for k, v in arrays_of(getattr(ec.result, part)).items()})
    out["valid"] = ec.result.valid.numpy().tobytes()
    return out


def _bound_to_own_buffers(env, ec) -> bool:
    data = env.scene["robot"].data
    return (ec.position.ptr, ec.orientation.ptr, ec.origin.ptr) == (
        data.root_pos_w.warp.ptr, data.root_quat_w.warp.ptr, env.scene.env_origins.data_ptr())


def _refused(env, monkeypatch, flag, exc, match):
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.sim import SimulationContext

    if flag is None:
        monkeypatch.delattr(builtins, "ISAAC_LAUNCHED_FROM_TERMINAL", raising=False)
    else:
        monkeypatch.setattr(builtins, "ISAAC_LAUNCHED_FROM_TERMINAL", flag, raising=False)
    ec = env.track_gen_courses["course"]
    before = _snapshot(ec)
    with pytest.raises(exc, match=match):
        ManagerBasedRLEnv(_cfg(5))
    # the first env keeps the singleton, its one course object, its arrays and its binding
    assert SimulationContext.instance() is env.sim
    assert list(env.track_gen_courses) == ["course"] and env.track_gen_courses["course"] is ec
    after = _snapshot(ec)
    assert after.keys() == before.keys()
    for k in before:
        assert after[k] == before[k], k
    assert _bound_to_own_buffers(env, ec)


def test_second_env_kitless_is_refused(env, monkeypatch):
    _refused(env, monkeypatch, None, AttributeError, "ISAAC_LAUNCHED_FROM_TERMINAL")


def test_second_env_from_terminal_is_refused(env, monkeypatch):
    _refused(env, monkeypatch, False, RuntimeError, "Simulation context already exists")


def test_second_env_in_extension_mode_is_refused(env, monkeypatch):
    _refused(env, monkeypatch, True, RuntimeError, "existing clone plan")


def test_first_env_course_still_follows_its_own_pose_buffers(env):
    """After the refused constructions: the course steps once per env step on this env's own
    root pose (equal to an independent core course fed the same poses)."""
    ec = env.track_gen_courses["course"]
    env.reset()
    ref = Reference(env, ec)
    ref.relocalize()
    line = ec.course.course_line.line
    pts, cnt = line.points.numpy(), line.count.numpy()
    steps = ec.steps
    for k in range(1, 11):
        teleport(env, ec, pts[np.arange(E), np.minimum(k, cnt - 1)], np.full(E, 0.2 * k, np.float32))
        _, _, term, trunc, _ = step(env)
        assert not (term | trunc).any()
        res = ref.step()
        if k == 1:
            s_first = ec.result.frame.s.numpy().copy()
        for f in ("next", "passed", "total"):
            np.testing.assert_array_equal(getattr(ec.result.events, f).numpy(), getattr(res.events, f).numpy())
        for f in ("s", "lateral", "heading", "distance"):
            np.testing.assert_allclose(getattr(ec.result.frame, f).numpy(), getattr(res.frame, f).numpy(),
                                       atol=1e-5)
    assert ec.steps == steps + 10
    assert (ec.result.frame.s.numpy() != s_first).all()  # its frame followed the moving robot
    assert _bound_to_own_buffers(env, ec)
