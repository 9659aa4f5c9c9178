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

import torch
import warp as wp
from isaaclab.managers import ManagerTermBase

from track_gen.rng import name_key, stream_state
from track_gen.tools.checkpoints import jitter_position
from track_gen_isaac.env_course import _jitter
from track_gen_isaac.mdp._base import CourseTerm
from track_gen_isaac.mdp.events import check_share, split_start_kernel
from track_gen_isaac.mdp.race_state import (CRASHED, FINISHED, RACE_ATTR, RACING, SIGNALS, RaceCfg, RaceState,
                                            get_race)

__all__ = ["RaceCfg", "RaceState", "get_race", "place_on_grid", "rivals", "race_reward", "race_over", "race_time_out",
           "RACING", "FINISHED", "CRASHED", "SIGNALS", "rivals_dim", "RACE_ATTR"]

wp.set_module_options({"enable_backward": False})

_GRID_KEY = name_key("track_gen_isaac.duel.grid")
#: bounds of the rival observation (the values stay in the normalizer's range whatever the distance)
_REACH, _CLOSING, _LEAD = 10.0, 20.0, 20.0


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
        wp.launch(split_start_kernel, dim=ec.num_races, inputs=[float(start_share), 0.0, mask, ec.course.seeds.seeds],
                  outputs=[ec.split_counter, ec.start_mask, ec.checkpoint_mask, ec.corner_mask], device=ec.device)
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

