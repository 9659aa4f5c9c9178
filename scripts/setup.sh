#!/usr/bin/env bash
# Create (or reuse) the project's Python 3.12 venv and print its path on the last line.
#
# The venv lives outside the clone, under $TRACK_GEN_VENV_ROOT (default ~/.cache/track_gen/venvs),
# in a folder named by a hash of requirements/pins.txt, so every clone with the same pins shares
# one ~8 GB install. A venv is only used once its ".complete" stamp exists: an interrupted
# install is thrown away and redone.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PINS="$ROOT/requirements/pins.txt"
VENV_ROOT="${TRACK_GEN_VENV_ROOT:-$HOME/.cache/track_gen/venvs}"

find_python() {
    # 1) explicit override, 2) pyenv's 3.12 interpreters (the shim needs PYENV_VERSION), 3) PATH.
    if [[ -n "${TRACK_GEN_PYTHON:-}" ]]; then echo "$TRACK_GEN_PYTHON"; return; fi
    local root cand
    if command -v pyenv >/dev/null 2>&1; then
        root="$(pyenv root)"
        for cand in $(ls -d "$root"/versions/3.12* 2>/dev/null | sort -V -r); do
            if [[ -x "$cand/bin/python" ]] && "$cand/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
                echo "$cand/bin/python"; return
            fi
        done
    fi
    for cand in python3.12 python3; do
        if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
            command -v "$cand"; return
        fi
    done
    return 1
}

PY="$(find_python)" || {
    echo "setup.sh: no Python 3.12 interpreter found (Isaac Lab 3.0 requires 3.12)." >&2
    echo "  Looked in \$TRACK_GEN_PYTHON, \$(pyenv root)/versions/3.12*, python3.12 and python3 on PATH." >&2
    echo "  Fix: install one (e.g. 'pyenv install 3.12.1') or set TRACK_GEN_PYTHON=/path/to/python3.12." >&2
    exit 1
}

KEY="$( (cat "$PINS"; "$PY" -c 'import sys, platform; print(sys.version, platform.machine())') | sha256sum | cut -c1-16)"
VENV="$VENV_ROOT/py312-$KEY"
if [[ ! -f "$VENV/.complete" ]]; then
    echo "setup.sh: building venv $VENV with $PY (about 5 minutes, ~8 GB)" >&2
    rm -rf "$VENV"
    mkdir -p "$VENV_ROOT"
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
    "$VENV/bin/python" -m pip install --progress-bar off -r "$PINS" >&2
    "$VENV/bin/python" -c 'import warp, torch, isaaclab, newton, rsl_rl, matplotlib' >&2
    touch "$VENV/.complete"
    echo "setup.sh: venv ready" >&2
fi
# Isaac Lab finds task packages through the "isaaclab.tasks" entry point (pyproject.toml): register
# this checkout once per venv (an editable install without dependencies; the run scripts also put
# the checkout first on PYTHONPATH, so whichever clone runs is the code that runs).
if ! "$VENV/bin/python" - <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import entry_points
sys.exit(0 if any(e.value == "track_gen_isaac.tasks" for e in entry_points(group="isaaclab.tasks")) else 1)
PYEOF
then
    echo "setup.sh: registering track_gen's Isaac Lab tasks in $VENV" >&2
    "$VENV/bin/python" -m pip install --quiet --no-deps --no-build-isolation -e "$ROOT" >&2
fi
echo "$VENV"
