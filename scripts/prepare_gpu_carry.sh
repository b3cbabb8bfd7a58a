#!/usr/bin/env bash
# Prepares .device/ (git-ignored) for scripts/gpu_check.sh and bench/run_gpu.sh on the GPU
# machine, which has no ONNX C++ library and no Fashion-MNIST: the unpacked Debian packages
# libonnx-dev, libonnx1 and libonnxifi (and libpng / libjpeg-turbo in case it lacks them),
# the data set's IDX files; and Open MPI with its
# libraries (.device/openmpi, relocated through OPAL_PREFIX by scripts/mpi_gpu_check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device/debs .device/onnx .device/data
(cd .device/debs && apt-get download libonnx-dev libonnx1 libonnxifi libpng-dev libpng16-16 \
  libjpeg62-turbo-dev libjpeg62-turbo)
for f in .device/debs/*.deb; do dpkg -x "$f" .device/onnx; done
rm -rf .device/debs
mkdir -p .device/debs .device/openmpi
(cd .device/debs && apt-get download openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 \
  libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 librdmacm1 ibverbs-providers \
  libnl-3-200 libnl-route-3-200 libpsm2-2 libpsm-infinipath1 libmunge2 libnuma1)
for f in .device/debs/*.deb; do dpkg -x "$f" .device/openmpi; done
# Only what mpirun and the C API need (the carry is limited): no Fortran modules, internal
# headers, OpenSHMEM, static libraries or documentation.
M=.device/openmpi/usr/lib/x86_64-linux-gnu
rm -rf .device/debs .device/openmpi/usr/share/doc .device/openmpi/usr/share/man $M/fortran \
  $M/openmpi/include/openmpi $M/liboshmem* $M/openmpi/lib/liboshmem* $M/openmpi/lib/*.mod
find .device/openmpi -name "*.a" -delete
cp /usr/share/datasets/fashion-mnist/*.gz .device/data/
du -sh .device
