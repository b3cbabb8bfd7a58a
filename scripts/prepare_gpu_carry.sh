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
# Open MPI for the multi-process runs (the GPU machine has none): the Debian packages of
# openmpi-bin, libopenmpi3/-dev and the libraries they need beyond a base system, unpacked
# there by scripts/device_mpi_env.sh.
mkdir -p .device/mpi-debs
(cd .device/mpi-debs && apt-get download openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev \
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libhwloc15 libhwloc-plugins \
  libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libpmix2 \
  libpsm-infinipath1 libpsm2-2 libucx0 libmunge2 libcap-ng0 libpciaccess0)
du -sh .device
