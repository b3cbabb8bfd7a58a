// A device as the runtime sees it: memory, copies, the context kernels receive.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graph/tensor.h"
#include "ops/kernel.h"

namespace cbt {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  // Uninitialised-or-zeroed device bytes that stay valid while the pointer lives.
  virtual std::shared_ptr<std::byte> allocate(size_t bytes) = 0;
  virtual void copy_from_host(const Tensor& dst, const Tensor& src_host) = 0;
  virtual void copy_to_host(const Tensor& dst_host, const Tensor& src) = 0;
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;  // both on this device
  // What kernels receive as KernelContext::device_ctx (CUDA: stream and handles).
  virtual void* kernel_context() = 0;
  // Waits until queued work is done (host-side reads after it are safe).
  virtual void synchronize() = 0;
  // Marks the current end of this backend's queue; another backend of the same device
  // passes it to wait() to order its later work after it (CUDA: an event). The default
  // waits for the queue here and returns nothing to wait on.
  virtual std::shared_ptr<void> record() {
    synchronize();
    return nullptr;
  }
  virtual void wait(const std::shared_ptr<void>& event) {}
  // Work graphs (CUDA graphs): record the work queued between begin_capture() and
  // end_capture() once, then replay() it with one launch. Backends without them return
  // false / nullptr and the caller runs the work directly.
  virtual bool begin_capture() { return false; }
  virtual std::shared_ptr<void> end_capture() { return nullptr; }
  virtual void replay(const std::shared_ptr<void>& graph) {}
  // TF32 tensor cores for matrix products and convolutions (--precision tf32); off by
  // default. Only CUDA backends have them.
  virtual void allow_tf32(bool on) {
    if (on) throw UserError("--precision tf32 needs a CUDA device (--device cuda)");
  }
  // --deterministic: only kernels and library algorithms whose results do not depend on
  // scheduling. The CPU kernels always are (with a fixed thread count).
  virtual void set_deterministic(bool on) {}
  // How convolution algorithms are chosen (--cudnn-algos, ops/kernel.h), for `concurrent`
  // learners on this device (the candidates are timed that many at once). Only CUDA backends
  // choose.
  virtual void set_conv_algos(ConvAlgos how, int concurrent = 1) {}
  // Device bytes this backend holds for itself (workspaces), beyond what it allocated.
  virtual size_t reserved_bytes() const { return 0; }
  // Bytes that can still be allocated on this device (the auto-tuner's memory limit).
  virtual size_t free_memory() const { return SIZE_MAX; }

  // A tensor of this device with the given type (zeroed).
  Tensor empty(DType dtype, const Shape& shape);
  // A device copy of a host tensor.
  Tensor upload(const Tensor& host);
  // A host copy of a device tensor.
  Tensor download(const Tensor& t);
};

class CpuBackend final : public Backend {
 public:
  // `threads`: threads each kernel may use (see ops/cpu/threads.h); 0: the current setting
  // (1 unless changed), applied to the calling thread as well.
  explicit CpuBackend(int threads = 0);
  Device device() const override { return Device{}; }
  std::shared_ptr<std::byte> allocate(size_t bytes) override;
  void copy_from_host(const Tensor& dst, const Tensor& src) override;
  void copy_to_host(const Tensor& dst, const Tensor& src) override;
  void copy(const Tensor& dst, const Tensor& src) override;
  void* kernel_context() override { return nullptr; }
  void synchronize() override {}
};

// Creates the backend for `device` (CUDA only when built with it; else a UserError).
std::unique_ptr<Backend> make_backend(Device device);

// Makes the driver contexts of the CUDA devices `gpus` on a thread of its own, so that the
// caller reads its data meanwhile: a process's first CUDA call takes half a second or more.
// The thread then has cuDNN and cuBLASLt load what they load on first use (ops/cuda/
// library_warm_up.h), which the first convolution search and Gemm of training waited for.
// The destructor waits for the thread. Failures are not reported here but by the first real
// use, as without it. Without CUDA, or with no GPUs, it does nothing.
class DeviceWarmUp {
 public:
  explicit DeviceWarmUp(const std::vector<int>& gpus);
  ~DeviceWarmUp();
  DeviceWarmUp(const DeviceWarmUp&) = delete;
  DeviceWarmUp& operator=(const DeviceWarmUp&) = delete;

 private:
  std::thread thread_;
};

// Opens (true) or closes (false) the span a profiler records when told to wait for it
// (`ncu --profile-from-start off`, `nsys profile --capture-range=cudaProfilerApi`): CUDA's
// profiler start and stop, for runs on CUDA devices (callers skip it for the CPU, where it
// would start CUDA for nothing). Without CUDA it does nothing.
void profiled_span(bool open);

// The GPUs' convolution choices kept across runs (--conv-choices FILE, ops/cuda/conv_choices.h):
// read before the first search, written after training. load returns how many it read: 0 for
// a missing file, 0 with *why set for one that cannot be read or was made with another GPU
// model, cuDNN, CUDA or format (a search remakes them). save returns how many it wrote,
// replacing the file atomically; UserError naming the file when it cannot. Without CUDA both
// do nothing.
size_t load_conv_choices(const std::string& path, std::string* why);
size_t save_conv_choices(const std::string& path);

// "cpu", "cuda" or "cuda:N" (--device); UserError otherwise.
Device parse_device(const std::string& s);

}  // namespace cbt
