#!/usr/bin/env bash
# The main job: train TrackGen-Drone-Gates-v0 headless through Isaac Lab's rsl_rl entry point on the
# default device (CPU without a GPU; about 10 minutes on 2 cores), then play the checkpoint for a
# bounded number of steps and write a report (learning curve, trajectories, summary) into the run
# folder logs/rsl_rl/<experiment>/<timestamp>/report. Flags: --task, --num_envs, --max_iterations,
# --device, --seed; anything else goes to `isaaclab train` (e.g. agent.algorithm.learning_rate=3e-4).
# `bash scripts/main.sh --help` lists them. The generation demo of the core is `python -m track_gen.demo`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
exec "$PY" -m track_gen_isaac.main_job "$@"
