#!/usr/bin/env bash
# One prepared GPU check (issue 17): the CUDA-marked tests, the generation and step benchmarks at
# E = 4096, 65,536 and 262,144, Isaac Lab env steps/s (stable and warp runtime, 4096 and 16,384 envs),
# a ~3-minute training run at 4096 envs with its held-out evaluation, and torchrun per-rank course
# seeds when two GPUs exist. Each part is time-boxed; at most 8 minutes on one GPU. Writes one JSON
# (out/gpu_check.json, or --out PATH) and prints one table. Exit: 0 all passed, 1 a failure or a
# timeout, 2 "no CUDA device" (after checking that everything it would run imports and that the
# CUDA tests are collected). --dry-run writes the JSON with every part marked not run.
# Targets and how to read the output: bench/README.md, "GPU check". Driver: bench/gpu_check.py.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
exec "$PY" bench/gpu_check.py "$@"
