// Inferencer: bind per batch size, plan, run.
#include "runtime/inferencer.h"

#include "ops/eager.h"

namespace cbt {

NodeEvaluator cpu_evaluator(int64_t opset) {
  return [opset](const Node& n, const std::vector<Tensor>& in) {
    EagerOptions eo;
    eo.opset = opset;
    return run_node(n, in, eo);
  };
}

Inferencer::Inferencer(const Graph& model, Backend& backend, std::map<std::string, Tensor> weights)
    : model_(model), backend_(backend), weights_(std::move(weights)) {
  check_supported(model_, backend.device());
  CBT_MODEL_CHECK(model_.inputs.size() == 1, "the model has ", model_.inputs.size(),
                  " inputs; cbtrain runs models with one data input");
  // Trained-or-not weights are uploaded once and shared by the programs of every batch size.
  for (const auto& [name, t] : model_.initializers)
    if (!weights_.count(name) && is_floating(t.dtype()) && !model_.constant_initializers.count(name))
      weights_[name] = backend.upload(t);
}

Program& Inferencer::program(int64_t batch) {
  auto it = programs_.find(batch);
  if (it != programs_.end()) return *it->second;
  BindOptions bo;
  bo.batch = batch;
  bo.fused_recurrent = backend_.device().kind == DeviceKind::CUDA;  // cuDNN runs the recurrent layers
  BoundGraph bound = bind_graph(model_, bo, cpu_evaluator(model_.opset));
  ProgramSpec spec;
  spec.nodes = bound.graph.nodes;
  spec.types = bound.types;
  spec.external = weights_;
  for (const auto& [n, t] : bound.graph.initializers)
    if (!spec.external.count(n)) spec.constants[n] = t;
  const std::string& in = model_.inputs[0].name;
  spec.external[in] = backend_.empty(bound.types.at(in).dtype, bound.types.at(in).shape);
  for (const auto& o : model_.outputs) spec.keep_alive.insert(o.name);
  return *(programs_[batch] = std::make_unique<Program>(std::move(spec), backend_));
}

std::vector<Tensor> Inferencer::run(const Tensor& x_host) {
  int64_t batch = x_host.rank() == 0 ? 1 : x_host.dim(0);
  Program& p = program(batch);
  const Tensor& x = p.value(model_.inputs[0].name);
  CBT_MODEL_CHECK(x.numel() == x_host.numel() && x.dtype() == x_host.dtype(), "input has ", dtype_name(x_host.dtype()),
                  " shape ", shape_str(x_host.shape()), "; the model expects ", dtype_name(x.dtype()), " ",
                  shape_str(x.shape()));
  backend_.copy_from_host(x, x_host.reshaped(x.shape()));
  p.run(0);
  std::vector<Tensor> out;
  for (const auto& o : model_.outputs) out.push_back(backend_.download(p.value(o.name)));
  return out;
}

}  // namespace cbt
