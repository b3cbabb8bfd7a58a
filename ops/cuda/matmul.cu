// Gemm and MatMul CUDA kernels, forward and backward, over cuBLAS. Row-major products are
// computed as their column-major transposes (C^T = B^T A^T), so no data is transposed. A Gemm
// with a bias vector, or with a fused Relu (graph/fusion.h), runs as one cuBLASLt product
// whose epilogue adds the bias and applies the Relu.

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "graph/shape_utils.h"
#include "ops/cuda/broadcast.cuh"
#include "ops/cuda/dense_util.cuh"
#include "ops/cuda/fused_relu.cuh"
#include "ops/cuda/lt_gemm.h"
#include "ops/gemm_geometry.h"

namespace cbt::cuda {
namespace {

cublasHandle_t cublas_on_stream(const CudaContext& cc) {
  // The backend binds the handle to cc.stream (with its workspace) once; setting the stream
  // again here would drop that workspace.
  // Default math never uses TF32 for sgemm; tensor cores only when --precision tf32 asks.
  CBT_CUBLAS_CHECK(cublasSetMathMode(cc.cublas, cc.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  return cc.cublas;
}

int blas_int(int64_t v) {
  CBT_MODEL_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), "matrix dimension ", v, " is too large for cuBLAS");
  return static_cast<int>(v);
}

// Where each of `count` product matrices reads an operand: all the same one (single), one
// each (full), or through a broadcast index (general).
struct OperandMap {
  bool single = false, full = false;
  std::vector<int64_t> index;  // matrix of the operand for each product (general only)
};

OperandMap operand_map(const Shape& batch_of_operand, const Shape& batch) {
  OperandMap m;
  int64_t count = dims_product(batch, 0, batch.size());
  int64_t own = dims_product(batch_of_operand, 0, batch_of_operand.size());
  m.single = own == 1;
  m.full = own == count;  // no dim expanded: the broadcast index is the identity
  if (m.single || m.full) return m;
  auto st = broadcast_strides(batch_of_operand, batch);
  std::vector<int64_t> coord(batch.size(), 0);
  m.index.resize(count);
  for (int64_t& v : m.index) {
    v = 0;
    for (size_t k = 0; k < batch.size(); ++k) v += coord[k] * st[k];
    for (size_t k = batch.size(); k-- > 0;) {
      if (++coord[k] < batch[k]) break;
      coord[k] = 0;
    }
  }
  return m;
}

// Row-major out[i] = alpha * op(L[l(i)]) op(R[r(i)]) + beta * out[i] for i < count, with
// op(L): (M, K), op(R): (K, N), out: (M, N); matrices packed, `lsize`/`rsize` elements each.
void batched_gemm(cublasHandle_t h, bool tl, bool tr, int64_t M, int64_t N, int64_t K, float alpha, const float* L,
                  const OperandMap& lm, const float* R, const OperandMap& rm, float beta, float* out, int64_t count) {
  int m = blas_int(M), n = blas_int(N), k = blas_int(K);
  int ldl = blas_int(tl ? M : K), ldr = blas_int(tr ? K : N);
  cublasOperation_t opl = tl ? CUBLAS_OP_T : CUBLAS_OP_N, opr = tr ? CUBLAS_OP_T : CUBLAS_OP_N;
  int64_t lsize = M * K, rsize = K * N, osize = M * N;
  if (count == 1) {
    CBT_CUBLAS_CHECK(cublasSgemm(h, opr, opl, n, m, k, &alpha, R, ldr, L, ldl, &beta, out, n));
    return;
  }
  if ((lm.single || lm.full) && (rm.single || rm.full)) {
    CBT_CUBLAS_CHECK(cublasSgemmStridedBatched(h, opr, opl, n, m, k, &alpha, R, ldr, rm.full ? rsize : 0, L, ldl,
                                               lm.full ? lsize : 0, &beta, out, n, osize, blas_int(count)));
    return;
  }
  // Operands broadcast along different dims: one product per matrix (rare in models).
  for (int64_t i = 0; i < count; ++i) {
    int64_t li = lm.full ? i : lm.single ? 0 : lm.index[i];
    int64_t ri = rm.full ? i : rm.single ? 0 : rm.index[i];
    CBT_CUBLAS_CHECK(
        cublasSgemm(h, opr, opl, n, m, k, &alpha, R + ri * rsize, ldr, L + li * lsize, ldl, &beta, out + i * osize, n));
  }
}

// out (M, N) = alpha L^T R for L: (K, M), R: (K, N) row-major, K long and M x N small (a
// weight's gradient over every row of a batch of sequences or images): cuBLAS gives such a
// product few tiles and walks K in series (a 24 x 96 gradient over 6,272 rows took 22 µs).
// Split K into chunks of at least 128 rows, one product each (strided-batched) into the
// workspace, and sum them in a fixed order (deterministic). Returns false, having done
// nothing, where the product is not of that shape or the workspace lacks room.
bool split_k_product(const CudaContext& cc, cublasHandle_t h, int64_t M, int64_t N, int64_t K, float alpha,
                     const float* L, const float* R, float* out) {
  const int64_t tiles = ((M + 63) / 64) * ((N + 63) / 64);
  const int64_t chunks = std::min<int64_t>({K / 128, (2 * 132 + tiles - 1) / tiles, 64});
  if (chunks < 4) return false;
  const int64_t chunk = K / chunks, rest = K - chunks * chunk, parts = chunks + (rest > 0 ? 1 : 0);
  Scratch scratch(cc);
  // The partial products, and 64 KiB beyond them for sum_to's own partial sums.
  if (static_cast<size_t>(parts * M * N) * sizeof(float) + 65536 > scratch.left()) return false;
  float* partial = scratch.take<float>(parts * M * N, "split products");
  OperandMap full, single;
  full.full = true, single.single = true;
  batched_gemm(h, true, false, M, N, chunk, 1.0f, L, full, R, full, 0.0f, partial, chunks);
  if (rest > 0)
    batched_gemm(h, true, false, M, N, rest, 1.0f, L + chunks * chunk * M, single, R + chunks * chunk * N, single, 0.0f,
                 partial + chunks * M * N, 1);
  ew::sum_to(cc.stream, scratch, partial, Shape{parts, M * N}, out, Shape{M * N}, alpha);
  return true;
}

// Operand batch dims broadcast into the product batch, for summing gradients back.
struct BatchBroadcast {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};  // the operand's matrix strides; 0 on broadcast dims
};

BatchBroadcast batch_broadcast(const Shape& operand_batch, const Shape& batch) {
  BatchBroadcast b;
  CBT_MODEL_CHECK(batch.size() <= BatchBroadcast::kMaxRank, "MatMul with ", batch.size(),
                  " batch dims: the CUDA kernel supports up to ", BatchBroadcast::kMaxRank);
  auto st = broadcast_strides(operand_batch, batch);
  b.rank = static_cast<int>(batch.size());
  for (int k = 0; k < b.rank; ++k) b.dims[k] = batch[k], b.strides[k] = st[k];
  return b;
}

// grad: (own, mat) = sum over products i reading matrix j of p: (count, mat), in order of i.
__global__ void sum_broadcast_kernel(const float* p, float* grad, int64_t own, int64_t mat, int64_t count,
                                     BatchBroadcast b) {
  CBT_GRID_STRIDE_LOOP(t, own * mat) {
    int64_t j = t / mat, e = t - j * mat;
    double acc = 0;
    for (int64_t i = 0; i < count; ++i) {
      int64_t rest = i, src = 0;
      for (int k = b.rank - 1; k >= 0; --k) {
        src += (rest % b.dims[k]) * b.strides[k];
        rest /= b.dims[k];
      }
      if (src == j) acc += p[i * mat + e];
    }
    grad[t] = static_cast<float>(acc);
  }
}

// The gradient of one MatMul operand: products prod(i) of the batch, summed over the batch
// dims the operand was broadcast along.
void operand_grad(const CudaContext& cc, cublasHandle_t h, const MatDims& d, const Shape& own_batch, int64_t mat,
                  float* grad, bool tl, bool tr, int64_t M, int64_t N, int64_t K, const float* L, const OperandMap& lm,
                  const float* R, const OperandMap& rm) {
  int64_t count = d.count(), own = dims_product(own_batch, 0, own_batch.size());
  if (own == count) {
    batched_gemm(h, tl, tr, M, N, K, 1.0f, L, lm, R, rm, 0.0f, grad, count);
    return;
  }
  Scratch scratch(cc);
  if (static_cast<size_t>(count * mat) * sizeof(float) <= scratch.left()) {
    float* p = scratch.take<float>(count * mat, "MatMul gradient products");
    batched_gemm(h, tl, tr, M, N, K, 1.0f, L, lm, R, rm, 0.0f, p, count);
    sum_broadcast_kernel<<<blocks_for(own * mat), kThreads, 0, cc.stream>>>(p, grad, own, mat, count,
                                                                            batch_broadcast(own_batch, d.batch));
    CBT_CUDA_CHECK_LAUNCH();
    return;
  }
  // Too large for the workspace: accumulate product by product into the gradient.
  CBT_CUDA_CHECK(cudaMemsetAsync(grad, 0, own * mat * sizeof(float), cc.stream));
  OperandMap om = operand_map(own_batch, d.batch);
  for (int64_t i = 0; i < count; ++i) {
    OperandMap one;
    one.single = true;
    int64_t li = lm.full ? i : lm.single ? 0 : lm.index[i];
    int64_t ri = rm.full ? i : rm.single ? 0 : rm.index[i];
    int64_t oi = om.single ? 0 : om.index[i];
    batched_gemm(h, tl, tr, M, N, K, 1.0f, L + li * M * K, one, R + ri * K * N, one, 1.0f, grad + oi * mat, 1);
  }
}

void check_float(const Tensor& t, const Node& node) { check_float32(t, node, "runs matrix products in float32"); }

// a: (..., M, K), b: (..., K, N) -> y: (batch, M, N)
void matmul_fwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &A = ctx.in(0), &B = ctx.in(1);
  check_float(A, ctx.node);
  MatDims d = mat_dims(A.shape(), B.shape());
  cublasHandle_t h = cublas_on_stream(cc);
  OperandMap single;
  single.single = true;
  if (d.foldable()) {
    batched_gemm(h, false, false, d.count() * d.M, d.N, d.K, 1.0f, fptr(A), single, fptr(B), single, 0.0f,
                 fptr_out(ctx.out(0)), 1);
    return;
  }
  batched_gemm(h, false, false, d.M, d.N, d.K, 1.0f, fptr(A), operand_map(d.abatch, d.batch), fptr(B),
               operand_map(d.bbatch, d.batch), 0.0f, fptr_out(ctx.out(0)), d.count());
}

