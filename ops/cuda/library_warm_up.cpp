// cuDNN and cuBLASLt loaded ahead of their first use (library_warm_up.h).
#include "ops/cuda/library_warm_up.h"

#include <cudnn.h>

#include <exception>

#include "ops/cuda/cudnn_engine.h"
#include "ops/cuda/lt_gemm.h"

namespace cbt::cuda {
namespace {

void warm_up_cudnn() {
  cudnnHandle_t h = nullptr;
  if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) return;
  try {
    (void)warm_up_engines(h);
  } catch (const std::exception&) {
  }
  cudnnDestroy(h);
}

// cuBLASLt's handle and a heuristic for a small float32 product with a bias epilogue, as a
// Gemm node asks (lt_gemm.h).
void warm_up_cublas_lt() {
  try {
    const LtGemm gemm(false, false, false, 16, 16, 16, true, false);
    (void)gemm.usable();
  } catch (const std::exception&) {
  }
}

}  // namespace

void warm_up_libraries() {
  warm_up_cudnn();
  warm_up_cublas_lt();
}

}  // namespace cbt::cuda
