// Runs one node at once on host tensors: infers output types, allocates, calls the kernel.
// Used for constant folding at bind time and by the op test harness.
#pragma once
#include <vector>

#include "graph/op_schema.h"
#include "ops/kernel.h"

namespace cbt {

struct EagerOptions {
  bool training = false;
  uint64_t seed = 0;
  int64_t opset = 17;
};

// Output types of `node` for the given inputs (constant values are passed to inference).
std::vector<ValueType> infer_node(const Node& node, const std::vector<Tensor>& inputs, int64_t opset);

std::vector<Tensor> run_node(const Node& node, std::vector<Tensor> inputs, const EagerOptions& opt = {});

}  // namespace cbt
