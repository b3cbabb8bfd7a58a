// blas_core, suggested_blas_core: OpenBLAS's kernel set against what the CPU can run.
#include "ops/cpu/blas_core.h"

#include <cblas.h>
#include <strings.h>

#include <cstdlib>

namespace cbt::cpu {

std::string blas_core() {
  const char* name = openblas_get_corename();
  return name ? name : "";
}

const char* suggested_blas_core() {
  if (std::getenv("OPENBLAS_CORETYPE")) return nullptr;  // the user's choice
#if defined(__x86_64__)
  // OpenBLAS's x86-64 kernel sets older than Haswell: what its fallback picks.
  static const char* const kGeneric[] = {"Prescott", "Core2",       "Penryn",    "Dunnington", "Nehalem",
                                         "Atom",     "Sandybridge", "Barcelona", "Bobcat"};
  const std::string core = blas_core();
  bool generic = false;
  for (const char* g : kGeneric) generic = generic || strcasecmp(core.c_str(), g) == 0;
  __builtin_cpu_init();
  if (generic && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

}  // namespace cbt::cpu
