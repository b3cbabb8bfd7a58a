// CudaBackend: memory, copies and the kernel context of one GPU.
#include "runtime/cuda/cuda_backend.h"

#include <cuda_profiler_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "ops/cuda/library_warm_up.h"
#include "runtime/cuda/device_pool.h"

namespace cbt {

namespace {

void check_on(const Tensor& t, Device dev, const char* what) {
  CBT_CHECK(t.device() == dev, what, " is on ", t.device().str(), ", expected ", dev.str());
}

void check_sizes(const Tensor& dst, const Tensor& src) {
  CBT_CHECK(dst.nbytes() == src.nbytes(), "copy size ", dst.nbytes(), " vs ", src.nbytes());
}

}  // namespace

namespace cuda {

EventPool::~EventPool() {
  for (cudaEvent_t e : free_) (void)cudaEventDestroy(e);
}

cudaEvent_t EventPool::take() {
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      cudaEvent_t e = free_.back();
      free_.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  CBT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void EventPool::give(cudaEvent_t e) noexcept {
  try {
    std::lock_guard lock(mutex_);
    free_.push_back(e);
  } catch (...) {
    (void)cudaEventDestroy(e);
  }
}

// The hardware work queues the driver gives a context: 8 unless the environment says
// otherwise. Streams beyond them share queues, and a learner's update that waits for the
// central model then holds up another learner's work queued behind it; with a learner per
// stream plus a synchronisation stream per device, cbtrain asks for the maximum, 32. The
// driver reads the variable when it starts (the process's first CUDA call), so every entry
// point that may make that call asks first; a value the user set is kept.
void ask_for_work_queues() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0); });
}

}  // namespace cuda

int cuda_device_count() {
  cuda::ask_for_work_queues();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky; clear it so that later checks do not see it
    return 0;
  }
  return n;
}

void cuda_ask_for_work_queues() { cuda::ask_for_work_queues(); }

void cuda_start_contexts(const std::vector<int>& gpus) {
  const char* warm = std::getenv("CBT_WARM_UP_LIBRARIES");  // "0": leave them to their first use
  const bool warm_up = !(warm && std::string(warm) == "0");
  for (int g : gpus)
    if (cudaSetDevice(g) == cudaSuccess && cudaFree(nullptr) == cudaSuccess && warm_up)  // the context: on first use
      cuda::warm_up_libraries();
  (void)cudaGetLastError();  // a missing GPU is reported by the backend that wants it
}

void cuda_profiled_span(bool open) {
  // Without a profiler attached both calls do nothing; their status is of no use here.
  (void)(open ? cudaProfilerStart() : cudaProfilerStop());
  (void)cudaGetLastError();
}

CudaBackend::CudaBackend(int index, const CudaBackendOptions& opt) : index_(index) {
  cuda::ask_for_work_queues();
  CBT_CUDA_CHECK(cudaSetDevice(index));
  stream_ = cuda::make_stream();
  cublas_ = cuda::make_cublas();
  CBT_CUBLAS_CHECK(cublasSetStream(cublas_.get(), stream_.get()));
  CBT_CUBLAS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_HOST));
  // cuBLAS gets a workspace of its own: a kernel may hold CudaContext::workspace while it
  // calls cuBLAS, and a fixed workspace keeps cuBLAS from allocating (CUDA-graph capture).
  cublas_workspace_ = cuda::DeviceMemory(opt.cublas_workspace_bytes);
  CBT_CUBLAS_CHECK(cublasSetWorkspace(cublas_.get(), cublas_workspace_.get(), cublas_workspace_.bytes()));
  cudnn_ = cuda::make_cudnn();
  CBT_CUDNN_CHECK(cudnnSetStream(cudnn_.get(), stream_.get()));
  workspace_ = std::make_unique<cuda::Workspace>(index, opt.workspace_bytes);
  for (auto& e : staging_done_) e = cuda::make_event();
  events_ = std::make_shared<cuda::EventPool>();

  ctx_.device = index;
  ctx_.stream = stream_.get();
  ctx_.cublas = cublas_.get();
  ctx_.cudnn = cudnn_.get();
  ctx_.workspace = workspace_->base();
  ctx_.workspace_bytes = workspace_->limit();
  ctx_.workspace_memory = workspace_.get();
  set_tf32(opt.tf32);
}

CudaBackend::~CudaBackend() {
  // Queued kernels may still use the workspace and staging memory released below.
  (void)cudaSetDevice(index_);
  (void)cudaStreamSynchronize(stream_.get());
}

