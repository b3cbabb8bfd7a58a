#!/usr/bin/env bash
# Installs what cbtrain needs on Debian 12 (as root, or through sudo) and a Python venv with
# the tooling the tests use (onnx, onnxruntime, numpy, tensorboard). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev libgtest-dev libgmock-dev libopenblas-openmp-dev zlib1g-dev libpng-dev libjpeg-dev
  libcairo2-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  dataset-fashion-mnist
  python3 python3-venv python3-pip
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python tooling in a venv of the project (Debian's Python is externally managed).
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r scripts/requirements.txt
echo "setup: done"
