"""One track_gen course per Isaac Lab env instance, bound zero-copy to a scene entity.

:func:`get_course` is what every course term calls. On first use it builds an
:class:`EnvCourse` from the :class:`~track_gen_isaac.course_cfg.CourseCfg` held by the env cfg
(``env.cfg.<name>``, ``course`` by default) and keeps it in the env's one holder,
:class:`EnvCourses` at ``env.track_gen_courses`` (``env.track_gen_courses[name]``; :func:`courses_of`
returns it), so each env instance owns exactly one course per name and two envs in one process share
nothing.

Binding (no per-step copy):

* ``position`` / ``orientation`` = ``asset.data.root_pos_w.warp`` / ``root_quat_w.warp``: strided
  views into the physics state (Newton's ``joint_q``), world frame, quaternions (x, y, z, w).
  Their pointers are stable across steps and resets; they only change on a full simulation
  rebuild (then build a new env).
* ``half_extents``: an [E] vec2f array filled from ``CourseCfg.half_extents``.
* ``origin``: ``env.scene.env_origins`` viewed as [E] vec3f, passed when a component declares an
  ``origin`` input (world position minus origin = the env frame the course lives in).

The read API: ``get_course(env).step()`` (the StepResult of the current env step, stepping the
course only when this env step has not) and ``get_course(env).result`` (the same arrays, never
stepping). The core ``course.step()`` of an env-bound course is guarded: a second step in one env
step raises a RuntimeError naming the read API (it would overwrite the step's results with
``delta = 0``, ``passed = 0``).

Stepping rule (stable runtime): the course is stepped **at most once per env step, by whichever
term reads it first**. ``env.common_step_counter`` is incremented right after physics, before
terminations, rewards, resets and observations, so the first reader of a step sees the new
counter and steps the course; later readers of the same step get the same StepResult.

Stepping rule (warp runtime, ``ManagerBasedRLEnvWarp``): manager stages are recorded once and
replayed, so a Python counter would only be read while recording. One *owner* term steps the
course on every call (:meth:`EnvCourse.step_as`): the first course termination term, else the
first weighted course reward term, else the first course observation term -- the first reader
of an env step. The other terms only read.

After a reset (``regenerate_course``, ``reset_course``, ``place_at_*``) the per-step events of the
step stay as they were (rewards and terminations have consumed them), but the robot may have
been moved onto a new course: the next read in the same env step re-runs only the localizer
(stateless, it projects the current pose), so the first observation of a new episode is in the
new course's frame (the warp twins re-run it at the end of each reset event instead). Progress
and collision of the reset envs hold their reset values until the next step.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import torch
import warp as wp

from track_gen.exec import mask_to_active
from track_gen.rng import name_key, stream_state
from track_gen.tools.checkpoints import jitter_position

from track_gen_isaac.course_build import build_course  # noqa: F401  (re-exported: part of this module's API)
from track_gen_isaac.course_cfg import CourseCfg
from track_gen_isaac.course_stats import EpisodeStats
from track_gen_isaac.env_poses import corner_pose_kernel, place_pose_kernel, race_mask_kernel, start_pose_kernel

__all__ = ["EnvCourse", "EnvCourses", "get_course", "courses_of", "global_rank", "course_seed", "build_course",
           "origin_view", "register_reader", "set_debug_vis", "COURSES_ATTR"]

wp.set_module_options({"enable_backward": False})

#: the attribute of the env object that holds its :class:`EnvCourses` (the only one track_gen_isaac sets)
COURSES_ATTR = "track_gen_courses"

_START_KEY = name_key("track_gen_isaac.start_pose")
_CORNER_KEY = name_key("track_gen_isaac.corner_pose")


def global_rank() -> int:
    """This process's rank: torch.distributed when initialized, else ``RANK``, else ``LOCAL_RANK``, else 0."""
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:  # pragma: no cover - a broken distributed install counts as single process
        pass
    for var in ("RANK", "LOCAL_RANK"):
        v = os.environ.get(var, "").strip()
        if v:
            try:
                r = int(v)
            except ValueError:
                raise ValueError(f"environment variable {var}={v!r} is not an int rank") from None
            if r < 0:
                raise ValueError(f"environment variable {var}={v!r} is not a rank >= 0")
            return r
    return 0