void CudaBackend::set_tf32(bool on) {
  CBT_CUBLAS_CHECK(cublasSetMathMode(cublas_.get(), on ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  ctx_.tf32 = on;
}

std::shared_ptr<std::byte> CudaBackend::allocate(size_t bytes) {
  return cuda::DevicePool::of(index_).allocate(bytes, stream_.get());
}

void CudaBackend::copy_from_host(const Tensor& dst, const Tensor& src) {
  check_sizes(dst, src);
  check_on(dst, device(), "copy_from_host destination");
  check_on(src, Device{}, "copy_from_host source");
  const size_t n = dst.nbytes();
  if (n == 0) return;
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  if (n > kStagingSlotBytes) {
    // From pageable memory the call returns once the source has been read (setup-time
    // uploads of weights and data sets).
    CBT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), n, cudaMemcpyHostToDevice, stream_.get()));
    return;
  }
  // Staged: the slot is reused once its previous copy has run, so a step's batch upload
  // waits at most for the copy issued kStagingSlots uploads ago.
  size_t slot = next_slot_;
  next_slot_ = (next_slot_ + 1) % kStagingSlots;
  cudaEvent_t done = staging_done_[slot].get();
  CBT_CUDA_CHECK(cudaEventSynchronize(done));
  cuda::PinnedMemory& stage = staging_[slot];
  if (stage.bytes() < n) {
    size_t bytes = std::max(stage.bytes(), kStagingSlotFirstBytes);
    while (bytes < n) bytes *= 2;
    stage = cuda::PinnedMemory(std::min(bytes, kStagingSlotBytes));  // the old one's copy has run
  }
  std::memcpy(stage.get(), src.data(), n);
  CBT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), stage.get(), n, cudaMemcpyHostToDevice, stream_.get()));
  CBT_CUDA_CHECK(cudaEventRecord(done, stream_.get()));
}

void CudaBackend::copy_to_host(const Tensor& dst, const Tensor& src) {
  check_sizes(dst, src);
  check_on(dst, Device{}, "copy_to_host destination");
  check_on(src, device(), "copy_to_host source");
  if (dst.nbytes() == 0) return;
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  CBT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), dst.nbytes(), cudaMemcpyDeviceToHost, stream_.get()));
  CBT_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

void CudaBackend::copy(const Tensor& dst, const Tensor& src) {
  check_sizes(dst, src);
  check_on(dst, device(), "copy destination");
  check_on(src, device(), "copy source");
  if (dst.nbytes() == 0 || dst.data() == src.data()) return;
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  CBT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), dst.nbytes(), cudaMemcpyDeviceToDevice, stream_.get()));
}

void* CudaBackend::kernel_context() {
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  return &ctx_;
}

void CudaBackend::synchronize() {
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  CBT_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

std::shared_ptr<void> CudaBackend::record() {
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  cudaEvent_t e = events_->take();
  cudaError_t err = cudaEventRecord(e, stream_.get());
  if (err != cudaSuccess) events_->give(e);
  CBT_CUDA_CHECK(err);
  // The deleter holds the pool, so an event may outlive this backend.
  return std::shared_ptr<void>(e, [pool = events_](void* p) { pool->give(static_cast<cudaEvent_t>(p)); });
}

void CudaBackend::wait(const std::shared_ptr<void>& event) {
  if (!event) return;  // e.g. from a backend that waited on the host already
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  CBT_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), static_cast<cudaEvent_t>(event.get()), 0));
}

bool CudaBackend::begin_capture() {
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  CBT_CUDA_CHECK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
  return true;
}

std::shared_ptr<void> CudaBackend::end_capture() {
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  cudaGraph_t graph = nullptr;
  CBT_CUDA_CHECK(cudaStreamEndCapture(stream_.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CBT_CUDA_CHECK(err);
  return std::shared_ptr<void>(exec, [](void* p) { cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(p)); });
}

void CudaBackend::replay(const std::shared_ptr<void>& graph) {
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  CBT_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph.get()), stream_.get()));
}

size_t CudaBackend::reserved_bytes() const { return workspace_->mapped() + cublas_workspace_.bytes(); }

size_t CudaBackend::free_memory() const {
  CBT_CUDA_CHECK(cudaSetDevice(index_));
  size_t free_b = 0, total_b = 0;
  CBT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

std::unique_ptr<Backend> make_cuda_backend(int index) {
  cuda::ask_for_work_queues();  // before the first CUDA call below: the driver reads it at start-up
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw UserError(std::string("--device cuda:") + std::to_string(index) + " but no CUDA device is usable (" +
                    cudaGetErrorString(err) + "); use --device cpu");
  }
  if (index < 0 || index >= n)
    throw UserError("--device cuda:" + std::to_string(index) + " but only " + std::to_string(n) +
                    " CUDA device(s) are visible");
  return std::make_unique<CudaBackend>(index);
}

void set_tf32(Backend& backend, bool on) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  if (!cuda) {
    if (!on) return;  // fp32 is what the CPU computes anyway
    throw UserError("--precision tf32 needs a CUDA device (--device cuda)");
  }
  cuda->set_tf32(on);
}

}  // namespace cbt
