#!/usr/bin/env bash
# The main job: train TrackGen-Drone-Gates-v0 headless through Isaac Lab's rsl_rl entry point on the
# default device (CPU without a GPU: 1024 envs x 500 iterations, 12.3 million env steps), then play
# the checkpoint for a bounded number of steps and write a report (learning curve, trajectories,
# summary) into the run folder logs/rsl_rl/<experiment>/<timestamp>/report.
# Time on 2 CPU cores, measured: 7 to 17 minutes (7 min 15 s with the venv built; 16 min 49 s from
# a fresh clone): the venv build on the first run (~5 min, scripts/setup.sh), training (6.5 to 11
# min at 12-31k env steps/s, depending on the machine), playback and report (under a minute).
# Flags: --task, --num_envs, --max_iterations, --device, --seed; anything else goes to
# `isaaclab train` (e.g. agent.algorithm.learning_rate=3e-4). `bash scripts/main.sh --help` lists
# them. The generation demo of the core is `python -m track_gen.demo`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
exec "$PY" -m track_gen_isaac.main_job "$@"
