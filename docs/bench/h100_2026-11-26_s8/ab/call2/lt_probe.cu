// Which cuBLASLt epilogues does this cuBLAS offer for fp32 (compute 32F, no TF32)?
// For each: the heuristic's result count, then one run checked against a host reference.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x)                                   \
  do {                                          \
    auto s_ = (x);                              \
    if (s_) {                                   \
      std::printf("  %s -> %d\n", #x, (int)s_); \
      return;                                   \
    }                                           \
  } while (0)

// Column-major D (m x n) = A (m x k) * B (k x n); transa/transb as flags.
void probe(cublasLtHandle_t h, const char* name, cublasLtEpilogue_t epi, int m, int n, int k, cublasOperation_t ta,
           cublasOperation_t tb) {
  std::printf("%s m=%d n=%d k=%d ta=%d tb=%d\n", name, m, n, k, (int)ta, (int)tb);
  int lda = ta == CUBLAS_OP_N ? m : k, ldb = tb == CUBLAS_OP_N ? k : n;
  size_t asz = (size_t)m * k, bsz = (size_t)k * n, dsz = (size_t)m * n;
  std::vector<float> A(asz), B(bsz), D(dsz), bias(std::max(m, n) * 2), aux(dsz);
  for (auto& v : A) v = (rand() % 2001 - 1000) / 1000.f;
  for (auto& v : B) v = (rand() % 2001 - 1000) / 1000.f;
  float *dA, *dB, *dD, *dbias;
  void* daux;
  cudaMalloc(&dA, asz * 4);
  cudaMalloc(&dB, bsz * 4);
  cudaMalloc(&dD, dsz * 4);
  cudaMalloc(&dbias, bias.size() * 4);
  cudaMalloc(&daux, dsz * 4);
  cudaMemcpy(dA, A.data(), asz * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B.data(), bsz * 4, cudaMemcpyHostToDevice);
  cudaMemset(daux, 0xff, dsz * 4);  // relu mask: everything passes
  cudaMemset(dbias, 0, bias.size() * 4);
  cublasLtMatmulDesc_t op;
  CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  if (epi != CUBLASLT_EPILOGUE_DEFAULT)
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
  if (epi == CUBLASLT_EPILOGUE_DRELU_BGRAD || epi == CUBLASLT_EPILOGUE_DRELU) {
    int64_t ld = ((m + 127) / 128) * 128;  // bitmask: ld in elements, multiple of 128
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &daux, sizeof daux));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld));
  }
  cublasLtMatrixLayout_t la, lb, ld_;
  CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, ta == CUBLAS_OP_N ? m : k, ta == CUBLAS_OP_N ? k : m, lda));
  CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, tb == CUBLAS_OP_N ? k : n, tb == CUBLAS_OP_N ? n : k, ldb));
  CK(cublasLtMatrixLayoutCreate(&ld_, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t pref;
  CK(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = 1 << 22;
  void* dws;
  cudaMalloc(&dws, ws);
  CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t res[8];
  int found = 0;
  auto st = cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, ld_, ld_, pref, 8, res, &found);
  std::printf("  heuristic status %d, %d algorithm(s)\n", (int)st, found);
  if (st || !found) return;
  float one = 1, zero = 0;
  st = cublasLtMatmul(h, op, &one, dA, la, dB, lb, &zero, dD, ld_, dD, ld_, &res[0].algo, dws, ws, 0);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("  run status %d, cuda %d\n", (int)st, (int)e);
  cudaMemcpy(D.data(), dD, dsz * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(bias.data(), dbias, bias.size() * 4, cudaMemcpyDeviceToHost);
  double err = 0, berr = 0, bmax = 0;
  std::vector<double> ref(dsz);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int p = 0; p < k; ++p) {
        double a = ta == CUBLAS_OP_N ? A[i + (size_t)p * lda] : A[p + (size_t)i * lda];
        double b = tb == CUBLAS_OP_N ? B[p + (size_t)j * ldb] : B[j + (size_t)p * ldb];
        s += a * b;
      }
      ref[i + (size_t)j * m] = s;
      err = std::max(err, std::fabs(s - D[i + (size_t)j * m]));
    }
  // BGRADA: sums of A over k (m values); BGRADB: sums of B over k (n values); DRELU_BGRAD:
  // sums of D over n (m values).
  if (epi == CUBLASLT_EPILOGUE_BGRADA || epi == CUBLASLT_EPILOGUE_BGRADB || epi == CUBLASLT_EPILOGUE_DRELU_BGRAD) {
    int len = epi == CUBLASLT_EPILOGUE_BGRADB ? n : m;
    for (int i = 0; i < len; ++i) {
      double s = 0;
      if (epi == CUBLASLT_EPILOGUE_BGRADA)
        for (int p = 0; p < k; ++p) s += ta == CUBLAS_OP_N ? A[i + (size_t)p * lda] : A[p + (size_t)i * lda];
      else if (epi == CUBLASLT_EPILOGUE_BGRADB)
        for (int p = 0; p < k; ++p) s += tb == CUBLAS_OP_N ? B[p + (size_t)i * ldb] : B[i + (size_t)p * ldb];
      else
        for (int j = 0; j < n; ++j) s += ref[i + (size_t)j * m];
      berr = std::max(berr, std::fabs(s - bias[i]));
      bmax = std::max(bmax, std::fabs(s));
    }
  }
  std::printf("  max |D - ref| %.3g, max |bgrad - ref| %.3g (of %.3g)\n", err, berr, bmax);
  // time 200 runs
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  cudaEventRecord(t0);
  for (int r = 0; r < 200; ++r)
    cublasLtMatmul(h, op, &one, dA, la, dB, lb, &zero, dD, ld_, dD, ld_, &res[0].algo, dws, ws, 0);
  cudaEventRecord(t1);
  cudaEventSynchronize(t1);
  float ms;
  cudaEventElapsedTime(&ms, t0, t1);
  std::printf("  %.2f us per call\n", ms * 1000 / 200);
}

int main() {
  cublasLtHandle_t h;
  cublasLtCreate(&h);
  std::printf("cublasLt version %zu\n", cublasLtGetVersion());
  const auto N = CUBLAS_OP_N, T = CUBLAS_OP_T;
  // LeNet-5 Gemm 2 (120 -> 84) at batch 32, in cuBLAS column-major terms:
  // dX (32x120 row-major) = dY (32x84) * W (84x120): column-major D (120 x 32) = W^T.. shapes only matter here.
  probe(h, "DEFAULT", CUBLASLT_EPILOGUE_DEFAULT, 120, 32, 84, N, N);
  probe(h, "DRELU_BGRAD", CUBLASLT_EPILOGUE_DRELU_BGRAD, 120, 32, 84, N, N);
  probe(h, "DRELU", CUBLASLT_EPILOGUE_DRELU, 120, 32, 84, N, N);
  // dW (84x120) = dY^T (84x32) * X (32x120): reduction over the batch (k = 32).
  probe(h, "BGRADA", CUBLASLT_EPILOGUE_BGRADA, 84, 120, 32, N, T);
  probe(h, "BGRADB", CUBLASLT_EPILOGUE_BGRADB, 120, 84, 32, N, T);
  probe(h, "BGRADA tn", CUBLASLT_EPILOGUE_BGRADA, 84, 120, 32, T, N);
  return 0;
}
