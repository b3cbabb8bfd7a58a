// One node's CUDA kernel run once on a backend, for the kernel tests that compare it with the
// CPU's: inputs uploaded, outputs allocated, both downloaded after.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "graph/errors.h"
#include "ops/kernel.h"
#include "runtime/backend.h"
#include "runtime/cuda/cuda_backend.h"

namespace cbt::test {

// A GPU backend whose kernels know `learners` learners share the GPU (as a trainer's do:
// BatchNorm's blocks depend on it); one a count, kept for the test program's life.
inline Backend& gpu(int learners = 1) {
  static std::map<int, Backend*> backends;
  Backend*& b = backends[learners];
  if (!b) {
    b = make_cuda_backend(0).release();
    b->set_conv_algos(ConvAlgos::Engines, learners);
  }
  return *b;
}

// Runs `node`'s CUDA kernel on device copies of `in` (updated in place where the op does so:
// BatchNorm's running statistics) with outputs of `out_types` (an undefined type: that output
// absent). Returns the outputs, then the inputs, downloaded (undefined where absent).
inline std::vector<Tensor> run_cuda_node(Backend& b, const Node& node, const std::vector<Tensor>& in,
                                         const std::vector<ValueType>& out_types) {
  std::vector<Tensor> dev_in, out;
  for (const Tensor& t : in) dev_in.push_back(t.defined() ? b.upload(t) : Tensor());
  for (const ValueType& t : out_types) out.push_back(t.defined() ? b.empty(t.dtype, t.shape) : Tensor());
  KernelFn fn = find_kernel(node.domain, node.op_type, DeviceKind::CUDA);
  CBT_CHECK(fn, "no CUDA kernel for ", node.op_type);
  std::shared_ptr<void> state;
  KernelContext ctx{node, dev_in, out, true, 1, b.kernel_context(), &state};
  fn(ctx);
  b.synchronize();
  std::vector<Tensor> host;
  for (const Tensor& t : out) host.push_back(t.defined() ? b.download(t) : Tensor());
  for (const Tensor& t : dev_in) host.push_back(t.defined() ? b.download(t) : Tensor());
  return host;
}

}  // namespace cbt::test
