// One model replica trained on one backend: the training program (forward, loss, backward,
// optimizer update over flat buffers) and evaluation programs that share its weights.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "graph/autodiff.h"
#include "runtime/dataset.h"
#include "runtime/flat_buffer.h"
#include "runtime/inferencer.h"
#include "runtime/program.h"

namespace cbt {

enum class OptimizerKind { SGD, AdamW };

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::SGD;
  float lr = 0.01f;
  float momentum = 0.9f;      // SGD
  float weight_decay = 5e-4f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // AdamW
};

struct TrainerOptions {
  int64_t batch_size = 32;
  int64_t eval_batch_size = 500;
  OptimizerOptions optimizer;
  TrainingGraphOptions graph;
  uint64_t seed = 42;
};

struct EvalResult {
  double accuracy = 0;  // fraction in [0, 1]; 0 when the loss has no classes
  double loss = 0;      // mean loss over the set
  int64_t samples = 0;
};

class Trainer {
 public:
  Trainer(const Graph& model, const TrainerOptions& opt, Backend& backend);

  // One step on a host batch x (batch_size samples), y (labels); returns the loss before the
  // update.
  float step(const Tensor& x_host, const Tensor& y_host);
  EvalResult evaluate(const Dataset& data);
  // Forward pass in inference mode on host input of any batch size; returns the outputs.
  std::vector<Tensor> infer(const Tensor& x_host);

  void set_learning_rate(float lr);
  float learning_rate() const { return opt_.optimizer.lr; }
  // Host copies of every trained initializer (parameters and BatchNorm statistics).
  std::map<std::string, Tensor> trained_initializers() const;

  const TrainingGraph& training_graph() const { return tg_; }
  const Program& training_program() const { return *train_; }
  int64_t num_parameters() const { return param_layout_.values; }
  // Model input type for one sample batch, e.g. (32, 1, 28, 28).
  const ValueType& input_type() const { return input_type_; }
  int64_t steps() const { return steps_; }

 private:
  void upload_hyper();

  Graph model_;
  TrainerOptions opt_;
  Backend& backend_;
  TrainingGraph tg_;
  ValueType input_type_;
  FlatLayout param_layout_, buffer_layout_;
  FlatBuffer params_, grads_, moment1_, moment2_, buffers_;
  Tensor hyper_host_, hyper_;
  Tensor x_dev_, y_dev_;
  std::unique_ptr<Program> train_;
  std::unique_ptr<Inferencer> inferencer_;
  int64_t steps_ = 0;
};


}  // namespace cbt
