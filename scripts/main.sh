#!/usr/bin/env bash
# The main job: train the default task, TrackGen-Drone-Gates-Real-v0 (the generalist racer), headless
# through Isaac Lab's rsl_rl entry point on the default device (CPU without a GPU: 1024 envs x 900
# iterations), then play the checkpoint, fly the held-out gates-v1 suite and every shipped real layout
# zero-shot, and write a report into the run folder logs/rsl_rl/<experiment>/<timestamp>/report.
# How long it takes on 2 CPU cores is measured in the README ("Two commands"); a fresh clone adds the
# venv build (~5 min, scripts/setup.sh).
# Flags: --task, --num_envs, --max_iterations, --device, --seed; anything else goes to
# `isaaclab train` (e.g. agent.algorithm.learning_rate=3e-4). `bash scripts/main.sh --help` lists
# them. The generation demo of the core is `python -m track_gen.demo`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
exec "$PY" -m track_gen_isaac.main_job "$@"