// dy: (batch, M, N), a, b as in the forward -> dA, dB summed over broadcast batch dims.
void matmul_bwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor &dY = ctx.in(0), &A = ctx.in(1), &B = ctx.in(2);
  check_float(A, ctx.node);
  MatDims d = mat_dims(A.shape(), B.shape());
  cublasHandle_t h = cublas_on_stream(cc);
  bool want_da = output_needed(ctx, 0), want_db = output_needed(ctx, 1);
  OperandMap single, full;
  single.single = true, full.full = true;
  if (d.foldable()) {
    int64_t rows = d.count() * d.M;
    if (want_da)  // dA (rows, K) = dY (rows, N) B^T
      batched_gemm(h, false, true, rows, d.K, d.N, 1.0f, fptr(dY), single, fptr(B), single, 0.0f, fptr_out(ctx.out(0)),
                   1);
    // dB (K, N) = A^T (K, rows) dY (rows, N)
    if (want_db && !split_k_product(cc, h, d.K, d.N, rows, 1.0f, fptr(A), fptr(dY), fptr_out(ctx.out(1))))
      batched_gemm(h, true, false, d.K, d.N, rows, 1.0f, fptr(A), single, fptr(dY), single, 0.0f, fptr_out(ctx.out(1)),
                   1);
    return;
  }
  OperandMap am = operand_map(d.abatch, d.batch), bm = operand_map(d.bbatch, d.batch);
  if (want_da)  // dA_i (M, K) = dY_i (M, N) B_i^T
    operand_grad(cc, h, d, d.abatch, d.M * d.K, fptr_out(ctx.out(0)), false, true, d.M, d.K, d.N, fptr(dY), full,
                 fptr(B), bm);
  if (want_db)  // dB_i (K, N) = A_i^T (K, M) dY_i (M, N)
    operand_grad(cc, h, d, d.bbatch, d.K * d.N, fptr_out(ctx.out(1)), true, false, d.K, d.N, d.M, fptr(A), am, fptr(dY),
                 full);
}

