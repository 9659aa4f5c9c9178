"""What racing needs between agents: :class:`AgentContacts` and :class:`Standings`.

Each kernel against a plain numpy (float64) reference on random inputs (hypothesis draws the
seeds), ties included; both recorded strictly and replayed against eager stepping with the inputs
mutated in place; the reset rows; K = 1; the dependency of Standings on Progress.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

import track_gen as tg
from track_gen.capture import caller
from track_gen.course import Course
from track_gen.pipeline import presets
from track_gen.tools import AgentContacts, Component, Standings
from track_gen.tools.collision import FAR

E = 16
RADIUS = 0.2
_COURSES: dict = {}


def course_of(agents: int, closed: bool = True) -> Course:
    """A gate course of ``agents`` agents per env with both components, built once per (K, closed)."""
    key = (agents, closed)
    if key not in _COURSES:
        c = Course.gates(presets.gates(E, "cpu", gate_width=1.0, closed=closed), seeds=2, agents=agents,
                         extra=[AgentContacts(RADIUS), Standings()])
        pos = wp.zeros(E * agents, dtype=wp.vec3f)
        c.bind(position=pos)
        _COURSES[key] = (c, pos)
    return _COURSES[key]


def along_line(course: Course, u: np.ndarray) -> np.ndarray:
    """[E*K, 3] points at fractional index ``u`` [E, K] of each env's course line (cyclic on a loop,
    clamped on a sprint): agents flying the course."""
    line = course.components["localizer"].line
    pts, n, closed = line.points.numpy(), line.count.numpy()[:, None], line.closed.numpy()[:, None]
    u = np.where(closed != 0, np.mod(u, n), np.clip(u, 0, n - 1))
    j = np.floor(u).astype(int)
    f = (u - j)[..., None]
    rows = np.arange(E)[:, None]
    a, b = pts[rows, j % n], pts[rows, (j + 1) % n]
    return (a + f * (b - a)).reshape(-1, 3).astype(np.float32)


# ==================================================================================================
# references (float64)
# ==================================================================================================
def ref_contacts(pos: np.ndarray, agents: int, radius: float):
    """(contact, distance, index) per agent: the nearest finite other agent of the env, lowest index on ties."""
    p = pos.astype(np.float64).reshape(E, agents, 3)
    ok = np.isfinite(p).all(axis=2)
    d = np.linalg.norm(p[:, :, None, :] - p[:, None, :, :], axis=3)
    d[~(ok[:, :, None] & ok[:, None, :])] = np.inf
    d[:, np.arange(agents), np.arange(agents)] = np.inf
    d[d >= FAR] = np.inf
    j = d.argmin(axis=2)  # the first minimum: the lowest index on a tie
    best = np.take_along_axis(d, j[..., None], axis=2)[..., 0]
    none = ~np.isfinite(best)
    index = np.where(none, -1, j + agents * np.arange(E)[:, None])
    distance = np.where(none, FAR, best)
    contact = (~none & (best <= 2.0 * radius)).astype(np.int32)
    second = np.sort(d, axis=2)[..., 1] if agents > 2 else np.full(best.shape, np.inf)
    return contact.reshape(-1), distance.reshape(-1), index.reshape(-1), best.reshape(-1), second.reshape(-1)


def ref_standings(laps, total, x, length, closed, agents: int):
    """(rank, gap) per agent: by (laps, total, x) descending, ties to the lower index."""
    rank = np.zeros(E * agents, np.int32)
    gap = np.zeros(E * agents)
    for e in range(E):
        rows = list(range(e * agents, (e + 1) * agents))
        order = sorted(rows, key=lambda a: (-int(laps[a]), -int(total[a]), -float(x[a]), a))
        lead = order[0]
        lap_len = float(length[e]) if closed[e] else 0.0
        for r, a in enumerate(order):
            rank[a] = r
            gap[a] = max(0.0, (int(laps[lead]) - int(laps[a])) * lap_len + (float(x[lead]) - float(x[a])))
    return rank, gap


# ==================================================================================================
# AgentContacts
# ==================================================================================================
def random_positions(rng, agents: int) -> np.ndarray:
    """Agents bunched within ~1 m of their env's spot (contacts happen), duplicates and NaN included."""
    centre = rng.uniform(-20.0, 20.0, size=(E, 1, 3))
    p = centre + rng.uniform(-0.6, 0.6, size=(E, agents, 3))
    if agents >= 3:
        p[1, 2] = p[1, 0]  # an exact tie for agent 1 of env 1 (both at the same distance)
        p[2, 1] = np.nan  # a non-finite agent: nobody's neighbour
    if agents >= 2:
        p[3, 1] = p[3, 0] + [2.0 * RADIUS, 0.0, 0.0]  # exactly touching
        p[4] = centre[4] + np.arange(agents)[:, None] * [2.0e6, 0.0, 0.0]  # beyond FAR: no neighbour
    return p.reshape(-1, 3).astype(np.float32)


