"""Fly a suite's courses: build its env (one env per course), load a checkpoint, record each
course's first run from its start pose.

The suite's env is its training task's cfg with: ``num_envs`` = the number of courses, the
course seed of the suite, no ``regenerate_course`` (a course stays at generation 0, and its
progress state is not reset: an episode's last events are read after the env's automatic
reset), every run from the course start, the suite's lap count and time limit, no
markers (a layout suite: the task's env flying the layout, see
:mod:`~track_gen_isaac.evaluate.layout_suite`). Only each env's first episode counts; an env that has ended keeps flying unrecorded
until every env has ended.
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from track_gen_isaac.evaluate.suites import Suite

__all__ = ["Flight", "apply_overrides", "build_env", "checkpoint_shapes", "load_policy", "fly", "course_snapshot", "NOT_FAILURE"]

#: episode endings that are not failures
NOT_FAILURE = ("laps", "time_out")
_NO_RESET_WARNING = ".*no regenerate_course / reset_course event.*"


def apply_overrides(cfg, overrides: dict) -> None:
    """Set each dotted-path attribute of ``cfg`` (``Suite.env_overrides``); ValueError naming a path
    that does not exist in the cfg."""
    for path, value in overrides.items():
        *head, last = path.split(".")
        node = cfg
        for name in head:
            node = getattr(node, name, None)
        if node is None or not hasattr(node, last):
            raise ValueError(f"Suite.env_overrides: {path!r} is not an attribute of the task's env cfg")
        setattr(node, last, value)


def build_env(suite: Suite, num_courses: int, device: str):
    """The suite's env (an ``RslRlVecEnvWrapper``) and the agent cfg of its task."""
    import gymnasium as gym
    from isaaclab.managers import EventTermCfg
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper
    from isaaclab_rl.rsl_rl.utils import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401  (registers the tasks)
    from track_gen_isaac import mdp

    cfg = load_cfg_from_registry(suite.task, "env_cfg_entry_point")
    agent = handle_deprecated_rsl_rl_cfg(load_cfg_from_registry(suite.task, "rsl_rl_cfg_entry_point"),
                                         check_rsl_rl_version())
    apply_overrides(cfg, suite.env_overrides)
    cfg.scene.num_envs = int(num_courses)
    cfg.sim.device = device
    agent.device = device
    cfg.seed = int(suite.seed)
    cfg.course.seed = int(suite.seed)
    cfg.course.debug_vis = False
    if suite.layout is not None:  # a suite of one real layout: every env flies it
        from track_gen_isaac.evaluate.layout_suite import apply_layout

        apply_layout(cfg, suite)
    else:
        gen = cfg.course.generator
        if suite.courses_of is not None and suite.courses_of != suite.task:  # the suite's own courses
            gen = load_cfg_from_registry(suite.courses_of, "env_cfg_entry_point").course.generator
        cfg.course.generator = {**dict(gen or {}), **suite.course}
    cfg.episode_length_s = float(suite.time_limit_s)
    # no course event: the course stays at generation 0 and its progress is never reset, so the
    # events of an episode's last step (the final lap) survive the env's automatic reset
    cfg.events.course = None
    # the suite fixes its courses: a task's curriculum (e.g. a per-env difficulty) must not move them
    if getattr(cfg, "curriculum", None) is not None:
        cfg.curriculum = None
    place = {"jitter": tuple(suite.start_jitter)} if suite.start_jitter else {}
    # the task's own height above the course pose: a take-off course starts on the ground, and a body
    # placed with its centre there (z_offset 0 on gates) ends its run at once below the altitude floor
    z_offset = place_z_offset(cfg)
    if z_offset is not None:
        place["z_offset"] = z_offset
    cfg.events.place = EventTermCfg(func=mdp.place_at_course_start, mode="reset", params=place)
    cfg.terminations.laps.params["laps"] = int(suite.laps)
    with warnings.catch_warnings():  # the wrapper resets: the start placement without a course reset is deliberate
        warnings.filterwarnings("ignore", message=_NO_RESET_WARNING)
        env = RslRlVecEnvWrapper(gym.make(suite.task, cfg=cfg), clip_actions=agent.clip_actions)
    return env, agent


