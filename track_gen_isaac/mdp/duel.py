"""Head-to-head racing terms (stable runtime; warp twins in :mod:`track_gen_isaac.experimental.mdp.duel`):
K drones per course (``CourseCfg.agents = K``), each drone an Isaac Lab env of its own.

Why each drone is an env: Isaac Lab's managers and rsl_rl's ``RslRlVecEnvWrapper`` give one
observation row, one reward and one done flag per env. With the K drones of a race as K
consecutive envs (env ``a`` is agent ``a % K`` of race ``a // K``, the course's own row order),
every drone has its own row everywhere, the stock ``isaaclab train --rl_library rsl_rl`` path
trains one shared policy on all of them (self-play) with no wrapper, and the course binds
zero-copy to the drones' ``[E*K]`` root pose buffers. The K envs of a race share one origin
(``scene.env_spacing = 0``): the drones have no collision shape, so envs never touch physically;
whether two drones touch is :class:`~track_gen.tools.AgentContacts`' job.

What a race is (:class:`RaceState`, one per env, built from the env cfg's :class:`RaceCfg`
``race`` on first use and updated right after every course step):

* every agent is *racing*, *finished* (it completed ``laps``) or *crashed* (a gate frame or pole,
  a missed gate, farther than ``max_distance`` from the course line, out of the ``altitude`` band,
  or -- ``contact_crash`` -- within ``2 radius`` of a racing rival: both crash);
* the first agent to finish *wins* (two in one step: the lower agent index);
* an agent that is out (finished or crashed) is held where it stopped (pose written, velocity 0,
  every step: Isaac Lab cannot reset one drone of a race) and no longer counts: its rewards are 0,
  its rivals see it as absent, it touches nobody;
* the race is over when every agent is out (:class:`race_over`, ``terminated``) or when one agent's
  episode reaches the time limit (:class:`race_time_out`, ``time_out``): all K envs of a race end
  and reset together, always.

Terms: :class:`place_on_grid` (reset event: the drones side by side at the start or on a random
gate, the race restarted), :class:`rivals` (observation), :class:`race_reward` (reward: progress,
gate, finish, win, crash, contact, proximity, body rates, each 0 once the agent is out),
:class:`race_over` and :class:`race_time_out` (terminations).
"""

from __future__ import annotations

import math
import numbers
import weakref

import torch
import warp as wp
from isaaclab.managers import ManagerTermBase
from isaaclab.utils import configclass

from track_gen.rng import name_key, stream_state
from track_gen.tools.checkpoints import jitter_position
from track_gen_isaac.env_course import _jitter, get_course
from track_gen_isaac.mdp._base import CourseTerm
from track_gen_isaac.mdp.events import check_share, split_start_kernel

__all__ = ["RaceCfg", "RaceState", "get_race", "place_on_grid", "rivals", "race_reward", "race_over", "race_time_out",
           "RACING", "FINISHED", "CRASHED", "SIGNALS", "rivals_dim", "RACE_ATTR"]

wp.set_module_options({"enable_backward": False})

#: agent status values of :attr:`RaceState.status`
RACING, FINISHED, CRASHED = 0, 1, 2
#: the signals of :class:`race_reward`
SIGNALS = ("progress", "gate", "finish", "win", "crash", "contact", "proximity", "rates")
#: the env attribute holding its :class:`RaceState`
RACE_ATTR = "track_gen_race"

_GRID_KEY = name_key("track_gen_isaac.duel.grid")
#: bounds of the rival observation (the values stay in the normalizer's range whatever the distance)
_REACH, _CLOSING, _LEAD = 10.0, 20.0, 20.0


