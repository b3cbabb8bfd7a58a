// Forward passes in inference mode, one program per batch size, over weights that are
// either the model's own (uploaded once) or views shared with a trainer.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/bind.h"
#include "runtime/program.h"

namespace cbt {

class Inferencer {
 public:
  // `weights`: device tensors to use for these initializers (others are uploaded constants).
  Inferencer(const Graph& model, Backend& backend, std::map<std::string, Tensor> weights = {});
  // Host input with the batch in dim 0; returns host copies of every model output.
  std::vector<Tensor> run(const Tensor& x_host);

 private:
  Program& program(int64_t batch);
  const Graph& model_;
  Backend& backend_;
  std::map<std::string, Tensor> weights_;
  std::map<int64_t, std::unique_ptr<Program>> programs_;
};

// Evaluates nodes on host tensors with the CPU kernels (bind-time folding).
NodeEvaluator cpu_evaluator(int64_t opset);

}  // namespace cbt
