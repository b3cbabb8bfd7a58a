// Move-only owners of CUDA, cuBLAS and cuDNN resources: device and pinned memory, streams,
// events, library handles. Copies are deleted; destructors release and never throw.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <utility>

#include "ops/cuda/cuda_context.h"

namespace cbt::cuda {

// Owns one handle of a C API; Traits::destroy releases it (errors are ignored: it runs in
// destructors, possibly while the process tears the CUDA runtime down).
template <class Traits>
class Owner {
 public:
  using Handle = typename Traits::Handle;
  Owner() = default;
  explicit Owner(Handle h) : h_(h) {}
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  Owner(Owner&& o) noexcept : h_(std::exchange(o.h_, Handle{})) {}
  Owner& operator=(Owner&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, Handle{});
    }
    return *this;
  }
  ~Owner() { reset(); }

  Handle get() const { return h_; }
  explicit operator bool() const { return h_ != Handle{}; }
  void reset() noexcept {
    if (h_ != Handle{}) Traits::destroy(h_);
    h_ = Handle{};
  }

 private:
  Handle h_{};
};

struct StreamTraits {
  using Handle = cudaStream_t;
  static void destroy(Handle h) noexcept { (void)cudaStreamDestroy(h); }
};
struct EventTraits {
  using Handle = cudaEvent_t;
  static void destroy(Handle h) noexcept { (void)cudaEventDestroy(h); }
};
struct CublasTraits {
  using Handle = cublasHandle_t;
  static void destroy(Handle h) noexcept { (void)cublasDestroy(h); }
};
struct CudnnTraits {
  using Handle = cudnnHandle_t;
  static void destroy(Handle h) noexcept { (void)cudnnDestroy(h); }
};

using Stream = Owner<StreamTraits>;
using Event = Owner<EventTraits>;
using CublasHandle = Owner<CublasTraits>;
using CudnnHandle = Owner<CudnnTraits>;

// A stream that does not synchronise implicitly with the legacy default stream.
inline Stream make_stream() {
  cudaStream_t s = nullptr;
  CBT_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}

// An event for ordering and host waits only (no timing: cheaper to record).
inline Event make_event() {
  cudaEvent_t e = nullptr;
  CBT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return Event(e);
}

inline CublasHandle make_cublas() {
  cublasHandle_t h = nullptr;
  CBT_CUBLAS_CHECK(cublasCreate(&h));
  return CublasHandle(h);
}

inline CudnnHandle make_cudnn() {
  cudnnHandle_t h = nullptr;
  CBT_CUDNN_CHECK(cudnnCreate(&h));
  return CudnnHandle(h);
}

// Device memory of the current device (cudaMalloc / cudaFree), uninitialised.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(size_t bytes) : bytes_(bytes) {
    if (bytes) CBT_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  DeviceMemory(DeviceMemory&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~DeviceMemory() { reset(); }

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void reset() noexcept {
    if (ptr_) (void)cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked host memory (cudaMallocHost / cudaFreeHost): the source of truly
// asynchronous host-to-device copies.
class PinnedMemory {
 public:
  PinnedMemory() = default;
  explicit PinnedMemory(size_t bytes) : bytes_(bytes) {
    if (bytes) CBT_CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
  }
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  PinnedMemory(PinnedMemory&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedMemory& operator=(PinnedMemory&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~PinnedMemory() { reset(); }

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void reset() noexcept {
    if (ptr_) (void)cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Makes `device` current for a scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    CBT_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) CBT_CUDA_CHECK(cudaSetDevice(device));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() { (void)cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

}  // namespace cbt::cuda
