// An executable node list on one backend: values live in caller-bound tensors or in one
// planned arena; each step calls its registered kernel.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph/planner.h"
#include "ops/kernel.h"
#include "runtime/backend.h"

namespace cbt {

struct ProgramSpec {
  std::vector<Node> nodes;
  std::map<std::string, ValueType> types;
  std::map<std::string, Tensor> constants;  // host values of initializers not bound externally
  std::map<std::string, Tensor> external;   // caller-owned device tensors (inputs, params, grads)
  std::set<std::string> keep_alive;         // read after run() (loss, prediction)
  bool training = false;
  // Record the steps once as a work graph (CUDA graph) and replay it: one launch per run.
  // Ignored for programs with random ops (their seed changes every run) and on the CPU.
  bool use_graph = false;
};

class Program {
 public:
  Program(ProgramSpec spec, Backend& backend);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Runs every step in order; `seed` feeds the random ops of this run.
  void run(uint64_t seed);
  // A value's device tensor (external, constant or planned).
  const Tensor& value(const std::string& name) const;
  const MemoryPlan& plan() const { return plan_; }
  bool replays_graph() const { return graph_ != nullptr; }

 private:
  struct Step {
    const Node* node;
    KernelFn fn;
    std::vector<Tensor> inputs, outputs;
    std::shared_ptr<std::shared_ptr<void>> state;  // the kernel's cache, shared by kStateOfAttr
  };
  std::vector<Node> nodes_;
  Backend& backend_;
  bool training_;
  MemoryPlan plan_;
  std::shared_ptr<std::byte> arena_;
  std::map<std::string, Tensor> values_;
  std::vector<Step> steps_;
  bool use_graph_ = false;
  int64_t runs_ = 0;
  std::shared_ptr<void> graph_;
  void run_steps(uint64_t seed);
};

// Every op of `g` that has no schema, or no kernel on `device`, in one sorted list.
std::vector<std::string> unsupported_ops(const Graph& g, DeviceKind device);
// Throws ModelError listing every unsupported op at once.
void check_supported(const Graph& g, Device device);

}  // namespace cbt
