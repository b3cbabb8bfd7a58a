// What CUDA kernels receive as KernelContext::device_ctx, and the check macros for CUDA,
// cuBLAS and cuDNN calls (they name the call, file and line).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <memory>

#include "graph/errors.h"
#include "ops/cuda/workspace.h"
#include "ops/kernel.h"

namespace cbt::cuda {

struct EnginePlanCache;  // conv.cu

// One per learner stream: the stream, library handles bound to it, and a scratch workspace
// (for cuDNN algorithms and temporaries) that kernels may use for the duration of a call
// through Scratch. `workspace` is the address and `workspace_bytes` the most a kernel may
// use (also the budget of cuDNN's algorithm choice); `workspace_memory`, when set, maps
// physical memory behind the address as far as kernels have asked (see workspace.h).
struct CudaContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  Workspace* workspace_memory = nullptr;
  bool tf32 = false;  // allow TF32 tensor cores in matrix products (--precision tf32)
  // --deterministic: only kernels and library algorithms whose results do not depend on
  // scheduling (no atomics, deterministic cuDNN algorithms)
  bool deterministic = false;
  // cuDNN convolution algorithms (--cudnn-algos): engines of the backend API timed at
  // start-up (default), the legacy algorithms timed by Find, or the legacy heuristic ranking.
  ConvAlgos conv_algos = ConvAlgos::Engines;
  int conv_concurrency = 1;  // learners of this GPU: the engines are timed that many at once
  // The convolutions' execution plans on this context's cuDNN handle, one per geometry and op,
  // shared by the nodes that have them (conv.cu); made on first use.
  mutable std::shared_ptr<EnginePlanCache> engine_plans;
};

// Carves 256-byte aligned temporaries out of cc.workspace for the duration of one kernel
// call (work on one stream is ordered, so the next call may reuse the same bytes); the
// memory behind them is mapped as they are taken.
class Scratch {
 public:
  explicit Scratch(const CudaContext& cc)
      : cc_(cc),
        base_(static_cast<std::byte*>(cc.workspace)),
        size_(cc.workspace ? cc.workspace_bytes / 256 * 256 : 0) {}
  static size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }
  template <class T>
  T* take(int64_t count, const char* what) {
    return reinterpret_cast<T*>(reserve(aligned(static_cast<size_t>(count) * sizeof(T)), what, true));
  }
  // The unused rest of the workspace, of which the first `bytes` are made usable (for a
  // library call that is given the rest as its workspace).
  void* rest(size_t bytes, const char* what) { return reserve(bytes, what, false); }
  size_t left() const { return size_ - used_; }

 private:
  const CudaContext& cc_;
  std::byte* base_;
  size_t size_;
  size_t used_ = 0;
  std::byte* reserve(size_t bytes, const char* what, bool keep);
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

#define CBT_CUBLAS_CHECK(expr)                                                                            \
  do {                                                                                                    \
    cublasStatus_t cbt_st_ = (expr);                                                                      \
    if (cbt_st_ != CUBLAS_STATUS_SUCCESS)                                                                 \
      ::cbt::detail::throw_internal(#expr, __FILE__, __LINE__, ::cbt::cuda::cublas_status_name(cbt_st_)); \
  } while (0)

#define CBT_CUDNN_CHECK(expr)                                                                 \
  do {                                                                                        \
    cudnnStatus_t cbt_st_ = (expr);                                                           \
    if (cbt_st_ != CUDNN_STATUS_SUCCESS)                                                      \
      ::cbt::detail::throw_internal(#expr, __FILE__, __LINE__, cudnnGetErrorString(cbt_st_)); \
  } while (0)

// After a kernel launch: reports launch-configuration errors at the launch site.
#define CBT_CUDA_CHECK_LAUNCH() CBT_CUDA_CHECK(cudaGetLastError())
