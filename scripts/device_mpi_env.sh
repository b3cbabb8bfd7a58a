# Sourced on the GPU machine: uses its own mpirun when there is one, else unpacks the Open
# MPI packages carried in .device/mpi-debs (scripts/prepare_gpu_carry.sh) into /tmp/mpiroot
# and points Open MPI at that relocated prefix (OPAL_PREFIX).
if ! command -v mpirun >/dev/null 2>&1 && [ -d .device/mpi-debs ]; then
  mkdir -p /tmp/mpiroot
  for f in .device/mpi-debs/*.deb; do dpkg -x "$f" /tmp/mpiroot; done
  # Debian names the commands mpirun.openmpi etc. (the plain names are alternatives links
  # that only its installer makes).
  mkdir -p /tmp/mpiroot/links
  for c in mpirun mpiexec mpicc mpicxx; do ln -sf /tmp/mpiroot/usr/bin/$c.openmpi /tmp/mpiroot/links/$c; done
  export OPAL_PREFIX=/tmp/mpiroot/usr
  export PATH=/tmp/mpiroot/links:/tmp/mpiroot/usr/bin:$PATH
  export MPI_CXX_COMPILER=/tmp/mpiroot/links/mpicxx MPI_C_COMPILER=/tmp/mpiroot/links/mpicc
  export LD_LIBRARY_PATH=/tmp/mpiroot/usr/lib/x86_64-linux-gnu/openmpi/lib:/tmp/mpiroot/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  export MPI_HOME=/tmp/mpiroot/usr/lib/x86_64-linux-gnu/openmpi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
command -v mpirun >/dev/null 2>&1 && mpirun --version | head -1 || echo "no mpirun"
