// Row-major gemm over OpenBLAS, templated on float/double so kernels stay generic.
#pragma once
#include <cblas.h>

#include <cstdint>

namespace cbt::cpu {

enum class Trans : bool { No = false, Yes = true };

// C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C, all row-major with leading dims.
template <class T>
void gemm(Trans ta, Trans tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
          int64_t ldb, T beta, T* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  auto ca = ta == Trans::Yes ? CblasTrans : CblasNoTrans;
  auto cb = tb == Trans::Yes ? CblasTrans : CblasNoTrans;
  // BLAS rejects zero leading dims even when K == 0 (then C is only scaled by beta).
  if (lda < 1) lda = 1;
  if (ldb < 1) ldb = 1;
  if constexpr (sizeof(T) == sizeof(float)) {
    cblas_sgemm(CblasRowMajor, ca, cb, int(M), int(N), int(K), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ca, cb, int(M), int(N), int(K), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
  }
}

// Same, with packed operands (leading dims implied by the transposition flags).
template <class T>
void gemm(Trans ta, Trans tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, const T* B, T beta, T* C) {
  gemm(ta, tb, M, N, K, alpha, A, ta == Trans::Yes ? M : K, B, tb == Trans::Yes ? K : N, beta, C, N);
}

}  // namespace cbt::cpu
