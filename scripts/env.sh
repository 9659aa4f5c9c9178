# Sourced by the run scripts: builds or reuses the venv, then puts it and the repo on the path.
# CUDA-less machines: Warp prints a harmless "Could not find or load the NVIDIA CUDA driver".
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$(bash "$ROOT/scripts/setup.sh" | tail -n 1)"
export PATH="$VENV/bin:$PATH"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
PY="$VENV/bin/python"
