// The registry of CUDA-vs-CPU cases (filled at static initialisation by CBT_CUDA_CASES).
#include "cuda/cuda_cases.h"

namespace cbt::test {

namespace {
std::vector<CudaCase>& registry() {
  static std::vector<CudaCase> cases;
  return cases;
}
}  // namespace

bool register_cuda_case(CudaCase c) {
  registry().push_back(std::move(c));
  return true;
}

const std::vector<CudaCase>& cuda_cases() { return registry(); }

}  // namespace cbt::test
