// Trainer: builds the training graph for the batch size, lays out flat buffers, runs steps.
#include "runtime/trainer.h"

#include <cmath>
#include <cstring>


namespace cbt {

Trainer::Trainer(const Graph& model, const TrainerOptions& opt, Backend& backend)
    : model_(model), opt_(opt), backend_(backend) {
  check_supported(model_, backend.device());
  BindOptions bo;
  bo.batch = opt.batch_size;
  BoundGraph bound = bind_graph(model_, bo, cpu_evaluator(model_.opset));
  tg_ = build_training_graph(bound, opt.graph);
  input_type_ = tg_.types.at(tg_.data_input);

  // Flat buffers: parameters, their gradients, optimizer moments, BatchNorm statistics.
  param_layout_ = FlatLayout::of(tg_.params, tg_.types);
  buffer_layout_ = FlatLayout::of(tg_.buffers, tg_.types);
  params_ = FlatBuffer(param_layout_, backend);
  grads_ = FlatBuffer(param_layout_, backend);
  moment1_ = FlatBuffer(param_layout_, backend);
  if (opt.optimizer.kind == OptimizerKind::AdamW) moment2_ = FlatBuffer(param_layout_, backend);
  buffers_ = FlatBuffer(buffer_layout_, backend);
  for (const auto& n : tg_.params) backend.copy_from_host(params_.view(n), tg_.graph.initializers.at(n));
  for (const auto& n : tg_.buffers) backend.copy_from_host(buffers_.view(n), tg_.graph.initializers.at(n));

  hyper_host_ = Tensor(DType::Float32, {8});
  hyper_ = backend.empty(DType::Float32, {8});
  upload_hyper();

  x_dev_ = backend.empty(input_type_.dtype, input_type_.shape);
  const ValueType& yt = tg_.types.at(tg_.labels_input);
  y_dev_ = backend.empty(yt.dtype, yt.shape);

  ProgramSpec spec;
  spec.nodes = tg_.graph.nodes;
  Node update;
  update.name = "optimizer_update";
  update.domain = kCbtDomain;
  if (opt.optimizer.kind == OptimizerKind::SGD) {
    update.op_type = "SGDMomentum";
    update.inputs = {"@params", "@grads", "@moment1", "@hyper"};
  } else {
    update.op_type = "AdamW";
    update.inputs = {"@params", "@grads", "@moment1", "@moment2", "@hyper"};
    spec.external["@moment2"] = moment2_.flat();
  }
  if (!tg_.params.empty()) spec.nodes.push_back(update);
  spec.types = tg_.types;
  spec.external["@params"] = params_.flat();
  spec.external["@grads"] = grads_.flat();
  spec.external["@moment1"] = moment1_.flat();
  spec.external["@hyper"] = hyper_;
  spec.external[tg_.data_input] = x_dev_;
  spec.external[tg_.labels_input] = y_dev_;
  for (const auto& [n, v] : params_.views()) spec.external[n] = v;
  for (const auto& [n, v] : buffers_.views()) spec.external[n] = v;
  for (const auto& [p, g] : tg_.grads) spec.external[g] = grads_.view(p);
  for (const auto& [n, t] : tg_.graph.initializers)
    if (!spec.external.count(n)) spec.constants[n] = t;
  spec.keep_alive = {tg_.loss};
  spec.training = true;
  train_ = std::make_unique<Program>(std::move(spec), backend);

  std::map<std::string, Tensor> weights = params_.views();
  weights.insert(buffers_.views().begin(), buffers_.views().end());
  inferencer_ = std::make_unique<Inferencer>(model_, backend, std::move(weights));
}

void Trainer::upload_hyper() {
  float* h = hyper_host_.ptr<float>();
  const OptimizerOptions& o = opt_.optimizer;
  if (o.kind == OptimizerKind::SGD) {
    h[0] = o.lr, h[1] = o.momentum, h[2] = o.weight_decay;
  } else {
    h[0] = o.lr, h[1] = o.beta1, h[2] = o.beta2, h[3] = o.eps, h[4] = o.weight_decay;
    h[5] = static_cast<float>(steps_ + 1);
  }
  backend_.copy_from_host(hyper_, hyper_host_);
}

void Trainer::set_learning_rate(float lr) {
  opt_.optimizer.lr = lr;
  upload_hyper();
}

float Trainer::step(const Tensor& x_host, const Tensor& y_host) {
  CBT_CHECK(x_host.numel() == x_dev_.numel(), "step: batch has ", x_host.numel(),
            " elements, the program expects ", x_dev_.numel());
  backend_.copy_from_host(x_dev_, x_host.reshaped(x_dev_.shape()));
  backend_.copy_from_host(y_dev_, y_host.reshaped(y_dev_.shape()));
  if (opt_.optimizer.kind == OptimizerKind::AdamW) upload_hyper();
  train_->run(opt_.seed * 1000003u + static_cast<uint64_t>(steps_));
  ++steps_;
  Tensor loss = backend_.download(train_->value(tg_.loss));
  return static_cast<float>(loss.at_f64(0));
}

std::vector<Tensor> Trainer::infer(const Tensor& x_host) { return inferencer_->run(x_host); }

EvalResult Trainer::evaluate(const Dataset& data) {
  EvalResult r;
  const std::string& pred = tg_.prediction;
  size_t pred_index = 0;
  for (size_t i = 0; i < model_.outputs.size(); ++i)
    if (model_.outputs[i].name == pred) pred_index = i;
  int64_t n = data.size(), per = data.sample_numel();
  int64_t correct = 0;
  double loss_sum = 0;
  for (int64_t start = 0; start < n; start += opt_.eval_batch_size) {
    int64_t b = std::min(opt_.eval_batch_size, n - start);
    Tensor x = Tensor::view(DType::Float32, {b, per},
                            data.images.ptr<float>() + start * per, Device{}, data.images.storage());
    Tensor out = infer(x)[pred_index];
    int64_t classes = out.numel() / b;
    for (int64_t i = 0; i < b; ++i) {
      // Argmax of the row, and the cross-entropy of its softmax (logits or probabilities
      // give the same argmax).
      const float* row = out.ptr<float>() + i * classes;
      int64_t arg = 0;
      float mx = row[0];
      for (int64_t c = 1; c < classes; ++c)
        if (row[c] > mx) mx = row[c], arg = c;
      int64_t label = data.labels.ptr<int64_t>()[start + i];
      correct += (arg == label);
      double z = 0;
      for (int64_t c = 0; c < classes; ++c) z += std::exp(static_cast<double>(row[c] - mx));
      if (label < classes) loss_sum += std::log(z) - (row[label] - mx);
    }
  }
  r.samples = n;
  r.accuracy = n ? static_cast<double>(correct) / n : 0;
  r.loss = n ? loss_sum / n : 0;
  return r;
}

std::map<std::string, Tensor> Trainer::trained_initializers() const {
  std::map<std::string, Tensor> out;
  for (const auto& [n, v] : params_.views()) out[n] = backend_.download(v);
  for (const auto& [n, v] : buffers_.views()) out[n] = backend_.download(v);
  return out;
}

}  // namespace cbt
