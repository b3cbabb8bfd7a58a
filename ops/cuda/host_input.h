// The values of a small constant input (Resize's scales, Trilu's k, CumSum's axis) on the
// host, for kernels whose launch depends on them. The schemas require such inputs to be
// constants, so a device copy is read once (reading stalls the stream) and then kept in the
// node's state.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "ops/cuda/cuda_context.h"
#include "ops/kernel.h"

namespace cbt::cuda {

// Input i as T values (its dtype must be T's); empty when the input is omitted or empty.
template <class T>
std::vector<T> host_input(KernelContext& ctx, size_t i) {
  if (!ctx.has_in(i) || ctx.in(i).numel() == 0) return {};
  const Tensor& t = ctx.in(i);
  CBT_CHECK(t.dtype() == dtype_of<T>(), "input ", i, " of ", ctx.node.describe(), " has an unexpected type");
  if (t.device().is_cpu()) return {t.ptr<T>(), t.ptr<T>() + t.numel()};
  if (ctx.state && *ctx.state) return *static_cast<std::vector<T>*>(ctx.state->get());
  auto& cc = context_of(ctx.device_ctx);
  std::vector<T> host(t.numel());
  CBT_CUDA_CHECK(cudaMemcpyAsync(host.data(), t.data(), t.nbytes(), cudaMemcpyDeviceToHost, cc.stream));
  CBT_CUDA_CHECK(cudaStreamSynchronize(cc.stream));
  if (ctx.state) *ctx.state = std::make_shared<std::vector<T>>(host);
  return host;
}

}  // namespace cbt::cuda
