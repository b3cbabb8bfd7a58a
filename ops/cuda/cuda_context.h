// What CUDA kernels receive as KernelContext::device_ctx, and the check macros for CUDA,
// cuBLAS and cuDNN calls (they name the call, file and line).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>

#include "graph/errors.h"

namespace cbt::cuda {

// One per learner stream: the stream, library handles bound to it, and a scratch workspace
// (for cuDNN algorithms and temporaries) that kernels may use for the duration of a call.
struct CudaContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  bool tf32 = false;  // allow TF32 tensor cores in matrix products (--precision tf32)
  // --deterministic: only kernels and library algorithms whose results do not depend on
  // scheduling (no atomics, deterministic cuDNN algorithms)
  bool deterministic = false;
  // cuDNN convolution algorithms: the fastest measured by cuDNN's Find (default), or the first
  // of its heuristic ranking (--cudnn-algos heuristic: no measuring at start-up).
  bool measure_conv_algos = true;
};

inline CudaContext& context_of(void* device_ctx) {
  CBT_CHECK(device_ctx != nullptr, "CUDA kernel called without a CUDA context");
  return *static_cast<CudaContext*>(device_ctx);
}

const char* cublas_status_name(cublasStatus_t s);

}  // namespace cbt::cuda

#define CBT_CUDA_CHECK(expr)                                                                  \
  do {                                                                                        \
    cudaError_t cbt_err_ = (expr);                                                            \
    if (cbt_err_ != cudaSuccess)                                                              \
      ::cbt::detail::throw_internal(#expr, __FILE__, __LINE__, cudaGetErrorString(cbt_err_)); \
  } while (0)

#define CBT_CUBLAS_CHECK(expr)                                                                  \
  do {                                                                                          \
    cublasStatus_t cbt_st_ = (expr);                                                            \
    if (cbt_st_ != CUBLAS_STATUS_SUCCESS)                                                       \
      ::cbt::detail::throw_internal(#expr, __FILE__, __LINE__,                                  \
                                    ::cbt::cuda::cublas_status_name(cbt_st_));                 \
  } while (0)

#define CBT_CUDNN_CHECK(expr)                                                                   \
  do {                                                                                          \
    cudnnStatus_t cbt_st_ = (expr);                                                             \
    if (cbt_st_ != CUDNN_STATUS_SUCCESS)                                                        \
      ::cbt::detail::throw_internal(#expr, __FILE__, __LINE__, cudnnGetErrorString(cbt_st_));   \
  } while (0)

// After a kernel launch: reports launch-configuration errors at the launch site.
#define CBT_CUDA_CHECK_LAUNCH() CBT_CUDA_CHECK(cudaGetLastError())
