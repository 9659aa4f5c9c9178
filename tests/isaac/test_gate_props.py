"""Kinematic gate props (Newton, CPU, both runtimes: ManagerBasedRLEnv and ManagerBasedRLEnvWarp):
move_gate_props places one kinematic cuboid per gate slot at the course's gates, parks the unused
slots, moves only the reset envs' props, and the props stay put while the env steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from .envs import EvCfg, GatesEnvCfg, SceneCfg
from .helpers import step

E, SLOTS = 4, 8


def _cfgs(runtime="stable"):
    import isaaclab.sim as sim_utils
    from isaaclab.assets import RigidObjectCfg, RigidObjectCollectionCfg
    from isaaclab.managers import EventTermCfg as EventTerm
    from isaaclab.utils import configclass

    import track_gen as tg
    from track_gen_isaac import CourseCfg

    if runtime == "warp":  # named explicitly: the twin is not exported by track_gen_isaac.experimental.mdp
        from track_gen_isaac.experimental.mdp.props import move_gate_props
    else:
        from track_gen_isaac.mdp.props import move_gate_props

    gate = sim_utils.CuboidCfg(  # pass-through gates: no collision props
        size=(0.05, 1.0, 1.0), mass_props=sim_utils.MassCfg(mass=1.0),  # without a mass: no Newton body
        rigid_props=sim_utils.UsdPhysicsRigidBodyCfg(kinematic_enabled=True),
    )

    @configclass
    class PropSceneCfg(SceneCfg):
        gates = RigidObjectCollectionCfg(rigid_objects={
            f"g{k}": RigidObjectCfg(prim_path=f"{{ENV_REGEX_NS}}/Gate_{k}", spawn=gate,
                                    init_state=RigidObjectCfg.InitialStateCfg(pos=(0.0, 0.0, -50.0)))
            for k in range(SLOTS)
        })

    @configclass
    class PropEvCfg(EvCfg):
        gates = EventTerm(func=move_gate_props, mode="reset", params={"props_asset": "gates"})

    @configclass
    class PropEnvCfg(GatesEnvCfg):
        scene: PropSceneCfg = PropSceneCfg(num_envs=E, env_spacing=30.0)
        events: PropEvCfg = PropEvCfg()
        course: CourseCfg = CourseCfg(
            generator=tg.GateGenConfig(gate_width=1.0, gate_height=1.0, size=12.0, min_gates=4, max_gates=6),
            collision="frame", half_extents=(0.15, 0.1), half_height=0.05, seed=7, extra=[tg.tools.Props],
        )

    return PropEnvCfg


@pytest.fixture(scope="module", params=["stable", "warp"])
def env(request):
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab_experimental.envs import ManagerBasedRLEnvWarp

    cls = ManagerBasedRLEnvWarp if request.param == "warp" else ManagerBasedRLEnv
    env = cls(_cfgs(request.param)())
    env.runtime = request.param
    env.reset()
    yield env
    env.close()


def _poses(env):
    return env.scene["gates"].data.body_link_pose_w.torch.clone().cpu().numpy()  # (E, SLOTS, 7)


def _expected(env):
    """The course's Props in world frame, padded with parked slots to SLOTS: pos (E, SLOTS, 3), yaw, used."""
    from track_gen.tools.props import PARK_POSITION

    ec = env.track_gen_courses["course"]
    props = ec.course.components["props"].result
    pos, quat, count = props.pos.numpy(), props.quat.numpy(), props.count.numpy()
    K = pos.shape[1]
    origins = env.scene.env_origins.cpu().numpy()
    p = np.tile(np.array(PARK_POSITION, np.float32), (E, SLOTS, 1))
    q = np.tile(np.array([0, 0, 0, 1], np.float32), (E, SLOTS, 1))
    p[:, :K], q[:, :K] = pos, quat
    used = np.arange(SLOTS)[None, :] < count[:, None]
    return p + origins[:, None, :], q, used, ec


def _yaw(q):
    return np.arctan2(2 * (q[..., 3] * q[..., 2] + q[..., 0] * q[..., 1]), 1 - 2 * (q[..., 1] ** 2 + q[..., 2] ** 2))


def _assert_placed(env, poses):
    p, q, used, _ = _expected(env)
    np.testing.assert_allclose(poses[:, :, :3], p, atol=1e-4)
    d = np.angle(np.exp(1j * (_yaw(poses[:, :, 3:]) - _yaw(q))))
    assert np.abs(d).max() < 1e-4
    assert used.any(1).all() and (~used).any()
    return used


