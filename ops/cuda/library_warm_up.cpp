// cuDNN and cuBLASLt loaded ahead of their first use (library_warm_up.h).
#include "ops/cuda/library_warm_up.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <exception>

#include "ops/cuda/cudnn_engine.h"

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

// A float32 product with a bias epilogue, as ops/cuda/matmul.cu's LtGemm asks for one.
void warm_up_cublas_lt() {
  cublasLtHandle_t h = nullptr;
  if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS) return;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
  const size_t no_workspace = 0;
  if (cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 16, 16, 16) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, 16, 16, 16) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatrixLayoutCreate(&d, CUDA_R_32F, 16, 16, 16) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &no_workspace,
                                           sizeof no_workspace) == CUBLAS_STATUS_SUCCESS) {
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    (void)cublasLtMatmulAlgoGetHeuristic(h, desc, a, b, d, d, pref, 1, &result, &found);
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : {d, b, a})
    if (l) cublasLtMatrixLayoutDestroy(l);
  if (desc) cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(h);
}

}  // namespace

void warm_up_libraries() {
  warm_up_cudnn();
  warm_up_cublas_lt();
}

}  // namespace cbt::cuda
