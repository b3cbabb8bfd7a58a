// The device work of the timing buffers (copy_timing.h): random inputs made on the GPU, and
// a result compared with a reference there, so that a search at a large batch moves two
// numbers to the host instead of every output (ResNet-20's evaluation at batch 500 spent
// most of its searches' time in those copies and the host's comparison).
#include <cuda_bf16.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "ops/cuda/common.cuh"
#include "ops/cuda/copy_timing.h"
#include "ops/cuda/rng.cuh"

namespace cbt::cuda {
namespace {

// T: float, or __nv_bfloat16 (rounded to nearest even).
template <class T>
__global__ void fill_random_kernel(T* p, int64_t n, uint64_t seed) {
  CBT_GRID_STRIDE_LOOP(i, n) p[i] = static_cast<T>(2.0f * rng_uniform(seed, static_cast<uint64_t>(i)) - 1.0f);
}

template <class T>
void fill_random_as(void* p, size_t count, uint64_t seed) {
  if (!count) return;
  const auto n = static_cast<int64_t>(count);
  fill_random_kernel<<<blocks_for(n), kThreads>>>(static_cast<T*>(p), n, seed);  // the default stream
  CBT_CUDA_CHECK_LAUNCH();
  CBT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

// m[0] = max |got - ref|, m[1] = max |ref|, as the bits of non-negative doubles (which order
// as their unsigned integers do, so atomicMax takes the larger). A NaN or an infinity in
// either counts as an infinite difference (fmax would drop a NaN, and an engine that returns
// NaN must not pass as accurate).
__global__ void max_difference_kernel(const float* got, const float* ref, int64_t n, unsigned long long* m) {
  double diff = 0, scale = 0;
  CBT_GRID_STRIDE_LOOP(i, n) {
    const double d = fabs(static_cast<double>(got[i]) - static_cast<double>(ref[i]));
    diff = fmax(diff, isfinite(d) ? d : HUGE_VAL);
    scale = fmax(scale, fabs(static_cast<double>(ref[i])));
  }
  for (int o = 16; o > 0; o >>= 1) {
    diff = fmax(diff, __shfl_down_sync(0xffffffffu, diff, o));
    scale = fmax(scale, __shfl_down_sync(0xffffffffu, scale, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(&m[0], static_cast<unsigned long long>(__double_as_longlong(diff)));
    atomicMax(&m[1], static_cast<unsigned long long>(__double_as_longlong(scale)));
  }
}

}  // namespace

void DeviceBuffer::fill_random(size_t count, uint64_t seed) { fill_random_as<float>(p, count, seed); }
void DeviceBuffer::fill_random_bf16(size_t count, uint64_t seed) { fill_random_as<__nv_bfloat16>(p, count, seed); }

double relative_error(const DeviceBuffer& got, const DeviceBuffer& ref, size_t count, cudaStream_t stream,
                      DeviceBuffer* scratch) {
  std::optional<DeviceBuffer> own;
  if (!scratch) scratch = &own.emplace(relative_error_scratch_bytes);
  CBT_CHECK(scratch->p != nullptr, "no device memory for a comparison of two results");
  auto* bits = static_cast<unsigned long long*>(scratch->p);
  CBT_CUDA_CHECK(cudaMemsetAsync(bits, 0, relative_error_scratch_bytes, stream));
  const auto n = static_cast<int64_t>(count);
  max_difference_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const float*>(got.p),
                                                                static_cast<const float*>(ref.p), n, bits);
  CBT_CUDA_CHECK_LAUNCH();
  unsigned long long host[2] = {0, 0};
  CBT_CUDA_CHECK(cudaMemcpyAsync(host, bits, sizeof host, cudaMemcpyDeviceToHost, stream));
  CBT_CUDA_CHECK(cudaStreamSynchronize(stream));
  double diff = 0, scale = 0;
  static_assert(sizeof(double) == sizeof(unsigned long long));
  std::memcpy(&diff, &host[0], sizeof diff);
  std::memcpy(&scale, &host[1], sizeof scale);
  return diff / std::max(scale, 1e-30);
}

}  // namespace cbt::cuda
