"""Head-to-head evaluation: a checkpoint of the duel task races an opponent on a duel suite
(``duel-v1``: held-out generalist courses, two drones side by side from a standing start).

``python -m track_gen_isaac.evaluate --checkpoint RUN --suite duel-v1 --opponent RUN|self``.

* **the env**: the duel task's ``-Play`` env (centre plant, the body's own box) with one race per
  course of the suite: ``num_envs = 2 x races``, the suite's course seed, no course event (every
  race flies its course's generation 0), standing starts side by side with no jitter. The race
  has no ``race_over`` termination here: a race is flown once, its drones held where they stop,
  and the rollout ends when every race is over or at the suite's time limit.
* **sides**: in race ``i`` the checkpoint flies slot ``i % 2`` (left or right of the start) and
  the opponent the other, so neither side of the grid favours one of them.
* **the opponent**: ``"self"`` (the checkpoint against itself), or another run's checkpoint. A duel
  checkpoint sees the duel observation; a solo checkpoint (``TrackGen-Drone-Gates-Real-v0`` or
  ``-Race-v0``) sees the first values of the duel row, which are its own task's observation in its
  own order (:data:`~track_gen_isaac.tasks.drone_duel.SOLO_OBS`): it does not see the other drone.
* **per race**: the winner (the first to finish: ``checkpoint``, ``opponent`` or ``none``), each
  drone's completion, gates, time to finish and its ratio to the course's minimum-time reference
  (:mod:`~track_gen_isaac.evaluate.reference`: the same reference as the solo suites), ending
  (``finished``, ``crashed`` or ``time_out``), and whether the drones touched (``AgentContacts``,
  while both raced).
* **aggregates** (each with a ``_ci95`` bootstrap interval over the races): ``win_rate`` (the
  checkpoint won), ``loss_rate``, ``agent_collision_rate`` (races with a contact),
  ``completion_rate`` / ``first_lap_ratio`` / ``crash_rate`` of the checkpoint's drone, and the same
  for the opponent under ``opponent``.

Writes ``eval.json``, ``eval.md`` and ``best_worst.png`` (the best and the worst race of the
checkpoint, both paths drawn) into ``out`` (default ``<run>/eval/<suite>-vs-<opponent>``).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from track_gen_isaac.device import default_device
from track_gen_isaac.evaluate.metrics import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED, bootstrap_ci
from track_gen_isaac.evaluate.run import publish
from track_gen_isaac.evaluate.suites import Suite, get_suite, training_overlap

__all__ = ["evaluate_duel", "is_duel_suite", "race_rows", "duel_aggregate"]

SCHEMA_VERSION = 1


def is_duel_suite(suite: str | Suite | None) -> bool:
    """A suite of the head-to-head family (``duel-v*``)."""
    if suite is None:
        return False
    s = get_suite(suite)
    return s.family == "duel"


class _PrefixEnv:
    """What rsl_rl's runner reads of a VecEnv, with the observation cut to its first ``dim`` values:
    how a solo checkpoint is loaded onto the duel env (it is never stepped through this)."""

    def __init__(self, env, dim: int):
        self._env, self.dim = env, int(dim)
        self.num_envs, self.num_actions, self.device, self.cfg = env.num_envs, env.num_actions, env.device, env.cfg

    def get_observations(self):
        return cut(self._env.get_observations(), self.dim)


def cut(obs, dim: int):
    """The observation TensorDict with every group cut to its first ``dim`` values."""
    from tensordict import TensorDict

    return TensorDict({k: v[:, :dim] for k, v in obs.items()}, batch_size=obs.batch_size, device=obs.device)


def _load(env, ckpt: Path, task: str):
    """(deterministic policy, observation width) of ``ckpt`` trained on ``task``, on the duel ``env``."""
    from isaaclab_rl.rsl_rl.utils import check_rsl_rl_version, create_rsl_rl_runner, handle_deprecated_rsl_rl_cfg
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    from track_gen_isaac.evaluate.rollout import checkpoint_shapes

    shapes = checkpoint_shapes(ckpt)
    base = env.unwrapped
    full = int(base.observation_manager.group_obs_dim["policy"][0])
    if shapes["actions"] != base.action_manager.total_action_dim or shapes["obs"] > full:
        raise ValueError(f"checkpoint {ckpt} ({task}) takes {shapes['obs']} observations and gives {shapes['actions']} "
                         f"actions; the duel env has {full} observations (a solo racer flies on their first values) "
                         f"and {base.action_manager.total_action_dim} actions")
    agent = handle_deprecated_rsl_rl_cfg(load_cfg_from_registry(task, "rsl_rl_cfg_entry_point"), check_rsl_rl_version())
    agent.device = str(base.device)
    agent.actor.hidden_dims = list(shapes["actor"])
    if shapes["critic"]:
        agent.critic.hidden_dims = list(shapes["critic"])
    shim = env if shapes["obs"] == full else _PrefixEnv(env, shapes["obs"])
    with contextlib.redirect_stdout(io.StringIO()):  # the runner prints its networks
        runner = create_rsl_rl_runner(shim, agent)
    runner.load(str(ckpt), map_location=base.device)
    return runner.get_inference_policy(device=base.device), shapes["obs"]


def _build_env(suite: Suite, races: int, device: str):
    """The suite's duel env (an RslRlVecEnvWrapper): ``2 x races`` drones, see the module docstring."""
    import gymnasium as gym
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    import track_gen_isaac.tasks  # noqa: F401  (registers the tasks)
    from track_gen_isaac.task_ids import play_task_of

    task = play_task_of(suite.task)
    cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    K = int(cfg.course.agents)
    if K != 2:
        raise ValueError(f"suite {suite.name}: {task} races {K} drones per course; a duel is 2")
    cfg.scene.num_envs = K * int(races)
    cfg.sim.device = device
    cfg.seed = int(suite.seed)
    cfg.course.seed = int(suite.seed)
    cfg.course.debug_vis = False
    cfg.course.generator = {**dict(cfg.course.generator or {}), **suite.course}
    cfg.events.course = None  # every race flies its course's generation 0
    cfg.events.place.params.update({"start_share": 1.0, "start_jitter": (0.0, 0.0, 0.0)})
    cfg.race.laps = int(suite.laps)
    cfg.terminations.race = None  # a race is flown once: nothing resets it
    cfg.episode_length_s = float(suite.time_limit_s) + 10.0  # the rollout stops at the suite's limit first
    agent = load_cfg_from_registry(task, "rsl_rl_cfg_entry_point")
    return RslRlVecEnvWrapper(gym.make(task, cfg=cfg), clip_actions=agent.clip_actions), task


