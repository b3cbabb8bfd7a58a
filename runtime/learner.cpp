// Learner: replica buffers, the bound training program, batch upload.
#include "runtime/learner.h"

namespace cbt {

Learner::Learner(const TrainingGraph& tg, const FlatLayout& params, const FlatLayout& buffers, bool second_moment,
                 std::unique_ptr<Backend> backend, bool use_graph)
    : backend_(std::move(backend)), tg_(tg), use_graph_(use_graph) {
  Backend& be = *backend_;
  params_ = FlatBuffer(params, be);
  grads_ = FlatBuffer(params, be);
  moment1_ = FlatBuffer(params, be);
  if (second_moment) moment2_ = FlatBuffer(params, be);
  buffers_ = FlatBuffer(buffers, be);
  correction_ = FlatBuffer(params, be);
  for (const auto& e : params.entries) be.copy_from_host(params_.view(e.name), tg.graph.initializers.at(e.name));
  for (const auto& e : buffers.entries) be.copy_from_host(buffers_.view(e.name), tg.graph.initializers.at(e.name));

  const ValueType& xt = tg.types.at(tg.data_input);
  const ValueType& yt = tg.types.at(tg.labels_input);
  x_ = be.empty(xt.dtype, xt.shape);
  y_ = be.empty(yt.dtype, yt.shape);
}

void Learner::build_program(const std::vector<LocalUpdate>& updates) {
  Backend& be = *backend_;
  const TrainingGraph& tg = tg_;
  ProgramSpec spec;
  spec.nodes = tg.graph.nodes;
  spec.types = tg.types;
  spec.external[tg.data_input] = x_;
  spec.external[tg.labels_input] = y_;
  for (const auto& [n, v] : params_.views()) spec.external[n] = v;
  for (const auto& [n, v] : buffers_.views()) spec.external[n] = v;
  for (const auto& [p, g] : tg.grads) spec.external[g] = grads_.view(p);
  for (const auto& [n, t] : tg.graph.initializers)
    if (!spec.external.count(n)) spec.constants[n] = t;
  // The local updates are a program of their own (and CUDA graph), run after the gradient:
  // the trainer may make them wait for the central model without holding up the next
  // forward pass.
  ProgramSpec upd;
  for (size_t u = 0; u < updates.size(); ++u) {
    const LocalUpdate& update = updates[u];
    if (update.op_type.empty()) continue;
    Node n;
    n.name = "local_update" + std::to_string(u);
    n.domain = kCbtDomain;
    n.op_type = update.op_type;
    n.attrs = update.attrs;
    for (size_t i = 0; i < update.operands.size(); ++i) {
      n.inputs.push_back("@update" + std::to_string(u) + "_" + std::to_string(i));
      upd.external[n.inputs.back()] = update.operands[i];
    }
    upd.nodes.push_back(std::move(n));
  }
  spec.keep_alive = {tg.loss};
  spec.training = true;
  spec.use_graph = use_graph_;
  program_ = std::make_unique<Program>(std::move(spec), be);
  if (upd.nodes.empty()) return;
  upd.training = true;
  upd.use_graph = use_graph_;
  update_ = std::make_unique<Program>(std::move(upd), be);
}

void Learner::set_batch(const Tensor& x_host, const Tensor& y_host) {
  CBT_CHECK(x_host.numel() == x_.numel() && y_host.numel() == y_.numel(), "batch has ", x_host.numel(),
            " values, the learner expects ", x_.numel());
  backend_->copy_from_host(x_, x_host.reshaped(x_.shape()));
  backend_->copy_from_host(y_, y_host.reshaped(y_.shape()));
}

void Learner::run_gradient(uint64_t seed) { program_->run(seed); }

void Learner::run_update() {
  if (update_) update_->run(0);
}

float Learner::loss() {
  Tensor l = backend_->download(program_->value(tg_.loss));
  return static_cast<float>(l.at_f64(0));
}

void run_kernel(Backend& backend, const std::string& op_type, std::vector<Tensor> inputs, std::vector<Tensor> outputs,
                Attributes attrs) {
  Node n;
  n.op_type = op_type;
  n.domain = kCbtDomain;
  n.name = op_type;
  n.attrs = std::move(attrs);
  KernelFn fn = find_kernel(kCbtDomain, op_type, backend.device().kind);
  CBT_CHECK(fn, "no ", backend.device().str(), " kernel for ", op_type);
  KernelContext ctx{n, inputs, outputs, false, 0, backend.kernel_context(), nullptr};
  fn(ctx);
}

}  // namespace cbt