@pytest.mark.parametrize("agents", [1, 2, 3, 5])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_agent_contacts_match_the_reference(agents, seed):
    course, pos = course_of(agents)
    p = random_positions(np.random.default_rng(seed), agents)
    pos.assign(p)
    res = course.step()["agent_contacts"]
    contact, distance, index, best, second = ref_contacts(p, agents, RADIUS)
    got_d = res.distance.numpy()
    np.testing.assert_allclose(got_d, distance, rtol=2e-6, atol=1e-6)
    # integer decisions: exact, except where float32 rounding could decide a near tie
    with np.errstate(invalid="ignore"):  # inf - inf where an agent has no neighbour
        firm = (second - best > 1e-5 * np.maximum(best, 1.0)) | (second == best) | ~np.isfinite(second)
    assert np.array_equal(res.index.numpy()[firm], index[firm])
    firm = np.abs(best - 2.0 * RADIUS) > 1e-5
    assert np.array_equal(res.contact.numpy()[firm], contact[firm])
    if agents == 1:
        assert (res.index.numpy() == -1).all() and (got_d == np.float32(FAR)).all() and not res.contact.numpy().any()


def test_agent_contacts_ties_touching_and_far_rows():
    course, pos = course_of(3)
    p = random_positions(np.random.default_rng(0), 3)
    pos.assign(p)
    res = course.step()["agent_contacts"]
    idx, dist, contact = res.index.numpy(), res.distance.numpy(), res.contact.numpy()
    assert idx[3 * 1 + 1] == 3 * 1 + 0  # agents 0 and 2 of env 1 coincide: the lower index wins
    assert idx[3 * 2 + 1] == -1 and dist[3 * 2 + 1] == np.float32(FAR) and idx[3 * 2 + 0] != 3 * 2 + 1
    assert (idx[3 * 4:3 * 5] == -1).all() and (dist[3 * 4:3 * 5] == np.float32(FAR)).all()
    assert contact[3 * 3 + 1] == 1 or abs(dist[3 * 3 + 1] - 2 * RADIUS) < 1e-6


def test_agent_contacts_radius_is_checked():
    with pytest.raises(ValueError, match="radius"):
        AgentContacts(0.0)
    with pytest.raises(TypeError, match="radius"):
        AgentContacts("0.2")


# ==================================================================================================
# Standings
# ==================================================================================================
def write_progress(course: Course, rng, agents: int) -> tuple:
    """Random laps / checkpoints passed / lap positions written into Progress, ties included."""
    prog = course.progress
    A = E * agents
    cps = prog.checkpoint_set
    laps = rng.integers(0, 3, size=A).astype(np.int32)
    total = (laps * 4 + rng.integers(0, 4, size=A)).astype(np.int32)
    x = rng.uniform(-1.0, 20.0, size=A).astype(np.float32)
    if agents >= 3:
        laps[3:6], total[3:6], x[3:6] = laps[3], total[3], x[3]  # env 1: a three-way tie
        x[7] = x[6]  # env 2: laps / totals may differ, positions equal
    length = rng.uniform(5.0, 60.0, size=E).astype(np.float32)
    closed = rng.integers(0, 2, size=E).astype(np.int32)
    prog.result.laps.assign(laps)
    prog.result.total.assign(total)
    prog.lap_position.assign(x)
    cps.length.assign(length)
    cps.closed.assign(closed)
    return laps, total, x, length, closed


@pytest.mark.parametrize("agents", [1, 2, 3, 6])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_standings_match_the_reference(agents, seed):
    course, _ = course_of(agents)
    laps, total, x, length, closed = write_progress(course, np.random.default_rng(seed), agents)
    comp = course.components["standings"]
    comp.step(course.context)  # the kernel alone, on the written Progress state
    rank, gap = ref_standings(laps, total, x, length, closed, agents)
    assert np.array_equal(comp.result.rank.numpy(), rank)
    np.testing.assert_allclose(comp.result.gap.numpy(), gap, rtol=1e-6, atol=1e-5)
    assert (comp.result.gap.numpy() >= 0).all()
    assert (np.sort(rank.reshape(E, agents), axis=1) == np.arange(agents)).all()
    course.regenerate()  # the checkpoint arrays written above are the course's: make them whole again


