// CUDA kernels of the channels-last conversions (graph/ops/channels_last.cpp), bit for bit the
// CPU kernels (ops/cpu/channels_last.cpp): per image a (C, H*W) <-> (H*W, C) transpose through
// 32 x 32 tiles of shared memory, so that reads and writes are both coalesced; a node of several
// (small) tensors, the filters, in one launch. bfloat16
// travels as its 16 bits, rounded as ops/bfloat16.h rounds (NaN included).
#include "ops/cuda/channels_last.h"

#include <algorithm>
#include <cstdint>

#include "ops/cuda/common.cuh"

namespace cbt::cuda {
namespace {

constexpr int kTile = 32, kTileRows = 8;  // a 32 x 32 tile, a block of 32 x 8 threads

// bf16_from_float on the device: round to nearest even; a NaN stays a quiet NaN (the
// intrinsic __float2bfloat16_rn would give the canonical NaN instead).
__device__ __forceinline__ uint16_t to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

__device__ __forceinline__ float from_bf16(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }

// x: float32 (N, C, P) -> y: bfloat16 (N, P, C), P = H * W; one tile of (32 channels, 32
// positions) a block, for images blockIdx.z, blockIdx.z + gridDim.z, ...
__global__ void to_channels_last_kernel(const float* x, uint16_t* y, int64_t N, int C, int P) {
  __shared__ float tile[kTile][kTile + 1];  // [channel][position]; +1: no bank conflicts
  const int p0 = static_cast<int>(blockIdx.x) * kTile, c0 = static_cast<int>(blockIdx.y) * kTile;
  const int tx = static_cast<int>(threadIdx.x);
  for (int64_t n = blockIdx.z; n < N; n += gridDim.z) {
    const float* xn = x + n * C * P;
    uint16_t* yn = y + n * C * P;
    for (int i = static_cast<int>(threadIdx.y); i < kTile; i += kTileRows)
      if (c0 + i < C && p0 + tx < P) tile[i][tx] = xn[static_cast<int64_t>(c0 + i) * P + p0 + tx];
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.y); i < kTile; i += kTileRows)
      if (p0 + i < P && c0 + tx < C) yn[static_cast<int64_t>(p0 + i) * C + c0 + tx] = to_bf16(tile[tx][i]);
    __syncthreads();  // the tile is read before the next image overwrites it
  }
}

// x: bfloat16 (N, P, C) -> y: float32 (N, C, P), the inverse.
__global__ void from_channels_last_kernel(const uint16_t* x, float* y, int64_t N, int C, int P) {
  __shared__ float tile[kTile][kTile + 1];  // [position][channel]
  const int p0 = static_cast<int>(blockIdx.x) * kTile, c0 = static_cast<int>(blockIdx.y) * kTile;
  const int tx = static_cast<int>(threadIdx.x);
  for (int64_t n = blockIdx.z; n < N; n += gridDim.z) {
    const uint16_t* xn = x + n * C * P;
    float* yn = y + n * C * P;
    for (int i = static_cast<int>(threadIdx.y); i < kTile; i += kTileRows)
      if (p0 + i < P && c0 + tx < C) tile[i][tx] = from_bf16(xn[static_cast<int64_t>(p0 + i) * C + c0 + tx]);
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.y); i < kTile; i += kTileRows)
      if (c0 + i < C && p0 + tx < P) yn[static_cast<int64_t>(c0 + i) * P + p0 + tx] = tile[tx][i];
    __syncthreads();
  }
}

// With one channel or one position the two orders coincide (the network's input image, a
// 1 x 1 map): an element-wise conversion.
__global__ void to_bf16_flat_kernel(const float* x, uint16_t* y, int64_t n) {
  CBT_GRID_STRIDE_LOOP(i, n) y[i] = to_bf16(x[i]);
}
__global__ void from_bf16_flat_kernel(const uint16_t* x, float* y, int64_t n) {
  CBT_GRID_STRIDE_LOOP(i, n) y[i] = from_bf16(x[i]);
}

// Up to kListed tensors of one node in one launch: the filters of a network, each small, so
// that a thread an output element reading its input with a stride costs less than a launch a
// filter did (ResNet-20: 20 to and 20 from each step, about 2.7 us each at one learner).
constexpr int kListed = 32;
struct ConversionList {
  const void* x[kListed];
  void* y[kListed];
  int64_t start[kListed + 1];  // element offsets of the tensors in the launch's index space
  int C[kListed], P[kListed];
  int count;
};

