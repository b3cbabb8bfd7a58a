// Runs one node at once on host tensors: infers output types, allocates, calls the kernel.
// Used for constant folding at bind time and by the op test harness.
#pragma once
#include <map>
#include <string>
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

// Values by name on the host, and nodes run on them at once: the gradient emitter of eager
// backward passes (the op tests' gradient checks, the CPU's recurrent gradient).
class EagerEmitter : public GradEmitter {
 public:
  explicit EagerEmitter(const EagerOptions& opt = {}) : opt_(opt) {}
  std::map<std::string, Tensor> values;

  // Runs `n` on `values` (an empty input name: an omitted input) and stores its outputs.
  void run(const Node& n);
  std::vector<std::string> emit(const std::string& op_type, const std::string& domain, std::vector<std::string> inputs,
                                size_t num_outputs, Attributes attrs, const std::string& hint) override;
  const ValueType& type(const std::string& v) const override;
  std::string fresh(const std::string& hint) override { return hint + "#" + std::to_string(counter_++); }

 private:
  EagerOptions opt_;
  mutable std::map<std::string, ValueType> types_;
  int counter_ = 0;
};

}  // namespace cbt
