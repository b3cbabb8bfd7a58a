// A stream's progress, seen by the host without a CUDA call: a one-thread kernel stores a
// number into pinned, mapped host memory once the work queued before it has run.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace cbt::cuda {

// *slot = value on `stream` after its earlier work; `slot` is the device address of mapped
// host memory (cudaHostAlloc with cudaHostAllocMapped). The host reads it with an atomic load.
void signal_host(uint64_t* slot, uint64_t value, cudaStream_t stream);

}  // namespace cbt::cuda
