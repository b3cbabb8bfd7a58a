#!/usr/bin/env bash
# Prepares .device/ (git-ignored) for scripts/gpu_check.sh and bench/run_gpu.sh on the GPU
# machine, which has no ONNX C++ library and no Fashion-MNIST: the unpacked Debian packages
# libonnx-dev, libonnx1 and libonnxifi (and libpng / libjpeg-turbo in case it lacks them),
# and the data set's IDX files.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device/debs .device/onnx .device/data
(cd .device/debs && apt-get download libonnx-dev libonnx1 libonnxifi libpng-dev libpng16-16 \
  libjpeg62-turbo-dev libjpeg62-turbo)
for f in .device/debs/*.deb; do dpkg -x "$f" .device/onnx; done
rm -rf .device/debs
cp /usr/share/datasets/fashion-mnist/*.gz .device/data/
du -sh .device