// y: (M, N) = beta * c broadcast
__global__ void fill_broadcast_c_kernel(float* y, const float* c, float beta, int64_t N, BroadcastC bc, int64_t total) {
  CBT_GRID_STRIDE_LOOP(t, total) {
    int64_t i = t / N, j = t - i * N;
    y[t] = beta * c[i * bc.row_step + j * bc.col_step];
  }
}

// dC (rows, cols) = beta * G (M, N) summed over the broadcast dims; one block per element of
// dC. G is dY where the fused Relu's output y > 0, which the kernel also writes to `masked`
// (each element of dY belongs to exactly one block). Without a Relu, ew::sum_to's two passes
// take the sum (faster over many rows: a Linear layer over tokens).
__global__ void sum_to_c_kernel(const float* dy, const float* y, float* masked, float* dc, float beta, int64_t M,
                                int64_t N, BroadcastC bc) {
  __shared__ double shared[32];
  int64_t r = blockIdx.x / bc.cols, c = blockIdx.x % bc.cols;
  int64_t nr = bc.rows == 1 ? M : 1, ncol = bc.cols == 1 ? N : 1;
  double acc = 0;
  for (int64_t t = threadIdx.x; t < nr * ncol; t += blockDim.x) {
    int64_t i = nr == 1 ? r : t / ncol, j = ncol == 1 ? c : t % ncol;
    int64_t e = i * N + j;
    float g = relu_grad_of(dy[e], y[e]);
    masked[e] = g;
    acc += g;
  }
  acc = block_sum(acc, shared);
  if (threadIdx.x == 0) dc[blockIdx.x] = static_cast<float>(double(beta) * acc);
}

