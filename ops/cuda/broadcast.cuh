// Device machinery of the element-wise family: merged broadcast layouts passed by value,
// flat and strided maps, bfloat16 maps, fixed-order group reductions, and deterministic sums
// to a shape.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/shape_utils.h"
#include "ops/cuda/common.cuh"

// Own namespace: other kernel families keep helpers of the same names (kMaxDims).
namespace cbt::cuda::ew {

inline constexpr int kMaxDims = 8;
inline constexpr int kMaxOperands = 3;
// Threads that keep an H100 busy (132 SMs x 2048); sums split their work up to this.
inline constexpr int64_t kBusyThreads = 132 * 2048;

// ---- dtype dispatch ------------------------------------------------------------------------

[[noreturn]] inline void unsupported_dtype(const KernelContext& ctx, DType t) {
  throw UserError("node " + ctx.node.describe() + ": the CUDA kernel does not support " + dtype_name(t) +
                  " (float64 runs on the CPU only)");
}

// Calls f.template operator()<T>() for the arithmetic types of the GPU: float32, int64, int32.
template <class F>
void dispatch_arith(const KernelContext& ctx, DType t, F&& f) {
  switch (t) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Int64:
      return f.template operator()<int64_t>();
    case DType::Int32:
      return f.template operator()<int32_t>();
    default:
      unsupported_dtype(ctx, t);
  }
}

inline void require_f32(const KernelContext& ctx, const Tensor& t) {
  if (t.dtype() != DType::Float32) unsupported_dtype(ctx, t.dtype());
}

// ---- layouts -------------------------------------------------------------------------------

// Output dims after merging, with each operand's element strides on them (0 where it is
// broadcast); the output is contiguous over `dims`.
struct Layout {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
};

// Layout of operands of shapes `ins` read along `out`; adjacent dims merge where every operand
// keeps its pattern, so (N,C,H,W)+(C,1,1) becomes (N, C, H*W) with strides (0, 1, 0).
inline Layout make_layout(const Shape& out, std::initializer_list<const Shape*> ins) {
  CBT_CHECK(ins.size() >= 1 && ins.size() <= kMaxOperands, "layout of ", ins.size(), " operands");
  std::vector<std::vector<int64_t>> st;
  for (const Shape* s : ins) st.push_back(broadcast_strides(*s, out));
  Layout l;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    if (l.rank > 0) {
      int r = l.rank - 1;
      bool merge = true;
      for (size_t q = 0; q < st.size(); ++q) merge = merge && l.strides[q][r] == st[q][i] * out[i];
      if (merge) {
        l.dims[r] *= out[i];
        for (size_t q = 0; q < st.size(); ++q) l.strides[q][r] = st[q][i];
        continue;
      }
    }
    if (l.rank == kMaxDims)
      throw UserError("CUDA element-wise kernels handle at most " + std::to_string(kMaxDims) +
                      " broadcast dims after merging; shape " + shape_str(out) + " has more");
    l.dims[l.rank] = out[i];
    for (size_t q = 0; q < st.size(); ++q) l.strides[q][l.rank] = st[q][i];
    ++l.rank;
  }
  if (l.rank == 0) {
    l.rank = 1;
    l.dims[0] = 1;
  }
  return l;
}

// ---- maps ----------------------------------------------------------------------------------

// y[i] = op(x[i]).
template <class TX, class TY, class Op>
__global__ void map1_kernel(const TX* x, TY* y, int64_t n, Op op) {
  CBT_GRID_STRIDE_LOOP(i, n) y[i] = op(x[i]);
}

// y[i] = op(a[i * da], b[i * db]): same element order (d = 1) or a scalar operand (d = 0).
template <class TA, class TB, class TY, class Op>
__global__ void map2_flat_kernel(const TA* a, int64_t da, const TB* b, int64_t db, TY* y, int64_t n, Op op) {
  CBT_GRID_STRIDE_LOOP(i, n) y[i] = op(a[i * da], b[i * db]);
}

