// A kernel that holds a stream for a while: work queued behind it waits, and the host can see
// that it does (a host function blocking the stream instead held up the launching thread).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace cbt::test {

// Queues on `stream` a one-thread kernel that returns `ns` nanoseconds (the GPU's global
// timer) after it starts.
void spin_for(uint64_t ns, cudaStream_t stream);

}  // namespace cbt::test
