#!/usr/bin/env bash
# Configures and builds cbtrain in ./build (the CUDA backend is compiled when nvcc is found).
# Extra arguments go to CMake, e.g. scripts/build.sh -DCBT_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j "$(nproc)"