def _fly(env, actors, slots: np.ndarray, horizon: int) -> dict:
    """Fly every race once: per drone its path, speed, outcome step and kind, the won flag; per race contacts."""
    import torch

    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.mdp.duel import get_race

    base = env.unwrapped
    ec, race = get_course(base), get_race(base)
    N, R = base.num_envs, ec.num_races
    robot = ec.asset
    origins = base.scene.env_origins
    pos = np.zeros((horizon + 1, N, 3), np.float32)
    speed = np.zeros((horizon + 1, N), np.float32)
    out_step = np.full(N, -1, np.int64)
    outcome = np.zeros(N, np.int64)
    won = np.zeros(N, bool)
    passed = np.zeros(N, np.int64)
    contact = np.zeros(R, bool)
    ec.reset_course(None)  # progress back to the start (the env has no course event)
    env.reset()
    obs = env.get_observations()
    t0 = time.perf_counter()
    k = 0
    mine = torch.as_tensor(slots.astype(bool), device=base.device)[:, None]
    with torch.inference_mode():
        while k < horizon:
            pos[k] = (robot.data.root_pos_w.torch - origins).cpu().numpy()
            speed[k] = torch.linalg.norm(robot.data.root_lin_vel_w.torch, dim=-1).cpu().numpy()
            acts = [act(obs) for act in actors]
            obs, _, _, _ = env.step(torch.where(mine, acts[0], acts[-1]))
            k += 1
            was = race.was_racing.numpy().astype(bool)
            passed[was] += ec.result.events.passed.numpy()[was]
            o = race.outcome.numpy()
            new = (o != 0) & (out_step < 0)
            out_step[new], outcome[new] = k, o[new]
            won |= race.won.numpy().astype(bool)
            contact |= race.contact.numpy().reshape(R, -1).any(1)
            if (race.status.numpy() != 0).all():
                break
    pos[k] = (robot.data.root_pos_w.torch - origins).cpu().numpy()
    speed[k] = torch.linalg.norm(robot.data.root_lin_vel_w.torch, dim=-1).cpu().numpy()
    return {"pos": pos[:k + 1], "speed": speed[:k + 1], "out_step": out_step, "outcome": outcome, "won": won,
            "passed": passed, "contact": contact, "steps": k, "wall_s": time.perf_counter() - t0}


