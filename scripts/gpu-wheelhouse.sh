#!/usr/bin/env bash
# The wheels scripts/validate-gpu.sh installs beyond PyTorch, for the GPU machine's Python, into one folder.
# Run from the repository root on a machine with a package index:
#   bash scripts/gpu-wheelhouse.sh --python 3.12 [-o gpu-wheels] [--have freeze.txt]
# --have takes `python3 -m pip freeze` of the GPU machine: what it has already (NumPy, OpenCV) is left out.
# Only what grading and the validation import: nbgrader and its notebook runner, Dask, NumPy, OpenCV headless,
# pytest; no JupyterLab, JupyterHub, Playwright or PostgreSQL driver (autograder/course/wheelhouse.py says how).
# It prints the size of what it wrote: under 60 MB but for OpenCV headless, whose wheel alone is over 60 MB
# (docs/scaling.md); --have with a machine that has OpenCV leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
exec "$PYTHON" -m autograder.course.wheelhouse "$@"