// The node's cuBLASLt product, made on its first run and kept in the node's state (a node
// run without state, as in eager tests, makes one for the call); null when cuBLASLt has no
// algorithm for it (then the cuBLAS path runs).
std::shared_ptr<LtGemm> lt_gemm_of(KernelContext& ctx, const CudaContext& cc, const GemmAttrs& at, int64_t M, int64_t N,
                                   int64_t K, bool bias, bool relu) {
  std::shared_ptr<LtGemm> lt;
  if (ctx.state && *ctx.state) {
    lt = std::static_pointer_cast<LtGemm>(*ctx.state);
  } else {
    lt = std::make_shared<LtGemm>(cc.tf32, at.ta, at.tb, M, N, K, bias, relu);
    if (ctx.state) *ctx.state = lt;
  }
  return lt->usable() ? lt : nullptr;
}

// a: (M, K) or (K, M), b: (K, N) or (N, K), c: broadcastable to (M, N) -> y: (M, N); with
// relu=1 (fused, graph/fusion.h) y = max(that, 0).
void gemm_fwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  GemmAttrs at(ctx.node);
  const Tensor &A = ctx.in(0), &B = ctx.in(1);
  Tensor& Y = ctx.out(0);
  check_float(A, ctx.node);
  int64_t M = Y.dim(0), N = Y.dim(1), K = at.ta ? A.dim(0) : A.dim(1);
  const bool relu = fused_relu(ctx);
  const bool has_c = ctx.has_in(2) && at.beta != 0.0f;
  // A bias vector along the rows (C of shape (N) or (1, N), beta 1) goes into the epilogue.
  const bool bias_vector =
      has_c && at.beta == 1.0f && ctx.in(2).numel() == N && N > 1 && (ctx.in(2).rank() == 1 || ctx.in(2).dim(0) == 1);
  if ((bias_vector || (!has_c && relu)) && M > 0 && N > 0 && K > 0) {
    if (auto lt = lt_gemm_of(ctx, cc, at, M, N, K, bias_vector, relu)) {
      lt->run(cc, at.alpha, fptr(A), fptr(B), bias_vector ? fptr(ctx.in(2)) : nullptr, fptr_out(Y));
      return;
    }
  }
  float beta = 0.0f;
  if (has_c) {
    BroadcastC bc(ctx.in(2).shape());
    fill_broadcast_c_kernel<<<blocks_for(M * N), kThreads, 0, cc.stream>>>(fptr_out(Y), fptr(ctx.in(2)), at.beta, N, bc,
                                                                           M * N);
    CBT_CUDA_CHECK_LAUNCH();
    beta = 1.0f;
  }
  OperandMap single;
  single.single = true;
  batched_gemm(cublas_on_stream(cc), at.ta, at.tb, M, N, K, at.alpha, fptr(A), single, fptr(B), single, beta,
               fptr_out(Y), 1);
  if (relu) relu_in_place(cc, fptr_out(Y), M * N);
}

