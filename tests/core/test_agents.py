"""K agents per course: ``Course(..., agents=K)``.

The main check: agent k of a K-agent course gets, bit for bit, what a one-agent course (same
generator, same seeds) gets when it is flown with agent k's poses, for every built-in per-step
component (Progress, Localizer global and warm, BandCollision segments and sdf, DiscCollision,
FrameCollision, ObstacleCollision, DepthCamera image, ring and grid), through resets, a per-agent
``start_at`` and a masked regeneration, eagerly and replayed from a strictly recorded CPU graph.
The rest: shapes, the bind errors, masks, the multi-agent declaration, the argument checks.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import track_gen as tg
from track_gen.capture import caller
from track_gen.course import Course, CourseConfig
from track_gen.pipeline import presets
from track_gen.tools import (BandCollision, Component, DepthCamera, FrameCollision, HeightFieldBake, InputSpec,
                             Localizer)

E, K, STEPS = 5, 3, 10
CASES = ("gates_disc", "gates_frame", "track")


# ==================================================================================================
# courses and poses
# ==================================================================================================
def camera() -> DepthCamera:
    return DepthCamera(6, 4, 90.0, 0.05, 15.0, ring=5, grid=(2, 2), pitch_deg=10.0)


def make_course(case: str, agents: int) -> Course:
    """Every built-in per-step component, across the three cases."""
    obstacles = dict(max_obstacles=4, obstacle_count_min=2, obstacle_count_max=4)
    if case == "gates_disc":
        return Course.gates(presets.gates(E, "cpu", gate_width=1.0, **obstacles), collision=0.05, seeds=3,
                            extra=[camera()], agents=agents)
    if case == "gates_frame":
        return Course.gates(presets.gates(E, "cpu", gate_width=1.0), collision=FrameCollision(0.05),
                            localize_window=2, seeds=4, agents=agents)
    return Course.track(presets.track(E, "cpu", difficulty=1.0, **obstacles), checkpoint_spacing=1.0,
                        collision="segments", seeds=5, agents=agents,
                        extra=[Localizer(warm_window=8), BandCollision("sdf", resolution=24, name="sdf"), camera()])


def yaw_quats(yaw: np.ndarray) -> np.ndarray:
    return np.stack([np.zeros_like(yaw), np.zeros_like(yaw), np.sin(0.5 * yaw), np.cos(0.5 * yaw)], -1)


class Race:
    """Poses of E*K agents flying along their env's course line at 0.3-0.9 m per step (K = 3 roles), [STEPS, E, K, ...] (world frame: each env at its own origin)."""

    def __init__(self, course: Course, seed: int = 0):
        rng = np.random.default_rng(seed)
        line = course.components["localizer"].line
        pts, s_line = line.points.numpy().astype(np.float64), line.s.numpy().astype(np.float64)
        count, length = np.maximum(line.count.numpy(), 2), np.maximum(line.length.numpy().astype(np.float64), 1e-3)
        self.origin = rng.uniform(-50.0, 50.0, size=(E, 3)).astype(np.float32)
        s0 = rng.uniform(-0.5, 1.0, size=(E, K))
        # agent 0 flies cleanly, agent 1 sloppily (misses, contacts), agent 2 backwards (wrong way)
        speed = rng.uniform(0.3, 0.9, size=(E, K)) * np.array([1.0, 1.0, -1.0])
        noise = np.array([0.03, 0.5, 0.05])[None, :].repeat(E, axis=0)
        pos = np.zeros((STEPS, E, K, 3))
        for e in range(E):
            n = count[e]
            s_ext = np.append(s_line[e, :n], length[e])
            p_ext = np.vstack([pts[e, :n], pts[e, :1]])
            for t in range(STEPS):
                s = np.mod(s0[e] + speed[e] * t, length[e])
                pos[t, e] = np.stack([np.interp(s, s_ext, p_ext[:, i]) for i in range(3)], -1)
        pos += rng.normal(0.0, 1.0, size=pos.shape) * noise[None, :, :, None]
        pos += self.origin[None, :, None, :]
        pos[3, 1, 2] = np.nan  # a non-finite pose: its agent only
        self.pos = pos.astype(np.float32)
        self.quat = yaw_quats(rng.uniform(-np.pi, np.pi, size=(STEPS, E, K))).astype(np.float32)
        self.ext = rng.uniform(0.05, 0.2, size=(STEPS, E, K, 2)).astype(np.float32)
        self.render = (rng.random((STEPS, E, K)) < 0.8).astype(np.int32)
        self.start = np.where(rng.random((E, K)) < 0.5, 0, -1).astype(np.int32)  # -1: keep the reset's next
        self.mask = np.array([1, 0, 1, 0, 0], np.int32)