def race_rows(f: dict, slots: np.ndarray, refs: list[dict], dt: float) -> list[dict]:
    """One dict per race: winner, contact, and per side (``checkpoint`` / ``opponent``) its drone's
    completion, gates, time, ratio to the reference's first lap, ending."""
    rows = []
    for r in range(len(refs)):
        mine = 2 * r + int(slots[2 * r + 1])  # the checkpoint's drone; the opponent's is the other one
        row: dict = {"race": r, "checkpoint_slot": mine - 2 * r, "contact": bool(f["contact"][r])}
        winner = "none"
        for side, a in (("checkpoint", mine), ("opponent", 4 * r + 1 - mine)):
            o, n = int(f["outcome"][a]), int(f["out_step"][a])
            t = n * dt if o == 1 else math.nan
            row[side] = {"agent": a, "completed": o == 1, "gates": int(f["passed"][a]), "time_s": t,
                         "ratio": t / refs[r]["reference_first_lap_s"],
                         "end": {1: "finished", 2: "crashed"}.get(o, "time_out"),
                         "duration_s": (n if n > 0 else f["steps"]) * dt}
            if f["won"][a]:
                winner = side
        row["winner"] = winner
        row["reference_first_lap_s"] = refs[r]["reference_first_lap_s"]
        rows.append(row)
    return rows


def _stat(out: dict, key: str, values) -> None:
    v = np.asarray(values, np.float64)
    with np.errstate(invalid="ignore"):
        out[key] = float(np.nanmean(v)) if v.size and np.isfinite(v).any() else math.nan
    out[key + "_ci95"] = bootstrap_ci(v)


def _side(rows: list[dict], side: str) -> dict:
    out: dict = {}
    _stat(out, "completion_rate", [r[side]["completed"] for r in rows])
    _stat(out, "crash_rate", [r[side]["end"] == "crashed" for r in rows])
    _stat(out, "gates_per_course", [r[side]["gates"] for r in rows])
    _stat(out, "first_lap_time_mean_s", [r[side]["time_s"] for r in rows])
    _stat(out, "first_lap_ratio", [r[side]["ratio"] for r in rows])
    return out


def duel_aggregate(rows: list[dict]) -> dict:
    """``win_rate``, ``loss_rate``, ``agent_collision_rate`` and the checkpoint's drone metrics (each
    with ``_ci95``), the opponent's under ``opponent``."""
    out: dict = {"num_races": len(rows)}
    _stat(out, "win_rate", [r["winner"] == "checkpoint" for r in rows])
    _stat(out, "loss_rate", [r["winner"] == "opponent" for r in rows])
    _stat(out, "agent_collision_rate", [r["contact"] for r in rows])
    out.update(_side(rows, "checkpoint"))
    out["opponent"] = _side(rows, "opponent")
    _stat(out, "reference_first_lap_time_mean_s", [r["reference_first_lap_s"] for r in rows])
    out["winners"] = {k: sum(r["winner"] == k for r in rows) for k in ("checkpoint", "opponent", "none")}
    return out


def _rank(rows: list[dict]) -> list[int]:
    """Races best first for the checkpoint: won, then finished, by time ratio, then gates."""
    def key(r):
        c = r["checkpoint"]
        ratio = c["ratio"] if np.isfinite(c["ratio"]) else np.inf
        return (r["winner"] != "checkpoint", not c["completed"], ratio, -c["gates"])

    return [r["race"] for r in sorted(rows, key=key)]