def place_z_offset(cfg) -> float | None:
    """The ``z_offset`` of the task cfg's own placement event (``events.place``), or None."""
    place = getattr(getattr(cfg, "events", None), "place", None)
    params = getattr(place, "params", None) or {}
    z = params.get("z_offset")
    return None if z is None else float(z)


def checkpoint_shapes(path: Path) -> dict:
    """``{"obs": int, "actions": int, "actor": [hidden...], "critic": [hidden...]}`` of an rsl_rl checkpoint."""
    import torch

    try:
        data = torch.load(str(path), map_location="cpu", weights_only=False)
        actor = data["actor_state_dict"]
    except Exception as exc:
        raise ValueError(f"{path}: not an rsl_rl checkpoint (model_<it>.pt with an actor_state_dict): {exc}") from None

    def layers(sd: dict) -> list[tuple[int, int]]:
        keys = sorted((k for k in sd if k.startswith("mlp.") and k.endswith(".weight")),
                      key=lambda k: int(k.split(".")[1]))
        return [tuple(sd[k].shape) for k in keys]

    a = layers(actor)
    c = layers(data.get("critic_state_dict", {}))
    if not a:
        raise ValueError(f"{path}: the actor has no mlp layers")
    return {"obs": int(a[0][1]), "actions": int(a[-1][0]), "actor": [int(s[0]) for s in a[:-1]],
            "critic": [int(s[0]) for s in c[:-1]]}


def load_policy(env, agent, ckpt: Path, task: str):
    """The checkpoint's deterministic policy on ``env``; ValueError naming both shapes when the
    checkpoint was trained for other observations or actions."""
    from isaaclab_rl.rsl_rl.utils import create_rsl_rl_runner

    shapes = checkpoint_shapes(ckpt)
    base = env.unwrapped
    obs_dim = int(base.observation_manager.group_obs_dim["policy"][0])
    act_dim = int(base.action_manager.total_action_dim)
    if (shapes["obs"], shapes["actions"]) != (obs_dim, act_dim):
        raise ValueError(
            f"checkpoint {ckpt} takes {shapes['obs']} observations and gives {shapes['actions']} actions, but the "
            f"flown task {task} has {obs_dim} observations and {act_dim} actions: it was trained on another task "
            f"(leave task= / --task unset to fly the run's own task)")
    agent.actor.hidden_dims = list(shapes["actor"])  # follow the checkpoint's network
    if shapes["critic"]:
        agent.critic.hidden_dims = list(shapes["critic"])
    with contextlib.redirect_stdout(io.StringIO()):  # the runner prints its networks
        runner = create_rsl_rl_runner(env, agent)
    runner.load(str(ckpt), map_location=base.device)
    return runner.get_inference_policy(device=base.device)


@dataclass
class Flight:
    """What each course's first run recorded (C courses, T recorded steps).

    ``pos`` [T, C, 3] env-frame positions and ``speed`` [T, C] [m/s] at the start of each step;
    ``steps`` [C] the run's length in env steps; ``passed`` [C] gates (checkpoints) passed;
    ``lap_steps`` [C, laps] the env step (1-based) of each lap event, -1 when not reached;
    ``end`` [C] the ending termination term (``laps``, ``time_out``, ``crash``, ...);
    ``step_dt`` [s]; ``wall_s`` the rollout's wall time; ``env_steps`` stepped (all envs)."""

    pos: np.ndarray
    speed: np.ndarray
    steps: np.ndarray
    passed: np.ndarray
    lap_steps: np.ndarray
    end: list
    step_dt: float
    wall_s: float
    env_steps: int


