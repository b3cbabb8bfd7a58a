// One Gemm's cuBLASLt product with a bias and/or Relu epilogue (matmul.cu keeps one per node),
// and what library_warm_up.cpp builds to load cuBLASLt ahead of the first Gemm.
#pragma once
#include <cublasLt.h>

#include <cstdint>

#include "ops/cuda/cuda_context.h"

namespace cbt::cuda {

// Descriptors and the algorithm cuBLASLt's heuristic chose, made once; no workspace.
class LtGemm {
 public:
  // Row-major Y (M, N) = alpha op(A) op(B) [+ bias (N)] [then max(., 0)], computed as the
  // column-major Y^T (N, M) = op(B)^T op(A)^T: cuBLASLt's first operand is B. `tf32`: TF32
  // tensor cores allowed (--precision tf32). Throws on a cuBLASLt error.
  LtGemm(bool tf32, bool ta, bool tb, int64_t M, int64_t N, int64_t K, bool bias, bool relu);
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  ~LtGemm();
  // Whether cuBLASLt offered an algorithm for this product and epilogue.
  bool usable() const { return usable_; }
  void run(const CudaContext& cc, float alpha, const float* A, const float* B, const float* bias, float* Y);

 private:
  template <class V>
  void set(cublasLtMatmulDescAttributes_t attr, const V& v) {
    CBT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, attr, &v, sizeof v));
  }
  void release();
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool usable_ = false;
};

}  // namespace cbt::cuda