class Bound:
    """The arrays a course is bound to: agent ``k`` of every env (one-agent course), or all K."""

    def __init__(self, course: Course, race: Race, k: int | None):
        self.race, self.k = race, k
        rows = E * K if k is None else E
        self.pos = wp.zeros(rows, dtype=wp.vec3f)
        self.quat = wp.zeros(rows, dtype=wp.quatf)
        self.ext = wp.zeros(rows, dtype=wp.vec2f)
        self.render = wp.zeros(rows, dtype=wp.int32)
        self.origin = wp.array(race.origin, dtype=wp.vec3f)
        kw = {"render": self.render} if "depth_camera" in course.components else {}
        course.bind(self.pos, self.quat, self.ext, origin=self.origin, **kw)

    def rows(self, x: np.ndarray) -> np.ndarray:
        """Rows of ``x`` [E, K, ...] for this binding."""
        return x.reshape(E * K, *x.shape[2:]) if self.k is None else np.ascontiguousarray(x[:, self.k])

    def write(self, t: int) -> None:
        r = self.race
        self.pos.assign(self.rows(r.pos[t]))
        self.quat.assign(self.rows(r.quat[t]))
        self.ext.assign(self.rows(r.ext[t]))
        self.render.assign(self.rows(r.render[t]))


def results(course: Course) -> dict[str, np.ndarray]:
    """Every array of every per-step entry, plus the per-agent state that is not in a result."""
    out = {}
    for name, entry in course.step_result.items():
        for field, arr in vars(entry).items():
            if isinstance(arr, wp.array):
                out[f"{name}.{field}"] = arr.numpy()
    loc = course.components["localizer"]
    out["localizer.search"], out["localizer.last_segment"] = loc.search.numpy(), loc.last_segment.numpy()
    out["progress.lap_position"] = course.progress.lap_position.numpy()
    return out


def assert_agent_equals_single(multi: dict, singles: list[dict], where: str) -> None:
    for key, value in multi.items():
        per_env = value.reshape(E, K, *value.shape[1:])
        for k, single in enumerate(singles):
            got = np.ascontiguousarray(per_env[:, k])
            assert got.tobytes() == single[key].tobytes(), f"{where}: {key} of agent {k} differs"


def fly(case: str, recorded: bool) -> None:
    """Fly the race on a K-agent course and on K one-agent courses; compare after every call."""
    multi = make_course(case, K)
    singles = [make_course(case, 1) for _ in range(K)]
    race = Race(multi)
    courses = [multi, *singles]
    bound = [Bound(multi, race, None)] + [Bound(c, race, k) for k, c in enumerate(singles)]
    if recorded:
        steps = [caller(c.step, device="cpu") for c in courses]  # strict: no allocation or readback
    else:
        steps = [c.step for c in courses]
    every = wp.ones(E, dtype=wp.int32)
    starts = [wp.array(race.start.reshape(-1), dtype=wp.int32)] + [
        wp.array(np.ascontiguousarray(race.start[:, k]), dtype=wp.int32) for k in range(K)]
    masks = [wp.array(race.mask, dtype=wp.int32) for _ in courses]
    for c, start in zip(courses, starts):
        c.reset()
        c.progress.start_at(every, start)
    for t in range(STEPS):
        if t == STEPS // 2:
            for c, m in zip(courses, masks):
                c.regenerate(mask=m, advance=True)
            assert_agent_equals_single(results(multi), [results(c) for c in singles], f"{case} regenerated")
        for b in bound:
            b.write(t)
        for step in steps:
            step()
        assert_agent_equals_single(results(multi), [results(c) for c in singles], f"{case} step {t}")


# ==================================================================================================
# agent k == a one-agent course flown with agent k's poses, bit for bit
# ==================================================================================================
@pytest.mark.parametrize("case", CASES)
def test_agent_k_equals_a_one_agent_course_eagerly(case):
    fly(case, recorded=False)


@pytest.mark.parametrize("case", CASES)
def test_agent_k_equals_a_one_agent_course_replayed_from_a_strict_graph(case):
    fly(case, recorded=True)