def test_props_match_course_gates_and_park_unused(env):
    from track_gen.tools.props import PARK_POSITION

    ec = env.track_gen_courses["course"]
    poses = _poses(env)
    used = _assert_placed(env, poses)
    origins = env.scene.env_origins.cpu().numpy()
    # slot g = gate g of the generated course: its centre (+ origin) and yaw
    g = ec.course.result
    count = g.count.numpy()
    assert g.valid.numpy().all() and (count >= 4).all() and (count <= 6).all()
    assert (used.sum(1) == count).all()
    for e in range(E):
        n = count[e]
        np.testing.assert_allclose(poses[e, :n, :3] - origins[e], g.pos.numpy()[e, :n], atol=1e-4)
        d = np.angle(np.exp(1j * (_yaw(poses[e, :n, 3:]) - g.yaw.numpy()[e, :n])))
        assert np.abs(d).max() < 1e-4
    assert (poses[:, :, 2][used] > -1.0).all()
    # parked slots: the parking transform (env frame) + origin, identity rotation
    exp = (np.array(PARK_POSITION, np.float32)[None, None, :] + origins[:, None, :]).repeat(SLOTS, 1)[~used]
    np.testing.assert_allclose(poses[:, :, :3][~used], exp, atol=1e-4)
    np.testing.assert_allclose(poses[:, :, 3:][~used], np.tile([0, 0, 0, 1], ((~used).sum(), 1)), atol=1e-6)


def test_partial_reset_moves_only_reset_envs(env):
    step(env, 2)
    before = _poses(env)
    env.reset(env_ids=torch.tensor([1, 3], dtype=torch.int32))
    after = _poses(env)
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])
    assert not np.allclose(after[[1, 3], :, :3], before[[1, 3], :, :3])  # new courses
    _assert_placed(env, after)


@pytest.mark.parametrize("ids", [[0, 3], [1, 2], [0, 1]])
def test_step_reset_moves_only_the_timed_out_envs(env, ids):
    """A reset inside env.step (time-outs). The warp runtime records its event stage at the first one
    and replays the graph for the later ones (other envs, same arrays)."""
    step(env, 2)
    ec = env.track_gen_courses["course"]
    before = _poses(env)
    gen = ec.course.generator.generation.numpy().copy()
    env.episode_length_buf[ids] = int(env.max_episode_length) - 1
    step(env, 1)
    after = _poses(env)
    rest = [e for e in range(E) if e not in ids]
    assert np.flatnonzero(ec.course.generator.generation.numpy() != gen).tolist() == ids
    np.testing.assert_array_equal(after[rest], before[rest])
    assert not np.allclose(after[ids, :, :3], before[ids, :, :3])
    _assert_placed(env, after)
    if env.runtime == "warp":
        from track_gen_isaac.experimental.mdp.props import move_gate_props

        terms = [c.func for c in env.event_manager._mode_term_cfgs["reset"]]
        assert any(isinstance(t, move_gate_props) for t in terms)
        assert any(s.startswith("EventManager_apply_reset") for s in env._manager_call_switch._graph_cache._graphs)


def test_props_stay_put_across_steps(env):
    before = _poses(env)
    step(env, 5)
    np.testing.assert_allclose(_poses(env), before, atol=1e-6)


@pytest.mark.parametrize("env", ["stable"], indirect=True)  # once: the warp twin shares the check
def test_missing_props_component_names_the_fix(env):
    from isaaclab.managers import EventTermCfg

    from track_gen_isaac.mdp.props import move_gate_props

    term = move_gate_props(EventTermCfg(func=move_gate_props, mode="reset",
                                        params={"props_component": "nope"}), env)
    with pytest.raises(ValueError, match=r"no Props component 'nope'.*extra=\[track_gen.tools.Props\]"):
        term(env, slice(None), props_component="nope")


def test_physics_body_transforms_follow(env):
    """After a reset and a step, Newton's body transforms (what contact and rendering read) are the props' poses."""
    from isaaclab_newton.physics import NewtonManager

    env.reset(env_ids=torch.tensor([0, 2], dtype=torch.int32))
    step(env, 1)
    poses = _poses(env)
    model = NewtonManager.get_model()
    labels = list(getattr(model, "body_label", None) or getattr(model, "body_key"))
    body_q = NewtonManager.get_state_0().body_q.numpy()
    found = 0
    for i, lab in enumerate(labels):
        for e in range(E):
            for k in range(SLOTS):
                prim = f"/World/envs/env_{e}/Gate_{k}"
                if lab.startswith(prim) and lab[len(prim):] in ("", "/"):
                    np.testing.assert_allclose(body_q[i], poses[e, k], atol=1e-4)
                    found += 1
    assert found == E * SLOTS, (found, labels[:12])


@pytest.mark.parametrize("env", ["stable"], indirect=True)  # once: the warp twin shares the check
def test_declared_before_regeneration_is_refused(env):
    from isaaclab.managers import EventTermCfg

    from track_gen_isaac.mdp.props import move_gate_props

    em = env.event_manager
    names, cfgs = em._mode_term_names["reset"], em._mode_term_cfgs["reset"]
    term = move_gate_props(EventTermCfg(func=move_gate_props, mode="reset", params={}), env)
    cfg = EventTermCfg(func=term, mode="reset", params={})
    names.insert(0, "early")
    cfgs.insert(0, cfg)
    try:
        with pytest.raises(ValueError, match=r"'early' \(move_gate_props\) is declared before \['regenerate'\]"):
            term(env, slice(None))
    finally:
        names.pop(0)
        cfgs.pop(0)
