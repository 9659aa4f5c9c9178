"""Debug markers of a course (CourseCfg.debug_vis): off by default, built headless, poses equal the
course's gates and course line in the world frame, refreshed from the render callback only.

Isaac Lab 3.0 hosts one env per process (test_two_envs), so the default-off env is built and closed
inside the first tests (default off; the warp runtime), before the module's debug_vis env exists:
keep them first.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import warp as wp

import track_gen as tg

from track_gen_isaac import CourseCfg
from track_gen_isaac.debug_vis import LINE_POINTS, MIN_BAR, CourseDebugVis, gate_marker_poses, line_marker_poses
from track_gen_isaac.env_course import build_course, set_debug_vis

from .envs import GatesEnvCfg, TrackEnvCfg
from .helpers import step

E = 4


def _cfg(debug_vis) -> GatesEnvCfg:
    cfg = GatesEnvCfg()
    cfg.scene.num_envs = E
    cfg.course.debug_vis = debug_vis
    return cfg


def _quat_apply(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate v [..., 3] by xyzw quaternions q [..., 4]."""
    xyz, w = q[..., :3], q[..., 3:4]
    t = 2.0 * np.cross(xyz, v)
    return v + w * t + np.cross(xyz, t)


def _expected_gates(course, origins):
    """Reference bars, one gate at a time: local offsets rotated by the gate's yaw quaternion."""
    r = course.result
    pos, yaw, cnt, valid = r.pos.numpy(), r.yaw.numpy(), r.count.numpy(), r.valid.numpy()
    w, h, th = r.width.numpy(), r.height.numpy(), r.thickness.numpy()
    Eg, G = pos.shape[:2]
    T = np.zeros((Eg, G, 4, 3), np.float32)
    Q = np.zeros((Eg, G, 4, 4), np.float32)
    S = np.zeros((Eg, G, 4, 3), np.float32)
    for e in range(Eg):
        t = max(float(th[e]), MIN_BAR)
        local = [((0, 0, h[e] / 2 + t / 2), (t, w[e] + 2 * t, t)), ((0, 0, -h[e] / 2 - t / 2), (t, w[e] + 2 * t, t)),
                 ((0, w[e] / 2 + t / 2, 0), (t, t, h[e])), ((0, -w[e] / 2 - t / 2, 0), (t, t, h[e]))]
        for g in range(G):
            if valid[e] and g < cnt[e]:
                q = np.array([0, 0, np.sin(yaw[e, g] / 2), np.cos(yaw[e, g] / 2)], np.float32)
                for k, (off, size) in enumerate(local):
                    T[e, g, k] = origins[e] + pos[e, g] + _quat_apply(q, np.asarray(off, np.float32))
                    Q[e, g, k], S[e, g, k] = q, size
            else:
                T[e, g] = origins[e]
                Q[e, g] = (0, 0, 0, 1)
    return T.reshape(Eg, 4 * G, 3), Q.reshape(Eg, 4 * G, 4), S.reshape(Eg, 4 * G, 3)


def _expected_line(points, count, origins, K):
    Eg, N = points.shape[:2]
    K = min(K, N)
    T = np.repeat(origins[:, None, :], K, axis=1).astype(np.float32)
    S = np.zeros((Eg, K, 3), np.float32)
    for e in range(Eg):
        n = int(count[e])
        for i in range(min(n, K)):
            j = i if n <= K else (i * n) // K
            T[e, i] = origins[e] + points[e, j]
            S[e, i] = 1.0
    return T, S


# -- construction -------------------------------------------------------------------------------
def test_default_off_creates_no_markers():
    from isaaclab.envs import ManagerBasedRLEnv

    assert CourseCfg().debug_vis is False
    assert GatesEnvCfg().course.debug_vis is False and TrackEnvCfg().course.debug_vis is False
    env = ManagerBasedRLEnv(_cfg(False))
    try:
        env.reset()
        ec = env.track_gen_courses["course"]
        registry = env.sim.vis_marker_registry
        assert ec.debug_vis is None
        assert registry._callbacks == {} and registry.get_groups() == {}
        step(env, 2)
        assert registry._callbacks == {}
    finally:
        env.close()


