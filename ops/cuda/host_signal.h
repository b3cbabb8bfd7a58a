// A stream's progress, seen by the host without a CUDA call: a one-thread kernel stores a
// number into pinned, mapped host memory once the work queued before it has run.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace cbt::cuda {

// *slot = value on `stream` after its earlier work; `slot` is the device address of mapped
// host memory (cudaHostAlloc with cudaHostAllocMapped). The host reads it with an atomic load.
void signal_host(uint64_t* slot, uint64_t value, cudaStream_t stream);

// Loads signal_host's kernel on the current GPU now. CUDA loads a kernel's code lazily at its
// first launch, and that launch then waits for the work already running on the GPU (seen on
// the H100 host: the launch returned only when the kernel queued ahead of it ended): a first
// signal behind a sum that never ends would never return. Call it before the first signal.
void load_signal_host_kernel();

}  // namespace cbt::cuda