@configclass
class RaceCfg:
    """The rules of a race of K drones on one course (the env cfg's ``race`` attribute)."""

    course_name: str = "course"
    """The course the drones race (its ``CourseCfg.agents`` is K; its extras must hold
    ``tools.AgentContacts`` and ``tools.Standings``)."""
    laps: int = 1
    """Laps (passes of a sprint) to finish."""
    max_distance: float = 2.5
    """Farther than this from the course line [m] is a crash."""
    altitude: tuple[float, float] = (0.0, 9.0)
    """Height band above the env origin [m]; outside it is a crash."""
    contact_crash: bool = True
    """Two racing drones within ``2 radius`` of each other (``AgentContacts``) both crash."""
    asset_name: str = "robot"
    """The drones' scene entity."""

    def validate(self) -> None:
        """ValueError / TypeError naming the field."""
        if isinstance(self.laps, bool) or not isinstance(self.laps, numbers.Integral) or self.laps < 1:
            raise ValueError(f"RaceCfg.laps: expected an int >= 1, got {self.laps!r}")
        if not (isinstance(self.max_distance, (int, float)) and math.isfinite(self.max_distance)
                and self.max_distance > 0):
            raise ValueError(f"RaceCfg.max_distance: expected a finite number > 0 [m], got {self.max_distance!r}")
        try:
            lo, hi = (float(v) for v in self.altitude)
        except (TypeError, ValueError):
            raise TypeError(f"RaceCfg.altitude: expected (min, max) [m], got {self.altitude!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"RaceCfg.altitude: expected finite min < max [m], got {self.altitude!r}")
        if not isinstance(self.contact_crash, bool):
            raise TypeError(f"RaceCfg.contact_crash: expected True or False, got {self.contact_crash!r}")


# ------------------------------------------------------------------------------------------ race state


@wp.kernel
def race_update_kernel(
    # parameters
    agents: int,
    laps: int,
    max_distance: float,
    min_height: float,
    max_height: float,
    contact_crash: int,
    has_obstacles: int,
    # inputs
    ev_laps: wp.array(dtype=wp.int32),
    ev_missed: wp.array(dtype=wp.int32),
    hit: wp.array(dtype=wp.int32),
    obstacle_hit: wp.array(dtype=wp.int32),
    segment: wp.array(dtype=wp.int32),
    distance: wp.array(dtype=wp.float32),
    near_contact: wp.array(dtype=wp.int32),
    near_index: wp.array(dtype=wp.int32),
    origin: wp.array(dtype=wp.vec3f),
    # in/out
    pose: wp.array(dtype=wp.transformf),
    velocity: wp.array(dtype=wp.spatial_vectorf),
    status: wp.array(dtype=wp.int32),
    hold: wp.array(dtype=wp.transformf),
    finishers: wp.array(dtype=wp.int32),
    # outputs
    was_racing: wp.array(dtype=wp.int32),
    outcome: wp.array(dtype=wp.int32),
    won: wp.array(dtype=wp.int32),
    contact: wp.array(dtype=wp.int32),
    held: wp.array(dtype=wp.bool),
):
    """One thread per race: each agent's outcome of this step (0 none, FINISHED, CRASHED), the
    winner, the new status; agents that are out are held at their stopping pose."""
    r = wp.tid()
    first = r * agents
    # contacts first, from the status at the start of the step (both drones of a touch crash)
    for k in range(agents):
        a = first + k
        was = status[a] == 0
        was_racing[a] = wp.where(was, 1, 0)
        c = int(0)
        j = near_index[a]
        if was and near_contact[a] != 0 and j >= 0:
            if status[j] == 0:
                c = 1
        contact[a] = c
    finished_before = finishers[r]
    winner_found = int(0)
    for k in range(agents):
        a = first + k
        won[a] = 0
        outcome[a] = 0
        if was_racing[a] != 0:
            z = wp.transform_get_translation(pose[a])[2] - origin[a][2]
            crash = int(0)
            if hit[a] != 0 or ev_missed[a] != 0:
                crash = 1
            if has_obstacles != 0:
                if obstacle_hit[a] != 0:
                    crash = 1
            if segment[a] >= 0 and distance[a] > max_distance:
                crash = 1
            if not (z >= min_height and z <= max_height):
                crash = 1
            if contact_crash != 0 and contact[a] != 0:
                crash = 1
            if crash != 0:
                outcome[a] = 2
            elif ev_laps[a] >= laps:
                outcome[a] = 1
                if finished_before == 0 and winner_found == 0:
                    won[a] = 1
                    winner_found = 1
                finishers[r] = finishers[r] + 1
            if outcome[a] != 0:
                status[a] = outcome[a]
                hold[a] = pose[a]
        held[a] = status[a] != 0
        if status[a] != 0:
            pose[a] = hold[a]
            velocity[a] = wp.spatial_vectorf(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@wp.kernel
def race_reset_kernel(agents: int, mask: wp.array(dtype=wp.int32), status: wp.array(dtype=wp.int32),
                      finishers: wp.array(dtype=wp.int32), was_racing: wp.array(dtype=wp.int32),
                      outcome: wp.array(dtype=wp.int32), won: wp.array(dtype=wp.int32),
                      contact: wp.array(dtype=wp.int32)):
    """Every agent of a masked race racing again (one thread per race)."""
    r = wp.tid()
    if mask[r] == 0:
        return
    finishers[r] = 0
    for k in range(agents):
        a = r * agents + k
        status[a] = 0
        was_racing[a] = 1
        outcome[a] = 0
        won[a] = 0
        contact[a] = 0


class RaceState:
    """The race of the K agents of each course of one env (built by :func:`get_race`).

    Per agent ``[E]`` int32 (E = Isaac Lab envs = races x K): ``status`` (RACING / FINISHED /
    CRASHED), and for the current step ``was_racing`` (racing when the step began), ``outcome``
    (0, FINISHED or CRASHED: what happened this step), ``won`` (finished first this step),
    ``contact`` (touched a racing rival this step); per race ``[R]`` ``finishers``. Updated by
    :meth:`update`, a hook of the course step (one launch, recordable), so every term of an env
    step sees the same race.
    """

    def __init__(self, env, cfg: RaceCfg):
        if not isinstance(cfg, RaceCfg):
            raise TypeError(f"env.cfg.race: expected a track_gen_isaac.mdp.duel.RaceCfg, got {type(cfg).__name__}")
        cfg.validate()
        self.cfg = cfg
        self._env = weakref.ref(env)
        ec = self.ec = get_course(env, cfg.course_name)
        if ec.agents < 2:
            raise ValueError(f"RaceCfg: env.cfg.{cfg.course_name} has CourseCfg.agents={ec.agents}; a race needs "
                             f"K >= 2 drones per course")
        comps = ec.course.components
        for name, what in (("agent_contacts", "tools.AgentContacts(radius)"), ("standings", "tools.Standings()")):
            if name not in comps:
                raise ValueError(f"RaceCfg: the course env.cfg.{cfg.course_name} has no {name!r} component; add "
                                 f"{what} to its CourseCfg.extra")
        if ec.result.events is None or ec.result.contacts is None:
            raise ValueError(f"RaceCfg: the course env.cfg.{cfg.course_name} needs progress and a collision component")
        self.radius = float(comps["agent_contacts"].radius)
        N, R, dev = ec.num_envs, ec.num_races, ec.device
        self.agents, self.num_envs, self.num_races, self.device = ec.agents, N, R, dev
        z = lambda n: wp.zeros(n, dtype=wp.int32, device=dev)  # noqa: E731
        self.status, self.was_racing, self.outcome, self.won, self.contact = z(N), z(N), z(N), z(N), z(N)
        self.finishers = z(R)
        self.hold = wp.zeros(N, dtype=wp.transformf, device=dev)
        self.held = wp.zeros(N, dtype=wp.bool, device=dev)
        self.was_racing.fill_(1)
        self.asset = env.scene[cfg.asset_name]
        self._no_obstacles = wp.zeros(1, dtype=wp.int32, device=dev)
        from isaaclab_newton.physics import NewtonManager

        # Newton honours kernel-written root poses at the next step (also after a replayed graph)
        NewtonManager.transforms_may_change_on_graph_replay = True
        ec.step_hooks.append(self.update)

    @property
    def env(self):
        env = self._env()
        if env is None:
            raise RuntimeError("the env this race was built for is gone")
        return env

    def update(self) -> None:
        """This step's outcomes from the course's StepResult (called right after the course step)."""
        from isaaclab_newton.physics import NewtonManager

        res, c = self.ec.result, self.cfg
        obstacles = res["obstacles"].hit if "obstacles" in res else None
        near = res["agent_contacts"]
        data = self.asset.data
        lo, hi = (float(v) for v in c.altitude)
        wp.launch(race_update_kernel, dim=self.num_races,
                  inputs=[self.agents, int(c.laps), float(c.max_distance), lo, hi, int(c.contact_crash),
                          int(obstacles is not None), res.events.laps, res.events.missed, res.contacts.hit,
                          obstacles if obstacles is not None else self._no_obstacles, res.frame.segment,
                          res.frame.distance, near.contact, near.index, self.ec.origin,
                          data.root_link_pose_w.warp, data.root_com_vel_w.warp, self.status, self.hold,
                          self.finishers],
                  outputs=[self.was_racing, self.outcome, self.won, self.contact, self.held], device=self.device)
        NewtonManager.invalidate_fk(env_mask=self.held, articulation_ids=self.asset.root_view.articulation_ids)

    def reset(self, mask: wp.array) -> None:
        """Every agent of the races of the [R] int32 ``mask`` racing again (recordable)."""
        wp.launch(race_reset_kernel, dim=self.num_races, inputs=[self.agents, mask],
                  outputs=[self.status, self.finishers, self.was_racing, self.outcome, self.won, self.contact],
                  device=self.device)

    def torch(self, arr: wp.array) -> torch.Tensor:
        return self.ec.torch(arr)


def get_race(env) -> RaceState:
    """The env's :class:`RaceState`, built from ``env.cfg.race`` on first use."""
    race = env.__dict__.get(RACE_ATTR)
    if race is None:
        cfg = getattr(env.cfg, "race", None)
        if cfg is None:
            raise AttributeError("the env cfg has no attribute 'race': declare `race: RaceCfg = RaceCfg()` on it "
                                 "(track_gen_isaac.mdp.duel.RaceCfg) to race K drones per course")
        race = RaceState(env, cfg)
        setattr(env, RACE_ATTR, race)
    return race


class _RaceTerm(CourseTerm):
    """A course term of a race (K >= 2 agents per course): the course and its :class:`RaceState`."""

    modes = ("gates",)
    multi_agent = True

    @property
    def race(self) -> RaceState:
        race = getattr(self, "_race", None)
        if race is None:
            race = self._race = get_race(self._env)
        return race


# ------------------------------------------------------------------------------------------ placement


@wp.kernel
def grid_pose_kernel(
    # parameters
    agents: int,
    spacing: float,
    ahead: float,
    jitter_lateral: float,
    jitter_vertical: float,
    jitter_yaw: float,
    z_offset: float,
    key: int,
    # inputs
    mask: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
    race_pos: wp.array(dtype=wp.vec3f),
    race_yaw: wp.array(dtype=wp.float32),
    origin: wp.array(dtype=wp.vec3f),
    # in/out
    counter: wp.array(dtype=wp.int32),
    # outputs
    pose_out: wp.array(dtype=wp.transformf),
    velocity_out: wp.array(dtype=wp.spatial_vectorf),
):
    """Agent ``a`` of a masked race: side by side across the race's pose (slot ``k - (K-1)/2`` times
    ``spacing`` along its left axis), ``ahead`` [m] along its heading, plus per-agent uniform
    jitter; zero velocity. Counter-based draws per agent."""
    a = wp.tid()
    r = a // agents
    if mask[r] == 0:
        return
    k = a - r * agents
    c = counter[a] + 1
    counter[a] = c
    st = stream_state(seeds[r], c, key, k)
    r1 = wp.randf(st)
    r2 = wp.randf(st)
    r3 = wp.randf(st)
    yaw = race_yaw[r]
    lat = wp.vec3f(-wp.sin(yaw), wp.cos(yaw), 0.0)
    fwd = wp.vec3f(wp.cos(yaw), wp.sin(yaw), 0.0)
    slot = (float(k) - 0.5 * float(agents - 1)) * spacing
    p = jitter_position(race_pos[r] + lat * slot + fwd * ahead, lat, r1, r2, jitter_lateral, jitter_vertical)
    y = yaw + jitter_yaw * (2.0 * r3 - 1.0)
    h = 0.5 * y
    pose_out[a] = wp.transformf(p + origin[a] + wp.vec3f(0.0, 0.0, z_offset), wp.quatf(0.0, 0.0, wp.sin(h), wp.cos(h)))
    velocity_out[a] = wp.spatial_vectorf(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


class place_on_grid(_RaceTerm):
    """Start the reset races: each race's K drones side by side, ``spacing`` [m] apart across the
    course, at the course start (probability ``start_share``: a standing start, or a take-off where
    the course starts on the ground) or on one random gate of the course (all K on it, counted as
    passed, ``ahead`` [m] past its plane: the grid is wider than a small gate's opening, and a
    drone in the plane would sit in the frame), facing the course; each drone with its own uniform
    ``jitter`` (lateral [m], vertical
    [m], yaw [rad]; ``start_jitter`` at the start), ``z_offset`` [m] up; zero velocity; every drone
    of the race racing again. Declare it after ``regenerate_course`` / ``reset_course``. Draws are
    per race (start or gate) and per drone (jitter), counter based."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        # per-drone jitter draw counters (start and gate placements)
        self._counter = wp.zeros(env.num_envs, dtype=wp.int32, device=env.device)
        self._start_counter = wp.zeros(env.num_envs, dtype=wp.int32, device=env.device)

    def check(self, start_share=1.0, spacing=0.6, ahead=0.4, jitter=(0.0, 0.0, 0.0), start_jitter=(0.0, 0.0, 0.0),
              z_offset=0.0):
        check_share(start_share)
        _jitter(jitter)
        _jitter(start_jitter)
        for n, v in (("spacing", spacing), ("ahead", ahead)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"{n}: expected a finite number >= 0 [m], got {v!r}")
        if isinstance(z_offset, bool) or not isinstance(z_offset, (int, float)) or not math.isfinite(z_offset):
            raise ValueError(f"z_offset: expected a finite number [m], got {z_offset!r}")

    def _pose(self, mask: wp.array, start_share, spacing, ahead, jitter, start_jitter, z_offset, pose,
              velocity) -> None:
        """Race poses, then every agent's pose into ``pose`` / ``velocity`` (recordable)."""
        ec, race = self.ec, self.race
        wp.launch(split_start_kernel, dim=ec.num_races, inputs=[float(start_share), mask, ec.course.seeds.seeds],
                  outputs=[ec.split_counter, ec.start_mask, ec.checkpoint_mask], device=ec.device)
        ec.start_poses(ec.start_mask)
        ec.checkpoint_poses(ec.checkpoint_mask)
        for m, fwd, (jl, jv, jy), counter in ((ec.start_mask, 0.0, _jitter(start_jitter), self._start_counter),
                                               (ec.checkpoint_mask, float(ahead), _jitter(jitter), self._counter)):
            wp.launch(grid_pose_kernel, dim=ec.num_envs,
                      inputs=[ec.agents, float(spacing), fwd, jl, jv, jy, float(z_offset), _GRID_KEY, m,
                              ec.course.seeds.seeds, ec.pose_pos, ec.pose_yaw, ec.origin],
                      outputs=[counter, pose, velocity], device=ec.device)
        race.reset(mask)

    def __call__(self, env, env_ids, course_name: str = "course", start_share: float = 1.0, spacing: float = 0.6,
                 ahead: float = 0.4, jitter: tuple = (0.0, 0.0, 0.0), start_jitter: tuple = (0.0, 0.0, 0.0),
                 z_offset: float = 0.0):
        ec = self.ec
        self._pose(ec.set_mask(env_ids), start_share, spacing, ahead, jitter, start_jitter, z_offset, ec.root_pose,
                   ec.root_velocity)
        idx = slice(None) if env_ids is None else env_ids
        if not isinstance(idx, slice):
            idx = torch.as_tensor(idx, device=ec.mask_t.device).to(torch.long)
        ec.asset.write_root_pose_to_sim_index(root_pose=ec.torch(ec.root_pose)[idx], env_ids=env_ids)
        ec.asset.write_root_velocity_to_sim_index(root_velocity=ec.torch(ec.root_velocity)[idx], env_ids=env_ids)
        ec.stale = True


# ------------------------------------------------------------------------------------------ observation


def rivals_dim(agents: int) -> int:
    """Width of :class:`rivals` with K agents per course: 1 + 10 (K - 1)."""
    return 1 + 10 * (int(agents) - 1)


@wp.func
def _clip_norm(v: wp.vec3f, m: float) -> wp.vec3f:
    n = wp.length(v)
    if n > m:
        return v * (m / n)
    return v


@wp.kernel
def rivals_kernel(
    agents: int,
    pos: wp.array(dtype=wp.vec3f),
    quat: wp.array(dtype=wp.quatf),
    vel: wp.array(dtype=wp.spatial_vectorf),
    status: wp.array(dtype=wp.int32),
    rank: wp.array(dtype=wp.int32),
    gap: wp.array(dtype=wp.float32),
    obs_out: wp.array2d(dtype=wp.float32),
):
    """Row ``a``: [racing] then per other agent of its race, in index order: [racing, finished,
    position (3) and velocity (3) relative to the body in the body frame, ahead (+1 / -1), lead
    along the course line [m]] (zeros but ``finished`` for a rival that is out)."""
    a = wp.tid()
    first = (a // agents) * agents
    me = status[a] == 0
    obs_out[a, 0] = wp.where(me, 1.0, 0.0)
    q = quat[a]
    p = pos[a]
    v = wp.spatial_top(vel[a])
    o = int(1)
    for k in range(agents):
        b = first + k
        if b != a:
            for j in range(10):
                obs_out[a, o + j] = 0.0
            if status[b] == 1:
                obs_out[a, o + 1] = 1.0
            if status[b] == 0:
                obs_out[a, o] = 1.0
                rp = _clip_norm(wp.quat_rotate_inv(q, pos[b] - p), _REACH)
                rv = _clip_norm(wp.quat_rotate_inv(q, wp.spatial_top(vel[b]) - v), _CLOSING)
                for j in range(3):
                    obs_out[a, o + 2 + j] = rp[j]
                    obs_out[a, o + 5 + j] = rv[j]
                obs_out[a, o + 8] = wp.where(rank[b] < rank[a], 1.0, -1.0)
                obs_out[a, o + 9] = wp.clamp(gap[a] - gap[b], -_LEAD, _LEAD)
            o = o + 10


class rivals(_RaceTerm):
    """What a drone knows of the other drones of its race, ``[E, 1 + 10 (K - 1)]``: whether it is
    still racing itself (1 / 0), then per rival (the others in agent order): racing (1 / 0),
    finished (1 / 0), its position and velocity relative to the drone in the drone's body frame
    (3 + 3; bounded to 10 m and 20 m/s), ahead (+1 when it ranks ahead in the ``Standings``, else
    -1) and its lead along the course line [m] (``Standings`` gaps, bounded to +-20 m); all zeros
    but ``finished`` for a rival that is out."""

    def out_shape(self):
        return (self.num_envs, rivals_dim(self.course_cfg.agents))

    def launch(self, out):
        ec, race = self.ec, self.race
        res = self.read()
        st = res["standings"]
        d = race.asset.data
        wp.launch(rivals_kernel, dim=ec.num_envs,
                  inputs=[ec.agents, d.root_pos_w.warp, d.root_quat_w.warp, d.root_com_vel_w.warp, race.status,
                          st.rank, st.gap], outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course"):
        return self.compute()


# ------------------------------------------------------------------------------------------ rewards


@wp.kernel
def race_reward_kernel(
    signal: int,
    inv_dt: float,
    clip: float,
    reach: float,
    margin: float,
    was_racing: wp.array(dtype=wp.int32),
    status: wp.array(dtype=wp.int32),
    outcome: wp.array(dtype=wp.int32),
    won: wp.array(dtype=wp.int32),
    contact: wp.array(dtype=wp.int32),
    delta: wp.array(dtype=wp.float32),
    passed: wp.array(dtype=wp.int32),
    distance: wp.array(dtype=wp.float32),
    near_index: wp.array(dtype=wp.int32),
    vel: wp.array(dtype=wp.spatial_vectorf),
    reward_out: wp.array(dtype=wp.float32),
):
    """The ``signal`` (index into SIGNALS) of agent ``a`` this step; 0 when it was out when the step began."""
    a = wp.tid()
    v = float(0.0)
    if was_racing[a] != 0:
        if signal == 0:
            v = wp.clamp(delta[a] * inv_dt, -clip, clip)
        elif signal == 1:
            v = float(passed[a])
        elif signal == 2:
            v = wp.where(outcome[a] == 1, 1.0, 0.0)
        elif signal == 3:
            v = float(won[a])
        elif signal == 4:
            v = wp.where(outcome[a] == 2, 1.0, 0.0)
        elif signal == 5:
            v = float(contact[a])
        elif signal == 6:
            j = near_index[a]
            if j >= 0:
                if status[j] == 0 or outcome[j] != 0:
                    v = wp.clamp(1.0 - (distance[a] - reach) / margin, 0.0, 1.0)
        else:
            w = wp.spatial_bottom(vel[a])
            v = wp.dot(w, w)
    reward_out[a] = v


class race_reward(_RaceTerm):
    """One race signal per drone and step, 0 once the drone is out (finished or crashed before the
    step began). ``signal``:

    * ``"progress"``: speed along the course line [m/s] (``events.delta / step_dt``, clipped to
      ``+-clip``), as the racer's ``progress_rate``;
    * ``"gate"``: gates passed; ``"finish"``: 1 on the step it finishes; ``"win"``: 1 when it
      finishes first; ``"crash"``: 1 on the step it crashes (contact included);
    * ``"contact"``: 1 on a step it touches a racing rival;
    * ``"proximity"``: ``clamp(1 - (d - 2 radius) / margin, 0, 1)``, d the distance to its nearest
      rival: a ramp from ``margin`` [m] outside contact to 1 at contact;
    * ``"rates"``: ``|body rates|^2`` [rad^2/s^2].

    Isaac Lab multiplies by weight and dt (a per-step event of weight w is worth ``w * dt``)."""

    def check(self, signal="progress", clip=25.0, margin=0.3):
        if signal not in SIGNALS:
            raise ValueError(f"signal: expected one of {SIGNALS}, got {signal!r}")
        for n, v in (("clip", clip), ("margin", margin)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
                raise ValueError(f"{n}: expected a finite number > 0, got {v!r}")
        self._inv_dt = 1.0 / float(self._env.step_dt)

    def launch(self, out, signal="progress", clip=25.0, margin=0.3):
        ec, race = self.ec, self.race
        res = self.read()
        near = res["agent_contacts"]
        wp.launch(race_reward_kernel, dim=ec.num_envs,
                  inputs=[SIGNALS.index(signal), self._inv_dt, float(clip), 2.0 * race.radius, float(margin),
                          race.was_racing, race.status, race.outcome, race.won, race.contact, res.events.delta,
                          res.events.passed, near.distance, near.index, race.asset.data.root_com_vel_w.warp],
                  outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course", signal: str = "progress", clip: float = 25.0,
                 margin: float = 0.3):
        return self.compute(signal=signal, clip=clip, margin=margin)


# ------------------------------------------------------------------------------------------ terminations


@wp.kernel
def race_over_kernel(agents: int, status: wp.array(dtype=wp.int32), done_out: wp.array(dtype=wp.bool)):
    """Every agent of ``a``'s race is out."""
    a = wp.tid()
    first = (a // agents) * agents
    racing = int(0)
    for k in range(agents):
        if status[first + k] == 0:
            racing = 1
    done_out[a] = racing == 0


class race_over(_RaceTerm):
    """The race is over: every drone of it finished or crashed. True for all K envs of the race
    together (``terminated``). Declare it first among the terminations: it steps the course."""

    out_dtype = wp.bool

    def launch(self, out):
        ec, race = self.ec, self.race
        self.read()
        wp.launch(race_over_kernel, dim=ec.num_envs, inputs=[ec.agents, race.status], outputs=[out], device=ec.device)

    def __call__(self, env, course_name: str = "course"):
        return self.compute()


@wp.kernel
def race_time_out_kernel(agents: int, limit: wp.int64, length: wp.array(dtype=wp.int64),
                         done_out: wp.array(dtype=wp.bool)):
    """One env of ``a``'s race reached the episode limit."""
    a = wp.tid()
    first = (a // agents) * agents
    out = int(0)
    for k in range(agents):
        if length[first + k] >= limit:
            out = 1
    done_out[a] = out != 0


class race_time_out(ManagerTermBase):
    """The race reached the time limit: one of its K envs' episode counters reached
    ``max_episode_length`` (rsl_rl starts training with random episode lengths, which the first
    race's end aligns). True for all K envs of the race together; declare it with ``time_out=True``.
    ``course_name``: the course whose ``CourseCfg.agents`` groups the envs."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        from track_gen_isaac.env_course import course_cfg_of

        self.agents = int(course_cfg_of(env.cfg, cfg.params.get("course_name", "course")).agents)
        if env.num_envs % self.agents:
            raise ValueError(f"race_time_out: num_envs={env.num_envs} is not a multiple of CourseCfg.agents="
                             f"{self.agents}")
        self._out = wp.zeros(env.num_envs, dtype=wp.bool, device=env.device)

    def launch(self, out, length: wp.array) -> None:
        wp.launch(race_time_out_kernel, dim=self.num_envs,
                  inputs=[self.agents, wp.int64(int(self._env.max_episode_length)), length], outputs=[out],
                  device=self.device)

    def __call__(self, env, course_name: str = "course"):
        # read the buffer every call: rsl_rl's random episode lengths rebind env.episode_length_buf
        self.launch(self._out, wp.from_torch(env.episode_length_buf.contiguous(), dtype=wp.int64))
        return wp.to_torch(self._out).clone()

