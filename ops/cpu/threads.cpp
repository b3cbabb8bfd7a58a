// set_kernel_threads: OpenBLAS and OpenMP thread counts.
#include "ops/cpu/threads.h"

#include <cblas.h>
#include <omp.h>

namespace cbt::cpu {

void set_kernel_threads(int n) {
  if (n < 1) n = 1;
  openblas_set_num_threads(n);
  omp_set_num_threads(n);
}

}  // namespace cbt::cpu
