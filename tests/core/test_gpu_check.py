"""scripts/gpu_check.sh on the CPU: exit 2 with "no CUDA device" after its preflight, the JSON
schema of a dry run, the marker's skip reason, and the driver's parsing (no GPU needed)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import warp as wp

from bench import gpu_check

ROOT = Path(__file__).resolve().parents[2]
no_gpu = pytest.mark.skipif(wp.is_cuda_available(), reason="the CPU path of the script (a GPU is present)")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def check_schema(doc: dict, reason: str) -> None:
    assert doc["schema"] == gpu_check.SCHEMA and doc["kind"] == "track_gen gpu_check"
    assert set(doc) >= {"dry_run", "cuda", "budget_s", "targets", "machine", "preflight", "parts", "ok", "wall_s"}
    assert doc["targets"] == {"step_env_steps_per_s": 1e8, "regen_courses_per_s": 1e6, "course_terms_share": 0.1}
    pre = doc["preflight"]
    assert pre["ok"] and all(v == "ok" for v in pre["imports"].values()), pre
    assert pre["cuda_tests_collected"] >= 8 and pre["torchrun"]
    assert [p["name"] for p in doc["parts"]] == [n for n, _ in gpu_check.PARTS]
    for p in doc["parts"]:
        assert set(p) == {"name", "status", "timeout_s", "seconds", "reason", "metrics", "checks"}
        assert p["status"] == "not_run" and p["reason"] == reason and p["status"] in gpu_check.STATUSES
    assert sum(t for _, t in gpu_check.PARTS if _ != "torchrun") <= 480 - 20  # one GPU: 8 minutes, preflight included


@no_gpu
def test_script_without_cuda_exits_2_after_its_preflight(tmp_path):
    out = tmp_path / "gc.json"
    proc = subprocess.run(["bash", "scripts/gpu_check.sh", "--out", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "no CUDA device"
    doc = json.loads(out.read_text())
    assert doc["cuda"] is False and doc["dry_run"] is False and doc["ok"] is None
    check_schema(doc, "no CUDA device")
    assert "| cuda_tests | not_run |" in proc.stdout  # the table


def test_dry_run_writes_the_schema(tmp_path):
    out = tmp_path / "dry.json"
    proc = subprocess.run([sys.executable, "bench/gpu_check.py", "--dry-run", "--out", str(out)], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    assert doc["dry_run"] is True
    check_schema(doc, "dry run")


def test_cuda_marker_skips_with_its_reason():
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "-m", "cuda",
                           "tests/core/test_cuda.py"], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    if wp.is_cuda_available():
        pytest.skip("a GPU is present: the marked tests run")
    assert proc.returncode == 0, proc.stdout
    assert "8 skipped" in proc.stdout and "no CUDA device" in proc.stdout
    assert "passed" not in proc.stdout and "failed" not in proc.stdout


def test_train_log_parsing_and_checks():
    log = "\n".join([
        "[train] iter 1/3 | reward 0.1 | episode 20 steps | gates/episode 0.0 | 120,000 steps/s | ETA 0:01:00",
        "[train] iter 3/3 | reward 0.4 | episode 40 steps | gates/episode 1.5 | 150000 steps/s | ETA 0:00:00",
        "[main] trained in 95 s: logs/rsl_rl/x/2026",
        "[main] gates per episode: policy 1.75 | zero action 0.00 | random 0.10; lap rate 0.00, crash rate 0.5",
        "[main] held-out gates-v1 (16 courses, 9 s): completion 0.25 [0.1, 0.5], gates per course 2.00",
    ])
    m, checks = gpu_check._train_metrics(log, 3)
    assert m == {"iterations_done": 3, "steps_per_s_last": 150000.0, "trained_s": 95.0, "gates_per_episode": 1.75,
                 "heldout_completion": 0.25}
    assert all(c["ok"] for c in checks)
    m, checks = gpu_check._train_metrics("[train] iter 2/150 | r | e | g | 9 steps/s | ETA 1", 150)
    assert m["iterations_done"] == 2 and [c["ok"] for c in checks] == [True, False]


def test_checks_and_table():
    assert gpu_check._check("a", 2e8, 1e8, ">=")["ok"] is True
    assert gpu_check._check("b", 0.2, 0.1, "<=")["ok"] is False
    assert gpu_check._check("c", math.nan, 0.1, "<=")["ok"] is None
    part = gpu_check._part("core_bench", 75, "failed", "a target was missed")
    part["metrics"] = {"rows": [dict(family="gates", envs=262144, step_ns_per_env_step=12.0,
                                     step_env_steps_per_s=8.3e7, regen_courses_per_s=2e6, masked_1pct_us=90.0)]}
    part["checks"] = [gpu_check._check("gates step env-steps/s at E=262144", 8.3e7, 1e8, ">=")]
    timeout = gpu_check._part("train", 180, "timeout", "ran out of its 180 s")
    table = gpu_check.report({"parts": [part, timeout]})
    assert "| core_bench | failed |" in table and "MISS: gates step env-steps/s" in table
    assert "| train | timeout |" in table and "ran out of its 180 s" in table


def test_core_bench_runs_on_the_cpu():
    """The benchmark code path itself (tiny, on the CPU): rows and checks as on a GPU."""
    res = gpu_check.core_bench(device="cpu", envs=(32,), min_time=0.005, frames=2)
    rows = res["metrics"]["rows"]
    assert [(r["family"], r["envs"]) for r in rows] == [("gates", 32), ("track", 32)]
    assert all(r["step_ns_per_env_step"] > 0 and r["regen_courses_per_s"] > 0 for r in rows)
    assert len(res["checks"]) == 4 and all(c["op"] == ">=" for c in res["checks"])
