"""``mdp.band_ahead`` (the car's view of the band ahead) against a float64 numpy reference, in both runtimes:
the edge points in the car frame and the course line's curvature at each distance, or (``peak=True``) the
curvature of largest magnitude over the stretch since the previous distance (real kitless car env, CPU)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

TASK = "TrackGen-Car-Track-v0"
DIST = (0.5, 1.0, 2.0, 3.5, 6.0, 10.0, 15.0, 25.0)
STATE = 10  # car_state (6) + track_frame (4) come first in the policy group


def _rotate_inv(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by the inverse of the unit quaternion ``q`` = (x, y, z, w)."""
    x, y, z, w = q
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    return r.T @ v


def band_ahead_reference(pos, quat, fs, seg, xy, normal, hw, curv, line_s, length, valid, distances, peak):
    """[E, 5 D] float64: per distance, left edge (x, y), right edge (x, y) in the car frame and the curvature."""
    E, n = xy.shape[:2]
    out = np.zeros((E, 5 * len(distances)))
    for e in range(E):
        L = float(length[e])
        if not valid[e] or not 0 <= seg[e] < n or L <= 0:
            continue
        ends = np.append(line_s[e, 1:], L).astype(np.float64)

        def at(target, e=e, ends=ends):
            j = int(np.flatnonzero((line_s[e] <= target) & (target <= ends))[0])
            s0, s1 = float(line_s[e, j]), float(ends[j])
            t = np.clip((target - s0) / (s1 - s0), 0.0, 1.0) if s1 > s0 else 0.0
            return j, t

        def lerp(a, j, t, e=e):
            return a[e, j] * (1 - t) + a[e, (j + 1) % n] * t

        prev = float(fs[e])
        for i, d in enumerate(distances):
            target = (float(fs[e]) + d) % L
            j, t = at(target)
            c = lerp(xy.astype(np.float64), j, t)
            nm = lerp(normal.astype(np.float64), j, t)
            nm = nm / np.linalg.norm(nm)
            w = lerp(hw.astype(np.float64), j, t)
            for k, side in enumerate((1.0, -1.0)):
                edge = np.array([c[0] + side * w * nm[0], c[1] + side * w * nm[1], pos[e, 2]]) - pos[e]
                out[e, 5 * i + 2 * k: 5 * i + 2 * k + 2] = _rotate_inv(quat[e], edge)[:2]
            k_end = lerp(curv.astype(np.float64), j, t)
            if peak:  # the stretch (prev, target], cyclic: its two ends and every line point inside
                jp, tp = at(prev)
                inside = (line_s[e] - prev) % L <= (target - prev) % L
                inside &= (line_s[e] - prev) % L > 0
                cands = np.concatenate([[lerp(curv.astype(np.float64), jp, tp), k_end], curv[e, inside]])
                k_end_out = cands[np.abs(cands).argmax()]
            else:
                k_end_out = k_end
            out[e, 5 * i + 4] = k_end_out
            prev = target
    return out


@pytest.mark.parametrize("task", [TASK, "TrackGen-Car-Track-Warp-v0"])
@pytest.mark.parametrize("peak", [False, True])
def test_band_ahead_matches_the_numpy_reference(task, peak):
    """8 envs driven at random for 60 steps (resets included): the band seen at 0.5-25 m ahead equals the
    float64 reference (edges to 1e-4 m, curvature to 1e-4 1/m relative); with ``peak`` the curvature is
    never below the point value in magnitude and exceeds it somewhere (the reference would fail on the
    point values)."""
    import gymnasium as gym
    from isaaclab.managers import ObservationTermCfg
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401
    from track_gen_isaac import mdp
    from track_gen_isaac.env_course import get_course

    E = 8
    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    cfg.scene.num_envs, cfg.sim.device, cfg.seed = E, "cpu", 7
    cfg.observations.policy.band = ObservationTermCfg(func=mdp.band_ahead, params={"distances": DIST, "peak": peak})
    env = gym.make(task, cfg=cfg)
    try:
        base = env.unwrapped
        env.reset()
        ec = get_course(base)
        robot = base.scene["robot"]
        gen = torch.Generator().manual_seed(2)
        sharper = 0
        for _ in range(60):
            obs, *_ = env.step(torch.rand(E, 2, generator=gen) * torch.tensor([2.0, 1.2]) - torch.tensor([1.0, 0.2]))
            got = obs["policy"][:, STATE:].numpy().astype(np.float64)
            r, f = ec.course.result, ec.result.frame
            pos = (robot.data.root_pos_w.torch - base.scene.env_origins).numpy().astype(np.float64)
            args = [a.numpy() for a in (f.s, f.segment, r.xy, r.normal, r.half_width, r.curvature, r.s, r.length,
                                        r.valid)]
            quat = robot.data.root_quat_w.torch.numpy().astype(np.float64)
            ref = band_ahead_reference(pos, quat, *args, DIST, peak)
            edges = np.ones(5 * len(DIST), bool)
            edges[4::5] = False
            np.testing.assert_allclose(got[:, edges], ref[:, edges], atol=1e-4)
            np.testing.assert_allclose(got[:, ~edges], ref[:, ~edges], rtol=1e-4, atol=1e-5)
            point = band_ahead_reference(pos, quat, *args, DIST, False)[:, ~edges]
            if peak:
                assert (np.abs(got[:, ~edges]) >= np.abs(point) - 1e-5).all()
                sharper += int((np.abs(got[:, ~edges]) > np.abs(point) + 1e-3).sum())
        assert sharper > 0 or not peak
    finally:
        env.close()


def test_a_bad_peak_is_refused():
    import gymnasium as gym
    from isaaclab.managers import ObservationTermCfg
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401
    from track_gen_isaac import mdp

    cfg = load_cfg_from_registry(TASK, "env_cfg_entry_point")
    cfg.scene.num_envs, cfg.sim.device = 2, "cpu"
    cfg.observations.policy.band = ObservationTermCfg(func=mdp.band_ahead, params={"distances": DIST, "peak": 1})
    with pytest.raises(TypeError, match="band_ahead: peak must be a bool, got 1"):
        env = gym.make(TASK, cfg=cfg)
        env.close()
