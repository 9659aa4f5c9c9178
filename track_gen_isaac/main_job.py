"""The main job: train a drone racer headless with Isaac Lab's rsl_rl entry point, then report.

``bash scripts/main.sh`` runs this module::

    isaaclab train --rl_library rsl_rl --task TrackGen-Drone-Gates-v0 --device <default> ...
    python -m track_gen_isaac.play --task TrackGen-Drone-Gates-Play-v0 --checkpoint <run folder>

Flags are Isaac Lab's (``--task``, ``--num_envs``, ``--max_iterations``, ``--device``, ``--seed``;
anything else, e.g. Hydra overrides ``agent.algorithm.learning_rate=3e-4``, goes to
``isaaclab train`` unchanged). The run folder is ``logs/rsl_rl/<experiment>/<timestamp>``
(checkpoints, tensorboard events, params, ``train.log``), the report goes to its ``report/``.
One progress line per training iteration: reward, episode length, then the course statistics
the course terms log per episode (``Episode_Course/checkpoints``, ``/laps``, ``/progress_m``).
The full rsl_rl output is in ``train.log``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from track_gen_isaac.device import default_device
from track_gen_isaac.task_ids import play_task_of, task_family

__all__ = ["main", "play_task_of", "default_device", "default_iterations", "task_family"]

DEFAULT_TASK = "TrackGen-Drone-Gates-Real-v0"
#: main-job defaults (override with the flags); the default task's whole job takes 14.5 minutes on 2 CPU cores
#: (README, "Two commands")
#: The car (``Car-Track``): 700 iterations; 10.7 minutes for the whole job alone on 2 cores (9.9 of training;
#: seed 4), 13.8-14.1 with two jobs at once (seeds 1-3; docs/isaac/car-racing.rst, v13)
CPU_DEFAULTS = {"num_envs": 1024, "max_iterations": 500}
GPU_DEFAULTS = {"num_envs": 4096, "max_iterations": 600}
#: CPU iteration budgets measured for one task family (``TrackGen-Drone-<family>[-Warp][-Play]-v0``)
#: where the shared 500 is not the best one: both racers keep getting faster up to 900 and, with
#: their crash weight and safety margin, stay as reliable (docs/isaac/drone-racing.rst, seed study;
#: 13.5 minutes of the generalist's training on 2 cores; the duel task: 900 iterations of 1024 drones, a median 1.13 s
#: each, about 17 minutes: docs/user-guide/head-to-head.rst, "Measured"; the car: see CPU_DEFAULTS)
CPU_ITERATIONS = {"Gates-Race": 900, "Gates-Race-Curriculum": 900, "Gates-Real": 900, "Car-Track": 700,
                  "Gates-Duel": 900}
#: checkpoints whose weights the main job averages into the policy it reports (``model_average.pt``,
#: :mod:`track_gen_isaac.policy_average`): the car's last 5 (iterations 500-699), a steadier policy than its last
#: checkpoint (docs/isaac/car-racing.rst, "Averaged checkpoints"); other families fly their last checkpoint
AVERAGE_LAST = {"Car-Track": 5}
#: head-to-head task families: after training, the main job races the checkpoint against itself (and
#: ``--opponent``) on the duel suite instead of the one-drone playback and suite
DUEL_FAMILIES = ("Gates-Duel",)
#: task families whose main job also flies every shipped real layout zero-shot (runs per layout)
LAYOUT_RUNS = {"Gates-Real": 32, "Car-Track": 8}
#: where a family's real layouts are, under ``track_gen.layouts.data_dir()`` (default: the folder itself;
#: the car drives the shipped circuits, at its task's scale)
LAYOUT_DIRS = {"Car-Track": "circuits"}
#: held-out courses the main job evaluates per family where the shared ``--eval_courses`` 64 is too
#: many for its time budget (the car's laps are long: each reference costs ~2.5 s on one core, cached)
EVAL_COURSES = {"Car-Track": 32}
#: families whose real-layout runs skip the zero-action and random floors (the car's zero action
#: stands still until the time limit: minutes of rollout that say nothing)
LAYOUT_BASELINES = {"Car-Track": False}

_FIELDS = {
    "Mean reward": "reward",
    "Mean episode length": "len",
    "Episode_Course/checkpoints": "passes",
    "Episode_Course/laps": "laps",
    "Episode_Course/progress_m": "progress",
    "Steps per second": "sps",
    "ETA": "eta",
}
_ITER = re.compile(r"Learning iteration\s+(\d+)/(\d+)")
_KV = re.compile(r"^\s*([A-Za-z_/ ]+?):\s+(\S+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def default_iterations(task: str, device: str) -> int:
    """The main job's iteration budget for ``task`` on ``device`` when ``--max_iterations`` is not given."""
    if device.startswith("cuda"):
        return GPU_DEFAULTS["max_iterations"]
    return CPU_ITERATIONS.get(task_family(task), CPU_DEFAULTS["max_iterations"])


