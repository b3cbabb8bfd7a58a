// set_kernel_threads: OpenBLAS and OpenMP thread counts.
#include "ops/cpu/threads.h"

#include <cblas.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace cbt::cpu {
namespace {
std::atomic<int> g_kernel_threads{1};
}  // namespace

void set_kernel_threads(int n) {
  if (n < 1) n = 1;
  g_kernel_threads = n;
  // OpenBLAS's OpenMP build runs its products in the caller's OpenMP team. Its pthread build
  // has threads of its own, which would run beside cbtrain's OpenMP teams (twice as many
  // threads as cores: every barrier then waits for a time slice), so there products run on
  // the calling thread and only cbtrain's kernels use several.
  openblas_set_num_threads(openblas_get_parallel() == 2 ? n : 1);
  use_kernel_threads(n);
}

int kernel_threads() { return g_kernel_threads; }

namespace {
int env_count(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);  // OMP_NUM_THREADS may list counts per level: "4,2"
  return end != v && n > 0 && n < 1 << 20 ? static_cast<int>(n) : 0;
}
}  // namespace

int available_cores() {
  if (int n = env_count("OMP_NUM_THREADS")) return n;
  cpu_set_t set;
  int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  int local = env_count("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!local) local = env_count("LOCAL_WORLD_SIZE");
  return std::max(1, cores / std::max(1, local));
}

void use_kernel_threads(int n) { omp_set_num_threads(n < 1 ? 1 : n); }

}  // namespace cbt::cpu
