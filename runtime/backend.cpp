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
std::unique_ptr<AllReduce> make_cuda_all_reduce(const std::vector<Backend*>& backends);
int cuda_device_count();
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

CpuBackend::CpuBackend(int threads) {
  if (threads > 0) cpu::set_kernel_threads(threads);
}

std::shared_ptr<std::byte> CpuBackend::allocate(size_t bytes) {
  return allocate_bytes(bytes, Device{});
}

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

std::unique_ptr<ResidentDataset> make_resident_dataset(const Dataset& d, Backend& backend) {
#ifdef CBT_WITH_CUDA
  if (backend.device().kind == DeviceKind::CUDA) return make_cuda_resident_dataset(d, backend);
#endif
  return nullptr;
}

std::unique_ptr<AllReduce> make_all_reduce(const std::vector<Backend*>& backends) {
  if (backends.size() <= 1) return nullptr;
#ifdef CBT_WITH_CUDA
  return make_cuda_all_reduce(backends);
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