def test_every_built_in_step_component_is_covered():
    covered = set()
    for case in CASES:
        c = make_course(case, 1)
        covered |= {type(x).__name__ for x in c._step_components}
    assert covered >= {"Progress", "Localizer", "BandCollision", "DiscCollision", "FrameCollision",
                       "ObstacleCollision", "DepthCamera"}
    modes = {(x.mode if isinstance(x, BandCollision) else None) for x in make_course("track", 1)._step_components}
    assert {"segments", "sdf"} <= modes


def test_heightfield_sample_per_agent_reads_its_env_grid():
    g = tg.TrackGenerator(presets.track(E, "cpu", elevated=True), seeds=2)
    course = Course(g, [HeightFieldBake(16)], agents=K)
    rng = np.random.default_rng(1)
    pts = rng.uniform(-4.0, 4.0, size=(E, K, 3)).astype(np.float32)
    origin = rng.uniform(-9.0, 9.0, size=(E, 3)).astype(np.float32)
    hf = course.heightfield
    got = wp.zeros(E * K, dtype=wp.float32)
    hf.sample(wp.array((pts + origin[:, None]).reshape(-1, 3), dtype=wp.vec3f), got, origin=wp.array(origin,
                                                                                                    dtype=wp.vec3f))
    for k in range(K):
        one = wp.zeros(E, dtype=wp.float32)
        hf.sample(wp.array(np.ascontiguousarray(pts[:, k] + origin), dtype=wp.vec3f), one,
                  origin=wp.array(origin, dtype=wp.vec3f))
        assert got.numpy().reshape(E, K)[:, k].tobytes() == one.numpy().tobytes()
    with pytest.raises(ValueError, match=rf"points must have shape \({E},\) or \({E * K},\) \(one per agent\)"):
        hf.sample(wp.zeros(E * K + 1, dtype=wp.vec3f), got)


# ==================================================================================================
# shapes, masks, binding
# ==================================================================================================
def bound_course(agents: int = 2) -> tuple[Course, wp.array]:
    c = make_course("gates_frame", agents)
    n = E * agents
    pos = wp.array(np.repeat(c.result.start_pos.numpy(), agents, axis=0), dtype=wp.vec3f)
    c.bind(pos, wp.array(yaw_quats(np.zeros(n)).astype(np.float32), dtype=wp.quatf),
           wp.array(np.full((n, 2), 0.1, np.float32), dtype=wp.vec2f))
    return c, pos


def test_geometry_is_per_env_and_results_per_agent():
    c, _ = bound_course(2)
    assert (c.agents, c.num_envs, c.num_agents) == (2, E, 2 * E)
    assert c.context.agents == 2 and c.context.num_agents == 2 * E
    assert c.checkpoints.count.shape == (E,) and c.result.valid.shape == (E,)
    res = c.step()
    assert res.events.progress.shape == (2 * E,) and res.contacts.hit.shape == (2 * E,)
    assert res.frame.s.shape == (2 * E,) and res.valid.shape == (E,)
    assert "agents=2" in repr(c)


def test_bind_names_the_expected_rows():
    c = make_course("gates_frame", 2)
    quat = wp.array(yaw_quats(np.zeros(2 * E)).astype(np.float32), dtype=wp.quatf)
    ext = wp.zeros(2 * E, dtype=wp.vec2f)
    with pytest.raises(ValueError, match=rf"'position'.*must have shape \({2 * E},\) \(E\*K = {E}\*2 = {2 * E} agent"):
        c.bind(wp.zeros(E, dtype=wp.vec3f), quat, ext)
    with pytest.raises(ValueError, match=rf"'origin'.*must have shape \({E},\) \(one row per env, E = {E}\)"):
        c.bind(wp.zeros(2 * E, dtype=wp.vec3f), quat, ext, origin=wp.zeros(2 * E, dtype=wp.vec3f))
    c.bind(wp.zeros(2 * E, dtype=wp.vec3f), quat, ext, origin=wp.zeros(E, dtype=wp.vec3f))


def test_a_masked_regeneration_resets_every_agent_of_a_masked_env_only():
    c, pos = bound_course(3)
    moved = c.result.start_pos.numpy().repeat(3, axis=0) + np.float32(0.3)
    c.step()
    pos.assign(moved)
    c.step()
    prog, loc = c.progress, c.components["localizer"]
    before = {"has_prev": prog._has_prev.numpy(), "segment": loc.last_segment.numpy(),
              "contacts": c.collision.result.clearance.numpy()}
    assert (before["has_prev"] == 1).all()
    mask = np.array([0, 1, 0, 0, 1], np.int32)
    c.regenerate(mask=wp.array(mask, dtype=wp.int32), advance=True)
    hit = np.repeat(mask != 0, 3)
    assert (prog._has_prev.numpy()[hit] == 0).all() and (loc.last_segment.numpy()[hit] == -1).all()
    assert (c.collision.result.index.numpy()[hit] == -1).all()
    for key, arr in (("has_prev", prog._has_prev), ("segment", loc.last_segment),
                     ("contacts", c.collision.result.clearance)):
        assert arr.numpy()[~hit].tobytes() == before[key][~hit].tobytes(), key
    c.reset(wp.array(1 - mask, dtype=wp.int32))
    assert (prog._has_prev.numpy() == 0).all()


