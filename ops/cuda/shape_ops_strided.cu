// Kernels shared by the CUDA shape ops: strided copies by element size, fills, small host
// uploads through kernel parameters, and deterministic broadcast sums.
#include <algorithm>
#include <cstring>

#include "ops/cuda/shape_ops_common.cuh"

namespace cbt::cuda::shape {

NdPlan make_plan(const Shape& shape, const std::vector<std::vector<int64_t>>& strides) {
  const size_t k_ops = strides.size();
  CBT_CHECK(k_ops >= 1 && k_ops <= kMaxOperands, "plan with ", k_ops, " operands");
  for (const auto& s : strides) CBT_CHECK(s.size() == shape.size(), "stride rank mismatch");
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(k_ops);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; k < k_ops && merge; ++k) merge = st[k].back() == strides[k][d] * shape[d];
    if (merge) {
      dims.back() *= shape[d];
      for (size_t k = 0; k < k_ops; ++k) st[k].back() = strides[k][d];
    } else {
      dims.push_back(shape[d]);
      for (size_t k = 0; k < k_ops; ++k) st[k].push_back(strides[k][d]);
    }
  }
  CBT_MODEL_CHECK(dims.size() <= static_cast<size_t>(kMaxDims), "shape ", shape_str(shape), " needs ", dims.size(),
                  " strided dims on the GPU (at most ", kMaxDims, ")");
  NdPlan p;
  p.rank = static_cast<int>(dims.size());
  for (int d = 0; d < p.rank; ++d) {
    p.dims[d] = dims[d];
    for (size_t k = 0; k < k_ops; ++k) p.strides[k][d] = st[k][d];
  }
  return p;
}

int64_t plan_numel(const NdPlan& p) {
  int64_t n = 1;
  for (int d = 0; d < p.rank; ++d) n *= p.dims[d];
  return n;
}

namespace {

// Moves elements as wider words (up to 16 bytes) when the innermost dim is contiguous in both
// operands and the sizes, strides and addresses allow it: a float slice of whole rows moves
// as 16-byte words.
void widen(NdPlan& p, size_t& elem, const void* a, const void* b) {
  if (p.rank == 0) return;
  const int last = p.rank - 1;
  if (p.strides[0][last] != 1 || p.strides[1][last] != 1) return;
  std::vector<int64_t> counts{p.dims[last]};
  for (int d = 0; d < last; ++d) counts.insert(counts.end(), {p.strides[0][d], p.strides[1][d]});
  const int64_t w = word_factor(elem, counts, a, b);
  if (w == 1) return;
  p.dims[last] /= w;
  for (int d = 0; d < last; ++d) {
    p.strides[0][d] /= w;
    p.strides[1][d] /= w;
  }
  elem *= static_cast<size_t>(w);
}

// dst: strides[0], src: strides[1]
template <class W>
__global__ void strided_copy_kernel(W* __restrict__ dst, const W* __restrict__ src, const __grid_constant__ NdPlan p,
                                    int64_t n) {
  grid_stride(n, [&](auto i) {
    int64_t off[2];
    plan_offsets<2>(p, i, off);
    dst[off[0]] = src[off[1]];
  });
}

// dst (N, B, A) contiguous from src whose B axis is contiguous (src[n * sn + a * sa + b]): a
// batched transpose through a 32 x 32 tile in shared memory, so that reads run along b and
// writes along a, both coalesced (the element-wise kernel reads with stride sa).
template <class W>
__global__ void tiled_transpose_kernel(W* __restrict__ dst, const W* __restrict__ src, int64_t N, int64_t B, int64_t A,
                                       int64_t sn, int64_t sa) {
  __shared__ W tile[32][33];
  const int64_t a0 = static_cast<int64_t>(blockIdx.x) * 32, b0 = static_cast<int64_t>(blockIdx.y) * 32;
  for (int64_t n = blockIdx.z; n < N; n += gridDim.z) {
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
      const int64_t a = a0 + i, b = b0 + threadIdx.x;
      if (a < A && b < B) tile[i][threadIdx.x] = src[n * sn + a * sa + b];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
      const int64_t b = b0 + i, a = a0 + threadIdx.x;
      if (a < A && b < B) dst[(n * B + b) * A + a] = tile[threadIdx.x][i];
    }
    __syncthreads();  // the tile is reused by the next n
  }
}

// Whether plan p (operand 0 dst, 1 src) is a batched transpose for tiled_transpose_kernel: dst
// contiguous over (N, B, A), src contiguous along B but not along A, both sides at least 8.
bool is_transpose(const NdPlan& p) {
  if (p.rank < 2 || p.rank > 3) return false;
  const int a = p.rank - 1, b = p.rank - 2;
  const bool dst_contiguous =
      p.strides[0][a] == 1 && p.strides[0][b] == p.dims[a] && (p.rank == 2 || p.strides[0][0] == p.dims[a] * p.dims[b]);
  return dst_contiguous && p.strides[1][b] == 1 && p.strides[1][a] != 1 && p.dims[a] >= 8 && p.dims[b] >= 8;
}

