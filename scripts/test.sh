#!/usr/bin/env bash
# The whole test suite (core, docs, Isaac Lab), CPU only. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
exec "$PY" -m pytest -p no:cacheprovider "$@"
