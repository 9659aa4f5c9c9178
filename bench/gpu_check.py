#!/usr/bin/env python
"""One prepared GPU check: the CUDA half of track_gen verified in one short run.

``bash scripts/gpu_check.sh`` runs this driver. Parts, each in its own process and time-boxed
(``timeout``; a part that runs out of time is reported as ``timeout``, never as passed):

* ``cuda_tests``: the tests marked ``cuda`` (``pytest -m cuda tests/core``);
* ``core_bench``: ``course.step()`` replayed from a CUDA graph (ns per env-step, env-steps/s), a
  full regeneration (courses/s) and a 1% masked one (us per call), gates and band tracks, at
  E = 4096, 65,536 and 262,144; targets: step >= 1e8 env-steps/s and regeneration >= 1e6
  courses/s at E = 262,144;
* ``env_bench``: Isaac Lab env steps/s of the gate task (``bench/bench_env.py``'s cfg on CUDA),
  stable and warp runtime, 4096 and 16,384 envs, and the course terms' share of the env step at
  4096 envs (with against without them; target <= 10%);
* ``train``: the main job at 4096 envs sized to about 3 minutes, with its playback and held-out
  evaluation (the GPU defaults of the main job are checked too);
* ``torchrun``: with two GPUs, ``torchrun --nproc_per_node=2`` ranks build their courses from
  per-rank seeds (rank r == a single-process build with rank=r; ranks differ).

It writes one JSON (``--out``, default ``out/gpu_check.json``) and prints one table; at most
``--budget`` seconds (480) on one GPU. Without CUDA it checks that everything it would run
imports and that the CUDA tests are collected, prints "no CUDA device" and exits with 2.
``--dry-run`` writes the JSON with every part marked not run. Exit: 0 all passed, 1 a failure
or timeout, 2 no CUDA device.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCHEMA = 1
#: (name, seconds): run in this order; the budget caps each at what is left
PARTS = (("cuda_tests", 60), ("core_bench", 75), ("env_bench", 135), ("train", 180), ("torchrun", 45))
STATUSES = ("passed", "failed", "timeout", "skipped", "not_run")
CORE_ENVS = (4096, 65536, 262144)
ENV_ENVS = (4096, 16384)
TARGETS = {"step_env_steps_per_s": 1e8, "regen_courses_per_s": 1e6, "course_terms_share": 0.10}
#: what the parts import: checked first, on every machine
IMPORTS = ("warp", "torch", "track_gen", "track_gen.course", "track_gen.exec", "track_gen_isaac.env_course",
           "track_gen_isaac.main_job", "isaaclab.envs", "isaaclab_experimental.envs", "bench.bench_env",
           "tests.isaac.envs", "bench.compare_commits", "track_gen_isaac.course_cfg")
CUDA_TESTS = ("tests/core",)
NO_CUDA = "no CUDA device"


# -- the parts (each runs in its own process: python bench/gpu_check.py --part NAME --part-out F) --
def _sync(device):
    import warp as wp

    wp.synchronize_device(device)


def _timed(fn, device, min_time: float) -> float:
    """Mean seconds per call of ``fn`` (synchronized) over at least ``min_time`` s (3 calls at least)."""
    fn()
    _sync(device)
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        if n >= 3:
            _sync(device)
            dt = time.perf_counter() - t0
            if dt >= min_time:
                return dt / n


def core_bench(device="cuda:0", envs=CORE_ENVS, min_time=0.3, frames=16) -> dict:
    import numpy as np
    import warp as wp

    from bench.compare_commits import _trajectory
    from track_gen import tools
    from track_gen.course import Course
    from track_gen.pipeline import presets

    rows, checks = [], []
    for E in envs:
        for family in ("gates", "track"):
            if family == "gates":
                course = Course.gates(presets.gates(E, device, gate_width=1.0), collision=0.05, localize_window=8,
                                      seeds=1)
            else:
                course = Course.track(presets.track(E, device), checkpoint_spacing=1.0, collision="segments",
                                      extra=[tools.Localizer(warm_window=8)], seeds=1)
            traj = _trajectory(course, family, frames)
            frame = [wp.array(traj[t], dtype=wp.vec3f, device=device) for t in range(frames)]
            pos = wp.array(traj[0], dtype=wp.vec3f, device=device)
            quat = wp.array(np.tile(np.array([0, 0, 0, 1], np.float32), (E, 1)), dtype=wp.quatf, device=device)
            ext = wp.full(E, wp.vec2f(0.12, 0.12), dtype=wp.vec2f, device=device)
            course.bind(position=pos, orientation=quat, half_extents=ext)
            course.step()
            with wp.ScopedCapture(device=device) as both:  # frames x (pose write + step)
                for f in frame:
                    wp.copy(pos, f)
                    course.step()
            with wp.ScopedCapture(device=device) as write:  # the pose writes alone, subtracted
                for f in frame:
                    wp.copy(pos, f)
            t_both = _timed(lambda: wp.capture_launch(both.graph), device, min_time)
            t_write = _timed(lambda: wp.capture_launch(write.graph), device, min_time)
            ns = max(t_both - t_write, 1e-12) / (frames * E) * 1e9
            regen = _timed(lambda: course.regenerate(advance=True), device, min_time)
            mask = wp.array((np.random.default_rng(0).random(E) < 0.01).astype(np.int32), dtype=wp.int32,
                            device=device)
            masked = _timed(lambda: course.regenerate(mask=mask, advance=True), device, min_time)
            valid = float(course.result.valid.numpy().mean())
            rows.append(dict(family=family, envs=E, step_ns_per_env_step=ns, step_env_steps_per_s=1e9 / ns,
                             regen_courses_per_s=E / regen, regen_ms=regen * 1e3, masked_1pct_us=masked * 1e6,
                             valid_fraction=valid))
            del course, frame, pos, quat, ext, both, write
            gc.collect()  # a course holds reference cycles: free its device memory before the next E
            if E == max(envs):
                checks.append(_check(f"{family} step env-steps/s at E={E}", 1e9 / ns,
                                     TARGETS["step_env_steps_per_s"], ">="))
                checks.append(_check(f"{family} regeneration courses/s at E={E}", E / regen,
                                     TARGETS["regen_courses_per_s"], ">="))
    return dict(metrics={"rows": rows}, checks=checks)


def env_bench(device="cuda:0", envs=ENV_ENVS, runtimes=("stable", "warp"), min_time=1.0, warmup=10) -> dict:
    import torch
    import warp as wp

    from bench.bench_env import make_cfg

    def one(rt, E, course):
        if rt == "warp":
            from isaaclab_experimental.envs import ManagerBasedRLEnvWarp as Env
        else:
            from isaaclab.envs import ManagerBasedRLEnv as Env
        cfg = make_cfg(E, course)
        cfg.sim.device = device
        env = Env(cfg)
        env.reset()
        act = torch.zeros(E, 0, device=env.device)

        def steps(n):
            for _ in range(n):
                env.step(act)
            wp.synchronize_device(device)  # torch's and Warp's queues on the device (a no-op wait on the CPU)
            if str(device).startswith("cuda"):
                torch.cuda.synchronize(device)

        steps(warmup)
        t0 = time.perf_counter()
        steps(3)
        n = max(5, math.ceil(min_time / max((time.perf_counter() - t0) / 3, 1e-6)))
        step_s = math.inf
        for _ in range(2):  # best of 2
            t0 = time.perf_counter()
            steps(n)
            step_s = min(step_s, (time.perf_counter() - t0) / n)
        core_s = math.nan
        courses = env.__dict__.get("track_gen_courses", {})
        if courses:
            ec = courses["course"]
            # the env guards course.step() against a second step per env step: time the core step
            c_step = ec._core_step
            k = max(20, n)
            wp.synchronize_device(device)
            t0 = time.perf_counter()
            for _ in range(k):
                c_step()
            wp.synchronize_device(device)
            core_s = (time.perf_counter() - t0) / k
        env.close()
        return dict(runtime=rt, envs=E, course=course, step_ms=step_s * 1e3, env_steps_per_s=E / step_s,
                    course_step_ms=None if core_s != core_s else core_s * 1e3)

    rows, checks = [], []
    for rt in runtimes:
        for E in envs:
            rows.append(one(rt, E, True))
        base = one(rt, min(envs), False)
        rows.append(base)
        withc = next(r for r in rows if r["runtime"] == rt and r["envs"] == min(envs) and r["course"])
        share = max(withc["step_ms"] - base["step_ms"], 0.0) / withc["step_ms"]
        withc["course_terms_share"] = share
        checks.append(_check(f"{rt}: course terms share of the env step at E={min(envs)}", share,
                             TARGETS["course_terms_share"], "<="))
    return dict(metrics={"rows": rows}, checks=checks)


def torchrun_worker(out_dir: str, num_envs=256, seed=7) -> None:
    import warp as wp

    import track_gen as tg
    from track_gen_isaac.course_cfg import CourseCfg
    from track_gen_isaac.env_course import build_course, global_rank

    rank, local = global_rank(), int(os.environ.get("LOCAL_RANK", "0"))
    device = f"cuda:{local}"
    wp.init()
    course = build_course(CourseCfg(generator=tg.GateGenConfig(gate_width=1.0)), num_envs, device, seed=seed,
                          rank=rank)
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(dict(rank=rank, device=device,
                                                                 digest=_digest(course))))


def _digest(course) -> str:
    h = hashlib.sha256()
    h.update(course.seeds.seeds.numpy().tobytes())
    h.update(course.result.pos.numpy().tobytes())
    return h.hexdigest()


def torchrun_part(timeout_s: int, num_envs=256, seed=7) -> dict:
    import track_gen as tg
    from track_gen_isaac.course_cfg import CourseCfg
    from track_gen_isaac.env_course import build_course

    exe = str(Path(sys.executable).with_name("torchrun"))
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["timeout", str(timeout_s), exe, "--standalone", "--nproc_per_node=2", str(Path(__file__)),
               "--torchrun-worker", tmp]
        rc = subprocess.run(cmd, cwd=ROOT).returncode
        if rc != 0:
            raise RuntimeError(f"torchrun exited with {rc}")
        got = {r["rank"]: r for r in (json.loads(p.read_text()) for p in Path(tmp).glob("rank*.json"))}
    cfg = CourseCfg(generator=tg.GateGenConfig(gate_width=1.0))
    want = {r: _digest(build_course(cfg, num_envs, "cuda:0", seed=seed, rank=r)) for r in (0, 1)}
    checks = [_check("both ranks reported", len(got), 2, ">=")]
    for r in (0, 1):
        checks.append(_check(f"rank {r} course == a single-process build with rank={r}",
                             float(got.get(r, {}).get("digest") == want[r]), 1.0, ">="))
    checks.append(_check("ranks draw different courses", float(want[0] != want[1]), 1.0, ">="))
    return dict(metrics={"ranks": got}, checks=checks)


def _check(name, value, target, op) -> dict:
    ok = None if value is None or value != value else (value >= target if op == ">=" else value <= target)
    return dict(name=name, value=value, target=target, op=op, ok=ok)


# -- the driver ------------------------------------------------------------------------------------
def preflight() -> dict:
    """Everything the parts import, and the CUDA tests collected (so the script is tested on CPU)."""
    import importlib

    imports = {}
    for mod in IMPORTS:
        try:
            importlib.import_module(mod)
            imports[mod] = "ok"
        except Exception as exc:  # noqa: BLE001 - reported
            imports[mod] = f"{type(exc).__name__}: {exc}"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                           "-m", "cuda", *CUDA_TESTS], cwd=ROOT, capture_output=True, text=True)
    m = re.search(r"(\d+)/\d+ tests? collected|^(\d+) tests? collected", proc.stdout, re.M)
    collected = int(m.group(1) or m.group(2)) if m else 0
    torchrun = Path(sys.executable).with_name("torchrun").exists()
    main_job = (ROOT / "track_gen_isaac" / "main_job.py").read_text()
    ok = all(v == "ok" for v in imports.values()) and proc.returncode == 0 and collected > 0 and torchrun
    return dict(ok=ok, imports=imports, cuda_tests_collected=collected, collect_rc=proc.returncode,
                torchrun=torchrun, eval_flag="--eval_courses" in main_job)


def machine() -> dict:
    import warp as wp

    info = dict(host=platform.node(), python=platform.python_version(), warp=wp.__version__,
                date=time.strftime("%Y-%m-%d %H:%M:%S"), gpus=[])
    try:
        import torch

        info["torch"] = torch.__version__
    except Exception:  # noqa: BLE001
        pass
    if wp.is_cuda_available():
        for d in wp.get_cuda_devices():
            info["gpus"].append(dict(name=d.name, arch=d.arch, memory_gib=round(d.total_memory / 2**30, 1)))
        rt = wp._src.context.runtime
        info["driver"] = ".".join(map(str, rt.driver_version or ()))
        info["toolkit"] = ".".join(map(str, rt.toolkit_version or ()))
        info["conditional_graph_nodes"] = bool(wp.is_conditional_graph_supported())
    return info


def _part(name, timeout_s, status="not_run", reason="") -> dict:
    return dict(name=name, status=status, timeout_s=timeout_s, seconds=0.0, reason=reason, metrics={}, checks=[])


def _run_sub(cmd, timeout_s, log: Path) -> tuple[int, float]:
    t0 = time.perf_counter()
    with open(log, "w") as f:
        rc = subprocess.run(["timeout", "--kill-after=10", str(max(int(timeout_s), 1)), *cmd], cwd=ROOT,
                            stdout=f, stderr=subprocess.STDOUT).returncode
    return rc, time.perf_counter() - t0


def _tail(log: Path, n=15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def run_part(name, timeout_s, work: Path, args, pre: dict) -> dict:
    part = _part(name, timeout_s)
    log = work / f"{name}.log"
    out = work / f"{name}.json"
    py = sys.executable
    if name == "cuda_tests":
        xml = work / "cuda_tests.xml"
        rc, dt = _run_sub([py, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "cuda", *CUDA_TESTS,
                           f"--junitxml={xml}"], timeout_s, log)
        if xml.exists():
            s = ET.parse(xml).getroot()
            s = s if s.tag == "testsuite" else s.find("testsuite")
            part["metrics"] = {k: int(s.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
    elif name == "train":
        cmd = [py, "-m", "track_gen_isaac.main_job", "--num_envs", str(args.train_envs), "--max_iterations",
               str(args.train_iterations), "--device", "cuda:0", "--play_steps", "300", "--play_envs", "16"]
        if pre.get("eval_flag"):
            cmd += ["--eval_courses", "16"]
        rc, dt = _run_sub(cmd, timeout_s, log)
        part["metrics"], part["checks"] = _train_metrics(log.read_text(errors="replace") if log.exists() else "",
                                                         args.train_iterations)
    else:
        rc, dt = _run_sub([py, str(Path(__file__)), "--part", name, "--part-out", str(out),
                           "--part-timeout", str(int(timeout_s))], timeout_s, log)
        if out.exists():
            res = json.loads(out.read_text())
            part["metrics"], part["checks"] = res.get("metrics", {}), res.get("checks", [])
    part["seconds"] = round(dt, 1)
    if rc in (124, 137):
        part["status"], part["reason"] = "timeout", f"ran out of its {int(timeout_s)} s"
    elif rc != 0:
        part["status"], part["reason"] = "failed", f"exit {rc}: " + _tail(log, 8)
    elif any(c.get("ok") is False for c in part["checks"]):
        part["status"], part["reason"] = "failed", "a target was missed"
    else:
        part["status"] = "passed"
    part["log"] = str(log)
    return part


def _train_metrics(text: str, iterations: int) -> tuple[dict, list]:
    its = re.findall(r"\[train\] iter (\d+)/(\d+).*?\| ([\d.,]+) steps/s", text)
    m = {"iterations_done": int(its[-1][0]) if its else 0, "steps_per_s_last": float(its[-1][2].replace(",", ""))
         if its else None}
    for key, pat in (("trained_s", r"\[main\] trained in (\d+) s"),
                     ("gates_per_episode", r"gates per episode: policy ([\d.]+)"),
                     ("heldout_completion", r"held-out .*?completion ([\d.]+)")):
        hit = re.search(pat, text)
        m[key] = float(hit.group(1)) if hit else None
    from track_gen_isaac.main_job import GPU_DEFAULTS

    checks = [_check("main job GPU default num_envs", GPU_DEFAULTS["num_envs"], 4096, ">="),
              _check("training iterations completed", m["iterations_done"], iterations, ">=")]
    return m, checks


def report(doc: dict) -> str:
    lines = ["| part | status | s | figures |", "|---|---|---:|---|"]
    for p in doc["parts"]:
        fig = []
        for r in p["metrics"].get("rows", []) if isinstance(p["metrics"], dict) else []:
            if "step_env_steps_per_s" in r:
                fig.append(f"{r['family']} E={r['envs']}: {r['step_ns_per_env_step']:.2f} ns/env-step, "
                           f"{r['regen_courses_per_s']:.3g} courses/s, 1% {r['masked_1pct_us']:.0f} us")
            elif "env_steps_per_s" in r:
                fig.append(f"{r['runtime']} E={r['envs']}{'' if r['course'] else ' (no course)'}: "
                           f"{r['env_steps_per_s']:,.0f} env-steps/s")
        if not fig and p["metrics"]:
            fig.append(", ".join(f"{k}={v}" for k, v in p["metrics"].items() if not isinstance(v, (dict, list))))
        fig += [f"{'ok' if c['ok'] else ('MISS' if c['ok'] is False else '?')}: {c['name']} = {c['value']:.4g} "
                f"({c['op']} {c['target']:g})" for c in p["checks"] if isinstance(c.get("value"), (int, float))]
        if p["reason"]:
            fig.append(p["reason"].splitlines()[0])
        lines.append(f"| {p['name']} | {p['status']} | {p['seconds']:.0f} | {'; '.join(fig) or '-'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "gpu_check.json", help="the JSON written")
    ap.add_argument("--dry-run", action="store_true", help="write the JSON with every part marked not run")
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for all parts together (default 480)")
    ap.add_argument("--parts", nargs="+", choices=[p for p, _ in PARTS], default=[p for p, _ in PARTS])
    ap.add_argument("--train-envs", type=int, default=4096)
    ap.add_argument("--train-iterations", type=int, default=150, help="sized to about 3 minutes on an H200")
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--part-out", help=argparse.SUPPRESS)
    ap.add_argument("--part-timeout", type=int, default=45, help=argparse.SUPPRESS)
    ap.add_argument("--torchrun-worker", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.torchrun_worker:
        torchrun_worker(args.torchrun_worker)
        return 0
    if args.part:
        fn = {"core_bench": core_bench, "env_bench": env_bench,
              "torchrun": lambda: torchrun_part(args.part_timeout - 5)}[args.part]
        Path(args.part_out).write_text(json.dumps(fn(), indent=1, default=str))
        return 0

    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    t_start = time.perf_counter()
    pre = preflight()
    cuda = bool(wp.is_cuda_available())
    doc = dict(schema=SCHEMA, kind="track_gen gpu_check", dry_run=bool(args.dry_run), cuda=cuda,
               budget_s=args.budget, targets=TARGETS, machine=machine(), preflight=pre, parts=[], ok=None)
    reason = "dry run" if args.dry_run else ("" if cuda else NO_CUDA)
    if not pre["ok"]:
        reason = "preflight failed"
    if reason:
        doc["parts"] = [_part(n, t, reason=reason) for n, t in PARTS]
    else:
        work = args.out.parent / f"{args.out.stem}_logs"  # each part's log (and raw JSON), next to the JSON
        work.mkdir(parents=True, exist_ok=True)
        two = wp.get_cuda_device_count() >= 2
        for name, t in PARTS:
            left = args.budget - (time.perf_counter() - t_start)
            if name not in args.parts:
                doc["parts"].append(_part(name, t, "skipped", "not asked for (--parts)"))
            elif name == "torchrun" and not two:
                doc["parts"].append(_part(name, t, "skipped", "one GPU: torchrun needs two"))
            elif left < 10:
                doc["parts"].append(_part(name, t, "timeout", "the total budget ran out before it started"))
            else:
                print(f"[gpu_check] {name} (at most {min(t, left):.0f} s) ...", flush=True)
                doc["parts"].append(run_part(name, min(t, left), work, args, pre))
        ran = [p for p in doc["parts"] if p["status"] != "skipped"]
        doc["ok"] = all(p["status"] == "passed" for p in ran)
    doc["wall_s"] = round(time.perf_counter() - t_start, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1, default=str))
    print(report(doc))
    print(f"[gpu_check] {args.out} ({doc['wall_s']:.0f} s)")
    if not pre["ok"]:
        bad = {k: v for k, v in pre["imports"].items() if v != "ok"}
        print(f"[gpu_check] preflight failed: imports {bad or 'ok'}, CUDA tests collected "
              f"{pre['cuda_tests_collected']} (pytest exit {pre['collect_rc']}), torchrun {pre['torchrun']}",
              file=sys.stderr)
        return 1
    if args.dry_run:
        return 0
    if not cuda:
        print(NO_CUDA, flush=True)
        return 2
    return 0 if doc["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