template <class W>
__global__ void fill_kernel(W* __restrict__ y, W value, int64_t n) {
  CBT_GRID_STRIDE_LOOP(i, n) y[i] = value;
}

inline constexpr int kChunkBytes = 2048;  // well below the 4 KiB kernel-parameter limit
struct ByteChunk {
  unsigned char bytes[kChunkBytes];
};

__global__ void write_chunk_kernel(unsigned char* __restrict__ dst, const __grid_constant__ ByteChunk chunk, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = chunk.bytes[i];
}

__device__ __forceinline__ bool routed(const uint8_t* cond, int64_t off, int route) {
  if (route == static_cast<int>(Route::All)) return true;
  return (cond[off] != 0) == (route == static_cast<int>(Route::WhereTrue));
}

// One thread per output: for few reduced elements. kept/red: operand 0 dY, operand 1 cond.
template <class T>
__global__ void broadcast_sum_thread_kernel(T* __restrict__ out, const T* __restrict__ dy,
                                            const uint8_t* __restrict__ cond, int route,
                                            const __grid_constant__ NdPlan kept, const __grid_constant__ NdPlan red,
                                            int64_t n_out, int64_t n_red) {
  grid_stride(n_out, [&](auto j) {
    int64_t base[2];
    plan_offsets<2>(kept, j, base);
    T acc = 0;
    for (int64_t r = 0; r < n_red; ++r) {
      int64_t off[2];
      plan_offsets<2>(red, r, off);
      if (routed(cond, base[1] + off[1], route)) acc += dy[base[0] + off[0]];
    }
    out[j] = acc;
  });
}

// One block per output (blockDim a multiple of 32, at most kThreads): for long reductions.
template <class T>
__global__ void broadcast_sum_block_kernel(T* __restrict__ out, const T* __restrict__ dy,
                                           const uint8_t* __restrict__ cond, int route,
                                           const __grid_constant__ NdPlan kept, const __grid_constant__ NdPlan red,
                                           int64_t n_out, int64_t n_red) {
  __shared__ T partial[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int64_t j = blockIdx.x; j < n_out; j += gridDim.x) {
    int64_t base[2];
    plan_offsets<2>(kept, j, base);
    T acc = 0;
    for (int64_t r = threadIdx.x; r < n_red; r += blockDim.x) {
      int64_t off[2];
      plan_offsets<2>(red, r, off);
      if (routed(cond, base[1] + off[1], route)) acc += dy[base[0] + off[0]];
    }
    for (int s = 16; s > 0; s /= 2) acc += __shfl_down_sync(0xffffffffu, acc, s);
    if (lane == 0) partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
      acc = lane < warps ? partial[lane] : T(0);
      for (int s = 16; s > 0; s /= 2) acc += __shfl_down_sync(0xffffffffu, acc, s);
      if (lane == 0) out[j] = acc;
    }
    __syncthreads();  // partial is reused by the next output
  }
}

}  // namespace

void strided_copy(void* dst, const std::vector<int64_t>& dst_strides, const void* src,
                  const std::vector<int64_t>& src_strides, const Shape& shape, size_t elem, cudaStream_t stream) {
  if (shape_numel(shape) == 0) return;
  NdPlan p = make_plan(shape, {dst_strides, src_strides});
  if (p.rank == 0 || (p.rank == 1 && p.strides[0][0] == 1 && p.strides[1][0] == 1)) {
    CBT_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, static_cast<size_t>(plan_numel(p)) * elem, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if (is_transpose(p)) {
    const int a = p.rank - 1, b = p.rank - 2;
    const int64_t N = p.rank == 3 ? p.dims[0] : 1, sn = p.rank == 3 ? p.strides[1][0] : 0;
    const dim3 grid(static_cast<unsigned>((p.dims[a] + 31) / 32), static_cast<unsigned>((p.dims[b] + 31) / 32),
                    static_cast<unsigned>(std::min<int64_t>(N, 65535)));
    with_word(elem, [&]<class W>() {
      tiled_transpose_kernel<W><<<grid, dim3(32, 8), 0, stream>>>(static_cast<W*>(dst), static_cast<const W*>(src), N,
                                                                  p.dims[b], p.dims[a], sn, p.strides[1][a]);
    });
    CBT_CUDA_CHECK_LAUNCH();
    return;
  }
  widen(p, elem, dst, src);
  const int64_t n = plan_numel(p);
  with_move_word(elem, [&]<class W>() {
    strided_copy_kernel<W>
        <<<blocks_for(n), kThreads, 0, stream>>>(static_cast<W*>(dst), static_cast<const W*>(src), p, n);
  });
  CBT_CUDA_CHECK_LAUNCH();
}

void fill_elements(void* dst, int64_t n, size_t elem, uint64_t bits, cudaStream_t stream) {
  if (n == 0) return;
  with_word(elem, [&]<class W>() {
    W value;
    std::memcpy(&value, &bits, sizeof(W));  // little-endian: the low bytes
    fill_kernel<W><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<W*>(dst), value, n);
  });
  CBT_CUDA_CHECK_LAUNCH();
}

