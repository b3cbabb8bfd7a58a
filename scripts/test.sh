#!/usr/bin/env bash
# Runs the whole test suite of ./build (GPU tests skip, saying so, where there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
export CBT_PYTHON="$PWD/.venv/bin/python"
# ctest runs $(nproc) tests at once: one kernel thread per cbtrain they start (OpenMP teams
# that share cores wait at every barrier for a time slice).
export OMP_NUM_THREADS=1
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 1500 "$@"