def plot_duel(path: Path, rows: list[dict], courses: dict, f: dict, names: tuple[str, str]) -> Path:
    """The best and the worst race of the checkpoint, top down: the course, both drones' paths
    (the checkpoint's in blue, the opponent's in orange), crosses where a drone stopped."""
    from track_gen.plot import draw_course
    from track_gen_isaac.evaluate.figures import DPI, _figure

    order = _rank(rows)
    fig, axes = _figure(11.0, 5.2, cols=2)
    for ax, (label, r) in zip(axes, (("best", order[0]), ("worst", order[-1]))):
        row = rows[r]
        extent = draw_course(ax, {k: v for k, v in courses[r].items() if k not in ("poles", "reference_path")})
        pts = [np.concatenate(extent, axis=0)[:, :2]] if extent else []
        for side, color in (("checkpoint", "#1f77b4"), ("opponent", "#ff7f0e")):
            a = row[side]["agent"]
            n = int(f["out_step"][a]) if f["out_step"][a] > 0 else f["steps"]
            xy = f["pos"][: n + 1, a, :2]
            name = names[0] if side == "checkpoint" else names[1]
            ax.plot(xy[:, 0], xy[:, 1], color=color, lw=2.0, zorder=5, label=f"{name}: {row[side]['end']}")
            ax.plot(*xy[0], "o", color=color, ms=5, zorder=6)
            if row[side]["end"] == "crashed":
                ax.plot(*xy[-1], "x", color="#d62728", ms=9, mew=2.5, zorder=7)
            pts.append(xy)
        allp = np.concatenate(pts, axis=0)
        lo, hi = allp.min(0), allp.max(0)
        pad = 0.08 * float((hi - lo).max()) + 0.5
        ax.set_xlim(lo[0] - pad, hi[0] + pad)
        ax.set_ylim(lo[1] - pad, hi[1] + pad)
        ax.set_aspect("equal")
        c = row["checkpoint"]
        t = f"{c['time_s']:.2f} s = {c['ratio']:.2f} x ref" if c["completed"] else "not finished"
        ax.set_title(f"{label}: race {r}, winner {row['winner']}{', contact' if row['contact'] else ''}\n"
                     f"checkpoint {c['gates']} gates, {t}", fontsize=9)
        ax.set_xlabel("x [m]")
        ax.legend(loc="upper right", fontsize=7)
    axes[0].set_ylabel("y [m]")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    return path


def _markdown(result: dict) -> str:
    name, s = next(iter(result["suites"].items()))

    def num(x, ci=None):
        if x is None or (isinstance(x, float) and not math.isfinite(x)):
            return "n/a"
        return f"{x:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci and None not in ci else "")

    o = s["opponent"]
    lines = [f"# {name}: {Path(result['checkpoint']).name} vs {result['opponent']}", "",
             f"{s['num_races']} races, standing start side by side, sides alternated; 95% bootstrap intervals.", "",
             "| | checkpoint | opponent |", "|---|---|---|",
             f"| wins | {num(s['win_rate'], s['win_rate_ci95'])} | {num(s['loss_rate'], s['loss_rate_ci95'])} |",
             f"| completion | {num(s['completion_rate'], s['completion_rate_ci95'])} | "
             f"{num(o['completion_rate'], o['completion_rate_ci95'])} |",
             f"| crash | {num(s['crash_rate'], s['crash_rate_ci95'])} | {num(o['crash_rate'], o['crash_rate_ci95'])} |",
             f"| time / reference | {num(s['first_lap_ratio'], s['first_lap_ratio_ci95'])} | "
             f"{num(o['first_lap_ratio'], o['first_lap_ratio_ci95'])} |", "",
             f"Races with contact between the drones: {num(s['agent_collision_rate'], s['agent_collision_rate_ci95'])}."]
    return "\n".join(lines) + "\n"


def _clean(x):
    from track_gen_isaac.evaluate.run import _clean as clean

    return clean(x)


