// The CUDA backend: one GPU, one stream, the library handles and workspace bound to it.
//
// Precision (--precision fp32|tf32): the default is strict fp32 everywhere. TF32 tensor
// cores are opted into either when the backend is built (CudaBackendOptions::tf32) or later
// with set_tf32(backend, true); both set cuBLAS's math mode and CudaContext::tf32, which the
// cuDNN kernels read to choose their convolution math type.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "ops/cuda/cuda_context.h"
#include "runtime/backend.h"
#include "runtime/cuda/cuda_raii.h"

namespace cbt {

namespace cuda {
// Reusable events for record(): an event returns here when the last holder drops it (a
// wait already enqueued on it is not affected by the event's later re-recording).
class EventPool {
 public:
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  ~EventPool();
  cudaEvent_t take();
  void give(cudaEvent_t e) noexcept;

 private:
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_;
};
}  // namespace cuda

struct CudaBackendOptions {
  bool tf32 = false;
  // Every learner has its own backend and so its own workspaces: they count in its memory.
  // The kernels' scratch is an address range of this size, backed only as far as they use it.
  size_t workspace_bytes = size_t{32} << 20;        // kernels' scratch (CudaContext::workspace)
  size_t cublas_workspace_bytes = size_t{4} << 20;  // cuBLAS's own, separate from the above
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index, const CudaBackendOptions& opt = {});
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  Device device() const override { return Device{DeviceKind::CUDA, index_}; }
  // Zeroed memory from the device's caching pool (zeroing runs on this stream, then waits).
  std::shared_ptr<std::byte> allocate(size_t bytes) override;
  // Asynchronous: small copies go through pinned staging slots, so the host tensor may be
  // reused as soon as this returns; larger ones copy from pageable memory directly.
  void copy_from_host(const Tensor& dst, const Tensor& src_host) override;
  // Waits for the stream: the host tensor holds the data on return.
  void copy_to_host(const Tensor& dst_host, const Tensor& src) override;
  void copy(const Tensor& dst, const Tensor& src) override;  // device to device, on the stream
  // Makes this GPU current for the calling thread and returns its CudaContext.
  void* kernel_context() override;
  void synchronize() override;
  // A CUDA event recorded on this stream (from a small pool: no event is created per step
  // once the pool is warm); wait() makes this stream wait for one, without the host waiting.
  std::shared_ptr<void> record() override;
  void wait(const std::shared_ptr<void>& event) override;

  bool begin_capture() override;
  std::shared_ptr<void> end_capture() override;
  void replay(const std::shared_ptr<void>& graph) override;
  size_t free_memory() const override;
  size_t reserved_bytes() const override;
  void set_tf32(bool on);
  void allow_tf32(bool on) override { set_tf32(on); }
  void set_deterministic(bool on) override { ctx_.deterministic = on; }
  void set_conv_algos(ConvAlgos how, int concurrent = 1) override {
    ctx_.conv_algos = how;
    ctx_.conv_concurrency = concurrent;
  }
  bool tf32() const { return ctx_.tf32; }
  cudaStream_t stream() const { return stream_.get(); }
  cuda::CudaContext& context() { return ctx_; }

 private:
  static constexpr size_t kStagingSlots = 4;
  static constexpr size_t kStagingSlotBytes = size_t{8} << 20;  // larger uploads go directly
  static constexpr size_t kStagingSlotFirstBytes = size_t{64} << 10;

  // Declared so that handles go before the memory they were given, and the stream last.
  int index_;
  cuda::Stream stream_;
  std::unique_ptr<cuda::Workspace> workspace_;
  cuda::DeviceMemory cublas_workspace_;
  cuda::CublasHandle cublas_;
  cuda::CudnnHandle cudnn_;
  // Page-locked memory is slow to get (about 12 ms for 32 MiB, paid by every learner), so each
  // slot starts empty and grows to the upload it must hold, doubling, up to kStagingSlotBytes.
  std::array<cuda::PinnedMemory, kStagingSlots> staging_;
  std::array<cuda::Event, kStagingSlots> staging_done_;  // a slot's last copy finished
  size_t next_slot_ = 0;
  std::shared_ptr<cuda::EventPool> events_;
  cuda::CudaContext ctx_;
};

// Number of CUDA devices this process sees (0 when there is no driver or no GPU).
int cuda_device_count();

// The CUDA backend of GPU `index`; throws UserError when there is no such device.
std::unique_ptr<Backend> make_cuda_backend(int index);

// Switches TF32 tensor cores on or off (--precision tf32 / fp32). Throws UserError when
// `backend` is not a CUDA backend.
void set_tf32(Backend& backend, bool on);

}  // namespace cbt
