// Direct stride-1 convolutions: one block per image and band of output rows, the band's input
// rows (zero-padded) and every filter held in shared memory, each thread summing `MT` output
// channels at one output position in a fixed order.
#include "ops/cuda/direct_conv.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>

#include "ops/cuda/copy_timing.h"
#include "ops/cuda/cuda_context.h"
#include "ops/cuda/fused_relu.cuh"

namespace cbt::cuda {
namespace {

std::atomic<uint64_t> g_direct_runs{0};

constexpr size_t kMaxSharedBytes = 48 * 1024;  // without opting a kernel into more

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t band_rows(const DirectConv& d, int bands) { return ceil_div(d.OH, bands); }
int64_t padded_m(const DirectConv& d, int mt) { return ceil_div(d.M, mt) * mt; }

size_t shared_bytes(const DirectConv& d, const DirectConfig& c) {
  const int64_t rows_in = band_rows(d, c.bands) + d.K - 1, cols_in = d.OW + d.K - 1;
  return static_cast<size_t>(d.C * d.K * d.K * padded_m(d, c.mt) + d.C * rows_in * cols_in) * sizeof(float);
}

// The filter tap of output channel m, input channel c at (kh, kw), as the convolution reads it.
__device__ __forceinline__ float tap(const float* w, const DirectConv& d, int m, int c, int kh, int kw) {
  const int K = static_cast<int>(d.K);
  if (d.turned) return w[((static_cast<int64_t>(c) * d.M + m) * K + (K - 1 - kh)) * K + (K - 1 - kw)];
  return w[((static_cast<int64_t>(m) * d.C + c) * K + kh) * K + kw];
}

// in: (N, C, H, W), w: see DirectConv, bias: (M) or null -> out: (N, M, OH, OW).
// Shared memory: the taps as [(c, kh, kw)][m] for m < Mpad (zeros beyond M), then the band's
// input rows as [c][row][col], zeros where the padding is.
template <int K, int MT>
__global__ void __launch_bounds__(256) direct_conv_kernel(const float* __restrict__ in, const float* __restrict__ w,
                                                          const float* __restrict__ bias, float* __restrict__ out,
                                                          DirectConv d, int rows_per_band, bool relu) {
  extern __shared__ float smem[];
  const int C = static_cast<int>(d.C), M = static_cast<int>(d.M), OW = static_cast<int>(d.OW);
  const int H = static_cast<int>(d.H), W = static_cast<int>(d.W);
  const int groups = (M + MT - 1) / MT, mpad = groups * MT;
  const int oh0 = blockIdx.x * rows_per_band;
  const int rows = min(rows_per_band, static_cast<int>(d.OH) - oh0);
  const int rows_in = rows_per_band + K - 1, cols_in = OW + K - 1;
  float* taps = smem;
  float* xs = smem + C * K * K * mpad;
  for (int i = threadIdx.x; i < C * K * K * mpad; i += blockDim.x) {
    const int m = i % mpad, r = i / mpad, kw = r % K, kh = (r / K) % K, c = r / (K * K);
    taps[i] = m < M ? tap(w, d, m, c, kh, kw) : 0.0f;
  }
  const float* image = in + static_cast<int64_t>(blockIdx.y) * C * H * W;
  for (int i = threadIdx.x; i < C * rows_in * cols_in; i += blockDim.x) {
    const int col = i % cols_in, row = (i / cols_in) % rows_in, c = i / (cols_in * rows_in);
    const int h = oh0 - static_cast<int>(d.PH) + row, x = col - static_cast<int>(d.PW);
    xs[i] = h >= 0 && h < H && x >= 0 && x < W ? image[(static_cast<int64_t>(c) * H + h) * W + x] : 0.0f;
  }
  __syncthreads();
  const int positions = rows * OW;
  float* plane0 = out + static_cast<int64_t>(blockIdx.y) * M * d.OH * OW + static_cast<int64_t>(oh0) * OW;
  for (int item = threadIdx.x; item < groups * positions; item += blockDim.x) {
    const int g = item / positions, pos = item % positions, row = pos / OW, col = pos % OW;
    float acc[MT];
#pragma unroll
    for (int j = 0; j < MT; ++j) acc[j] = 0.0f;
    for (int c = 0; c < C; ++c) {
      const float* x = xs + (c * rows_in + row) * cols_in + col;
      const float* t = taps + c * K * K * mpad + g * MT;
#pragma unroll
      for (int kh = 0; kh < K; ++kh)
#pragma unroll
        for (int kw = 0; kw < K; ++kw) {
          const float v = x[kh * cols_in + kw];
#pragma unroll
          for (int j = 0; j < MT; ++j) acc[j] = fmaf(v, t[(kh * K + kw) * mpad + j], acc[j]);
        }
    }
#pragma unroll
    for (int j = 0; j < MT; ++j) {
      const int m = g * MT + j;
      if (m >= M) break;
      float v = bias ? acc[j] + bias[m] : acc[j];
      plane0[static_cast<int64_t>(m) * d.OH * OW + pos] = relu ? relu_of(v) : v;
    }
  }
}

template <int K>
bool launch_k(cudaStream_t s, const DirectConv& d, const DirectConfig& c, const float* in, const float* w,
              const float* bias, bool relu, float* out) {
  const dim3 grid(static_cast<unsigned>(ceil_div(d.OH, band_rows(d, c.bands))), static_cast<unsigned>(d.N));
  const size_t smem = shared_bytes(d, c);
  const int rows = static_cast<int>(band_rows(d, c.bands));
  switch (c.mt) {
    case 1: direct_conv_kernel<K, 1><<<grid, c.threads, smem, s>>>(in, w, bias, out, d, rows, relu); break;
    case 2: direct_conv_kernel<K, 2><<<grid, c.threads, smem, s>>>(in, w, bias, out, d, rows, relu); break;
    case 4: direct_conv_kernel<K, 4><<<grid, c.threads, smem, s>>>(in, w, bias, out, d, rows, relu); break;
    case 8: direct_conv_kernel<K, 8><<<grid, c.threads, smem, s>>>(in, w, bias, out, d, rows, relu); break;
    default: return false;
  }
  return cudaPeekAtLastError() == cudaSuccess;
}

bool launch(cudaStream_t stream, const DirectConv& d, const DirectConfig& cfg, const float* in, const float* w,
            const float* bias, bool relu, float* out) {
  return d.K == 3   ? launch_k<3>(stream, d, cfg, in, w, bias, relu, out)
         : d.K == 5 ? launch_k<5>(stream, d, cfg, in, w, bias, relu, out)
                    : false;
}

}  // namespace

std::string DirectConfig::str() const {
  return "mt" + std::to_string(mt) + "/bands" + std::to_string(bands) + "/t" + std::to_string(threads);
}

bool direct_supported(const DirectConv& d) {
  const bool shapes = (d.K == 3 || d.K == 5) && d.N >= 1 && d.N <= 65535 && d.C >= 1 && d.M >= 1 && d.H >= 1 &&
                      d.W >= 1 && d.PH >= 0 && d.PW >= 0 && d.PH < d.K && d.PW < d.K && d.OH >= 1 && d.OW >= 1 &&
                      d.OH == d.H + 2 * d.PH - d.K + 1 && d.OW == d.W + 2 * d.PW - d.K + 1;
  if (!shapes) return false;
  // The smallest footprint: one output channel a thread, output rows one per band.
  DirectConfig least{1, static_cast<int>(std::min<int64_t>(d.OH, 8)), 128};
  return d.OH <= 65535 && shared_bytes(d, least) <= kMaxSharedBytes;
}

std::vector<DirectConfig> direct_configs(const DirectConv& d) {
  std::vector<DirectConfig> out;
  if (!direct_supported(d)) return out;
  for (int mt : {1, 2, 4, 8}) {
    if (mt > 1 && mt / 2 >= d.M) continue;  // half or more of its sums would be padding
    int last_bands = 0;
    for (int bands : {1, 2, 4, 8}) {
      const int real = static_cast<int>(ceil_div(d.OH, band_rows(d, bands)));
      if (real == last_bands) continue;
      last_bands = real;
      for (int threads : {128, 256}) {
        DirectConfig c{mt, real, threads};
        const int64_t items = ceil_div(d.M, mt) * band_rows(d, real) * d.OW;
        if (threads == 256 && items <= 128) continue;  // the 128-thread block does the same
        if (shared_bytes(d, c) <= kMaxSharedBytes) out.push_back(c);
      }
    }
  }
  return out;
}

bool direct_conv(cudaStream_t stream, const DirectConv& d, const DirectConfig& cfg, const float* in,
                 const float* w, const float* bias, bool relu, float* out) {
  const bool ok = launch(stream, d, cfg, in, w, bias, relu, out);
  if (ok) g_direct_runs.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

std::optional<DirectChoice> choose_direct(cudaStream_t stream, const DirectConv& d, int copies) {
  const std::vector<DirectConfig> configs = direct_configs(d);
  if (configs.empty()) return std::nullopt;
  const size_t n = static_cast<size_t>(std::clamp(copies, 1, 16));
  const size_t in_count = static_cast<size_t>(d.N * d.C * d.H * d.W);
  const size_t w_count = static_cast<size_t>(d.M * d.C * d.K * d.K), out_count = static_cast<size_t>(d.N * d.M * d.OH * d.OW);
  DeviceBuffer in(in_count * sizeof(float)), w(w_count * sizeof(float)), bias(static_cast<size_t>(d.M) * sizeof(float));
  if (!in.p || !w.p || !bias.p) return std::nullopt;
  in.fill_random(in_count, 1);
  w.fill_random(w_count, 2);
  bias.fill_random(static_cast<size_t>(d.M), 3);
  std::vector<std::unique_ptr<DeviceBuffer>> outs;
  for (size_t c = 0; c < n; ++c) {
    outs.push_back(std::make_unique<DeviceBuffer>(out_count * sizeof(float)));
    if (!outs.back()->p) return std::nullopt;
  }
  Streams side(n);
  std::optional<DirectChoice> best;
  for (const DirectConfig& cfg : configs) {
    auto run = [&](size_t copy, cudaStream_t s) {
      return launch(s, d, cfg, static_cast<const float*>(in.p), static_cast<const float*>(w.p),
                         static_cast<const float*>(bias.p), false, static_cast<float*>(outs[copy]->p));
    };
    if (!run(0, stream) || cudaStreamSynchronize(stream) != cudaSuccess) {  // once outside the graph
      (void)cudaGetLastError();
      continue;
    }
    const float ms = time_side_by_side(stream, side, 3, run);
    if (ms >= 0 && (!best || ms < best->ms)) best = DirectChoice{cfg, ms};
  }
  return best;
}

DirectMode direct_mode() {
  const char* v = std::getenv("CBT_CONV_DIRECT");
  const std::string s = v ? v : "";
  return s == "off" ? DirectMode::Off : s == "always" ? DirectMode::Always : DirectMode::Timed;
}

uint64_t direct_runs() { return g_direct_runs.load(std::memory_order_relaxed); }

}  // namespace cbt::cuda
