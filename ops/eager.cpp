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

void EagerEmitter::run(const Node& n) {
  std::vector<Tensor> in;
  for (const auto& name : n.inputs) in.push_back(name.empty() ? Tensor() : values.at(name));
  std::vector<Tensor> out = run_node(n, in, opt_);
  for (size_t i = 0; i < n.outputs.size() && i < out.size(); ++i)
    if (!n.outputs[i].empty()) values[n.outputs[i]] = out[i];
}

std::vector<std::string> EagerEmitter::emit(const std::string& op_type, const std::string& domain,
                                            std::vector<std::string> inputs, size_t num_outputs, Attributes attrs,
                                            const std::string& hint) {
  Node n = new_node(op_type, domain, std::move(inputs), num_outputs, std::move(attrs), hint);
  run(n);
  return n.outputs;
}

const ValueType& EagerEmitter::type(const std::string& v) const {
  auto it = types_.find(v);
  if (it == types_.end()) {
    const Tensor& t = values.at(v);
    it = types_.emplace(v, t.defined() ? ValueType{t.dtype(), t.shape()} : ValueType{}).first;
  }
  return it->second;
}

}  // namespace cbt
