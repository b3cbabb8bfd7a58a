// Caching allocator of device memory, one pool per GPU. Allocations happen while programs are
// set up, never inside the training loop; released blocks are kept for reuse because
// cudaFree synchronises the whole device.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace cbt::cuda {

class DevicePool {
 public:
  // The pool of `device` (lives until the process exits: blocks may be released late).
  static DevicePool& of(int device);

  // Zeroed device memory of at least `bytes` (256-byte aligned). The zeroing is enqueued on
  // `stream` (nullptr: the legacy default stream) and waited for. Throws UserError when the
  // GPU is out of memory.
  std::shared_ptr<std::byte> allocate(size_t bytes, cudaStream_t stream);

  // Bytes held in cached (released, not yet reused) blocks.
  size_t cached_bytes() const;

 private:
  explicit DevicePool(int device) : device_(device) {}
  void release(std::byte* p, size_t bytes);
  void* take_cached(size_t bytes, size_t* got);
  void free_cached();

  int device_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // block size -> block
};

// Size a request is rounded to: coarse steps keep cached blocks reusable.
size_t pool_block_size(size_t bytes);

}  // namespace cbt::cuda
