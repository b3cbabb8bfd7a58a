// DevicePool: cudaMalloc'd blocks recycled by size, and the CUDA allocator of graph/tensor.h.
#include "runtime/cuda/device_pool.h"

#include <string>
#include <vector>

#include "graph/tensor.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_raii.h"

namespace cbt::cuda {

size_t pool_block_size(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t{1} << 20;
  if (bytes == 0) return kSmall;
  if (bytes <= 16 * kLarge) return (bytes + kSmall - 1) / kSmall * kSmall;
  return (bytes + kLarge - 1) / kLarge * kLarge;
}

DevicePool& DevicePool::of(int device) {
  static std::mutex m;
  static auto* pools = new std::map<int, DevicePool*>();  // never destroyed, see header
  std::lock_guard lock(m);
  DevicePool*& p = (*pools)[device];
  if (!p) p = new DevicePool(device);
  return *p;
}

void* DevicePool::take_cached(size_t bytes, size_t* got) {
  std::lock_guard lock(mutex_);
  // Accept a block up to 25% larger than asked, so that sizes close together share blocks.
  auto it = free_.lower_bound(bytes);
  if (it == free_.end() || it->first > bytes + bytes / 4) return nullptr;
  *got = it->first;
  void* p = it->second;
  free_.erase(it);
  return p;
}

void DevicePool::free_cached() {
  std::multimap<size_t, void*> blocks;
  {
    std::lock_guard lock(mutex_);
    blocks.swap(free_);
  }
  for (auto& [size, p] : blocks) (void)cudaFree(p);
}

void DevicePool::release(std::byte* p, size_t bytes) {
  std::lock_guard lock(mutex_);
  free_.emplace(bytes, p);
}

size_t DevicePool::cached_bytes() const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& [size, p] : free_) n += size;
  return n;
}

std::shared_ptr<std::byte> DevicePool::allocate(size_t bytes, cudaStream_t stream) {
  DeviceGuard guard(device_);
  size_t size = pool_block_size(bytes);
  size_t got = 0;
  void* p = take_cached(size, &got);
  if (p) {
    // The block's previous owner may still have work queued on any stream that reads or
    // writes it; wait for all of it before handing the block out again (setup time only).
    CBT_CUDA_CHECK(cudaDeviceSynchronize());
    size = got;
  } else {
    cudaError_t err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      CBT_CUDA_CHECK(cudaDeviceSynchronize());
      free_cached();
      err = cudaMalloc(&p, size);
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      (void)cudaMemGetInfo(&free_b, &total_b);
      throw UserError("out of GPU memory on cuda:" + std::to_string(device_) + ": " + std::to_string(size >> 20) +
                      " MiB requested, " + std::to_string(free_b >> 20) + " MiB free of " +
                      std::to_string(total_b >> 20) + " MiB; use a smaller --batch-size");
    }
    CBT_CUDA_CHECK(err);
  }
  CBT_CUDA_CHECK(cudaMemsetAsync(p, 0, size, stream));
  CBT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [this, size](std::byte* q) { release(q, size); });
}

namespace {

// graph/tensor.h's allocator for Device{CUDA, i}: Tensor(dtype, shape, device) works.
std::shared_ptr<std::byte> tensor_allocator(size_t bytes, Device dev) {
  int n = cuda_device_count();
  if (dev.index < 0 || dev.index >= n)
    throw UserError("tensor on " + dev.str() + " but only " + std::to_string(n) + " CUDA device(s) are visible");
  return DevicePool::of(dev.index).allocate(bytes, nullptr);
}

const bool registered = (set_allocator(DeviceKind::CUDA, tensor_allocator), true);

}  // namespace

}  // namespace cbt::cuda
