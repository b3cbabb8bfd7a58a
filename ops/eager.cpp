// Eager single-node execution on the CPU.
#include "ops/eager.h"

namespace cbt {

std::vector<ValueType> infer_node(const Node& node, const std::vector<Tensor>& inputs, int64_t opset) {
  const OpSchema* s = find_schema(node.domain, node.op_type);
  CBT_MODEL_CHECK(s, "unsupported op ", node.op_type);
  InferContext ctx{node, {}, {}, opset};
  for (const Tensor& t : inputs) {
    ctx.in.push_back(t.defined() ? ValueType{t.dtype(), t.shape()} : ValueType{});
    ctx.values.push_back(t.defined() && t.device().is_cpu() ? &t : nullptr);
  }
  return s->infer(ctx);
}

std::vector<Tensor> run_node(const Node& node, std::vector<Tensor> inputs, const EagerOptions& opt) {
  auto types = infer_node(node, inputs, opt.opset);
  KernelFn fn = find_kernel(node.domain, node.op_type, DeviceKind::CPU);
  CBT_CHECK(fn, "no CPU kernel for ", node.op_type);
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < types.size(); ++i) {
    bool wanted = i < node.outputs.size() && !node.outputs[i].empty();
    outputs.push_back(wanted && types[i].defined() ? Tensor(types[i].dtype, types[i].shape) : Tensor());
  }
  KernelContext ctx{node, inputs, outputs, opt.training, opt.seed};
  fn(ctx);
  return outputs;
}

}  // namespace cbt
