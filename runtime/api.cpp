// The public C++ API (include/cbtrain/cbtrain.h) over the importer, trainer and exporter.
#include <cmath>
#include <cstring>
#include <iostream>
#include <sstream>

#include "cbtrain/cbtrain.h"
#include "onnx_import/model_io.h"
#include "runtime/data_source.h"
#include "runtime/fit.h"
#include "runtime/inferencer.h"
#include "runtime/trainer.h"

namespace cbtrain {

struct Model::Impl {
  cbt::ImportedModel model;
  std::map<std::string, cbt::Tensor> trained;  // empty until train()
};

namespace {
// The options that the command line's checks would refuse, refused alike (as user errors that
// name the option) before anything is read: NaN and infinities pass comparisons unnoticed and
// would only show as a diverged loss.
void check_options(const TrainOptions& o) {
  auto fail = [](const std::string& what) { throw cbt::UserError("TrainOptions: " + what); };
  auto finite_float = [](double v) { return std::isfinite(v) && std::isfinite(static_cast<float>(v)); };
  if (o.learners < 1 || o.learners > 64) fail("learners must be from 1 to 64, not " + std::to_string(o.learners));
  if (o.batch_size < 1) fail("batch_size must be at least 1, not " + std::to_string(o.batch_size));
  if (o.epochs < 1) fail("epochs must be at least 1, not " + std::to_string(o.epochs));
  if (o.max_steps < -1) fail("max_steps must be -1 (all epochs) or 0 or more, not " + std::to_string(o.max_steps));
  if (!finite_float(o.lr) || o.lr <= 0) fail("lr must be a finite number above 0, not " + std::to_string(o.lr));
  if (!finite_float(o.momentum) || o.momentum < 0 || o.momentum > 1)
    fail("momentum must be in [0, 1], not " + std::to_string(o.momentum));
  if (!finite_float(o.weight_decay) || o.weight_decay < 0)
    fail("weight_decay must be a finite number, 0 or more, not " + std::to_string(o.weight_decay));
  cbt::parse_data_format(o.data_format, "TrainOptions: data_format");
  if (o.lr_schedule != "constant" && o.lr_schedule != "cosine")
    fail("lr_schedule must be constant or cosine, not '" + o.lr_schedule + "'");
}

// Runs `f`, turning cbtrain's exceptions into cbtrain::Error.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const cbt::UserError& e) {
    throw Error(e.what(), true);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(e.what(), false);
  }
}
}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::load(const std::string& onnx_path) {
  return guarded([&] {
    auto impl = std::make_unique<Impl>();
    impl->model = cbt::load_model(onnx_path);
    return Model(std::move(impl));
  });
}

TrainReport Model::train(const TrainOptions& o) {
  return guarded([&] {
    check_options(o);
    cbt::Device device = cbt::parse_device(o.device);
    cbt::check_supported(impl_->model.graph, device);
    cbt::DataOptions data_options;
    data_options.dir = o.data_dir;
    data_options.format = cbt::parse_data_format(o.data_format);
    data_options.seed = o.seed;
    data_options.sample_shape = cbt::model_sample_shape(impl_->model.graph);
    cbt::TrainTestData data = cbt::load_data(data_options);
    cbt::TrainerOptions to;
    to.batch_size = o.batch_size;
    to.learners = o.learners;
    to.algorithm = o.learners > 1 ? cbt::Algorithm::Sma : cbt::Algorithm::Ssgd;
    to.device = device;
    to.seed = o.seed;
    to.deterministic = o.deterministic;
    to.optimizer.lr = static_cast<float>(o.lr);
    to.optimizer.momentum = static_cast<float>(o.momentum);
    to.optimizer.weight_decay = static_cast<float>(o.weight_decay);
    cbt::check_round_fits(o.batch_size, o.learners, data.train.size(), "TrainOptions: batch_size");
    cbt::Trainer trainer(impl_->model.graph, to);
    cbt::FitOptions fo;
    fo.epochs = o.epochs;
    fo.max_steps = o.max_steps;
    fo.seed = o.seed;
    fo.log_every = o.verbose ? 200 : 0;
    fo.schedule.kind = cbt::parse_lr_schedule(o.lr_schedule);
    fo.schedule.base_lr = static_cast<float>(o.lr);
    std::ostringstream quiet;
    cbt::FitResult r = cbt::fit(trainer, data, fo, o.verbose ? std::cout : quiet);
    impl_->trained = trainer.trained_initializers();
    for (const auto& [name, t] : impl_->trained) impl_->model.graph.initializers[name] = t;
    TrainReport rep;
    rep.test_accuracy = r.final_eval.accuracy;
    rep.test_loss = r.final_eval.loss;
    rep.steps = r.steps;
    rep.train_seconds = r.train_seconds;
    return rep;
  });
}

std::vector<float> Model::predict(const std::vector<float>& inputs, int64_t batch) const {
  return guarded([&] {
    const cbt::Graph& g = impl_->model.graph;
    if (batch < 1 || inputs.empty() || inputs.size() % static_cast<size_t>(batch) != 0)
      throw cbt::UserError("predict: " + std::to_string(inputs.size()) + " values do not split into " +
                           std::to_string(batch) + " samples");
    const std::vector<cbt::Dim>& dims = g.inputs.at(0).dims;
    if (dims.empty()) throw cbt::UserError("predict: the model input has no batch dimension");
    cbt::Shape shape{batch};
    int64_t per = 1;
    for (size_t i = 1; i < dims.size(); ++i) {
      if (!dims[i].is_static()) throw cbt::UserError("predict: only the batch dimension may vary");
      shape.push_back(dims[i].value);
      per *= dims[i].value;
    }
    if (per * batch != static_cast<int64_t>(inputs.size()))
      throw cbt::UserError("predict: the model takes " + std::to_string(per) + " values per sample, got " +
                           std::to_string(inputs.size() / batch));
    cbt::Tensor x(cbt::DType::Float32, shape);
    std::memcpy(x.data(), inputs.data(), inputs.size() * sizeof(float));
    auto backend = cbt::make_backend(cbt::Device{});
    cbt::Inferencer inf(g, *backend);
    cbt::Tensor y = inf.run(x).at(0);
    const float* p = y.ptr<float>();
    return std::vector<float>(p, p + y.numel());
  });
}

void Model::save(const std::string& onnx_path) const {
  guarded([&] {
    cbt::save_model(impl_->model, impl_->trained, onnx_path);
    return 0;
  });
}

std::string version() { return CBT_VERSION; }

}  // namespace cbtrain