def evaluate_duel(checkpoint, suite: str | Suite = "duel-v1", *, opponent: str = "self", num_courses: int = 64,
                  out=None, device: str | None = None, figures: bool = True, ds: float = 0.05) -> dict:
    """Race ``checkpoint`` (a duel-task ``model_<it>.pt`` or run folder) against ``opponent``
    (``"self"`` or another checkpoint / run folder) on ``num_courses`` races of ``suite``; see the
    module docstring. Returns the ``eval.json`` dict (``result["suites"][suite]``). ValueError for a
    suite that is not a duel suite, a checkpoint that does not fit the duel env (naming both
    shapes), FileNotFoundError for a missing checkpoint -- before any env is built."""
    from track_gen_isaac.env_course import get_course
    from track_gen_isaac.evaluate import reference as R
    from track_gen_isaac.evaluate.flown import run_task
    from track_gen_isaac.evaluate.rollout import checkpoint_shapes, course_snapshot
    from track_gen_isaac.play import resolve_checkpoint

    s = get_suite(suite)
    if s.family != "duel":
        raise ValueError(f"suite {s.name!r} is not a head-to-head suite (duel-v*); --opponent races two drones")
    if isinstance(num_courses, bool) or not isinstance(num_courses, int) or num_courses < 1:
        raise ValueError(f"num_courses: expected an int >= 1, got {num_courses!r}")
    ckpt = resolve_checkpoint(checkpoint)
    checkpoint_shapes(ckpt)
    task = run_task(ckpt.parent) or s.task
    if opponent == "self":
        opp, opp_task, opp_name = None, task, "self"
    else:
        opp = resolve_checkpoint(opponent)
        checkpoint_shapes(opp)
        opp_task = run_task(opp.parent) or s.task
        opp_name = f"{opp.parent.name}/{opp.name} ({opp_task})"
    device = device or default_device()
    overlap = training_overlap(ckpt.parent, s)
    t0 = time.perf_counter()
    env, flown = _build_env(s, num_courses, device)
    try:
        base = env.unwrapped
        actors = [_load(env, ckpt, task)[0]]
        if opp is not None:
            act, dim = _load(env, opp, opp_task)
            actors.append(act if dim == int(base.observation_manager.group_obs_dim["policy"][0])
                          else (lambda o, act=act, dim=dim: act(cut(o, dim))))
        N = base.num_envs
        # race r: the checkpoint flies slot r % 2 (1: it is drone 2r + 1), the opponent the other
        slots = np.zeros(N, np.int64)
        for r in range(N // 2):
            slots[2 * r + (r % 2)] = 1
        ec = get_course(base)
        rotors = base.cfg.actions.rotors
        limits = R.vehicle_limits(rotors.model, getattr(rotors, "command", "rates"))
        t1 = time.perf_counter()
        course_refs = R.course_references(ec, limits, ds=ds)
        refs = [R.reference_row(r) for r in course_refs]
        t_ref = time.perf_counter() - t1
        dt = float(base.step_dt)
        f = _fly(env, actors, slots, int(round(s.time_limit_s / dt)))
        courses = {r: course_snapshot(ec, r) for r in range(ec.num_races)}
    finally:
        env.close()
    rows = race_rows(f, slots, refs, dt)
    entry = {"suite": s.to_dict(), "flown_task": flown, "checkpoint": str(ckpt), "opponent": opp_name,
             "num_courses": num_courses, **duel_aggregate(rows), "races": rows}
    result = _clean({
        "schema_version": SCHEMA_VERSION, "checkpoint": str(ckpt), "opponent": opp_name, "device": device,
        "step_dt": dt, "bootstrap": {"samples": BOOTSTRAP_SAMPLES, "seed": BOOTSTRAP_SEED, "level": 0.95},
        "warnings": [overlap] if overlap else [], "suites": {s.name: entry},
        "timing": {s.name: {"total_s": time.perf_counter() - t0, "reference_s": t_ref, "rollout_s": f["wall_s"],
                            "env_steps_per_s": f["steps"] * N / max(f["wall_s"], 1e-9)}}})
    tag = "self" if opp is None else opp.parent.name
    out_dir = Path(out) if out is not None else ckpt.parent / "eval" / f"{s.name}-vs-{tag}"
    tmp = Path(tempfile.mkdtemp(prefix="track_gen_duel_"))
    try:
        (tmp / "eval.json").write_text(json.dumps(result, indent=1))
        (tmp / "eval.md").write_text(_markdown(result))
        if figures:
            plot_duel(tmp / "best_worst.png", rows, courses, f, ("checkpoint", "self" if opp is None else "opponent"))
        publish(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    result["out"] = str(out_dir)
    return result
