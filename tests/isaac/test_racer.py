"""The racer task (``TrackGen-Drone-Gates-Race-v0``, issue 15) in real kitless envs: its observation terms
against numpy references, its observation noise, its domain randomization landing in the simulation
within its ranges, (both runtimes step for step: test_racer_runtimes.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from isaaclab.managers import ObservationTermCfg as ObsTerm

from .helpers import rotate_inv

E = 16


def _matrix(q):
    x, y, z, w = np.asarray(q, np.float64) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _cfg(task="TrackGen-Drone-Gates-Race-v0", num_envs=E):
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401

    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs = num_envs
    cfg.sim.device = "cpu"
    cfg.seed = 5
    return cfg


@pytest.fixture(scope="module")
def env():
    """The racer task (randomization on) with noise-free twins of its observations beside the noisy ones."""
    import gymnasium as gym

    from track_gen_isaac import mdp

    cfg = _cfg()
    pol = cfg.observations.policy
    pol.concatenate_terms = False
    pol.clean_state = ObsTerm(func=mdp.racer_state, params={"attitude": "matrix"})
    pol.gravity_state = ObsTerm(func=mdp.racer_state, params={"attitude": "gravity", "last_action": False})
    pol.clean_corners = ObsTerm(func=mdp.gate_frames, params={"num": 2, "corners": True})
    pol.frames = ObsTerm(func=mdp.gate_frames, params={"num": 3})
    pol.next_gates = ObsTerm(func=mdp.next_gates, params={"num": 2})
    pol.frames_prev = ObsTerm(func=mdp.gate_frames, params={"num": 3, "previous": True})
    pol.corners_prev = ObsTerm(func=mdp.gate_frames, params={"num": 2, "corners": True, "previous": True})
    e = gym.make("TrackGen-Drone-Gates-Race-v0", cfg=cfg)
    yield e.unwrapped
    e.close()


def _step(env, gen):
    a = torch.rand(env.num_envs, 4, generator=gen) * 1.2 - 0.6
    obs, *_ = env.step(a)
    return a, {k: v.numpy().copy() for k, v in obs["policy"].items()}


def test_racer_state_matches_the_reference(env):
    gen = torch.Generator().manual_seed(1)
    env.reset()
    for _ in range(6):
        a, obs = _step(env, gen)
    d = env.scene["robot"].data
    q = d.root_quat_w.torch.numpy().astype(np.float64)
    v = d.root_lin_vel_w.torch.numpy()
    w = d.root_ang_vel_w.torch.numpy()
    z = (d.root_pos_w.torch - env.scene.env_origins).numpy()[:, 2]
    for e in range(env.num_envs):
        R = _matrix(q[e])
        ref = np.concatenate([R.T @ v[e], R.reshape(-1), R.T @ w[e], np.clip(a[e].numpy(), -1, 1), [z[e]]])
        np.testing.assert_allclose(obs["clean_state"][e], ref, rtol=1e-4, atol=1e-5)
        g = rotate_inv(q[e], [0.0, 0.0, -1.0])
        ref_g = np.concatenate([R.T @ v[e], g, R.T @ w[e], [z[e]]])
        np.testing.assert_allclose(obs["gravity_state"][e], ref_g, rtol=1e-4, atol=1e-5)
    assert obs["state"].shape == (env.num_envs, 20) and obs["gravity_state"].shape == (env.num_envs, 10)


def gate_frames_reference(p, q, cp, e, nxt, valid, num, corners, previous=False):
    """float64 numpy: ``gate_frames`` of env ``e`` at body pose (p, q): blocks for gates ``nxt + i``
    (modulo on a loop, clamped on a one-pass course), then with ``previous`` gate ``nxt - 1`` (modulo /
    clamped to gate 0); 8 values a gate (centre, normal, half sizes) or 15 (centre, corners)."""
    n = int(cp.count.numpy()[e])
    closed = bool(cp.closed.numpy()[e])
    per = 15 if corners else 8
    if not valid or n <= 0:
        return np.zeros((num + int(previous)) * per)
    pos, nrm = cp.pos.numpy()[e].astype(np.float64), cp.normal.numpy()[e].astype(np.float64)
    hw, hh = cp.half_width.numpy()[e], cp.half_height.numpy()[e]
    out = []
    for k in [nxt + i for i in range(num)] + ([nxt - 1] if previous else []):
        k = k % n if closed else min(max(k, 0), n - 1)
        if not corners:
            out += [*rotate_inv(q, pos[k] - p), *rotate_inv(q, nrm[k]), hw[k], hh[k]]
            continue
        lat = np.array([-nrm[k, 1], nrm[k, 0], 0.0])
        lat /= np.linalg.norm(lat)
        up = np.cross(nrm[k], lat)
        out += [*rotate_inv(q, pos[k] - p)]
        for sw, sh in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
            out += [*rotate_inv(q, pos[k] + sw * hw[k] * lat + sh * hh[k] * up - p)]
    return np.asarray(out)


def test_gate_frames_match_the_reference(env):
    from track_gen_isaac import get_course

    gen = torch.Generator().manual_seed(2)
    env.reset()
    for _ in range(4):
        _, obs = _step(env, gen)
    ec = get_course(env)
    cp = ec.course.checkpoints
    pos, nrm = cp.pos.numpy(), cp.normal.numpy()
    hw, hh, cnt = cp.half_width.numpy(), cp.half_height.numpy(), cp.count.numpy()
    nxt = ec.course.progress.next_index.numpy()
    d = env.scene["robot"].data
    p = (d.root_pos_w.torch - env.scene.env_origins).numpy()
    q = d.root_quat_w.torch.numpy()
    for e in range(env.num_envs):
        ref = []
        for i in range(3):
            k = (nxt[e] + i) % cnt[e]
            ref += [*rotate_inv(q[e], pos[e, k] - p[e]), *rotate_inv(q[e], nrm[e, k]), hw[e, k], hh[e, k]]
        np.testing.assert_allclose(obs["frames"][e], ref, rtol=1e-4, atol=1e-5)
    # the corner layout is next_gates' own
    np.testing.assert_allclose(obs["clean_corners"], obs["next_gates"], atol=1e-6)
    # with the gate passed last (these loops wrap: before the first pass it is the last gate)
    valid = ec.course.result.valid.numpy()
    p64, q64 = p.astype(np.float64), q.astype(np.float64)
    for e in range(env.num_envs):
        for name, num, corners in (("frames_prev", 3, False), ("corners_prev", 2, True)):
            ref = gate_frames_reference(p64[e], q64[e], cp, e, nxt[e], valid[e], num, corners, previous=True)
            np.testing.assert_allclose(obs[name][e], ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(obs["frames_prev"][:, :24], obs["frames"], atol=1e-6)   # the next gates come first


def test_observation_noise_has_its_std_and_spares_the_action(env):
    from track_gen_isaac.tasks.drone_racer import GATE_NOISE, STATE_NOISE

    gen = torch.Generator().manual_seed(3)
    env.reset()
    ds, dg = [], []
    for _ in range(25):
        _, obs = _step(env, gen)
        ds.append(obs["state"] - obs["clean_state"])
        dg.append(obs["gates"] - obs["clean_corners"])
    ds, dg = np.concatenate(ds), np.concatenate(dg)  # 400 samples a column
    sv, sa, sw, sh = STATE_NOISE
    want = np.array([sv] * 3 + [sa] * 9 + [sw] * 3 + [0.0] * 4 + [sh])
    np.testing.assert_allclose(ds.std(0), want, rtol=0.2, atol=1e-7)
    assert np.abs(ds.mean(0)).max() < 4 * want.max() / np.sqrt(len(ds))
    np.testing.assert_allclose(dg.std(0), GATE_NOISE, rtol=0.2)


def test_randomized_parameters_land_in_the_sim_within_their_ranges(env):
    from track_gen_isaac.mdp.randomization import RANGES
    from track_gen_isaac.quadrotor import CRAZYFLIE

    env.reset()
    term = env.event_manager.get_term_cfg("dynamics").func
    dyn = env.action_manager.get_term("rotors").dyn
    d = env.scene["robot"].data
    mass = d.body_mass.torch.numpy()[:, 0]
    inertia = d.body_inertia.torch.numpy().reshape(env.num_envs, 9)
    np.testing.assert_allclose(mass, term.mass.numpy()[:, 0], rtol=1e-6)         # read back from the sim, per env
    np.testing.assert_allclose(inertia, term.inertia.numpy().reshape(env.num_envs, 9), rtol=1e-6)

    def within(x, key, nominal=1.0):
        lo, hi = RANGES[key]
        assert (x >= lo * nominal - 1e-9).all() and (x <= hi * nominal + 1e-9).all(), (key, x)
        assert np.ptp(x) > 0.3 * (hi - lo) * nominal, (key, "not spread over its range")

    within(mass, "mass_scale", CRAZYFLIE.mass)
    for j in range(3):
        within(inertia[:, 4 * j], "inertia_scale", CRAZYFLIE.inertia[j])
    off = inertia[:, [1, 2, 3, 5, 6, 7]]
    np.testing.assert_array_equal(off, 0.0)
    within(dyn.thrust_scale.numpy(), "thrust_scale")
    within(dyn.torque_scale.numpy(), "torque_scale")
    tau = term.tau.numpy()
    within(tau, "motor_time_constant")
    np.testing.assert_allclose(dyn.alpha_env.numpy(), 1 - np.exp(-env.physics_dt / tau), rtol=1e-5)
    within(dyn.drag.numpy().reshape(-1), "linear_drag")
    delay = dyn.delay.numpy()
    assert set(delay.tolist()) <= {0, 1, 2} and len(set(delay.tolist())) >= 2
    # a second reset draws again (new episode, new plant) for the reset envs only
    before = mass.copy()
    env.reset(env_ids=torch.tensor([0, 3], dtype=torch.int32))
    after = d.body_mass.torch.numpy()[:, 0]
    assert after[0] != before[0] and after[3] != before[3]
    np.testing.assert_array_equal(np.delete(after, [0, 3]), np.delete(before, [0, 3]))


def test_the_drawn_plant_flies(env):
    """Zero action after a reset: the collective is the nominal weight, so each env accelerates
    vertically at g (k_f m0 / m - 1) minus its drag (zero velocity at first): the drawn mass and
    thrust coefficient act in the simulation."""
    from track_gen_isaac.quadrotor import CRAZYFLIE, GRAVITY

    env.reset()
    d = env.scene["robot"].data
    dyn = env.action_manager.get_term("rotors").dyn
    v0 = d.root_lin_vel_w.torch[:, 2].numpy().copy()
    env.step(torch.zeros(env.num_envs, 4))
    v1 = d.root_lin_vel_w.torch[:, 2].numpy().copy()
    acc = (v1 - v0) / env.step_dt
    want = GRAVITY * (dyn.thrust_scale.numpy() * CRAZYFLIE.mass / d.body_mass.torch.numpy()[:, 0] - 1)
    np.testing.assert_allclose(acc, want, atol=0.02)


def test_play_variant_flies_the_centre_plant():
    """One plant: the model's own figures, drag and latency at the middle of their ranges, no noise
    (read back from a real env in test_racer_runtimes.py)."""
    from track_gen_isaac.mdp.randomization import RANGES

    cfg = _cfg("TrackGen-Drone-Gates-Race-Play-v0", 4)
    p = cfg.events.dynamics.params
    for key in ("mass_scale", "inertia_scale", "thrust_scale", "torque_scale"):
        assert p[key] == (1.0, 1.0), key
    tau = cfg.actions.rotors.model.motor_time_constant
    assert p["motor_time_constant"] == (tau, tau) and RANGES["motor_time_constant"][0] < tau < RANGES["motor_time_constant"][1]
    assert p["linear_drag"] == (0.005, 0.005) and p["latency"] == (1, 1)
    assert cfg.observations.policy.state.params["noise_std"] == (0.0, 0.0, 0.0, 0.0)
    assert cfg.observations.policy.gates.params["noise_std"] == 0.0
    train = _cfg("TrackGen-Drone-Gates-Race-v0", 4)  # the training cfg keeps its ranges
    assert train.events.dynamics.params == {} and train.observations.policy.gates.params["noise_std"] > 0


def test_ideal_plant_and_overrides():
    from track_gen_isaac.evaluate.rollout import apply_overrides
    from track_gen_isaac.tasks.drone_racer import BODY_OVERRIDES
    from track_gen_isaac.evaluate.flown import racer_suite

    suite = racer_suite("ideal")
    assert suite.task == "TrackGen-Drone-Gates-Race-Play-v0" and suite.env_overrides == {"events.dynamics": None}
    cfg = _cfg(suite.task, 4)
    apply_overrides(cfg, suite.env_overrides)
    assert cfg.events.dynamics is None and cfg.events.place is not None
    assert racer_suite().env_overrides == {}
    randomized = racer_suite("randomized")  # the training cfg flying the body's own box
    assert randomized.task == "TrackGen-Drone-Gates-Race-v0" and randomized.env_overrides == BODY_OVERRIDES
    with pytest.raises(ValueError, match="'events.nothing' is not an attribute"):
        apply_overrides(cfg, {"events.nothing": 1})
    with pytest.raises(ValueError, match="'nothing.at.all' is not an attribute"):
        apply_overrides(cfg, {"nothing.at.all": 1})
    with pytest.raises(ValueError, match="dynamics: expected one of"):
        racer_suite("nominal")
    hard = racer_suite("centre", task="TrackGen-Drone-Gates-Race-Curriculum-v0", suite="gates-hard-v1")
    assert hard.name == "gates-hard-v1" and hard.course == {"difficulty": 1.0}
    assert hard.task == "TrackGen-Drone-Gates-Race-Curriculum-Play-v0"
    with pytest.raises(ValueError, match="gates-v1"):  # an unknown suite lists the suites
        racer_suite("centre", suite="gates-v9")
    # a real layout, flown by the racer's -Play env (the gate task's layout suite, another task)
    from track_gen_isaac.evaluate.layout_suite import apply_layout, layout_suite

    path = str(Path(__file__).resolve().parents[2] / "track_gen/layouts/data/lsy_level0.toml")
    lay = racer_suite("centre", layout=path)
    base = layout_suite(path)
    assert lay.task == "TrackGen-Drone-Gates-Race-Play-v0" and base.task == "TrackGen-Drone-Gates-v0"
    assert (lay.name, lay.layout, lay.laps, lay.course) == (base.name, base.layout, base.laps, base.course)
    cfg = _cfg(lay.task, 4)
    assert cfg.terminations.off_course.params["max_distance"] == 2.5
    apply_layout(cfg, lay)
    assert cfg.course.layouts == lay.layout
    assert cfg.terminations.off_course.params["max_distance"] == math.inf   # no course-line tube on a layout
    assert racer_suite("ideal", layout=path).env_overrides == {"events.dynamics": None}
    with pytest.raises(ValueError, match="give one of them"):
        racer_suite("centre", suite="gates-v1", layout=path)


def test_safety_margin_in_training_only(env):
    """Training collides with the body grown by SAFETY_MARGIN on every side (the env's course
    arrays hold it); the -Play env and the randomized evaluation fly the body's own box."""
    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.evaluate.rollout import apply_overrides
    from track_gen_isaac.quadrotor import CRAZYFLIE
    from track_gen_isaac.tasks.drone_racer import BODY_OVERRIDES, SAFETY_MARGIN, with_margin

    body = (0.5 * CRAZYFLIE.size[0], 0.5 * CRAZYFLIE.size[1], 0.5 * CRAZYFLIE.size[2])
    grown = np.array([b + SAFETY_MARGIN for b in body], np.float32)
    ec = get_course(env)
    np.testing.assert_array_equal(ec.half_extents.numpy(), np.tile(grown[:2], (env.num_envs, 1)))
    assert ec.cfg.half_height == pytest.approx(grown[2]) and SAFETY_MARGIN > 0
    play = _cfg("TrackGen-Drone-Gates-Race-Play-v0", 4)
    assert play.course.half_extents == body[:2] and play.course.half_height == body[2]
    assert play.course.debug_vis and play.course.collision == "frame"  # the rest of the -Play course kept
    train = _cfg("TrackGen-Drone-Gates-Race-v0", 4)
    apply_overrides(train, BODY_OVERRIDES)
    assert train.course.half_extents == body[:2] and train.course.half_height == body[2]
    back = with_margin(with_margin(play.course, 0.25), -0.25)
    assert back.half_extents == pytest.approx(body[:2]) and back.half_height == pytest.approx(body[2])