// y = op(a, b) over n4 float4 groups of operands of one shape, 16-byte aligned: one load of
// each operand and one store per four elements.
template <class Op>
__global__ void map2_vec4_kernel(const float4* a, const float4* b, float4* y, int64_t n4, Op op) {
  CBT_GRID_STRIDE_LOOP(i, n4) {
    float4 u = a[i], v = b[i];
    y[i] = make_float4(op(u.x, v.x), op(u.y, v.y), op(u.z, v.z), op(u.w, v.w));
  }
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// y[i] = op(a[i], b[i], c[i]) over n floats; as float4 groups when n divides by 4 and every
// pointer is 16-byte aligned (one load of each operand and one store per four elements).
template <class Op>
__global__ void map3_kernel(const float* a, const float* b, const float* c, float* y, int64_t n, Op op) {
  CBT_GRID_STRIDE_LOOP(i, n) y[i] = op(a[i], b[i], c[i]);
}
template <class Op>
__global__ void map3_vec4_kernel(const float4* a, const float4* b, const float4* c, float4* y, int64_t n4, Op op) {
  CBT_GRID_STRIDE_LOOP(i, n4) {
    const float4 u = a[i], v = b[i], w = c[i];
    y[i] = make_float4(op(u.x, v.x, w.x), op(u.y, v.y, w.y), op(u.z, v.z, w.z), op(u.w, v.w, w.w));
  }
}
template <class Op>
void ternary_flat_map(cudaStream_t s, const float* a, const float* b, const float* c, float* y, int64_t n, Op op) {
  if (n == 0) return;
  if (n % 4 == 0 && aligned16(a) && aligned16(b) && aligned16(c) && aligned16(y)) {
    map3_vec4_kernel<<<blocks_for(n / 4), kThreads, 0, s>>>(
        reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<const float4*>(c),
        reinterpret_cast<float4*>(y), n / 4, op);
  } else {
    map3_kernel<<<blocks_for(n), kThreads, 0, s>>>(a, b, c, y, n, op);
  }
  CBT_CUDA_CHECK_LAUNCH();
}

// y[i] = op(a, b) at the broadcast offsets of output element i.
template <class TA, class TB, class TY, class Op>
__global__ void map2_strided_kernel(const TA* a, const TB* b, TY* y, int64_t n, const __grid_constant__ Layout l,
                                    Op op) {
  grid_stride(n, [&](auto i) {
    int64_t off[2];
    plan_offsets<2>(l, i, off);
    y[i] = op(a[off[0]], b[off[1]]);
  });
}

// Four consecutive floats of one operand whose innermost stride is 1 (a float4 load) or 0 (one
// value, broadcast along the row).
__device__ __forceinline__ float4 row_quad(const float* p, int64_t off, bool along) {
  if (along) return *reinterpret_cast<const float4*>(p + off);
  const float v = p[off];
  return make_float4(v, v, v, v);
}

// map2_strided_kernel four outputs at a time where the innermost dim divides by 4 and each
// operand runs along it (stride 1, its other strides multiples of 4, 16-byte aligned) or is
// broadcast along it (stride 0): a bias added to rows, a mask to scores, a channel scale to
// planes. One offset computation and one store per four elements.
template <class Op>
__global__ void map2_rows_vec4_kernel(const float* a, const float* b, float4* y, int64_t n4,
                                      const __grid_constant__ Layout l, Op op) {
  const int last = l.rank - 1;
  const bool a_along = l.strides[0][last] != 0, b_along = l.strides[1][last] != 0;
  grid_stride(n4, [&](auto j) {
    int64_t off[2];
    plan_offsets<2>(l, j * 4, off);
    const float4 u = row_quad(a, off[0], a_along), v = row_quad(b, off[1], b_along);
    y[j] = make_float4(op(u.x, v.x), op(u.y, v.y), op(u.z, v.z), op(u.w, v.w));
  });
}

// Whether operand q of `l` suits map2_rows_vec4_kernel (see there).
inline bool runs_in_quads(const Layout& l, int q, const void* p) {
  const int last = l.rank - 1;
  if (l.strides[q][last] == 0) return true;
  if (l.strides[q][last] != 1 || !aligned16(p)) return false;
  for (int d = 0; d < last; ++d)
    if (l.strides[q][d] % 4 != 0) return false;
  return true;
}

// y = op(x) over n contiguous elements.
template <class TX, class TY, class Op>
void unary_map(cudaStream_t s, const TX* x, TY* y, int64_t n, Op op) {
  if (n == 0) return;
  map1_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, n, op);
  CBT_CUDA_CHECK_LAUNCH();
}