def course_seed(cfg: CourseCfg, env_cfg: Any) -> int:
    """``cfg.seed``, else ``env.cfg.seed``, else 0."""
    if cfg.seed is not None:
        return int(cfg.seed)
    s = getattr(env_cfg, "seed", None)
    return 0 if s is None else int(s)


class EnvCourse:
    """A course built for one env instance and bound to one of its scene entities
    (:func:`get_course` builds it on first use and caches it on the env).

    Read it with :meth:`step` (the StepResult of the current env step; it steps the course only
    when no term has in this env step) or :attr:`result` (the same arrays, never stepping). Its
    core ``course.step()`` is guarded: a second step in one env step raises a RuntimeError naming
    these two (it would overwrite the step's results).

    Attributes:
        course: the :class:`track_gen.course.Course` (its ``step`` is the guard above).
        result: the course's :class:`~track_gen.course.StepResult`, the arrays every step rewrites
            in place (``events``, ``contacts``, ``frame``, ``valid``); readable before any step.
        stats: the :class:`~track_gen_isaac.course_stats.EpisodeStats` behind
            ``extras["log"]["Episode_Course/*"]`` (None without a progress component).
        cfg: the CourseCfg it was built from; ``name`` its attribute name on the env cfg.
        asset: the followed scene entity; ``position`` / ``orientation`` its bound root views.
        origin: [E] vec3f view of ``env.scene.env_origins``.
        half_extents: [E] vec2f footprint array (write it in place to change the footprint).
        mask: [R] int32 scratch mask of the reset events (always the same array: one graph).
        agents, num_races: K agents per course (``CourseCfg.agents``) and R = E / K races (courses);
            env ``a`` is agent ``a % K`` of race ``a // K``. K = 1: R = E.
        step_hooks: callables run right after each course step (recordable launches).
        rank, seed: the distributed rank and the course seed used.
        stepped_at: ``env.common_step_counter`` of the last course step (None before the first;
            stable runtime).
        steps, relocalizations: Python-side calls (in the warp runtime, replays are not counted).
        warp_runtime: the env is Isaac Lab's warp-first env; ``owner`` the cfg of the term that
            steps the course there.
        debug_vis: the course's :class:`~track_gen_isaac.debug_vis.CourseDebugVis` when
            ``CourseCfg.debug_vis`` is True, else None.
    """

    def __init__(self, env, cfg: CourseCfg, name: str = "course"):
        if not isinstance(cfg, CourseCfg):
            raise TypeError(f"env.cfg.{name}: expected a track_gen_isaac.CourseCfg, got {type(cfg).__name__}")
        cfg.validate_config()
        self._env = weakref.ref(env)
        self.cfg, self.name = cfg, name
        E = self.num_envs = int(env.num_envs)
        self.device = str(env.device)
        self.rank = global_rank()
        self.seed = course_seed(cfg, env.cfg)
        try:
            asset = env.scene[cfg.asset_name]
        except KeyError:
            raise KeyError(
                f"CourseCfg.asset_name={cfg.asset_name!r} (env.cfg.{name}) is not a scene entity; entities: "
                f"{sorted(env.scene.keys())}"
            ) from None
        self.asset = asset
        # K agents per course: the env's E Isaac Lab envs are R = E / K races (env a is agent a % K of race a // K)
        K = self.agents = int(cfg.agents)
        if E % K:
            raise ValueError(f"CourseCfg.agents={K} (env.cfg.{name}): num_envs={E} is not a multiple of {K}; each race "
                             f"is K consecutive envs, so pass num_envs = races x {K}")
        R = self.num_races = E // K
        self.course = build_course(cfg, R, self.device, seed=self.seed, rank=self.rank)
        self.position = asset.data.root_pos_w.warp
        self.orientation = asset.data.root_quat_w.warp
        hx, hy = (float(v) for v in cfg.half_extents)
        self.half_extents = wp.array(np.tile(np.array([hx, hy], np.float32), (E, 1)), dtype=wp.vec2f,
                                     device=self.device)
        self.origin = origin_view(env)
        declared = set()
        for c in self.course.components.values():
            declared |= set((c.inputs or {}).keys())
        self.bindings = {"position": self.position, "orientation": self.orientation,
                         "half_extents": self.half_extents}
        if "origin" in declared:
            self.bindings["origin"] = self.origin if K == 1 else _race_origins(env, K, name)
        self.course.bind(**self.bindings)
        # event scratch (per race: the masks of regenerate / reset and the course poses the placements draw)
        self.mask = wp.zeros(R, dtype=wp.int32, device=self.device)
        self.mask_t = wp.to_torch(self.mask)
        self.pose_pos = wp.zeros(R, dtype=wp.vec3f, device=self.device)
        self.pose_yaw = wp.zeros(R, dtype=wp.float32, device=self.device)
        self.pose_index = wp.full(R, -1, dtype=wp.int32, device=self.device)
        # forward speed [m/s] of the placed pose (corner starts at speed); root_poses spends it
        self.pose_speed = wp.zeros(R, dtype=wp.float32, device=self.device)
        self.start_counter = wp.zeros(R, dtype=wp.int32, device=self.device)
        # place_at_start_or_checkpoint's split of a reset: its draw counter and the three masks
        self.split_counter = wp.zeros(R, dtype=wp.int32, device=self.device)
        self.start_mask = wp.zeros(R, dtype=wp.int32, device=self.device)
        self.checkpoint_mask = wp.zeros(R, dtype=wp.int32, device=self.device)
        self.corner_mask = wp.zeros(R, dtype=wp.int32, device=self.device)
        self.corner_counter = wp.zeros(R, dtype=wp.int32, device=self.device)
        # callables run right after every course step (recordable launches only: in the warp runtime
        # they are recorded into the owner term's stage), e.g. the duel's race state
        self.step_hooks: list = []
        self.root_pose = wp.zeros(E, dtype=wp.transformf, device=self.device)
        self.root_velocity = wp.zeros(E, dtype=wp.spatial_vectorf, device=self.device)
        self._buffers: dict[Any, wp.array] = {}
        self._torch: dict[int, torch.Tensor] = {}
        # the course's per-step results (the arrays course.step() rewrites in place, every per-step
        # component's entry included: obstacles, a depth camera...), readable before any step
        self.result = self.course.step_result
        self.warp_runtime = _is_warp_env(env)
        self.owner = None  # warp runtime: the term cfg whose term steps the course
        self.stats_owner = None  # warp runtime: the term cfg whose reset logs the episode statistics
        # per-episode statistics for extras["log"] (Episode_Course/*); None without a progress component
        self.stats = EpisodeStats(E, self.device) if self.result.events is not None else None
        # the core step, and the guard that replaces it on this course (a second step per env step raises)
        self._core_step = self.course.step
        self.course.step = self._guarded_step
        self.stepped_at = None
        self.stale = False
        self.steps = 0
        self.relocalizations = 0
        # debug markers (CourseCfg.debug_vis): drawn from a host-side render callback, nothing per step
        self.debug_vis = None
        if cfg.debug_vis:
            from track_gen_isaac.debug_vis import CourseDebugVis

            self.debug_vis = CourseDebugVis(env, self)

    # -- access ---------------------------------------------------------------------------------
    @property
    def env(self):
        env = self._env()
        if env is None:
            raise RuntimeError("the env this course was built for is gone")
        return env

    @property
    def mode(self) -> str:
        return self.cfg.mode

    def torch(self, arr: wp.array) -> torch.Tensor:
        """A cached zero-copy torch view of one of the course's stable arrays."""
        t = self._torch.get(id(arr))
        if t is None:
            t = self._torch[id(arr)] = wp.to_torch(arr)
        return t

    def buffer(self, key, shape, dtype=wp.float32) -> wp.array:
        """A preallocated output array, one per key (terms keep their results here)."""
        buf = self._buffers.get(key)
        if buf is None:
            buf = self._buffers[key] = wp.zeros(shape, dtype=dtype, device=self.device)
        return buf

    def component(self, name: str):
        c = self.course.components.get(name)
        if c is None:
            raise KeyError(f"the course env.cfg.{self.name} has no component {name!r}; components: "
                           f"{list(self.course.components)}")
        return c

    # -- stepping -------------------------------------------------------------------------------
    def step(self):
        """Stable runtime: the StepResult of the current env step. Steps the course when this env
        step has not stepped it yet (the first reader does), re-localizes after a reset, else
        returns it as is. Warp runtime: returns the results as they are (the owner term steps)."""
        if self.warp_runtime:
            return self.result
        counter = int(self.env.common_step_counter)
        if self.stepped_at != counter:
            self._step_course()
            self.stepped_at = counter
            self.stale = False
        elif self.stale:
            self.relocalize()
        return self.result

    def _step_course(self) -> None:
        """The course step itself, then the episode-statistics snapshot (one launch; recordable)."""
        self._core_step()
        self.steps += 1
        if self.stats is not None:
            self.stats.snapshot_events(self.result.events)
        for hook in self.step_hooks:
            hook()

    def _guarded_step(self):
        """``course.step()`` of an env-bound course (it replaces the core method on this course).
        Stable runtime: steps the course when this env step has not (as :meth:`step`), else raises.
        Warp runtime: raises when a course term steps the course in every env step (its owner)."""
        if self.warp_runtime:
            if courses_of(self.env).readers_of(self.name):
                raise RuntimeError(self._double_step_message(
                    "its owner term steps it inside the recorded stage of every env step"))
            self._step_course()
            return self.result
        if self.stepped_at == int(self.env.common_step_counter):
            raise RuntimeError(self._double_step_message("it was already stepped in this env step"))
        return self.step()

    def _double_step_message(self, why: str) -> str:
        return (
            f"course.step() on the course of env.cfg.{self.name}: this course is bound to the env, which steps it once "
            f"per env step, and {why}; a second step would overwrite this step's StepResult (progress delta 0, "
            f"nothing passed). Read it instead: track_gen_isaac.get_course(env, {self.name!r}).step() (the current "
            f"env step's StepResult; steps the course only if this env step has not) or "
            f"get_course(env, {self.name!r}).result"
        )

    def step_as(self, term_cfg):
        """Warp runtime: step the course when ``term_cfg`` is the owner term's cfg, i.e. the first
        course term the env evaluates in a step (the first course termination term, else the first
        weighted course reward term, else the first course observation term). Its stage is
        recorded once and replayed, so the owner's stage must hold the step on every call: a
        Python step counter would be read only while recording."""
        if self.owner is None:
            self.owner = self._find_owner()
        if self.owner is not None and term_cfg is self.owner:
            self._step_course()
        return self.result

    def _find_owner(self):
        """The owner among the reader terms registered for this course (:func:`register_reader`, in
        construction order): the first termination, else the first weighted reward, else the first
        observation. None while the env is still being built (nobody steps yet)."""
        env = self.env
        managers = ("termination_manager", "reward_manager", "observation_manager")
        if any(getattr(env, n, None) is None for n in managers):
            return None
        readers = courses_of(env).readers_of(self.name)
        for kind in ("termination", "reward", "observation"):
            for k, tc in readers:
                if k == kind and (kind != "reward" or tc.weight != 0.0):
                    return tc
        raise RuntimeError(f"no course term reads env.cfg.{self.name}: nothing would step the course")

    # -- episode statistics -----------------------------------------------------------------------
    def log_episodes(self, env_ids) -> None:
        """Stable runtime, from every course term's ``reset(env_ids)``: the ``Episode_Course/*`` means
        of the resetting envs into ``env.extras["log"]``, once per reset
        (:class:`~track_gen_isaac.course_stats.EpisodeStats`)."""
        if self.stats is not None and not self.warp_runtime:
            self.stats.log_stable(self.env, env_ids)

    def log_episodes_as(self, term_cfg, env_mask) -> dict | None:
        """Warp runtime, from a reader term's ``reset(env_mask)``: when ``term_cfg`` is the course's
        stats term (the first course reward term, else the first course reader), reduce over
        ``env_mask`` (recordable) and return the persistent ``Episode_Course/*`` views; else None.
        A stats term that is not a reward term puts the views into the warp reward manager's reset
        extras itself (only a reward term's reset extras reach the log)."""
        if self.stats is None or env_mask is None:
            return None
        if self.stats_owner is None:
            readers = courses_of(self.env).readers_of(self.name)
            kinds = [k for k, _ in readers]
            if not readers:
                return None
            i = kinds.index("reward") if "reward" in kinds else 0
            self.stats_owner = readers[i]
        kind, cfg = self.stats_owner
        if term_cfg is not cfg:
            return None
        self.stats.reduce(env_mask)
        if kind == "reward":
            return self.stats.views
        extras = getattr(getattr(self.env, "reward_manager", None), "_reset_extras", None)
        if isinstance(extras, dict):
            extras.update(self.stats.views)
        return None

    def relocalize(self) -> None:
        """Re-run the localizer on the current pose (after a reset moved the robot)."""
        loc = self.course.components.get("localizer")
        if loc is not None:
            loc.step(self.course.context)
        self.stale = False
        self.relocalizations += 1

    # -- resets ---------------------------------------------------------------------------------
    def set_mask(self, env_ids) -> wp.array:
        """Write ``env_ids`` (``slice(None)``/None or an index tensor) into :attr:`mask` (int32 flags).
        With K agents per course the flags are per race: a race is masked when any of its envs is."""
        m = self.mask_t
        if env_ids is None or isinstance(env_ids, slice):
            if self.agents > 1 and isinstance(env_ids, slice) and env_ids != slice(None):
                env_ids = torch.arange(self.num_envs, device=m.device)[env_ids]
            else:
                m.zero_()
                m[env_ids if isinstance(env_ids, slice) else slice(None)] = 1
                return self.mask
        ids = torch.as_tensor(env_ids, device=m.device)
        m.zero_()
        if ids.numel():
            m.index_fill_(0, ids.to(torch.long).reshape(-1) // self.agents, 1)
        return self.mask

    def regenerate(self, env_ids, advance: bool = True) -> None:
        """New courses (``advance=True``) for ``env_ids``; every other env's course is untouched."""
        self.course.regenerate(mask=self.set_mask(env_ids), advance=bool(advance))
        self.stale = True

    def reset_course(self, env_ids) -> None:
        """Restart the episode state of ``env_ids`` on the same course (components' reset hooks)."""
        self.course.reset(mask=self.set_mask(env_ids))
        self.stale = True

    def mask_from(self, env_mask: wp.array) -> wp.array:
        """Warp runtime: the manager's [E] bool ``env_mask`` as :attr:`mask` (int32 flags; recordable;
        with K agents per course, a race is masked when any of its envs is)."""
        if self.agents == 1:
            mask_to_active(env_mask, self.mask)
        else:
            wp.launch(race_mask_kernel, dim=self.num_races, inputs=[self.agents, env_mask], outputs=[self.mask],
                      device=self.device)
        return self.mask

    def start_poses(self, mask: wp.array, jitter=(0.0, 0.0, 0.0)) -> None:
        """Course start pose plus jitter into :attr:`pose_pos` / :attr:`pose_yaw` (env frame) for the
        envs (races) of the int32 ``mask``. Recordable."""
        jl, jv, jy = _jitter(jitter)
        r = self.course.result
        wp.launch(start_pose_kernel, dim=self.num_races,
                  inputs=[_START_KEY, jl, jv, jy, mask, self.course.seeds.seeds, r.start_pos, r.start_yaw],
                  outputs=[self.start_counter, self.pose_pos, self.pose_yaw], device=self.device)

    def checkpoint_poses(self, mask: wp.array, jitter=(0.0, 0.0, 0.0)) -> None:
        """A random checkpoint per env of the int32 ``mask`` (plus jitter) into :attr:`pose_pos` /
        :attr:`pose_yaw` / :attr:`pose_index` (-1: no checkpoint, start pose), counted as passed
        by progress. Recordable."""
        self.course.checkpoint_sampler.sample(mask, self.pose_index, self.pose_pos, self.pose_yaw,
                                              jitter=_jitter(jitter))
        progress = self.course.progress
        if progress is not None:
            progress.start_at(mask, self.pose_index)

    def corner_poses(self, mask: wp.array, lead=(2.0, 10.0), jitter=(0.0, 0.0, 0.0),
                     power: float | None = None, brake: float | None = None) -> None:
        """Band tracks: the checkpoint a uniform ``lead`` (min, max) [m] of arc length before each
        masked env's tightest turn (``power`` None) or before a point drawn with probability
        proportional to ``|curvature|^power`` (plus jitter, as a checkpoint start) into :attr:`pose_pos` /
        :attr:`pose_yaw` / :attr:`pose_index`, counted as passed by progress. ``brake`` [m/s^2] (None:
        at rest): a forward speed into :attr:`pose_speed`, uniform up to the speed from which braking at
        ``brake`` meets the turn at ``sqrt(brake / |curvature|)``. Recordable."""
        if self.mode != "track":
            raise ValueError(f"EnvCourse.corner_poses: env.cfg.{self.name} is a {self.mode} course; a start before "
                             f"the tightest turn needs a band track's centre line")
        lo, hi = (float(v) for v in lead)
        jl, jv, jy = _jitter(jitter)
        r = self.course.result
        cp = self.course.checkpoint_sampler.checkpoints
        wp.launch(corner_pose_kernel, dim=self.num_races,
                  inputs=[_CORNER_KEY, -1.0 if power is None else float(power), lo, hi,
                          0.0 if brake is None else float(brake), jl, jv, jy, mask,
                          self.course.seeds.seeds, r.curvature, r.s, r.length, cp.pos, cp.normal, cp.s, cp.count,
                          r.start_pos, r.start_yaw],
                  outputs=[self.corner_counter, self.pose_index, self.pose_pos, self.pose_yaw, self.pose_speed],
                  device=self.device)
        progress = self.course.progress
        if progress is not None:
            progress.start_at(mask, self.pose_index)

    def root_poses(self, mask: wp.array, z_offset: float, pose: wp.array | None = None,
                   velocity: wp.array | None = None) -> None:
        """World root poses (``pose_pos`` + origin + z_offset, yaw ``pose_yaw``) and velocities
        (:attr:`pose_speed` along the heading, then zeroed: 0 unless a corner start at speed set it) for
        the envs of ``mask``, into ``pose`` / ``velocity`` ([E] transformf / spatial_vectorf; default
        :attr:`root_pose` / :attr:`root_velocity`). Recordable. One agent per course only (a race
        of K agents is placed by :class:`~track_gen_isaac.mdp.duel.place_on_grid`)."""
        if self.agents != 1:
            raise RuntimeError(f"EnvCourse.root_poses: env.cfg.{self.name} races {self.agents} agents per course; "
                               f"place them with track_gen_isaac.mdp.place_on_grid")
        wp.launch(place_pose_kernel, dim=self.num_envs,
                  inputs=[float(z_offset), mask, self.pose_pos, self.pose_yaw, self.origin, self.pose_speed],
                  outputs=[self.root_pose if pose is None else pose,
                           self.root_velocity if velocity is None else velocity], device=self.device)

    def __repr__(self) -> str:
        return (f"EnvCourse(name={self.name!r}, mode={self.mode!r}, num_envs={self.num_envs}, rank={self.rank}, "
                f"seed={self.seed}, components={list(self.course.components)})")


def _race_origins(env, agents: int, name: str) -> wp.array:
    """The [R] vec3f origins of the races of ``agents`` consecutive envs (a contiguous copy, kept alive by the
    returned array); ValueError when the envs of one race do not share an origin."""
    origins = env.scene.env_origins.reshape(-1, agents, 3)
    if not bool(torch.all(origins == origins[:, :1])):
        raise ValueError(f"CourseCfg.agents={agents} (env.cfg.{name}): the {agents} envs of a race must share one "
                         f"origin (their drones race one course); set scene.env_spacing = 0 (the drones have no "
                         f"collision shape, so the envs never touch; contacts between drones are AgentContacts)")
    return wp.from_torch(origins[:, 0].contiguous(), dtype=wp.vec3f)


def origin_view(env) -> wp.array:
    """``env.scene.env_origins`` as an [E] vec3f warp array: a zero-copy view, or a one-off
    contiguous copy when the tensor is strided (origins are a fixed grid, so the copy stays exact).
    The warp array holds a reference to the tensor it views."""
    origins = env.scene.env_origins
    if not origins.is_contiguous():
        origins = origins.contiguous()
    return wp.from_torch(origins, dtype=wp.vec3f)


def _is_warp_env(env) -> bool:
    """True for Isaac Lab's warp-first env (``ManagerBasedRLEnvWarp`` and its subclasses)."""
    return any(c.__module__.startswith("isaaclab_experimental.") for c in type(env).__mro__)


def _jitter(jitter) -> tuple[float, float, float]:
    try:
        jl, jv, jy = (float(j) for j in jitter)
    except (TypeError, ValueError):
        raise TypeError(f"jitter: expected (lateral [m], vertical [m], yaw [rad]) half ranges, got {jitter!r}") from None
    if not all(np.isfinite(j) and j >= 0.0 for j in (jl, jv, jy)):
        raise ValueError(f"jitter: entries must be finite and >= 0, got {jitter!r}")
    return jl, jv, jy


def course_cfg_of(env_cfg, name: str = "course") -> CourseCfg:
    """``env_cfg.<name>``, checked to be a CourseCfg."""
    cfg = getattr(env_cfg, name, None)
    if cfg is None:
        raise AttributeError(
            f"the env cfg has no attribute {name!r}: declare the course on it, e.g. "
            f"`{name}: CourseCfg = CourseCfg(...)`, or pass the course_name of the one you declared"
        )
    if not isinstance(cfg, CourseCfg):
        raise TypeError(f"env.cfg.{name}: expected a track_gen_isaac.CourseCfg, got {type(cfg).__name__}")
    return cfg


class EnvCourses(Mapping[str, EnvCourse]):
    """What track_gen_isaac keeps on one env instance, at ``env.track_gen_courses``: its courses by
    name (a read-only mapping name -> :class:`EnvCourse`; :func:`get_course` builds each on first use)
    and, warp runtime, the reader terms registered per course name (:func:`register_reader`), in
    construction order. One holder per env object, so two envs in one process share nothing."""

    def __init__(self) -> None:
        self.courses: dict[str, EnvCourse] = {}
        self.readers: dict[str, list[tuple[str, Any]]] = {}

    def __getitem__(self, name: str) -> EnvCourse:
        return self.courses[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.courses)

    def __len__(self) -> int:
        return len(self.courses)

    def readers_of(self, name: str) -> list[tuple[str, Any]]:
        """``(kind, term_cfg)`` of the warp-runtime terms reading course ``name`` (empty: none)."""
        return self.readers.get(name, [])

    def __repr__(self) -> str:
        return f"EnvCourses(courses={list(self.courses)}, readers={ {k: len(v) for k, v in self.readers.items()} })"


def courses_of(env) -> EnvCourses:
    """The env's :class:`EnvCourses` (``env.track_gen_courses``), created on first use: the one
    accessor through which courses and readers are found."""
    holder = env.__dict__.get(COURSES_ATTR)
    if holder is None:
        holder = EnvCourses()
        setattr(env, COURSES_ATTR, holder)
    return holder


def get_course(env, name: str = "course") -> EnvCourse:
    """The env's course named ``name``: built from ``env.cfg.<name>`` on first use, then kept in
    the env's :class:`EnvCourses`."""
    courses = courses_of(env).courses
    ec = courses.get(name)
    if ec is None:
        ec = courses[name] = EnvCourse(env, course_cfg_of(env.cfg, name), name)
    return ec


def register_reader(env, name: str, kind: str, term_cfg) -> None:
    """Warp runtime: a term reading course ``name`` declares itself when it is constructed:
    ``kind`` is ``"termination"``, ``"reward"`` or ``"observation"`` (the manager it belongs to),
    ``term_cfg`` its cfg. The course steps when its owner term (:meth:`EnvCourse.step_as`), the
    first of these the env evaluates in a step, reads it. Kept in the env's :class:`EnvCourses`, so
    two envs share nothing; the course itself is still built on first use."""
    courses_of(env).readers.setdefault(name, []).append((kind, term_cfg))


def set_debug_vis(env, debug_vis: bool, name: str = "course"):
    """Turn the debug markers of ``env``'s course ``name`` on or off at run time (they are built on
    the first ``True`` when ``CourseCfg.debug_vis`` was False). Returns the
    :class:`~track_gen_isaac.debug_vis.CourseDebugVis` (None when turning off a course that never had one)."""
    from track_gen_isaac.debug_vis import CourseDebugVis

    if not isinstance(debug_vis, bool):
        raise TypeError(f"debug_vis: expected True or False, got {debug_vis!r}")
    ec = get_course(env, name)
    dv = getattr(ec, "debug_vis", None)
    if dv is None:
        if not debug_vis:
            return None
        dv = ec.debug_vis = CourseDebugVis(env, ec)
        return dv
    dv.set_debug_vis(debug_vis)
    return dv
