// Scratch memory of one stream at a fixed address that is backed by physical memory only as
// far as the kernels have asked for it.
//
// The address range (`limit` bytes) is reserved up front, so the base pointer never moves and
// CUDA graphs captured earlier stay valid; physical memory is mapped in at the end of what is
// mapped, in the device's allocation granularity, the first time a request reaches beyond it.
// Requests are made by the first, directly run pass of every program (Program::run), so the
// mapping stops growing before any capture. A small model thus holds a few MiB per learner
// instead of the whole limit.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace cbt::cuda {

class Workspace {
 public:
  Workspace(int device, size_t limit);
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace();

  void* base() const { return base_; }
  size_t limit() const { return limit_; }
  size_t mapped() const { return mapped_; }
  // Makes the first `bytes` (at most limit()) usable. Growing is not allowed while `stream`
  // captures a CUDA graph: that throws InternalError naming the shortfall.
  void ensure(size_t bytes, cudaStream_t stream);

 private:
  int device_ = 0;
  size_t limit_ = 0, granularity_ = 0, mapped_ = 0;
  void* base_ = nullptr;
  std::vector<unsigned long long> handles_;  // CUmemGenericAllocationHandle of each chunk
  void release() noexcept;
};

}  // namespace cbt::cuda