// y = op(a, b) with numpy broadcasting; y has the broadcast shape ys.
template <class TA, class TB, class TY, class Op>
void binary_map(cudaStream_t s, const TA* a, const Shape& as, const TB* b, const Shape& bs, TY* y, const Shape& ys,
                Op op) {
  int64_t n = shape_numel(ys);
  if (n == 0) return;
  int64_t na = shape_numel(as), nb = shape_numel(bs);
  // An operand with as many elements as the output is laid out like it (broadcasting only
  // adds or drops 1-dims), so it is read flat.
  if constexpr (std::is_same_v<TA, float> && std::is_same_v<TB, float> && std::is_same_v<TY, float>) {
    if (na == n && nb == n && n % 4 == 0 && aligned16(a) && aligned16(b) && aligned16(y)) {
      map2_vec4_kernel<<<blocks_for(n / 4), kThreads, 0, s>>>(reinterpret_cast<const float4*>(a),
                                                              reinterpret_cast<const float4*>(b),
                                                              reinterpret_cast<float4*>(y), n / 4, op);
      CBT_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  if ((na == n || na == 1) && (nb == n || nb == 1)) {
    map2_flat_kernel<<<blocks_for(n), kThreads, 0, s>>>(a, na == n ? 1 : 0, b, nb == n ? 1 : 0, y, n, op);
    CBT_CUDA_CHECK_LAUNCH();
    return;
  }
  const Layout l = make_layout(ys, {&as, &bs});
  if constexpr (std::is_same_v<TA, float> && std::is_same_v<TB, float> && std::is_same_v<TY, float>) {
    if (n <= INT32_MAX && l.dims[l.rank - 1] % 4 == 0 && aligned16(y) && runs_in_quads(l, 0, a) &&
        runs_in_quads(l, 1, b)) {
      map2_rows_vec4_kernel<<<blocks_for(n / 4), kThreads, 0, s>>>(a, b, reinterpret_cast<float4*>(y), n / 4, l, op);
      CBT_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  map2_strided_kernel<<<blocks_for(n), kThreads, 0, s>>>(a, b, y, n, l, op);
  CBT_CUDA_CHECK_LAUNCH();
}

template <class T>
struct ScaleOp {
  T scale;
  __device__ T operator()(T v, T) const { return v * scale; }
};

// y = scale * x broadcast from shape xs to shape ys.
template <class T>
void broadcast_to(cudaStream_t s, const T* x, const Shape& xs, T* y, const Shape& ys, T scale) {
  binary_map(s, x, xs, x, xs, y, ys, ScaleOp<T>{scale});
}

// ---- bfloat16 maps (--precision bf16) -------------------------------------------------------

// y[i] = op(a[i], b[i], c[i]) over n bfloat16s of one layout, computed in float and rounded
// once to nearest even; c may be null (op then gets 0). Eight elements (16 bytes an operand) a
// step when n divides by 8 and every pointer is 16-byte aligned.
template <class Op>
__global__ void bf16_map_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, const __nv_bfloat16* c,
                                __nv_bfloat16* y, int64_t n, Op op) {
  CBT_GRID_STRIDE_LOOP(i, n) {
    y[i] = __float2bfloat16_rn(op(__bfloat162float(a[i]), __bfloat162float(b[i]), c ? __bfloat162float(c[i]) : 0.0f));
  }
}
template <class Op>
__global__ void bf16_map_vec8_kernel(const uint4* a, const uint4* b, const uint4* c, uint4* y, int64_t n8, Op op) {
  CBT_GRID_STRIDE_LOOP(i, n8) {
    const uint4 u = a[i], v = b[i], w = c ? c[i] : make_uint4(0, 0, 0, 0);
    const auto *pu = reinterpret_cast<const __nv_bfloat162*>(&u), *pv = reinterpret_cast<const __nv_bfloat162*>(&v),
               *pw = reinterpret_cast<const __nv_bfloat162*>(&w);
    uint4 out;
    auto* po = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 fu = __bfloat1622float2(pu[k]), fv = __bfloat1622float2(pv[k]), fw = __bfloat1622float2(pw[k]);
      po[k] = __floats2bfloat162_rn(op(fu.x, fv.x, fw.x), op(fu.y, fv.y, fw.y));
    }
    y[i] = out;
  }
}
template <class Op>
void bf16_map(cudaStream_t s, const void* a, const void* b, const void* c, void* y, int64_t n, Op op) {
  if (n == 0) return;
  if (n % 8 == 0 && aligned16(a) && aligned16(b) && (!c || aligned16(c)) && aligned16(y)) {
    bf16_map_vec8_kernel<<<blocks_for(n / 8), kThreads, 0, s>>>(
        static_cast<const uint4*>(a), static_cast<const uint4*>(b), static_cast<const uint4*>(c),
        static_cast<uint4*>(y), n / 8, op);
  } else {
    bf16_map_kernel<<<blocks_for(n), kThreads, 0, s>>>(
        static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
        static_cast<const __nv_bfloat16*>(c), static_cast<__nv_bfloat16*>(y), n, op);
  }
  CBT_CUDA_CHECK_LAUNCH();
}

// ---- group reductions ----------------------------------------------------------------------

struct SumOp {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct MaxOp {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

// Reduces v over each aligned group of `width` lanes of a warp (a power of two up to 32; every
// lane of the warp must call): a butterfly, so every lane of a group gets the same bits, in a
// fixed order (deterministic).
template <class T, class Op>
__device__ __forceinline__ T lanes_reduce(T v, Op op, int width) {
  for (int o = width / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Reduces v over a group of G threads: a warp (G = 32) or the whole block (G = kThreads,
// blockDim.x must be kThreads and every thread must call). The butterfly gives every lane the
// same bits and the order is fixed, so results are deterministic. smem: kThreads / 32 slots.
template <int G, class T, class Op>
__device__ T group_reduce(T v, Op op, T* smem) {
  static_assert(G == 32 || G == kThreads, "group of a warp or a block");
  v = lanes_reduce(v, op, 32);
  if constexpr (G == 32) {
    return v;
  } else {
    int warp = threadIdx.x / 32;
    __syncthreads();  // the slots may still be read from a previous call
    if (threadIdx.x % 32 == 0) smem[warp] = v;
    __syncthreads();
    v = smem[0];
    for (int w = 1; w < G / 32; ++w) v = op(v, smem[w]);
    return v;
  }
}

// ---- sums back to a shape ------------------------------------------------------------------

// x (contiguous) seen as kept dims (kn, strides ks) and reduced dims (rn, rs), each in x's
// row-major order; output element o sums x[offset_k(o) + offset_r(j)] over j < nr.
struct SumPlan {
  int kr = 0, rr = 0;
  int64_t kn[kMaxDims] = {}, ks[kMaxDims] = {}, rn[kMaxDims] = {}, rs[kMaxDims] = {};
  int64_t ny = 1, nr = 1;
};

inline SumPlan make_sum_plan(const Shape& xs, const Shape& ys) {
  Layout l = make_layout(xs, {&xs, &ys});
  SumPlan p;
  for (int d = 0; d < l.rank; ++d) {
    bool kept = l.strides[1][d] != 0 || l.dims[d] == 1;
    if (kept) {
      p.kn[p.kr] = l.dims[d];
      p.ks[p.kr++] = l.strides[0][d];
      p.ny *= l.dims[d];
    } else {
      p.rn[p.rr] = l.dims[d];
      p.rs[p.rr++] = l.strides[0][d];
      p.nr *= l.dims[d];
    }
  }
  return p;
}

__device__ inline int64_t dims_offset(const int64_t* n, const int64_t* s, int count, int64_t idx) {
  int64_t off = 0;
  for (int d = count - 1; d >= 0; --d) {
    off += (idx % n[d]) * s[d];
    idx /= n[d];
  }
  return off;
}

// Calls f(pointer, count, stride) for the runs of reduced elements j in [j0, j1) that lie on
// one line of the innermost reduced dim (one division per run, not per element).
template <class T, class F>
__device__ inline void for_each_run(const T* x, const SumPlan& p, int64_t j0, int64_t j1, F f) {
  int64_t inner = p.rn[p.rr - 1], step = p.rs[p.rr - 1];
  for (int64_t j = j0; j < j1;) {
    int64_t q = j / inner, r = j % inner;
    int64_t run = min(inner - r, j1 - j);
    f(x + dims_offset(p.rn, p.rs, p.rr - 1, q) + r * step, run, step);
    j += run;
  }
}

// One thread per (output o, chunk s of the reduced range); adjacent threads take adjacent
// outputs, coalesced when the innermost dim is kept. out[s * ny + o], scaled when final. A
// thread issues its loads eight at a time and adds them in order: the sum is the serial one,
// without a load's latency per element.
template <class T>
__global__ void sum_lines_kernel(const T* x, const __grid_constant__ SumPlan p, int64_t chunks, int64_t chunk, T* out,
                                 T scale, bool final) {
  CBT_GRID_STRIDE_LOOP(w, p.ny * chunks) {
    int64_t s = w / p.ny, o = w % p.ny;
    T acc = 0;
    for_each_run(x + dims_offset(p.kn, p.ks, p.kr, o), p, s * chunk, min(p.nr, (s + 1) * chunk),
                 [&](const T* xr, int64_t len, int64_t step) {
                   constexpr int kBatch = 8;
                   int64_t t = 0;
                   for (; t + kBatch <= len; t += kBatch) {
                     T v[kBatch];
#pragma unroll
                     for (int u = 0; u < kBatch; ++u) v[u] = xr[(t + u) * step];
#pragma unroll
                     for (int u = 0; u < kBatch; ++u) acc += v[u];
                   }
                   for (; t < len; ++t) acc += xr[t * step];
                 });
    out[s * p.ny + o] = final ? acc * scale : acc;
  }
}

// One group of G threads per (output o, chunk s) when the innermost dim is reduced: the group
// reads contiguous runs together, then reduces in a fixed order.
template <int G, class T>
__global__ void sum_rows_kernel(const T* x, SumPlan p, int64_t chunks, int64_t chunk, T* out, T scale, bool final) {
  __shared__ T smem[kThreads / 32];
  constexpr int per_block = kThreads / G;
  int lane = threadIdx.x % G;
  int64_t items = p.ny * chunks;
  // Every thread of a group (for G = kThreads: of the block) runs the same iterations.
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * per_block + threadIdx.x / G; w < items;
       w += static_cast<int64_t>(gridDim.x) * per_block) {
    int64_t o = w / chunks, s = w % chunks;
    T acc = 0;
    for_each_run(x + dims_offset(p.kn, p.ks, p.kr, o), p, s * chunk, min(p.nr, (s + 1) * chunk),
                 [&](const T* xr, int64_t len, int64_t step) {
                   for (int64_t t = lane; t < len; t += G) acc += xr[t * step];
                 });
    acc = group_reduce<G>(acc, SumOp{}, smem);
    if (lane == 0) out[s * p.ny + o] = final ? acc * scale : acc;
  }
}

// y[o] = scale * the sum over s (in order) of part[s * ny + o], a thread per output: for few
// chunks.
template <class T>
__global__ void sum_partials_kernel(const T* part, int64_t ny, int64_t chunks, T* y, T scale) {
  CBT_GRID_STRIDE_LOOP(o, ny) {
    T acc = 0;
    for (int64_t s = 0; s < chunks; ++s) acc += part[s * ny + o];
    y[o] = acc * scale;
  }
}

// The same a warp per output, lane l summing the chunks s = l, l + 32, ... before the warp's
// butterfly (a fixed order: deterministic): for many chunks, which a thread would walk in
// series, a long chain of loads when outputs are few (ConvNeXt's bias gradients: 196 chunks of
// 24 to 96 outputs).
template <class T>
__global__ void sum_partials_warp_kernel(const T* part, int64_t ny, int64_t chunks, T* y, T scale) {
  constexpr int per_block = kThreads / 32;
  const int lane = threadIdx.x % 32;
  // o is the same for the whole warp, so every lane runs the same iterations.
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * per_block + threadIdx.x / 32; o < ny;
       o += static_cast<int64_t>(gridDim.x) * per_block) {
    T acc = 0;
    for (int64_t s = lane; s < chunks; s += 32) acc += part[s * ny + o];
    acc = group_reduce<32>(acc, SumOp{}, static_cast<T*>(nullptr));
    if (lane == 0) y[o] = acc * scale;
  }
}

// y = scale * sum of x over the dims where ys (right-aligned, rank <= rank of xs) is 1 and xs
// is not; the inverse of broadcasting ys to xs. Deterministic: the split of the work depends
// on the shapes only; partial sums (from `ws` when it has room) are combined in a fixed order.
template <class T>
void sum_to(cudaStream_t s, Scratch& ws, const T* x, const Shape& xs, T* y, const Shape& ys, T scale) {
  int64_t ny = shape_numel(ys);
  if (ny == 0) return;
  if (shape_numel(xs) == 0) {  // empty sums
    CBT_CUDA_CHECK(cudaMemsetAsync(y, 0, static_cast<size_t>(ny) * sizeof(T), s));
    return;
  }
  SumPlan p = make_sum_plan(xs, ys);
  if (p.rr == 0) {  // nothing to sum: a scaled copy
    broadcast_to(s, x, xs, y, ys, scale);
    return;
  }
  bool rows = p.rs[p.rr - 1] == 1 && p.rn[p.rr - 1] >= 32;
  int group = rows ? (p.rn[p.rr - 1] >= 512 ? kThreads : 32) : 1;
  // As many chunks as fill the GPU, each with enough elements per thread to pay for the
  // second pass (32 per thread for lines, 4 per lane for groups).
  int64_t min_chunk = rows ? 4 * group : 32;
  int64_t want = (kBusyThreads / group + ny - 1) / ny;
  int64_t chunks = std::max<int64_t>(1, std::min(want, p.nr / min_chunk));
  int64_t fit = static_cast<int64_t>(ws.left() / (sizeof(T) * static_cast<size_t>(ny)));
  chunks = std::max<int64_t>(1, std::min(chunks, fit));
  int64_t chunk = (p.nr + chunks - 1) / chunks;
  chunks = (p.nr + chunk - 1) / chunk;
  bool final = chunks == 1;
  T* out = final ? y : ws.take<T>(ny * chunks, "partial sums");
  int64_t items = ny * chunks;
  if (!rows) {
    sum_lines_kernel<<<blocks_for(items), kThreads, 0, s>>>(x, p, chunks, chunk, out, scale, final);
  } else if (group == 32) {
    sum_rows_kernel<32><<<blocks_for(items * 32), kThreads, 0, s>>>(x, p, chunks, chunk, out, scale, final);
  } else {
    sum_rows_kernel<kThreads><<<blocks_for(items * kThreads), kThreads, 0, s>>>(x, p, chunks, chunk, out, scale, final);
  }
  CBT_CUDA_CHECK_LAUNCH();
  if (!final) {
    if (chunks >= 32)
      sum_partials_warp_kernel<<<blocks_for(ny * 32), kThreads, 0, s>>>(out, ny, chunks, y, scale);
    else
      sum_partials_kernel<<<blocks_for(ny), kThreads, 0, s>>>(out, ny, chunks, y, scale);
    CBT_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace cbt::cuda::ew