def _progress(line: str, state: dict, what: str = "gates") -> str | None:
    """Fold rsl_rl's per-iteration block into one line (returned when the block ends). The course
    statistics are the course terms' ``Episode_Course/*`` log entries (means over the iteration's
    episodes); ``what`` names the passes (``"gates"`` or ``"checkpoints"``)."""
    line = _ANSI.sub("", line)
    m = _ITER.search(line)
    if m:
        state.clear()
        state["it"], state["of"] = int(m.group(1)), int(m.group(2))
        return None
    m = _KV.match(line)
    key = m.group(1).strip() if m else None
    if m and "it" in state and key in _FIELDS:
        state[_FIELDS[key]] = m.group(2)
        if key == "ETA":
            parts = [f"iter {state['it'] + 1}/{state['of']}", f"reward {state.get('reward', '-')}",
                     f"episode {state.get('len', '-')} steps",
                     f"{what}/episode {_number(state.get('passes'), 1)}",
                     f"laps/episode {_number(state.get('laps'), 2)}",
                     f"progress {_number(state.get('progress'), 1)} m",
                     f"{state.get('sps', '-')} steps/s", f"ETA {state['eta']}"]
            return " | ".join(parts)
    return None


def _number(text: str | None, digits: int) -> str:
    try:
        return f"{float(text):.{digits}f}"
    except (TypeError, ValueError):
        return "-"


def _passes_of(task: str) -> str:
    """What the task's course passes: gates for a gate task (by its id), else checkpoints."""
    return "gates" if "gate" in task.lower() else "checkpoints"


