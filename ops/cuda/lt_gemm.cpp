// One Gemm's cuBLASLt product (lt_gemm.h).
#include "ops/cuda/lt_gemm.h"

namespace cbt::cuda {

LtGemm::LtGemm(bool tf32, bool ta, bool tb, int64_t M, int64_t N, int64_t K, bool bias, bool relu) {
  try {
    CBT_CUBLAS_CHECK(cublasLtCreate(&handle_));
    CBT_CUBLAS_CHECK(
        cublasLtMatmulDescCreate(&desc_, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t opa = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    set(CUBLASLT_MATMUL_DESC_TRANSA, opa);
    set(CUBLASLT_MATMUL_DESC_TRANSB, opb);
    cublasLtEpilogue_t epi = bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                  : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
    // Stored shapes (before op): B is (K, N) or (N, K) row-major, A is (M, K) or (K, M).
    CBT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, tb ? K : N, tb ? N : K, tb ? K : N));
    CBT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, ta ? M : K, ta ? K : M, ta ? M : K));
    CBT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, CUDA_R_32F, N, M, N));
    cublasLtMatmulPreference_t pref = nullptr;
    CBT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    size_t no_workspace = 0;
    const cublasStatus_t set_ws = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                       &no_workspace, sizeof no_workspace);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st =
        set_ws == CUBLAS_STATUS_SUCCESS
            ? cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, pref, 1, &result, &found)
            : set_ws;
    cublasLtMatmulPreferenceDestroy(pref);
    CBT_CUBLAS_CHECK(set_ws);
    usable_ = st == CUBLAS_STATUS_SUCCESS && found > 0;
    if (usable_) algo_ = result.algo;
  } catch (...) {
    release();  // a constructor that throws runs no destructor
    throw;
  }
}

LtGemm::~LtGemm() { release(); }

void LtGemm::release() {
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  if (handle_) cublasLtDestroy(handle_);
  d_ = b_ = a_ = nullptr;
  desc_ = nullptr;
  handle_ = nullptr;
}

void LtGemm::run(const CudaContext& cc, float alpha, const float* A, const float* B, const float* bias, float* Y) {
  if (bias) set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  const float zero = 0.0f;
  CBT_CUBLAS_CHECK(
      cublasLtMatmul(handle_, desc_, &alpha, B, a_, A, b_, &zero, Y, d_, Y, d_, &algo_, nullptr, 0, cc.stream));
}

}  // namespace cbt::cuda
