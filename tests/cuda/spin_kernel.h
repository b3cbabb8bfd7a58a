// A kernel that holds a stream until the host sets a flag: work queued behind it waits for the
// host, without a host function on the stream (whose blocking can hold up the launching thread).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace cbt::test {

// Queues on `stream` a one-thread kernel that returns once *flag != 0; `flag` is the device
// address of mapped host memory (cudaHostAllocMapped), which the host sets with an atomic store.
void spin_until_set(const uint32_t* flag, cudaStream_t stream);

}  // namespace cbt::test