def _run_train(cmd: list[str], log_path: Path, what: str = "gates") -> int:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    state: dict = {}
    with open(log_path, "w") as log, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                      text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            msg = _progress(line, state, what)
            if msg:
                print(f"[train] {msg}", flush=True)
            elif line.startswith(("Traceback", "Error", "[ERROR]")) or "Error:" in line:
                print(line, end="", flush=True)
        return proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bash scripts/main.sh", description=__doc__.split("\n\n")[0],
                                 epilog="Unknown arguments are passed to `isaaclab train` (e.g. Hydra overrides).")
    ap.add_argument("--task", default=DEFAULT_TASK)
    ap.add_argument("--num_envs", type=int, default=None)
    ap.add_argument("--max_iterations", type=int, default=None)
    ap.add_argument("--device", default=None, help="default: cuda:0 when a GPU is visible, else cpu")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--play_steps", type=int, default=750, help="playback length [env steps] (750 = 15 s)")
    ap.add_argument("--play_envs", type=int, default=16)
    ap.add_argument("--skip_train", metavar="RUN_DIR", default=None, help="only play and report an existing run")
    ap.add_argument("--eval_courses", type=int, default=None,
                    help="held-out courses of the benchmark suite flown after training (0: skip; default 64, 32 "
                         "for the car; races of a head-to-head task)")
    ap.add_argument("--opponent", default=None, metavar="RUN",
                    help="head-to-head tasks: also race the trained checkpoint against this run (model file or run "
                         "folder, e.g. the solo racer's) on the duel suite; it always races itself")
    ap.add_argument("--init_from", default=None, metavar="RUN",
                    help="start from this run's latest checkpoint (or a model file) instead of from scratch: a "
                         "checkpoint whose observation is a prefix of the task's, e.g. the solo generalist's for the "
                         "head-to-head task (track_gen_isaac.warm_start); fresh optimizer, iterations from 0")
    ap.add_argument("--eval_layouts", type=int, default=None,
                    help="runs per shipped real layout flown zero-shot after training (0: skip; default 32 for the "
                         "generalist TrackGen-Drone-Gates-Real-v0, 8 per shipped circuit for the car "
                         "TrackGen-Car-Track-v0, else 0)")
    ap.add_argument("--average", type=int, default=None, metavar="N",
                    help="fly and report the mean of the run's last N checkpoints' weights (model_average.pt; 1: "
                         "the last checkpoint; default 5 for the car TrackGen-Car-Track-v0, else 1)")
    args, extra = ap.parse_known_args(argv)
    # refuse bad sizes before a training run, not after it
    for flag, lo in (("num_envs", 1), ("max_iterations", 1), ("play_steps", 1), ("play_envs", 1), ("eval_courses", 0),
                     ("eval_layouts", 0), ("average", 1)):
        v = getattr(args, flag)
        if v is not None and v < lo:
            ap.error(f"--{flag}: expected an integer >= {lo}, got {v}")

    device = args.device or default_device()
    defaults = GPU_DEFAULTS if device.startswith("cuda") else CPU_DEFAULTS
    num_envs = args.num_envs or defaults["num_envs"]
    iters = args.max_iterations or default_iterations(args.task, device)

    if args.skip_train:
        run_dir = Path(args.skip_train)
    else:
        exe = shutil.which("isaaclab") or str(Path(sys.executable).with_name("isaaclab"))
        stamp = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
        if args.init_from is not None:
            from track_gen_isaac.warm_start import latest_checkpoint, task_obs_dims, widen_checkpoint

            try:
                src = latest_checkpoint(args.init_from)
                init = widen_checkpoint(src, Path("logs") / f"init_{stamp}.pt", task_obs_dims(args.task)).resolve()
            except (FileNotFoundError, ValueError) as exc:
                ap.error(f"--init_from: {exc}")
            extra = [*extra, "--checkpoint", str(init), "--no-resume_optimizer_state"]
            print(f"[main] starting from {src} (widened to {args.task}'s observation: {init})", flush=True)
        # the runner's own device must follow the sim's (`--device` only moves the sim)
        cmd = [exe, "train", "--rl_library", "rsl_rl", "--task", args.task, "--num_envs", str(num_envs),
               "--max_iterations", str(iters), "--device", device, "--seed", str(args.seed),
               "--run_timestamp", stamp, *extra, f"agent.device={device}"]
        print(f"[main] {' '.join(cmd[1:])}", flush=True)
        print(f"[main] training {args.task}: {num_envs} envs x {iters} iterations on {device}", flush=True)
        tmp_log = Path("logs") / f"train_{stamp}.log"
        t0 = time.perf_counter()
        rc = _run_train(cmd, tmp_log, _passes_of(args.task))
        runs = sorted(Path("logs", "rsl_rl").glob(f"*/{stamp}*"))
        if rc != 0 or not runs:
            print(f"[main] training failed (exit {rc}); full log: {tmp_log}", file=sys.stderr, flush=True)
            return rc or 1
        run_dir = runs[-1]
        shutil.move(str(tmp_log), run_dir / "train.log")
        print(f"[main] trained in {time.perf_counter() - t0:.0f} s: {run_dir}", flush=True)

    _average(run_dir, AVERAGE_LAST.get(task_family(args.task), 1) if args.average is None else args.average)
    if task_family(args.task) in DUEL_FAMILIES:
        races = EVAL_COURSES.get(task_family(args.task), 64) if args.eval_courses is None else args.eval_courses
        return _duel_report(run_dir, args.task, races, args.opponent, device)
    if args.opponent is not None:
        print(f"[main] --opponent applies to the head-to-head tasks ({', '.join(DUEL_FAMILIES)}); ignored for "
              f"{args.task}", file=sys.stderr, flush=True)

    from track_gen_isaac.evaluate import suite_of_task
    from track_gen_isaac.play import play

    # every course the report shows is held out: playback and evaluation draw from the benchmark
    # suite's reserved seeds, never from the training seed
    suite = suite_of_task(args.task)
    stats = play(play_task_of(args.task), run_dir, num_envs=args.play_envs, steps=args.play_steps, device=device,
                 seed=suite.seed, out=run_dir / "report")
    base = stats["baselines"]
    print(f"[main] report: {run_dir / 'report'}", flush=True)
    print(f"[main] gates per episode: policy {stats['gates_per_episode']:.2f} | zero action "
          f"{base.get('zero', {}).get('gates_per_episode', float('nan')):.2f} | random "
          f"{base.get('random', {}).get('gates_per_episode', float('nan')):.2f}; lap rate {stats['lap_rate']:.2f}, "
          f"crash rate {stats['crash_rate']:.2f}", flush=True)
    family = task_family(args.task)
    eval_courses = EVAL_COURSES.get(family, 64) if args.eval_courses is None else args.eval_courses
    if eval_courses > 0:
        from track_gen_isaac.evaluate import evaluate

        t0 = time.perf_counter()
        out = run_dir / "report" / "eval"
        ev = evaluate(run_dir, suite, num_courses=eval_courses, device=device, out=out)["suites"][suite.name]
        # a one-lap suite (the car's) has no flying lap: its time is the standing-start lap
        lap, ratio, which = ((ev['lap_time_mean_s'], ev['lap_time_ratio'], "lap") if suite.laps >= 2 else
                             (ev['first_lap_time_mean_s'], ev['first_lap_ratio'], "standing-start lap"))
        print(f"[main] held-out {suite.name} ({eval_courses} courses, {time.perf_counter() - t0:.0f} s): "
              f"completion {ev['completion_rate']:.2f} {_ci(ev['completion_rate_ci95'])}, {_passes_of(args.task)} per "
              f"course {ev['gates_per_course']:.2f}, {which} {_num(lap)} s = {_num(ratio)} x the "
              f"minimum-time reference, crash rate {ev['crash_rate']:.2f}; {out}", flush=True)
    runs = LAYOUT_RUNS.get(family, 0) if args.eval_layouts is None else args.eval_layouts
    if runs > 0:
        _fly_layouts(run_dir, runs, device, LAYOUT_DIRS.get(family, ""), _passes_of(args.task),
                     LAYOUT_BASELINES.get(family, True))
    return 0


