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
# Nor the network fabrics a single machine does not use (UCX, libfabric, PSM, InfiniBand verbs,
# netlink) with the components that load them, nor the Fortran and Java bindings: shared memory
# and TCP remain, and the whole carry (source, data set, ONNX, Open MPI) stays under 64 MiB.
P=$M/openmpi/lib/openmpi3
rm -rf $M/ucx $M/libibverbs $M/rsocket $M/libuc[mpst]* $M/libfabric* $M/libpsm* \
  $M/libinfinipath* $M/libibverbs* $M/librdmacm* $M/libmlx* $M/libefa* $M/libmana* $M/libnl* \
  $M/libmca_common_{ofi,ucx,verbs}* $M/libmpi_{mpifh,usempi,java,cxx}* $M/libompitrace* \
  .device/openmpi/usr/lib/libpsm1 $P/mca_{atomic,memheap,scoll,spml,sshmem}_* $P/mca_*_{ucx,ofi,psm,psm2}.so \
  $P/mca_btl_openib.so $P/mca_reachable_netlink.so $P/mca_io_romio321.so
# The images xz-compressed (raw on the GPU machine: unxz there), the labels as they are.
for f in train-images-idx3-ubyte t10k-images-idx3-ubyte; do
  zcat /usr/share/datasets/fashion-mnist/$f.gz | xz -9 -T0 > .device/data/$f.xz
done
cp /usr/share/datasets/fashion-mnist/*labels*.gz .device/data/
rm -rf .device/onnx/usr/share/doc .device/onnx/usr/share/man
du -sh .device
