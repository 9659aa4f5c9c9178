"""The state of a head-to-head race (:mod:`track_gen_isaac.mdp.duel`): :class:`RaceCfg` (the env cfg's
``race``), :class:`RaceState` (each agent racing, finished or crashed; the winner; the kernels that
update it after every course step and restart it on reset) and :func:`get_race`."""

from __future__ import annotations

import math
import numbers
import weakref

import torch
import warp as wp
from isaaclab.utils import configclass

from track_gen_isaac.env_course import get_course

__all__ = ["RaceCfg", "RaceState", "get_race", "RACING", "FINISHED", "CRASHED", "SIGNALS", "RACE_ATTR"]

wp.set_module_options({"enable_backward": False})

#: agent status values of :attr:`RaceState.status`
RACING, FINISHED, CRASHED = 0, 1, 2
#: the signals of :class:`race_reward`
SIGNALS = ("progress", "gate", "finish", "win", "crash", "contact", "proximity", "rates")
#: the env attribute holding its :class:`RaceState`
RACE_ATTR = "track_gen_race"


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