def _average(run_dir: Path, last: int) -> None:
    """Write (or, for ``last`` 1, remove) the run's averaged policy, which playback and evaluation of
    the run folder then fly."""
    from track_gen_isaac.policy_average import average_run, run_checkpoints

    out = average_run(run_dir, last)
    if out is not None:
        names = [p.name for p in run_checkpoints(run_dir)[-last:]]
        print(f"[main] policy: the mean of {len(names)} checkpoints ({', '.join(names)}): {out}", flush=True)


def _duel_report(run_dir: Path, task: str, races: int, opponent: str | None, device: str) -> int:
    """The head-to-head report: the learning curve, then the checkpoint against itself (and
    ``opponent``) on the task's duel suite, ``races`` held-out races each (``report/eval/<suite>-vs-*``)."""
    from track_gen_isaac import report
    from track_gen_isaac.evaluate import suite_of_task
    from track_gen_isaac.evaluate.duel import evaluate_duel

    out = run_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    try:
        print(f"[main] wrote {report.plot_learning_curve(run_dir, out / 'learning_curve.png')}", flush=True)
    except FileNotFoundError as exc:
        print(f"[main] no learning curve: {exc}", flush=True)
    if races <= 0:
        return 0
    suite = suite_of_task(task)
    for opp in ("self", *(() if opponent is None else (opponent,))):
        t0 = time.perf_counter()
        tag = "self" if opp == "self" else Path(opp).resolve().name
        res = evaluate_duel(run_dir, suite, opponent=opp, num_courses=races, device=device,
                            out=out / "eval" / f"{suite.name}-vs-{tag}")
        ev = res["suites"][suite.name]
        print(f"[main] held-out {suite.name} vs {res['opponent']} ({races} races, {time.perf_counter() - t0:.0f} s): "
              f"win rate {ev['win_rate']:.2f} {_ci(ev['win_rate_ci95'])}, contact in {ev['agent_collision_rate']:.2f} "
              f"{_ci(ev['agent_collision_rate_ci95'])} of races, completion {ev['completion_rate']:.2f} "
              f"{_ci(ev['completion_rate_ci95'])} (opponent {ev['opponent']['completion_rate']:.2f}), time "
              f"{_num(ev['first_lap_ratio'])} x the minimum-time reference; {res['out']}", flush=True)
    return 0


def _fly_layouts(run_dir: Path, runs: int, device: str, folder: str = "", what: str = "gates",
                 baselines: bool = True) -> None:
    """Every shipped real layout of ``data_dir() / folder``, zero-shot, ``runs`` jittered runs each:
    one line per layout and ``report/layouts/layouts.md``."""
    from track_gen.layouts import data_dir
    from track_gen_isaac.evaluate import evaluate_layouts

    t0 = time.perf_counter()
    res = evaluate_layouts(run_dir, data_dir() / folder if folder else data_dir(), num_courses=runs, device=device,
                           out=run_dir / "report" / "layouts", baselines=baselines)
    for name, ev in res["layouts"].items():
        print(f"[main] real layout {name} ({runs} runs, zero-shot): completion {ev['completion_rate']:.2f} "
              f"{_ci(ev['completion_rate_ci95'])}, {what} {ev['gates_per_course']:.1f}, pass "
              f"{_num(ev['first_lap_time_mean_s'])} s = {_num(ev['first_lap_ratio'])} x the minimum-time reference",
              flush=True)
    print(f"[main] real layouts in {time.perf_counter() - t0:.0f} s: {res['out']}/layouts.md", flush=True)


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _ci(ci) -> str:
    return "" if not ci or None in ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
