// CPU backend and the backend factory.
#include "runtime/backend.h"

#include <cstring>

#include "ops/cpu/threads.h"
#include "runtime/collective.h"
#include "runtime/resident_data.h"

namespace cbt {

#ifdef CBT_WITH_CUDA
std::unique_ptr<Backend> make_cuda_backend(int index);  // runtime/cuda/
std::unique_ptr<ResidentDataset> make_cuda_resident_dataset(const Dataset& d, Backend& backend);
std::unique_ptr<AllReduce> make_cuda_all_reduce(const std::vector<Backend*>& backends,
                                                const std::shared_ptr<ProcessGroup>& processes);
int cuda_device_count();
void cuda_ask_for_work_queues();
void cuda_start_contexts(const std::vector<int>& gpus);
void cuda_profiled_span(bool open);
size_t cuda_load_conv_choices(const std::string& path, std::string* why);  // runtime/cuda/conv_choices_file.cpp
size_t cuda_save_conv_choices(const std::string& path);
#endif

Tensor Backend::empty(DType dtype, const Shape& shape) {
  size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  auto mem = allocate(bytes);
  return Tensor::view(dtype, shape, mem.get(), device(), mem);
}

Tensor Backend::upload(const Tensor& host) {
  Tensor t = empty(host.dtype(), host.shape());
  copy_from_host(t, host);
  return t;
}

Tensor Backend::download(const Tensor& t) {
  Tensor h(t.dtype(), t.shape());
  copy_to_host(h, t);
  return h;
}

CpuBackend::CpuBackend(int threads) { cpu::set_kernel_threads(threads > 0 ? threads : cpu::kernel_threads()); }

std::shared_ptr<std::byte> CpuBackend::allocate(size_t bytes) { return allocate_bytes(bytes, Device{}); }

void CpuBackend::copy_from_host(const Tensor& dst, const Tensor& src) { copy(dst, src); }
void CpuBackend::copy_to_host(const Tensor& dst, const Tensor& src) { copy(dst, src); }
void CpuBackend::copy(const Tensor& dst, const Tensor& src) {
  CBT_CHECK(dst.nbytes() == src.nbytes(), "copy size ", dst.nbytes(), " vs ", src.nbytes());
  if (dst.nbytes() && dst.data() != src.data()) std::memcpy(dst.data(), src.data(), dst.nbytes());
}

std::unique_ptr<Backend> make_backend(Device device) {
  if (device.is_cpu()) return std::make_unique<CpuBackend>();
#ifdef CBT_WITH_CUDA
  return make_cuda_backend(device.index);
#else
  throw UserError("this cbtrain was built without CUDA; use --device cpu");
#endif
}

DeviceWarmUp::DeviceWarmUp([[maybe_unused]] const std::vector<int>& gpus) {
#ifdef CBT_WITH_CUDA
  if (gpus.empty()) return;
  cuda_ask_for_work_queues();  // sets the environment here: no other thread may read it meanwhile
  thread_ = std::thread(cuda_start_contexts, gpus);
#endif
}

DeviceWarmUp::~DeviceWarmUp() {
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<ResidentDataset> make_resident_dataset(const Dataset& d, Backend& backend) {
#ifdef CBT_WITH_CUDA
  if (backend.device().kind == DeviceKind::CUDA) return make_cuda_resident_dataset(d, backend);
#endif
  return nullptr;
}

namespace {
// The host buffer of each CPU process, summed over the processes through MPI.
class ProcessAllReduce final : public AllReduce {
 public:
  explicit ProcessAllReduce(std::shared_ptr<ProcessGroup> pg) : pg_(std::move(pg)) {}
  void sum(const std::vector<Tensor>& bufs, const char* what) override {
    CBT_CHECK(bufs.size() == 1 && bufs[0].device().is_cpu() && bufs[0].dtype() == DType::Float32,
              "the all-reduce across CPU processes takes one float32 host buffer");
    pg_->all_reduce_sum(bufs[0].ptr<float>(), static_cast<size_t>(bufs[0].numel()), what);
  }

 private:
  std::shared_ptr<ProcessGroup> pg_;
};
}  // namespace

std::unique_ptr<AllReduce> make_all_reduce(const std::vector<Backend*>& backends,
                                           const std::shared_ptr<ProcessGroup>& processes) {
  const bool several_processes = processes && processes->size() > 1;
  if (backends.size() <= 1 && !several_processes) return nullptr;
  if (backends.size() == 1 && backends[0]->device().is_cpu()) return std::make_unique<ProcessAllReduce>(processes);
#ifdef CBT_WITH_CUDA
  return make_cuda_all_reduce(backends, processes);
#else
  throw UserError("several devices need the CUDA backend; this cbtrain was built without CUDA");
#endif
}

int device_count(DeviceKind kind) {
  if (kind == DeviceKind::CPU) return 1;
#ifdef CBT_WITH_CUDA
  return cuda_device_count();
#else
  return 0;
#endif
}

bool built_with_cuda() {
#ifdef CBT_WITH_CUDA
  return true;
#else
  return false;
#endif
}

void profiled_span(bool open) {
#ifdef CBT_WITH_CUDA
  cuda_profiled_span(open);
#else
  (void)open;
#endif
}

size_t load_conv_choices(const std::string& path, std::string* why) {
#ifdef CBT_WITH_CUDA
  return cuda_load_conv_choices(path, why);
#else
  (void)path, (void)why;
  return 0;
#endif
}

size_t save_conv_choices(const std::string& path) {
#ifdef CBT_WITH_CUDA
  return cuda_save_conv_choices(path);
#else
  (void)path;
  return 0;
#endif
}

Device parse_device(const std::string& s) {
  if (s == "cpu") return Device{};
  if (s == "cuda") return Device{DeviceKind::CUDA, 0};
  if (s.rfind("cuda:", 0) == 0) {
    try {
      size_t used = 0;
      int idx = std::stoi(s.substr(5), &used);
      if (used == s.size() - 5 && idx >= 0) return Device{DeviceKind::CUDA, idx};
    } catch (...) {
    }
  }
  throw UserError("--device must be cpu, cuda or cuda:N, not '" + s + "'");
}

}  // namespace cbt
