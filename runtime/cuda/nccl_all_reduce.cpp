// AllReduce across the GPUs of one process with NCCL (communicators from ncclCommInitAll).
#include <nccl.h>

#include "runtime/collective.h"
#include "runtime/cuda/cuda_backend.h"

namespace cbt {

namespace {

#define CBT_NCCL_CHECK(expr)                                                                  \
  do {                                                                                        \
    ncclResult_t cbt_r_ = (expr);                                                             \
    if (cbt_r_ != ncclSuccess)                                                                \
      ::cbt::detail::throw_internal(#expr, __FILE__, __LINE__, ncclGetErrorString(cbt_r_));   \
  } while (0)

class NcclAllReduce final : public AllReduce {
 public:
  explicit NcclAllReduce(std::vector<CudaBackend*> backends) : backends_(std::move(backends)) {
    std::vector<int> devs;
    for (auto* b : backends_) devs.push_back(b->device().index);
    comms_.resize(devs.size());
    CBT_NCCL_CHECK(ncclCommInitAll(comms_.data(), static_cast<int>(devs.size()), devs.data()));
  }
  ~NcclAllReduce() override {
    for (ncclComm_t c : comms_) ncclCommDestroy(c);
  }
  void sum(const std::vector<Tensor>& bufs) override {
    CBT_CHECK(bufs.size() == backends_.size(), "all-reduce of ", bufs.size(), " buffers over ",
              backends_.size(), " devices");
    CBT_NCCL_CHECK(ncclGroupStart());
    for (size_t i = 0; i < bufs.size(); ++i)
      CBT_NCCL_CHECK(ncclAllReduce(bufs[i].data(), bufs[i].data(), static_cast<size_t>(bufs[i].numel()),
                                   ncclFloat, ncclSum, comms_[i], backends_[i]->stream()));
    CBT_NCCL_CHECK(ncclGroupEnd());
  }

 private:
  std::vector<CudaBackend*> backends_;
  std::vector<ncclComm_t> comms_;
};

}  // namespace

std::unique_ptr<AllReduce> make_cuda_all_reduce(const std::vector<Backend*>& backends) {
  std::vector<CudaBackend*> cuda;
  for (Backend* b : backends) {
    auto* c = dynamic_cast<CudaBackend*>(b);
    if (!c) throw UserError("several devices need CUDA backends (--gpus)");
    for (CudaBackend* other : cuda)
      if (other->device().index == c->device().index)
        throw UserError("--gpus lists GPU " + std::to_string(c->device().index) + " twice");
    cuda.push_back(c);
  }
  return std::make_unique<NcclAllReduce>(std::move(cuda));
}

}  // namespace cbt