// The list's tensor holding element g of the launch (start[t] <= g < start[t + 1]).
__device__ __forceinline__ int listed_tensor(const ConversionList& l, int64_t g) {
  int lo = 0, hi = l.count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (l.start[mid] <= g)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Output element i of each tensor, in the output's order: (n, p, c) of (N, P, C) read from
// (n, c, p) of (N, C, P).
__global__ void to_channels_last_list_kernel(ConversionList l) {
  CBT_GRID_STRIDE_LOOP(g, l.start[l.count]) {
    const int t = listed_tensor(l, g);
    const int64_t i = g - l.start[t], C = l.C[t], P = l.P[t];
    const int64_t n = i / (P * C), p = i / C % P, c = i % C;
    static_cast<uint16_t*>(l.y[t])[i] = to_bf16(static_cast<const float*>(l.x[t])[(n * C + c) * P + p]);
  }
}

// (n, c, p) of (N, C, P) read from (n, p, c) of (N, P, C).
__global__ void from_channels_last_list_kernel(ConversionList l) {
  CBT_GRID_STRIDE_LOOP(g, l.start[l.count]) {
    const int t = listed_tensor(l, g);
    const int64_t i = g - l.start[t], C = l.C[t], P = l.P[t];
    const int64_t n = i / (P * C), c = i / P % C, p = i % P;
    static_cast<float*>(l.y[t])[i] = from_bf16(static_cast<const uint16_t*>(l.x[t])[(n * P + p) * C + c]);
  }
}

// The schemas' contract: a mismatch here is a bug.
void check_conversion(const KernelContext& ctx, DType from, DType to) {
  CBT_CHECK(!ctx.inputs.empty() && ctx.inputs.size() == ctx.outputs.size(), "node ", ctx.node.describe(),
            ": as many outputs as inputs");
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Tensor &x = ctx.in(i), &y = ctx.out(i);
    CBT_CHECK(x.dtype() == from && y.dtype() == to && x.rank() == 4 && y.shape() == x.shape(), "node ",
              ctx.node.describe(), ": converts 4-D ", dtype_name(from), " to ", dtype_name(to), " of one shape, got ",
              dtype_name(x.dtype()), " ", shape_str(x.shape()), " to ", dtype_name(y.dtype()), " ",
              shape_str(y.shape()));
  }
}

// A node of several tensors: launches of up to kListed of them each.
void convert_listed(KernelContext& ctx, void (*kernel)(ConversionList)) {
  auto& cc = context_of(ctx.device_ctx);
  for (size_t first = 0; first < ctx.inputs.size(); first += kListed) {
    ConversionList l{};
    l.count = static_cast<int>(std::min<size_t>(kListed, ctx.inputs.size() - first));
    for (int t = 0; t < l.count; ++t) {
      const Tensor& X = ctx.in(first + t);
      l.x[t] = X.data(), l.y[t] = ctx.out(first + t).data();
      l.C[t] = static_cast<int>(X.dim(1)), l.P[t] = static_cast<int>(X.dim(2) * X.dim(3));
      l.start[t + 1] = l.start[t] + X.numel();
    }
    if (l.start[l.count] == 0) continue;
    kernel<<<blocks_for(l.start[l.count]), kThreads, 0, cc.stream>>>(l);
    CBT_CUDA_CHECK_LAUNCH();
  }
}

// Launches `tiled` over (N, C, P) = the input's (N, C, H * W), or `flat` where C or P is 1.
template <class In, class Out>
void convert(KernelContext& ctx, void (*tiled)(const In*, Out*, int64_t, int, int),
             void (*flat)(const In*, Out*, int64_t)) {
  auto& cc = context_of(ctx.device_ctx);
  const Tensor& X = ctx.in(0);
  const auto* x = static_cast<const In*>(X.data());
  auto* y = static_cast<Out*>(ctx.out(0).data());
  const int64_t N = X.dim(0), C = X.dim(1), P = X.dim(2) * X.dim(3), n = X.numel();
  if (n == 0) return;
  if (C == 1 || P == 1) {
    flat<<<blocks_for(n), kThreads, 0, cc.stream>>>(x, y, n);
  } else {
    CBT_CHECK((C + kTile - 1) / kTile <= 65535 && P < (int64_t{1} << 31), "channels-last conversion of ",
              shape_str(X.shape()), ": more channels or positions than a grid of tiles holds");
    const dim3 grid(static_cast<unsigned>((P + kTile - 1) / kTile), static_cast<unsigned>((C + kTile - 1) / kTile),
                    static_cast<unsigned>(std::min<int64_t>(N, 65535)));
    tiled<<<grid, dim3(kTile, kTileRows), 0, cc.stream>>>(x, y, N, static_cast<int>(C), static_cast<int>(P));
  }
  CBT_CUDA_CHECK_LAUNCH();
}

// float32 (N, C, H, W) -> bfloat16 stored (N, H, W, C)
void to_channels_last(KernelContext& ctx) {
  check_conversion(ctx, DType::Float32, DType::BFloat16);
  if (ctx.inputs.size() > 1)
    convert_listed(ctx, to_channels_last_list_kernel);
  else
    convert<float, uint16_t>(ctx, to_channels_last_kernel, to_bf16_flat_kernel);
}

// bfloat16 stored (N, H, W, C) -> float32 (N, C, H, W)
void from_channels_last(KernelContext& ctx) {
  check_conversion(ctx, DType::BFloat16, DType::Float32);
  if (ctx.inputs.size() > 1)
    convert_listed(ctx, from_channels_last_list_kernel);
  else
    convert<uint16_t, float>(ctx, from_channels_last_kernel, from_bf16_flat_kernel);
}

}  // namespace

void widen_bf16(const void* in, void* out, size_t count, cudaStream_t stream) {
  if (!count) return;
  const auto n = static_cast<int64_t>(count);
  from_bf16_flat_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint16_t*>(in),
                                                                static_cast<float*>(out), n);
  CBT_CUDA_CHECK_LAUNCH();
}

CBT_REGISTER_KERNEL(kCbtDomain, "ToChannelsLast", DeviceKind::CUDA, to_channels_last);
CBT_REGISTER_KERNEL(kCbtDomain, "FromChannelsLast", DeviceKind::CUDA, from_channels_last);

}  // namespace cbt::cuda