// dy: (M, N) -> dA (shape of A), dB (shape of B), dC (shape of C, summed over broadcasts);
// with relu=1 the products take dY where the fused output y (input 4) > 0, written to output 3
// (by the dC reduction when there is one).
void gemm_bwd(KernelContext& ctx) {
  auto& cc = context_of(ctx.device_ctx);
  GemmAttrs at(ctx.node);
  const Tensor &dY = ctx.in(0), &A = ctx.in(1), &B = ctx.in(2);
  check_float(A, ctx.node);
  int64_t M = dY.dim(0), N = dY.dim(1), K = at.ta ? A.dim(0) : A.dim(1);
  cublasHandle_t h = cublas_on_stream(cc);
  OperandMap one;
  one.single = true;
  const bool want_dc = output_needed(ctx, 2);
  const float* dy = fused_relu_grad(ctx, 4, 3, !want_dc);
  if (want_dc && !fused_relu(ctx)) {  // dY summed to C's shape in two deterministic passes
    Scratch ws(cc);
    Tensor& dC = ctx.out(2);
    ew::sum_to(cc.stream, ws, fptr(dY), dY.shape(), fptr_out(dC), dC.shape(), at.beta);
  } else if (want_dc) {  // the same sum, one block an element, writing the masked dY besides
    Tensor& dC = ctx.out(2);
    BroadcastC bc(dC.shape());
    sum_to_c_kernel<<<static_cast<unsigned>(bc.rows * bc.cols), kThreads, 0, cc.stream>>>(
        fptr(dY), fptr(ctx.in(4)), fptr_out(ctx.out(3)), fptr_out(dC), at.beta, M, N, bc);
    CBT_CUDA_CHECK_LAUNCH();
  }
  if (output_needed(ctx, 0)) {
    float* da = fptr_out(ctx.out(0));
    if (!at.ta)  // dA (M, K) = dY (M, N) op(B)^T
      batched_gemm(h, false, !at.tb, M, K, N, at.alpha, dy, one, fptr(B), one, 0.0f, da, 1);
    else  // dA (K, M) = op(B) (K, N) dY^T
      batched_gemm(h, at.tb, true, K, M, N, at.alpha, fptr(B), one, dy, one, 0.0f, da, 1);
  }
  if (output_needed(ctx, 1)) {
    float* db = fptr_out(ctx.out(1));
    // A weight's gradient over many rows (a Linear layer over tokens) splits its sum over M
    // where A is not transposed (split_k_product).
    if (!at.tb) {  // dB (K, N) = op(A)^T (K, M) dY
      if (at.ta || !split_k_product(cc, h, K, N, M, at.alpha, fptr(A), dy, db))
        batched_gemm(h, !at.ta, false, K, N, M, at.alpha, fptr(A), one, dy, one, 0.0f, db, 1);
    } else if (at.ta || !split_k_product(cc, h, N, K, M, at.alpha, dy, fptr(A), db)) {  // dB (N, K) = dY^T op(A)
      batched_gemm(h, true, at.ta, N, K, M, at.alpha, dy, one, fptr(A), one, 0.0f, db, 1);
    }
  }
}

}  // namespace

CBT_REGISTER_KERNEL("", "MatMul", DeviceKind::CUDA, matmul_fwd);
CBT_REGISTER_KERNEL(kCbtDomain, "MatMulGrad", DeviceKind::CUDA, matmul_bwd);
CBT_REGISTER_KERNEL("", "Gemm", DeviceKind::CUDA, gemm_fwd);
CBT_REGISTER_KERNEL(kCbtDomain, "GemmGrad", DeviceKind::CUDA, gemm_bwd);

}  // namespace cbt::cuda