def test_standings_follow_a_real_race():
    """On Progress's own state after each step of flown agents (loops and a sprint)."""
    for closed in (True, False):
        course, pos = course_of(3, closed)
        course.regenerate()
        course.reset()
        rng = np.random.default_rng(3)
        speed = rng.uniform(0.5, 1.5, size=(E, 3))
        for t in range(24):
            pos.assign(along_line(course, speed * t - 0.5))  # from just before the line's first point
            res = course.step()
            prog = course.progress
            cps = prog.checkpoint_set
            rank, gap = ref_standings(prog.laps.numpy(), prog.total.numpy(), prog.lap_position.numpy(),
                                      cps.length.numpy(), cps.closed.numpy(), 3)
            assert np.array_equal(res["standings"].rank.numpy(), rank), t
            np.testing.assert_allclose(res["standings"].gap.numpy(), gap, rtol=1e-6, atol=1e-5)
        assert prog.total.numpy().max() >= 2 and res["standings"].gap.numpy().max() > 0  # a race, not a parade


def test_standings_needs_a_progress_component():
    gen = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=1)
    with pytest.raises(ValueError, match="'standings' requires component 'progress', which this course does not have"):
        Course(gen, [Standings()], agents=2)

    class NotProgress(Component):
        name = "acme.progress"

    with pytest.raises(TypeError, match="'acme.progress' must be a tools.Progress"):
        Course(gen, [NotProgress(), Standings(progress="acme.progress")])
    with pytest.raises(ValueError, match="which runs after it"):
        Course.gates(presets.gates(E, "cpu", gate_width=1.0), extra=[Standings(progress="p2"),
                                                                      tg.tools.Progress(name="p2")])


# ==================================================================================================
# reset rows, capture
# ==================================================================================================
def test_reset_rows_and_one_agent():
    course, pos = course_of(3)
    pos.assign(random_positions(np.random.default_rng(5), 3))
    write_progress(course, np.random.default_rng(5), 3)
    course.components["standings"].step(course.context)
    course.components["agent_contacts"].step(course.context)
    mask = np.zeros(E, np.int32)
    mask[[0, 7]] = 1
    before = {n: {f: getattr(course.components[n].result, f).numpy().copy() for f in fs}
              for n, fs in (("standings", ("rank", "gap")), ("agent_contacts", ("contact", "distance", "index")))}
    course.reset(wp.array(mask, dtype=wp.int32))
    hit = np.repeat(mask != 0, 3)
    st_, ac = course.components["standings"].result, course.components["agent_contacts"].result
    assert (st_.rank.numpy()[hit] == np.tile(np.arange(3), 2)).all() and (st_.gap.numpy()[hit] == 0).all()
    assert (ac.index.numpy()[hit] == -1).all() and (ac.distance.numpy()[hit] == np.float32(FAR)).all()
    assert not ac.contact.numpy()[hit].any()
    for n, fields in before.items():
        for f, v in fields.items():
            assert getattr(course.components[n].result, f).numpy()[~hit].tobytes() == v[~hit].tobytes(), (n, f)
    course.regenerate()
    one, _ = course_of(1)
    res = one.step()
    assert not res["standings"].rank.numpy().any() and not res["standings"].gap.numpy().any()


def test_recorded_strictly_replay_equals_eager():
    """Both components in a graph of course.step(): poses mutated in place, replay == eager twin."""
    def build():
        c = Course.gates(presets.gates(E, "cpu", gate_width=1.0), seeds=6, agents=4,
                         extra=[AgentContacts(0.3), Standings()])
        p = wp.zeros(4 * E, dtype=wp.vec3f)
        c.bind(position=p)
        return c, p

    (eager, pe), (recorded, pr) = build(), build()
    replay = caller(recorded.step, device="cpu")
    rng = np.random.default_rng(8)
    speed = rng.uniform(0.3, 1.2, size=(E, 4))
    for t in range(16):
        p = along_line(eager, speed * t - 0.5) + rng.normal(0.0, 0.2, size=(4 * E, 3)).astype(np.float32)
        pe.assign(p)
        pr.assign(p)
        a = eager.step()
        replay()
        b = recorded.step_result
        for name in ("agent_contacts", "standings", "progress"):
            for f, arr in vars(a[name]).items():
                assert arr.numpy().tobytes() == getattr(b[name], f).numpy().tobytes(), (t, name, f)
    assert a["agent_contacts"].contact.numpy().any() and a["standings"].gap.numpy().any()
    assert a.clone()["standings"].rank.numpy().tobytes() == a["standings"].rank.numpy().tobytes()
