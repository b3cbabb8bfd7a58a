// Workspace: a reserved address range mapped on demand through the driver's virtual memory
// management calls. They are looked up through the runtime (cudaGetDriverEntryPointByVersion)
// so that the binaries do not link libcuda and still start on machines without a driver.
#include "ops/cuda/workspace.h"

#include <cuda.h>

#include <string>

#include "ops/cuda/cuda_context.h"

namespace cbt::cuda {

namespace {

struct DriverVmm {
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemAddressFree) free_range = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
};

template <class Fn>
void lookup(const char* name, Fn& fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CBT_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found));
  CBT_CHECK(found == cudaDriverEntryPointSuccess && p, "the CUDA driver has no ", name);
  fn = reinterpret_cast<Fn>(p);
}

const DriverVmm& vmm() {
  static const DriverVmm d = [] {
    DriverVmm v;
    lookup("cuMemAddressReserve", v.reserve);
    lookup("cuMemAddressFree", v.free_range);
    lookup("cuMemCreate", v.create);
    lookup("cuMemRelease", v.release);
    lookup("cuMemMap", v.map);
    lookup("cuMemUnmap", v.unmap);
    lookup("cuMemSetAccess", v.set_access);
    lookup("cuMemGetAllocationGranularity", v.granularity);
    return v;
  }();
  return d;
}

void check(CUresult r, const char* call, int device = 0, size_t bytes = 0) {
  if (r == CUDA_SUCCESS) return;
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    throw UserError("out of GPU memory on cuda:" + std::to_string(device) + ": " + std::to_string(bytes >> 20) +
                    " MiB of kernel workspace requested (" + call + "); use a smaller --batch-size");
  detail::throw_internal(call, __FILE__, __LINE__, ("CUresult " + std::to_string(r)).c_str());
}

CUmemAllocationProp device_memory(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

size_t round_up(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

Workspace::Workspace(int device, size_t limit) : device_(device) {
  if (limit == 0) return;
  const DriverVmm& d = vmm();
  CUmemAllocationProp prop = device_memory(device);
  check(d.granularity(&granularity_, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
  limit_ = round_up(limit, granularity_);
  CUdeviceptr p = 0;
  check(d.reserve(&p, limit_, 0, 0, 0), "cuMemAddressReserve");
  base_ = reinterpret_cast<void*>(p);
}

Workspace::~Workspace() { release(); }

void Workspace::release() noexcept {
  if (!base_) return;
  const DriverVmm& d = vmm();
  auto p = reinterpret_cast<CUdeviceptr>(base_);
  if (mapped_) (void)d.unmap(p, mapped_);
  for (unsigned long long h : handles_) (void)d.release(static_cast<CUmemGenericAllocationHandle>(h));
  (void)d.free_range(p, limit_);
  base_ = nullptr;
}

void Workspace::ensure(size_t bytes, cudaStream_t stream) {
  if (bytes <= mapped_) return;
  CBT_CHECK(bytes <= limit_, "kernel workspace request of ", bytes, " bytes beyond its limit of ", limit_);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  CBT_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
  if (capturing != cudaStreamCaptureStatusNone)
    detail::throw_internal(
        "Workspace::ensure", __FILE__, __LINE__,
        ("a kernel needs " + std::to_string(bytes) + " bytes of workspace, " + std::to_string(mapped_) +
         " are mapped, and none can be mapped " + "while a CUDA graph is captured")
            .c_str());
  const DriverVmm& d = vmm();
  const size_t grow = round_up(bytes - mapped_, granularity_);
  CUmemAllocationProp prop = device_memory(device_);
  CUmemGenericAllocationHandle h{};
  check(d.create(&h, grow, &prop, 0), "cuMemCreate", device_, grow);
  auto at = reinterpret_cast<CUdeviceptr>(base_) + mapped_;
  CUresult r = d.map(at, grow, 0, h, 0);
  if (r != CUDA_SUCCESS) {
    (void)d.release(h);
    check(r, "cuMemMap");
  }
  handles_.push_back(h);
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  r = d.set_access(at, grow, &access, 1);
  if (r != CUDA_SUCCESS) {
    (void)d.unmap(at, grow);
    handles_.pop_back();
    (void)d.release(h);
    check(r, "cuMemSetAccess");
  }
  mapped_ += grow;
}

}  // namespace cbt::cuda