def test_warp_runtime_markers_follow_regeneration():
    """The same hook in Isaac Lab's warp-first env: building and the captured stages never touch the
    markers; the render callback then shows exactly the regenerated env."""
    from isaaclab_experimental.envs import ManagerBasedRLEnvWarp

    env = ManagerBasedRLEnvWarp(_cfg(True))
    try:
        env.reset()
        ec = env.track_gen_courses["course"]
        dv = ec.debug_vis
        assert isinstance(dv, CourseDebugVis) and ec.warp_runtime
        updates = dv.updates
        step(env, 4)  # recorded, then replayed stages
        assert dv.updates == updates
        dv.update()
        before = dv.poses["gates"].translations.copy()
        updates = dv.updates
        env.reset(env_ids=torch.tensor([2], dtype=torch.int32))
        env.sim.vis_marker_registry.dispatch_callbacks()
        after = dv.poses["gates"].translations
        assert dv.updates == updates + 1
        assert [e for e in range(E) if (after[e] != before[e]).any()] == [2]
        T, _, _ = _expected_gates(ec.course, env.scene.env_origins.cpu().numpy())
        np.testing.assert_allclose(after, T, atol=1e-5)
    finally:
        env.close()


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_bad_debug_vis_fails_at_construction(bad):
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.sim import SimulationContext

    before = SimulationContext.instance()
    with pytest.raises(TypeError, match=rf"CourseCfg.debug_vis: expected True or False, got {bad!r}"):
        ManagerBasedRLEnv(_cfg(bad))
    assert SimulationContext.instance() is before  # refused before any simulation was made


@pytest.fixture(scope="module")
def env():
    from isaaclab.envs import ManagerBasedRLEnv

    env = ManagerBasedRLEnv(_cfg(True))
    env.reset()
    yield env
    env.close()


@pytest.fixture(scope="module")
def dv(env):
    return env.track_gen_courses["course"].debug_vis


def test_markers_built_headless_and_cost_nothing_per_step(env, dv):
    from isaaclab.markers import VisualizationMarkers

    assert isinstance(dv, CourseDebugVis) and dv.enabled
    assert list(dv.markers) == ["gates", "line"]
    assert all(isinstance(m, VisualizationMarkers) for m in dv.markers.values())
    registry = env.sim.vis_marker_registry
    assert dv._debug_vis_handle in registry._callbacks  # the per-render callback is registered
    assert env.sim.visualizers == []  # headless: no visualizer, so the render callbacks never run
    updates = dv.updates
    step(env, 3)
    assert dv.updates == updates
    G = env.track_gen_courses["course"].course.result.pos.shape[1]
    assert dv.poses["gates"].translations.shape == (E, 4 * G, 3)
    assert dv.poses["line"].translations.shape[:2] == (E, LINE_POINTS)


def test_poses_equal_the_course_in_world_frame(env, dv):
    ec = env.track_gen_courses["course"]
    dv.update()
    origins = env.scene.env_origins.cpu().numpy()
    assert np.abs(origins).max() > 1.0  # the origins matter
    T, Q, S = _expected_gates(ec.course, origins)
    g = dv.poses["gates"]
    np.testing.assert_allclose(g.translations, T, atol=1e-5)
    np.testing.assert_allclose(g.orientations, Q, atol=1e-6)
    np.testing.assert_allclose(g.scales, S, atol=1e-6)
    # yaw as an xyzw quaternion: it turns body +x into the gate's normal
    r = ec.course.result
    cnt = r.count.numpy()
    for e in range(E):
        nx = _quat_apply(g.orientations[e, 0:4 * cnt[e]:4], np.array([1.0, 0.0, 0.0], np.float32))
        np.testing.assert_allclose(nx, r.normal.numpy()[e, :cnt[e]], atol=1e-5)
    assert (S[:, :, 0] > 0).sum() == 4 * cnt.sum()  # every gate in use is shown, the other slots hidden
    line = ec.course.course_line.line
    T, S = _expected_line(line.points.numpy(), line.count.numpy(), origins, LINE_POINTS)
    np.testing.assert_allclose(dv.poses["line"].translations, T, atol=1e-5)
    np.testing.assert_array_equal(dv.poses["line"].scales, S)
    shown = (dv.poses["line"].scales[..., 0] > 0).sum(axis=1)
    np.testing.assert_array_equal(shown, np.minimum(line.count.numpy(), LINE_POINTS))
    assert (line.count.numpy() < LINE_POINTS).any() and (line.count.numpy() > LINE_POINTS).any()  # both cases


def test_partial_reset_moves_exactly_the_regenerated_envs(env, dv):
    ec = env.track_gen_courses["course"]
    dv.update()
    before = {k: (p.translations.copy(), p.orientations.copy(), p.scales.copy()) for k, p in dv.poses.items()}
    gen = ec.course.generator.generation.numpy().copy()
    updates = dv.updates
    env.reset(env_ids=torch.tensor([1, 3], dtype=torch.int32))
    assert dv.updates == updates  # the reset itself touched no marker
    np.testing.assert_array_equal(np.flatnonzero(ec.course.generator.generation.numpy() != gen), [1, 3])
    env.sim.vis_marker_registry.dispatch_callbacks()  # what sim.render() does while a visualizer is active
    assert dv.updates == updates + 1
    for group, p in dv.poses.items():
        moved = [e for e in range(E) if any((a[e] != b[e]).any() for a, b in
                                            zip((p.translations, p.orientations, p.scales), before[group]))]
        assert moved == [1, 3], group
    T, _, _ = _expected_gates(ec.course, env.scene.env_origins.cpu().numpy())
    np.testing.assert_allclose(dv.poses["gates"].translations, T, atol=1e-5)
    np.testing.assert_array_equal(dv.update(), [])  # nothing regenerated since