def test_curriculum_racer_is_the_racer_on_the_curriculum_courses():
    from track_gen_isaac.mdp.randomization import RANGES
    from track_gen_isaac.tasks.drone_racer import SAFETY_MARGIN, with_margin

    race, cur = _cfg(), _cfg("TrackGen-Drone-Gates-Race-Curriculum-v0")
    gates_cur = _cfg("TrackGen-Drone-Gates-Curriculum-v0")
    assert cur.observations.to_dict() == race.observations.to_dict()
    assert cur.rewards.to_dict() == race.rewards.to_dict()
    assert cur.events.dynamics is not None and cur.events.dynamics.params == {}  # the training ranges
    # the curriculum task's courses with the racer's safety margin in training, the body's box in -Play
    assert cur.course.to_dict() == with_margin(gates_cur.course, SAFETY_MARGIN).to_dict()
    assert cur.course.to_dict()["generator"]["max_obstacles"] == 4
    assert cur.curriculum.to_dict() == gates_cur.curriculum.to_dict()
    assert cur.terminations.altitude.params["max_height"] == 7.0
    play = _cfg("TrackGen-Drone-Gates-Race-Curriculum-Play-v0")
    assert play.events.dynamics.params["linear_drag"] == (0.005, 0.005) and play.episode_length_s == 30.0
    assert (play.course.half_extents, play.course.half_height) == (gates_cur.course.half_extents,
                                                                   gates_cur.course.half_height)
    assert play.course.generator == gates_cur.course.generator and play.course.debug_vis
    assert RANGES["linear_drag"] == (0.0, 0.01)


def test_bad_parameters_fail_at_construction():
    from track_gen_isaac.mdp.randomization import check_ranges

    with pytest.raises(ValueError, match="latency"):
        check_ranges(latency=(0, 3))
    with pytest.raises(ValueError, match="mass_scale"):
        check_ranges(mass_scale=(0.0, 1.0))
    with pytest.raises(ValueError, match="unknown"):
        check_ranges(colour=(0, 1))
    with pytest.raises(ValueError, match="lo <= hi"):
        check_ranges(linear_drag=(0.1, 0.0))