void write_host_bytes(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (size_t at = 0; at < bytes; at += kChunkBytes) {
    ByteChunk chunk;
    const size_t n = std::min<size_t>(kChunkBytes, bytes - at);
    std::memcpy(chunk.bytes, s + at, n);
    write_chunk_kernel<<<1, kThreads, 0, stream>>>(d + at, chunk, static_cast<int>(n));
    CBT_CUDA_CHECK_LAUNCH();
  }
}

void broadcast_sum(DType dtype, void* out, const Shape& out_shape, const void* dy, const Shape& dy_shape,
                   const void* cond, const Shape& cond_shape, Route route, cudaStream_t stream) {
  const int64_t n_out = shape_numel(out_shape);
  if (n_out == 0) return;
  if (shape_numel(dy_shape) == 0) {  // nothing to sum: zeros
    CBT_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(n_out) * dtype_size(dtype), stream));
    return;
  }
  CBT_CHECK(route == Route::All || cond, "routed broadcast sum without a condition");
  const auto dys = strides_of(dy_shape);
  const auto xs = broadcast_strides(out_shape, dy_shape);
  const auto cs = cond ? broadcast_strides(cond_shape, dy_shape) : std::vector<int64_t>(dy_shape.size(), 0);
  // Axes where out keeps dY's size index the output; the others are summed over.
  Shape kept_dims, red_dims;
  std::vector<int64_t> kept_dy, kept_c, red_dy, red_c;
  for (size_t d = 0; d < dy_shape.size(); ++d) {
    if (dy_shape[d] == 1) continue;
    const bool kept = xs[d] != 0;
    (kept ? kept_dims : red_dims).push_back(dy_shape[d]);
    (kept ? kept_dy : red_dy).push_back(dys[d]);
    (kept ? kept_c : red_c).push_back(cs[d]);
  }
  const NdPlan kept = make_plan(kept_dims, {kept_dy, kept_c});
  const NdPlan red = make_plan(red_dims, {red_dy, red_c});
  const int64_t n_red = plan_numel(red);
  const auto* c = static_cast<const uint8_t*>(cond);
  const int r = static_cast<int>(route);
  dispatch_float(dtype, [&]<class T>() {
    T* o = static_cast<T*>(out);
    const T* g = static_cast<const T*>(dy);
    if (n_red < 64) {
      broadcast_sum_thread_kernel<T><<<blocks_for(n_out), kThreads, 0, stream>>>(o, g, c, r, kept, red, n_out, n_red);
    } else {
      int threads = 64;
      while (threads < kThreads && threads < n_red) threads *= 2;
      const int blocks = static_cast<int>(std::min<int64_t>(n_out, 132 * 32));
      broadcast_sum_block_kernel<T><<<blocks, threads, 0, stream>>>(o, g, c, r, kept, red, n_out, n_red);
    }
  });
  CBT_CUDA_CHECK_LAUNCH();
}

std::vector<Tensor> host_copies(const KernelContext& ctx, std::initializer_list<size_t> which) {
  auto& cc = context_of(ctx.device_ctx);
  std::vector<Tensor> host(ctx.inputs.size());
  bool copied = false;
  for (size_t i : which) {
    if (!ctx.has_in(i)) continue;
    const Tensor& t = ctx.in(i);
    host[i] = Tensor(t.dtype(), t.shape());
    if (t.nbytes() == 0) continue;
    if (!copied) {
      cudaStreamCaptureStatus status;
      CBT_CUDA_CHECK(cudaStreamIsCapturing(cc.stream, &status));
      CBT_CHECK(status == cudaStreamCaptureStatusNone, ctx.node.describe(),
                " reads its constant parameter inputs on the host at its first call, which "
                "must run before CUDA graph capture");
    }
    // cudaMemcpyDefault: the runtime tells device from host memory (UVA).
    CBT_CUDA_CHECK(cudaMemcpyAsync(host[i].data(), t.data(), t.nbytes(), cudaMemcpyDefault, cc.stream));
    copied = true;
  }
  if (copied) CBT_CUDA_CHECK(cudaStreamSynchronize(cc.stream));
  return host;
}

}  // namespace cbt::cuda::shape
