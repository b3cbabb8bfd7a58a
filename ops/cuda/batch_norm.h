// What the BatchNorm CUDA kernels tell about the path they take (for tests and logs).
#pragma once
#include <cstdint>

namespace cbt::cuda {

// Whether BatchNorm's training forward and backward can run as one launch each on `device`
// (thread-block clusters: compute capability 9.0 and later, and kernels built for it). They
// do, where a channel fits one cluster, while the GPU has at most 8 learners;
// CBT_BN_ONE_LAUNCH=on in the environment takes them whatever the count, =off never.
bool batch_norm_one_launch_supported(int device);

// How many one-launch BatchNorm kernels this process has launched (or captured).
uint64_t batch_norm_one_launch_runs();

}  // namespace cbt::cuda
