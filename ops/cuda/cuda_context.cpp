// Names of cuBLAS status codes for error messages, and the workspace's Scratch.
#include "ops/cuda/cuda_context.h"

namespace cbt::cuda {

std::byte* Scratch::reserve(size_t bytes, const char* what, bool keep) {
  CBT_MODEL_CHECK(bytes == 0 || (base_ && bytes <= size_ - used_), "CUDA workspace too small for ", what, ": needs ",
                  used_ + bytes, " bytes, has ", size_);
  if (cc_.workspace_memory) cc_.workspace_memory->ensure(used_ + bytes, cc_.stream);
  std::byte* p = base_ + used_;
  if (keep) used_ += bytes;
  return p;
}

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

}  // namespace cbt::cuda
