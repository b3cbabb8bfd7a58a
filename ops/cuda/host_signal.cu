// signal_host: see host_signal.h.
#include "ops/cuda/host_signal.h"

#include "ops/cuda/common.cuh"

namespace cbt::cuda {

namespace {
__global__ void store_value(volatile uint64_t* slot, uint64_t value) {
  __threadfence_system();  // the work before this kernel is visible before the number is
  *slot = value;
}
}  // namespace

void load_signal_host_kernel() {
  cudaFuncAttributes attrs{};
  CBT_CUDA_CHECK(cudaFuncGetAttributes(&attrs, store_value));  // loads the kernel's module
}

void signal_host(uint64_t* slot, uint64_t value, cudaStream_t stream) {
  store_value<<<1, 1, 0, stream>>>(slot, value);
  CBT_CUDA_CHECK_LAUNCH();
}

}  // namespace cbt::cuda
