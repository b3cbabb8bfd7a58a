// cuDNN and cuBLASLt load their sub-libraries, kernels' tables and heuristics on first use: the
// first convolution search and the first Gemm of a run took about 0.25 s and 0.1 s more than
// the next ones. warm_up_libraries does that loading ahead, for the thread that starts the GPUs'
// contexts while the data set is read (runtime/backend.h, DeviceWarmUp), unless
// CBT_WARM_UP_LIBRARIES=0 (for measuring what it saves).
#pragma once

namespace cbt::cuda {

// On the current device: a cuDNN handle, the backend API's graphs, heuristics and plans of each
// convolution op (warm_up_engines), and a cuBLASLt handle with a matmul heuristic, all freed
// again. Nothing runs on the GPU. Errors are swallowed: the kernels that need the libraries
// report them.
void warm_up_libraries();

}  // namespace cbt::cuda