def test_markers_reach_a_newton_viewer(env, dv):
    """With a Newton marker backend (what ``--visualizer newton`` stands up), the callback's arrays
    are what the viewer draws: one instance batch per group, env-major, hidden slots at scale 0."""
    import newton.viewer
    from isaaclab_newton.physics import NewtonManager
    from isaaclab_visualizers.newton.newton_visualization_markers import render_newton_visualization_markers

    for m in dv.markers.values():
        m._ensure_newton_backend()  # headless there is no visualizer to stand it up
    env.sim.vis_marker_registry.dispatch_callbacks()
    viewer = newton.viewer.ViewerNull()
    viewer.set_model(NewtonManager.get_model())
    viewer.set_world_offsets((0.0, 0.0, 0.0))  # Isaac Lab's Newton visualizer default (world_spacing)
    logged = {}
    log = viewer.log_instances

    def spy(name, mesh, xforms, scales, colors, materials, hidden=False):
        logged[name.rsplit("/", 1)[-1]] = (xforms.numpy(), scales.numpy(), hidden)
        return log(name, mesh, xforms, scales, colors, materials, hidden=hidden)

    viewer.log_instances = spy
    render_newton_visualization_markers(viewer, None, env.num_envs)
    assert sorted(logged) == ["gates", "line"]
    for group, (xf, sc, hidden) in logged.items():
        t, q, s = dv.poses[group].flat()
        assert not hidden
        np.testing.assert_allclose(xf[:, :3], t, atol=1e-5)
        np.testing.assert_allclose(xf[:, 3:], q, atol=1e-6)
        np.testing.assert_allclose(sc, s, atol=1e-6)


def test_update_refused_inside_graph_capture(dv):
    with pytest.raises(RuntimeError, match="outside graph capture"):
        with wp.ScopedCapture(device="cpu"):
            dv.update()


def test_toggle_at_run_time(env, dv):
    registry = env.sim.vis_marker_registry
    assert set_debug_vis(env, False) is dv
    assert not dv.enabled and dv._debug_vis_handle is None and registry._callbacks == {}
    assert not any(m.is_visible() for m in dv.markers.values())
    updates = dv.updates
    registry.dispatch_callbacks()
    assert dv.updates == updates
    assert set_debug_vis(env, True) is dv and dv._debug_vis_handle in registry._callbacks
    assert all(m.is_visible() for m in dv.markers.values())
    with pytest.raises(TypeError, match="debug_vis: expected True or False"):
        set_debug_vis(env, "on")


# -- pure functions on core courses (no env) ----------------------------------------------------
@pytest.mark.parametrize("localizer", [True, False])
def test_track_line_markers(localizer):
    cfg = TrackEnvCfg().course
    cfg.localizer = localizer
    course = build_course(cfg, 3, "cpu", seed=5)
    origins = np.array([[0.0, 0.0, 0.0], [30.0, -30.0, 0.0], [-30.0, 0.0, 1.0]], np.float32)
    if localizer:
        line = course.course_line.line
        pts, cnt = line.points.numpy(), line.count.numpy()
    else:
        assert course.course_line is None
        r = course.result
        pts = np.concatenate([r.xy.numpy(), r.z.numpy()[..., None]], -1)
        cnt = np.where(r.valid.numpy() != 0, pts.shape[1], 0)
    for K in (16, 100000):
        p = line_marker_poses(course, origins, max_points=K)
        T, S = _expected_line(pts, cnt, origins, K)
        np.testing.assert_allclose(p.translations, T, atol=1e-5)
        np.testing.assert_array_equal(p.scales, S)
        np.testing.assert_array_equal(p.orientations[..., 3], 1.0)
    with pytest.raises(TypeError, match="a gate course"):
        gate_marker_poses(course, origins)
    with pytest.raises(ValueError, match=r"origins: expected shape \(3, 3\)"):
        line_marker_poses(course, origins[:2])
    with pytest.raises(ValueError, match="max_points"):
        line_marker_poses(course, origins, max_points=0)


def test_invalid_gate_course_hides_its_markers():
    course = build_course(CourseCfg(generator=tg.GateGenConfig(gate_width=1.0, size=12.0)), 2, "cpu", seed=1)
    course.result.valid.assign(np.array([1, 0], np.int32))  # env 1's course counts as invalid
    origins = np.array([[1.0, 2.0, 0.0], [5.0, 6.0, 0.0]], np.float32)
    p = gate_marker_poses(course, origins)
    assert (p.scales[0] > 0).any() and (p.scales[1] == 0).all()
    np.testing.assert_array_equal(p.translations[1], np.broadcast_to(origins[1], p.translations[1].shape))
