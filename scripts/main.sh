#!/usr/bin/env bash
# The main job: generate a batch of band tracks and gate courses on the default device (CPU
# without a GPU), write a PNG contact sheet to out/, print the valid fraction and the time.
# Extra arguments go to `python -m track_gen.demo` (see --help).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
exec "$PY" -m track_gen.demo "$@"
