#!/usr/bin/env bash
# The CPU test suite built with AddressSanitizer and UndefinedBehaviorSanitizer (in
# ./build-asan, CUDA off): any sanitizer report fails the run. The 2-epoch Fashion-MNIST
# test is left to the normal build (it only repeats kernels under test here, 4x slower).
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build-asan "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCBT_WITH_CUDA=OFF \
  -DCBT_SANITIZE=ON > build-asan.configure.log
cmake --build build-asan -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp
export CBT_PYTHON="$PWD/.venv/bin/python"
# ctest runs $(nproc) tests at once: one kernel thread per cbtrain they start (OpenMP teams
# that share cores wait at every barrier for a time slice).
export OMP_NUM_THREADS=1
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 1500 -E 'FashionMnist'