def test_start_at_takes_one_index_per_agent_or_per_env():
    c, _ = bound_course(2)
    every = wp.ones(E, dtype=wp.int32)
    c.progress.start_at(every, wp.array(np.zeros(E, np.int32), dtype=wp.int32))
    assert (c.progress.next_index.numpy() == 1).all()
    c.progress.start_at(every, wp.array(np.tile([0, 1], E).astype(np.int32), dtype=wp.int32))
    assert (c.progress.next_index.numpy().reshape(E, 2) == [1, 2]).all()
    with pytest.raises(TypeError, match=rf"index must be a \[{2 * E}\] \(one per agent\) or \[{E}\] \(one per env\)"):
        c.progress.start_at(every, wp.zeros(E + 1, dtype=wp.int32))
    with pytest.raises(TypeError, match=rf"mask must be a \[{E}\] int32"):
        c.progress.start_at(wp.ones(2 * E, dtype=wp.int32), wp.zeros(E, dtype=wp.int32))


# ==================================================================================================
# the multi-agent declaration and the arguments
# ==================================================================================================
class OneRow(Component):
    """A per-step component that never said it handles several agents."""

    name = "acme.one_row"
    inputs = {"position": InputSpec(wp.vec3f)}

    def step(self, ctx):
        pass


class PerGeneration(Component):
    """No inputs, no step: per-env data only, fine with any K."""

    name = "acme.per_generation"


def test_a_component_without_multi_agent_is_refused_with_k_above_one():
    gen = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=1)
    one = OneRow()
    with pytest.raises(TypeError, match=r"'acme.one_row' has inputs \['position'\] and a step but does not declare "
                                        r"multi_agent = True; with agents=2 .* \[E\*K\] = \[10\]"):
        Course(gen, [one, PerGeneration()], agents=2)
    assert not one.attached  # a refused construction takes nothing
    Course(gen, [PerGeneration()], agents=2)
    Course(gen, [OneRow()])  # one agent: nothing to declare


def test_one_name_one_row_count():
    class EnvRows(Component):
        name = "acme.env_rows"
        inputs = {"position": InputSpec(wp.vec3f, per_agent=False)}
        multi_agent = True

    gen = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=1)
    with pytest.raises(ValueError, match="input 'position' is per_agent=True for 'acme.a' but per_agent=False"):
        Course(gen, [type("A", (OneRow,), {"name": "acme.a"})(), EnvRows()])


@pytest.mark.parametrize("bad, err", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError),
                                      ("2", TypeError)])
def test_agents_must_be_an_int_of_one_or_more(bad, err):
    gen = tg.GateGenerator(presets.gates(E, "cpu", gate_width=1.0), seeds=1)
    with pytest.raises(err, match="agents"):
        Course(gen, [], agents=bad)
    with pytest.raises(err, match="agents"):
        Course.gates(presets.gates(E, "cpu", gate_width=1.0), agents=bad)
    with pytest.raises(err, match="agents"):
        Course(CourseConfig(mode="gates", gen=presets.gates(E, "cpu", gate_width=1.0), agents=bad))


def test_config_and_presets_carry_the_agents():
    cfg = CourseConfig(mode="track", gen=tg.TrackGenConfig(num_envs=E), seeds=7, checkpoint_spacing=0.6, agents=4)
    for course in (Course(cfg), Course.from_config(cfg), Course(config=cfg),
                   Course.track(tg.TrackGenConfig(num_envs=E), checkpoint_spacing=0.6, seeds=7, agents=4)):
        assert course.agents == 4 and course.progress.result.next.shape == (4 * E,)
    with pytest.raises(TypeError, match=r"CourseConfig\(\.\.\., agents=K\)"):
        Course(cfg, agents=2)
    assert Course(CourseConfig(mode="track", gen=tg.TrackGenConfig(num_envs=E), seeds=7,
                               checkpoint_spacing=0.6)).agents == 1