def fly(env, act, laps: int) -> Flight:
    """Reset ``env`` and step it with ``act(obs)`` until every env's first episode has ended."""
    import torch

    from track_gen_isaac.env_course import get_course

    base = env.unwrapped
    ec = get_course(base)
    tm = base.termination_manager
    names = list(tm.active_terms)
    C = base.num_envs
    horizon = int(base.max_episode_length) + 2
    robot = ec.asset
    origins = base.scene.env_origins
    pos = np.zeros((horizon, C, 3), np.float32)
    speed = np.zeros((horizon, C), np.float32)
    steps = np.zeros(C, np.int64)
    passed = np.zeros(C, np.int64)
    lap_steps = np.full((C, laps), -1, np.int64)
    end = [""] * C
    live = np.ones(C, bool)
    ec.reset_course(None)  # progress back to the start on every course (the env has no course event)
    with warnings.catch_warnings():  # the start placement without a course reset is deliberate
        warnings.filterwarnings("ignore", message=_NO_RESET_WARNING)
        env.reset()
    obs = env.get_observations()
    t0 = time.perf_counter()
    k = 0
    with torch.inference_mode():
        while live.any() and k < horizon:
            pos[k] = (robot.data.root_pos_w.torch - origins).cpu().numpy()
            speed[k] = torch.linalg.norm(robot.data.root_lin_vel_w.torch, dim=-1).cpu().numpy()
            obs, _, dones, _ = env.step(act(obs))
            k += 1
            ev = ec.step().events
            p = ev.passed.numpy()
            lap = ev.lap.numpy() > 0
            done = dones.to("cpu").numpy().astype(bool)
            passed[live] += p[live]
            for e in np.nonzero(live & lap)[0]:
                slot = np.nonzero(lap_steps[e] < 0)[0]
                if len(slot):
                    lap_steps[e, slot[0]] = k
            ended = live & done
            if ended.any():
                term = {n: tm.get_term(n).to("cpu").numpy().astype(bool) for n in names}
                for e in np.nonzero(ended)[0]:
                    hit = [n for n in names if term[n][e]]
                    fail = [n for n in hit if n not in NOT_FAILURE]
                    end[e] = fail[0] if fail else (hit[0] if hit else "time_out")
                    steps[e] = k
                # their flight is recorded: restart their progress too, or a finished course's lap
                # count would end (and reset) its env again on every step until the others finish
                ec.reset_course(np.nonzero(ended)[0])
            live &= ~done
    steps[live] = k
    for e in np.nonzero(live)[0]:
        end[e] = "time_out"
    return Flight(pos[:k], speed[:k], steps, passed, lap_steps, end, float(base.step_dt),
                  time.perf_counter() - t0, k * C)


def course_snapshot(ec, e: int) -> dict:
    """Env ``e``'s course as plain arrays (env frame): the dict :func:`track_gen.plot.draw_course` draws."""
    line = ec.course.course_line.line
    n = int(line.count.numpy()[e])
    out: dict = {"line": line.points.numpy()[e, :n].astype(np.float64), "closed": bool(line.closed.numpy()[e])}
    r = ec.course.result
    if ec.mode == "gates":
        out["gates"] = {"pos": r.pos.numpy()[e].copy(), "yaw": r.yaw.numpy()[e].copy(),
                        "width": float(r.width.numpy()[e]), "count": int(r.count.numpy()[e]),
                        "closed": out["closed"]}
        m = int(r.obstacle_count.numpy()[e]) if getattr(r, "obstacle_count", None) is not None else 0
        if m:  # poles (a layout's): base centre and radius, for the pictures
            out["poles"] = list(zip(r.obstacle_pos.numpy()[e, :m].tolist(), r.obstacle_radius.numpy()[e, :m].tolist()))
    else:
        out["half_width"] = r.half_width.numpy()[e].astype(np.float64)
        k = r.xy.shape[1]
        z = r.z.numpy()[e] if getattr(r, "z", None) is not None else np.zeros(k, np.float32)
        out["line"] = np.concatenate([r.xy.numpy()[e], z[:, None]], axis=1).astype(np.float64)
    return out


def random_actor(num: int, dim: int, seed: int, device):
    """A uniform random policy in [-1, 1]^dim, seeded (deterministic)."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(int(seed) & 0x7FFFFFFF)
    return lambda obs: (torch.rand(num, dim, generator=gen) * 2 - 1).to(device)


def zero_actor(num: int, dim: int, device):
    """Zero action: hover in place."""
    import torch

    z = torch.zeros(num, dim, device=device)
    return lambda obs: z

