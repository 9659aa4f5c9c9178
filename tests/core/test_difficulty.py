"""Harder courses (issue 14): the difficulty knob, the shapes, pole obstacles.

Every course the generators call valid is checked against the independent float64 numpy
reference (``reference.py`` for the gate rules incl. STACK / CLIMB / CROSSING, ``reference_courses.py``
for the obstacle clearances and the shape metrics), at the per-env values the difficulty maps to.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.generators.gates.column import column_status
from track_gen.pipeline import presets

from .reference import gate_violations, track_violations
from .reference_courses import column_violations, elevation_range, has_split_s, obstacle_violations, self_crossing

TOL = 1e-4
OBS = dict(max_obstacles=4)


def gates(E, d=0.0, seeds=1, **kw):
    return tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0, difficulty=d, **{**OBS, **kw}), seeds=seeds)


def lerp(a, b, d):
    return a + (b - a) * d


def gate_kwargs(g, e, d):
    p = g.params
    r = g.result
    return dict(
        closed=bool(p["gates.closed"]), size=lerp(p["gates.size"], p["gates.hard_size"], d),
        min_spacing=lerp(p["gates.min_spacing"], p["gates.hard_min_spacing"], d),
        max_spacing=lerp(p["gates.max_spacing"], p["gates.hard_max_spacing"], d),
        max_turn=lerp(p["gates.max_turn"], p["gates.hard_max_turn"], d),
        max_climb=lerp(p["gates.max_climb"], p["gates.hard_max_climb"], d),
        crossing_clearance=p["gates.crossing_clearance"], gate_width=float(r.width.numpy()[e]),
        gate_height=p["gate_frames.gate_height"], thickness=float(r.thickness.numpy()[e]),
    )


def check_courses(g) -> np.ndarray:
    """Valid courses satisfy every rule (lenient reference), rejected ones break one (strict);
    the obstacles of valid courses keep every clearance. Returns the valid mask."""
    r, p = g.result, g.params
    pos, yaw, cnt, stk = r.pos.numpy(), r.yaw.numpy(), r.count.numpy(), r.stacked.numpy()
    valid, status, dd = r.valid.numpy() == 1, r.status.numpy(), r.difficulty.numpy().astype(np.float64)
    assert np.array_equal(valid, status == 0)
    has_obs = "obstacles.count" in g.outputs()
    problems = []
    for e in range(g.num_envs):
        kw = gate_kwargs(g, e, dd[e])
        lenient = gate_violations(pos[e], yaw[e], cnt[e], stacked=stk[e], **kw, tol=TOL)
        obstacle_bit = bool(status[e] & int(tg.GateStatus.OBSTACLE))
        col = dict(closed=kw["closed"], start_pos=r.start_pos.numpy()[e], start_yaw=r.start_yaw.numpy()[e],
                   gate_width=kw["gate_width"], gate_height=kw["gate_height"], thickness=kw["thickness"])
        if valid[e]:
            if lenient:
                problems.append(f"env {e}: valid but {lenient}")
            if column_violations(pos[e], yaw[e], cnt[e], stk[e], **col, tol=TOL):
                problems.append(f"env {e}: valid but a leg flies through a split-S column")
            if has_obs:
                ov = obstacle_violations(
                    r.obstacle_pos.numpy()[e], r.obstacle_radius.numpy()[e], r.obstacle_height.numpy()[e],
                    r.obstacle_count.numpy()[e], pos[e], yaw[e], cnt[e], closed=kw["closed"],
                    start_pos=r.start_pos.numpy()[e], start_yaw=r.start_yaw.numpy()[e], arena=r.arena.numpy()[e],
                    gate_width=kw["gate_width"], thickness=kw["thickness"], clearance=p["obstacles.clearance"],
                    radius_range=(p["obstacles.radius_min"], p["obstacles.radius_max"]),
                    height_range=(p["obstacles.height_min"], p["obstacles.height_max"]), tol=TOL)
                if ov:
                    problems.append(f"env {e}: valid but obstacles {ov}")
        elif status[e] == int(tg.GateStatus.COLUMN):  # conservative by the pieces' bound (< 0.1 m here)
            if not column_violations(pos[e], yaw[e], cnt[e], stk[e], **col, tol=-0.1):
                problems.append(f"env {e}: COLUMN, but no leg comes near a split-S column")
        elif not obstacle_bit:
            strict = gate_violations(pos[e], yaw[e], cnt[e], stacked=stk[e], **kw, tol=-TOL)
            if not strict:
                problems.append(f"env {e}: rejected (status {status[e]}) but the reference finds nothing")
    assert not problems, f"{len(problems)} envs disagree:\n" + "\n".join(problems[:8])
    return valid


# ---------------------------------------------------------------------------------------------
# the reference on hand-made courses
def test_reference_new_gate_rules():
    base = dict(closed=True, size=20.0, min_spacing=1.0, max_spacing=10.0, max_turn=1.7, gate_width=1.0,
                gate_height=0.0, thickness=0.05)
    # a bow tie: legs 0->1 and 2->3 cross at the origin
    pos = np.array([[-2, -2, 1.0], [2, 2, 1.0], [2, -2, 3.0], [-2, 2, 3.0]])
    yaw = np.arctan2(np.roll(pos, -1, 0)[:, 1] - pos[:, 1], np.roll(pos, -1, 0)[:, 0] - pos[:, 0])
    got = gate_violations(pos, yaw, 4, **{**base, "max_turn": 3.1}, crossing_clearance=1.5)
    assert "CROSSING" not in got  # heights 1 and 3 where they cross: 2 m apart
    assert "CROSSING" in gate_violations(pos, yaw, 4, **{**base, "max_turn": 3.1}, crossing_clearance=2.5)
    assert self_crossing(pos, 4, True) and not self_crossing(pos[[0, 2, 1, 3]], 4, True)
    # climb: a 2 m rise over a 2 m leg is 45 degrees
    pos = np.array([[0, 0, 1.0], [2, 0, 3.0], [4, 0, 3.0]])
    yaw = np.zeros(3)
    kw = {**base, "closed": False}
    assert "CLIMB" not in gate_violations(pos, yaw, 3, **kw, max_climb=0.8)
    assert "CLIMB" in gate_violations(pos, yaw, 3, **kw, max_climb=0.7)
    # a split-S: gates 1 and 2 stacked, passed in opposite directions
    pos = np.array([[0, 0, 3.0], [3, 0, 3.0], [3, 0, 1.5], [0, 0.5, 1.5]])
    yaw = np.array([0.0, 0.0, np.pi, np.pi])
    stacked = np.array([0, 1, 0, 0])
    assert gate_violations(pos, yaw, 4, **kw, stacked=stacked) == set()
    assert has_split_s(pos, yaw, 4, False, 1.1)
    assert "TURN" in gate_violations(pos, yaw, 4, **kw)  # unflagged, the vertical leg breaks TURN
    low = pos.copy()
    low[2, 2] = 2.5  # frames 1.1 m tall, 0.5 m apart
    assert "STACK" in gate_violations(low, yaw, 4, **kw, stacked=stacked)
    twisted = yaw.copy()
    twisted[2] = 0.0
    assert "STACK" in gate_violations(pos, twisted, 4, **kw, stacked=stacked)


def test_reference_obstacles():
    pos = np.array([[-3, 0, 1.0], [0, 3, 1.0], [3, 0, 1.0], [0, -3, 1.0]])
    yaw = np.array([np.pi / 2, 0.0, -np.pi / 2, np.pi])
    kw = dict(closed=True, start_pos=np.array([-3.0, -1.0, 1.0]), start_yaw=np.pi / 2, arena=10.0, gate_width=1.0,
              thickness=0.05, clearance=0.4, radius_range=(0.05, 0.15), height_range=(1.5, 4.0))
    ok = np.array([[0.0, 0.0, 0.0], [0, 0, 0]])
    assert obstacle_violations(ok, [0.1, 0], [2.0, 0], 1, pos, yaw, 4, **kw) == set()
    for bad in ([-3.0, 0.3, 0.0],   # in a gate frame
                [-2.12, 2.12, 0.0],  # on the course line (the arc from gate 0 to gate 1)
                [4.95, 0.0, 0.0]):   # outside the arena
        assert obstacle_violations(np.array([bad, [0, 0, 0]]), [0.1, 0], [2.0, 0], 1, pos, yaw, 4, **kw) == \
            {"OBSTACLE"}, bad
    two = np.array([[0.0, 0.0, 0.0], [0.15, 0.0, 0.0]])
    assert obstacle_violations(two, [0.1, 0.1], [2.0, 2.0], 2, pos, yaw, 4, **kw) == {"OBSTACLE"}
    assert obstacle_violations(ok, [0.1, 0.1], [2.0, 0], 1, pos, yaw, 4, **kw) == {"PADDING"}


def test_reference_split_s_column():
    # gates 1 and 2 stacked at (3, 0) (frames 1.1 m tall, heights 1.5 and 3.5): the column spans
    # 0.95 ... 4.05 m; leg 3 -> 4 crosses x = 3 along y = 0 at the height of its gates
    yaw = np.array([0.0, 0.0, np.pi, 0.5 * np.pi, -0.5 * np.pi])
    stacked = np.array([0, 1, 0, 0, 0])
    kw = dict(closed=True, start_pos=np.zeros(3), start_yaw=0.0, gate_width=1.0, gate_height=0.0, thickness=0.05)

    def course(z_cross):
        return np.array([[0, 0, 3.5], [3, 0, 3.5], [3, 0, 1.5], [3, -2.5, z_cross], [3, 2.5, z_cross]], np.float64)

    assert column_violations(course(2.5), yaw, 5, stacked, **kw) == {"COLUMN"}     # between the frames
    assert column_violations(course(4.0), yaw, 5, stacked, **kw) == {"COLUMN"}     # through the top frame
    assert column_violations(course(4.2), yaw, 5, stacked, **kw) == set()          # over the column
    assert column_violations(course(2.5), yaw, 5, np.zeros(5, int), **kw) == set()  # no split-S
    side = course(2.5)
    side[3:, 0] = 3.6  # beside the footprint (it reaches 0.025 m along the gate normal)
    assert column_violations(side, yaw, 5, stacked, **kw) == set()


@wp.kernel
def _column_kernel(pos: wp.array2d(dtype=wp.vec3f), yaw: wp.array2d(dtype=wp.float32),
                   stacked: wp.array2d(dtype=wp.int32), count: int, closed: int, start: wp.array(dtype=wp.vec3f),
                   start_yaw: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    out[e] = column_status(pos, yaw, stacked, e, count, closed, start[e], start_yaw[e], 0.55, 0.025, 0.55)


@pytest.mark.parametrize("closed", [True, False])
def test_column_rule_against_the_reference_on_random_courses(closed):
    """The kernel's COLUMN test never misses a leg through a column (exact reference), and flags
    only legs that come within the pieces' bound of one: the footprint grown by 0.12 m (14 L / 2048
    for legs up to ~ 9 m long, box corners included) and the column by 0.5 m (a piece's height
    range: up to 1.5 |dz| / 16 for climbs up to 4.5 m)."""
    rng = np.random.default_rng(3 if closed else 4)
    E, n = 1500, 6
    pos = np.zeros((E, n, 3), np.float32)
    pos[:, :, :2] = rng.uniform(-3.0, 3.0, (E, n, 2))
    pos[:, :, 2] = rng.uniform(0.5, 5.0, (E, n))
    yaw = rng.uniform(-np.pi, np.pi, (E, n)).astype(np.float32)
    g = 2  # gates 2 and 3 stacked: same xy, opposite headings, 2 m apart
    pos[:, g + 1, :2] = pos[:, g, :2]
    pos[:, g, 2] = rng.uniform(1.0, 2.0, E)
    pos[:, g + 1, 2] = pos[:, g, 2] + 2.0
    yaw[:, g + 1] = np.where(yaw[:, g] > 0, yaw[:, g] - np.pi, yaw[:, g] + np.pi)
    stacked = np.zeros((E, n), np.int32)
    stacked[:, g] = 1
    start = np.c_[rng.uniform(-3.0, 3.0, (E, 2)), rng.uniform(0.5, 5.0, E)].astype(np.float32)
    start_yaw = rng.uniform(-np.pi, np.pi, E).astype(np.float32)
    out = wp.zeros(E, dtype=wp.int32)
    wp.launch(_column_kernel, dim=E, device="cpu",
              inputs=[wp.array(pos, dtype=wp.vec3f), wp.array(yaw), wp.array(stacked), n, int(closed),
                      wp.array(start, dtype=wp.vec3f), wp.array(start_yaw)], outputs=[out])
    got = out.numpy() == int(tg.GateStatus.COLUMN)
    kw = dict(closed=closed, gate_width=1.0, gate_height=0.0, thickness=0.05)
    exact = np.array([bool(column_violations(pos[e], yaw[e], n, stacked[e], start_pos=start[e], start_yaw=start_yaw[e],
                                             **kw)) for e in range(E)])
    grown = np.array([bool(column_violations(pos[e], yaw[e], n, stacked[e], start_pos=start[e], start_yaw=start_yaw[e],
                                             **kw, tol=-0.12, ztol=-0.5)) for e in range(E)])
    assert not (exact & ~got).any(), np.flatnonzero(exact & ~got)[:5]   # never misses
    assert not (got & ~grown).any(), np.flatnonzero(got & ~grown)[:5]   # conservative by the bound only
    print(f"\nclosed={closed}: exact {exact.sum()}, flagged {got.sum()} of {E}")
    assert exact.sum() >= 50 and got.sum() <= exact.sum() * 1.5, (exact.sum(), got.sum())


@pytest.mark.parametrize("closed", [True, False])
def test_no_leg_through_a_split_s_column_on_4096_courses(closed):
    g = gates(4096, 1.0, seeds=13, closed=closed, max_obstacles=0)
    r = g.result
    pos, yaw, cnt, stk, v = r.pos.numpy(), r.yaw.numpy(), r.count.numpy(), r.stacked.numpy(), r.valid.numpy() == 1
    sp, sy, th = r.start_pos.numpy(), r.start_yaw.numpy(), r.thickness.numpy()
    split = np.flatnonzero(v & stk.any(axis=1))
    assert v.mean() >= 0.99 and len(split) >= 1000
    bad = [e for e in split if column_violations(pos[e], yaw[e], cnt[e], stk[e], closed=closed, start_pos=sp[e],
                                                 start_yaw=sy[e], gate_width=1.0, gate_height=0.0,
                                                 thickness=float(th[e]))]
    assert not bad, bad[:8]


# ---------------------------------------------------------------------------------------------
# gate courses at difficulty 0, 0.5, 1
@pytest.mark.parametrize("closed", [True, False])
@pytest.mark.parametrize("d", [0.0, 0.5, 1.0])
def test_gate_courses_against_the_reference(d, closed):
    g = gates(384, d, seeds=7, closed=closed)
    g.enqueue(advance=True)
    valid = check_courses(g)
    assert valid.mean() >= 0.99
    assert np.allclose(g.result.difficulty.numpy(), d)


def test_difficulty_one_shapes():
    E = 1024
    g = gates(E, 1.0, seeds=3)
    r = g.result
    v, shape, cnt = r.valid.numpy() == 1, r.shape.numpy(), r.count.numpy()
    pos, yaw, stk = r.pos.numpy(), r.yaw.numpy(), r.stacked.numpy()
    assert v.mean() >= 0.99
    cross = np.array([self_crossing(pos[e], cnt[e], True) for e in range(E)]) & v
    elev = np.array([elevation_range(pos[e], cnt[e]) >= 3.0 for e in range(E)]) & v
    split = np.array([has_split_s(pos[e], yaw[e], cnt[e], True, 1.1) for e in range(E)]) & v
    obst = (r.obstacle_count.numpy() > 0) & v
    assert cross.mean() >= 0.25 and elev.mean() >= 0.5 and split.mean() >= 0.25 and obst.mean() >= 0.5, (
        cross.mean(), elev.mean(), split.mean(), obst.mean())
    # per shape: every figure-8 crosses itself (mostly), every split-S course has its stacked pair
    f8 = (shape == 1) & v
    assert cross[f8].mean() >= 0.9
    assert np.array_equal(split[shape == 3], v[shape == 3])
    assert np.array_equal(stk.any(axis=1), (shape == 3) & v | (stk.any(axis=1) & ~v))
    # hairpin shapes reverse their heading between two consecutive gates (>= 120 degrees) more often
    turn = np.abs((np.diff(np.concatenate([yaw, yaw[:, :1]], 1), axis=1) + np.pi) % (2 * np.pi) - np.pi)
    rev = np.array([(turn[e, : cnt[e]] >= 2.1).any() for e in range(E)])
    assert rev[(shape == 2) & v].mean() > rev[(shape == 0) & v].mean()
    assert set(np.unique(shape)) == {0, 1, 2, 3}


def test_difficulty_zero_is_the_default_course():
    a = tg.GateGenerator(presets.gates(128, "cpu", gate_width=1.0), seeds=4)
    b = gates(128, 0.0, seeds=4)
    for n in ("pos", "yaw", "count", "status", "start_pos", "length"):
        assert np.array_equal(getattr(a.result, n).numpy(), getattr(b.result, n).numpy()), n
    assert (b.result.obstacle_count.numpy() == 0).all() and (b.result.shape.numpy() == 0).all()
    assert a.result.obstacle_pos.shape == (128, 0)  # no obstacle stage: K = 0


# ---------------------------------------------------------------------------------------------
# contracts: determinism, masks, capture, the dynamic knob
def _rows(g):
    r = g.result
    return {n: getattr(r, n).numpy().copy() for n in ("pos", "yaw", "stacked", "count", "status", "shape",
                                                      "obstacle_pos", "obstacle_radius", "obstacle_count")}


def test_masked_regeneration_and_batch_independence():
    E = 48
    full, masked = gates(E, 1.0, seeds=9), gates(E, 1.0, seeds=9)
    before = _rows(masked)
    m = np.zeros(E, np.int32)
    m[::3] = 1
    full.enqueue(advance=True)
    masked.enqueue(advance=True, mask=wp.array(m, dtype=wp.int32))
    a, b = _rows(full), _rows(masked)
    for n in a:
        assert np.array_equal(b[n][m == 1], a[n][m == 1]), n
        assert np.array_equal(b[n][m == 0], before[n][m == 0]), n
    masked.enqueue(advance=True, mask=wp.zeros(E, dtype=wp.int32))
    c = _rows(masked)
    assert all(np.array_equal(c[n], b[n]) for n in b)
    small = gates(16, 1.0, seeds=9)
    s, f = _rows(small), _rows(gates(E, 1.0, seeds=9))
    assert all(np.array_equal(s[n], f[n][:16]) for n in s)


def test_graph_replay_equals_eager_and_difficulty_needs_no_rerecord():
    E = 32
    eager, graph = gates(E, 0.0, seeds=5), gates(E, 0.0, seeds=5)
    with wp.ScopedCapture(device="cpu") as cap:
        graph.enqueue(advance=True)
    for level in (0.0, 1.0, 0.5):
        for g in (eager, graph):
            g.params["gates.difficulty"] = level
        eager.enqueue(advance=True)
        wp.capture_launch(cap.graph)
        a, b = _rows(eager), _rows(graph)
        assert all(a[n].tobytes() == b[n].tobytes() for n in a)
        assert np.allclose(graph.result.difficulty.numpy(), level)
    # per env, through the offset input (a curriculum's levels), same graph
    levels = np.linspace(0.0, 1.0, E).astype(np.float32)
    for g in (eager, graph):
        g.params["gates.difficulty"] = 0.0
        g.inputs["gates.difficulty_offset"].assign(levels)
    eager.enqueue(advance=True)
    wp.capture_launch(cap.graph)
    assert np.allclose(graph.result.difficulty.numpy(), levels)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(_rows(eager).values(), _rows(graph).values()))
    assert graph.result.shape.numpy()[0] == 0 and (graph.result.shape.numpy() > 0).any()


def test_randomized_difficulty_per_env():
    g = tg.GateGenerator(presets.gates(64, "cpu", gate_width=1.0, max_obstacles=4)
                         .with_randomize({"gates.difficulty": (0.0, 1.0)}), seeds=2)
    d = g.result.difficulty.numpy()
    assert d.min() < 0.2 and d.max() > 0.8
    check_courses(g)


def test_nonfinite_offset_is_nonfinite():
    g = gates(4, 0.0)
    g.inputs["gates.difficulty_offset"].assign(np.array([0, np.nan, np.inf, 0.2], np.float32))
    g.enqueue()
    st = g.result.status.numpy()
    assert [bool(s & int(tg.GateStatus.NONFINITE)) for s in st] == [False, True, True, False]


# ---------------------------------------------------------------------------------------------
# ranges that cannot hold together: refused, naming the fields
@pytest.mark.parametrize("kw, names", [
    (dict(figure8_share=0.6, split_s_share=0.6), ["figure8_share", "split_s_share"]),
    (dict(obstacle_clearance=6.0), ["obstacles.clearance", "gates.size"]),
    (dict(hard_obstacle_count_max=9), ["hard_count_max", "max_obstacles"]),
    (dict(hard_min_spacing=5.0, hard_max_spacing=4.0), ["hard_min_spacing", "hard_max_spacing"]),
    (dict(hard_max_spacing=1.5), ["split_s_share", "hard_max_spacing"]),
    (dict(d=1.5), ["difficulty"]),
    (dict(obstacle_radius_min=0.3, obstacle_radius_max=0.2), ["radius_min", "radius_max"]),
])
def test_contradictory_ranges_are_refused(kw, names):
    with pytest.raises(ValueError) as err:
        gates(4, **kw)
    assert all(n in str(err.value) for n in names), str(err.value)


def test_refused_param_sets_change_nothing():
    g = gates(4, 0.5)
    with pytest.raises(ValueError, match="figure8_share"):
        g.params["gates.figure8_share"] = 0.9
    assert g.params["gates.figure8_share"] == 0.35
    with pytest.raises(ValueError, match="obstacles.clearance"):
        g.params["obstacles.clearance"] = 7.0


# ---------------------------------------------------------------------------------------------
# band tracks
def _star_about_centroid(xy):
    c = xy.mean(0)
    a = np.unwrap(np.arctan2(xy[:, 1] - c[1], xy[:, 0] - c[0]))
    da = np.diff(np.append(a, a[0] + np.sign(a[-1] - a[0]) * 2 * np.pi))
    return bool(np.all(da > 0) or np.all(da < 0))


@pytest.mark.parametrize("d", [0.5, 1.0])
def test_hairpin_tracks(d):
    E = 256
    g = tg.TrackGenerator(presets.track(E, "cpu", difficulty=d), seeds=6)
    r = g.result
    v, shape, xy, hw = r.valid.numpy() == 1, r.shape.numpy(), r.xy.numpy(), r.half_width.numpy()
    assert v.mean() >= 0.99
    kw = dict(size=10.0, min_turn_radius=0.5, clearance=0.1, min_length=10.0, max_length=40.0)
    for e in np.flatnonzero(v):
        assert not track_violations(xy[e], hw[e], **kw, rel_tol=TOL), e  # band overlap rule included
    hp = (shape == 2) & v
    assert hp.mean() >= 0.5 * d * 0.7
    nonstar = np.array([not _star_about_centroid(xy[e].astype(np.float64)) for e in np.flatnonzero(hp)])
    assert nonstar.mean() >= (0.9 if d == 1.0 else 0.3)


def test_track_difficulty_zero_is_the_default_and_dynamic():
    a = tg.TrackGenerator(presets.track(64, "cpu"), seeds=4)
    b = tg.TrackGenerator(presets.track(64, "cpu", difficulty=0.0), seeds=4)
    assert np.array_equal(a.result.xy.numpy(), b.result.xy.numpy())
    with wp.ScopedCapture(device="cpu") as cap:
        b.enqueue(advance=False)
    b.params["centerline.difficulty"] = 1.0
    wp.capture_launch(cap.graph)
    assert (b.result.shape.numpy() == 2).mean() > 0.4
    assert np.allclose(b.result.difficulty.numpy(), 1.0)
    pts = tg.TrackGenerator(presets.track_from_points(2, "cpu", control_points=6), seeds=0)
    assert "centerline.difficulty" not in pts.params
