// Binding a graph to concrete input shapes: type inference and folding of constant
// (shape-computing) sub-graphs, so that every value has a static type.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"

namespace cbt {

struct BoundGraph {
  Graph graph;                             // folded nodes removed, folded values added
  std::map<std::string, ValueType> types;  // every value that exists in `graph`
  std::vector<std::string> folded;         // values computed at bind time
};

// Computes the outputs of one node on host tensors (the CPU kernels, injected by runtime/).
using NodeEvaluator = std::function<std::vector<Tensor>(const Node&, const std::vector<Tensor>&)>;

struct BindOptions {
  int64_t batch = 1;  // value of the batch dimension (dim 0) of every data input
  // Extra symbol values for other symbolic dims (e.g. "seq": 128).
  std::map<std::string, int64_t> symbols;
  // Keep the LSTM, GRU and RNN nodes that a fused kernel computes (RecurrentForm::fused: the
  // CUDA backend's cuDNN networks) whole; unroll the others (graph/recurrent.h). Off: unroll all.
  bool fused_recurrent = false;
};

// Concrete type of a graph input under `opt` (dim 0 is the batch).
ValueType bind_input_type(const ValueInfo& in, const BindOptions& opt);

// Infers the type of every value and folds nodes whose inputs are all constants that are
// not trainable (shape arithmetic, Constant-derived values). Throws ModelError naming the
// node on any inconsistency.
BoundGraph bind_graph(const Graph& g, const BindOptions& opt, const NodeEvaluator& eval);

// Whether `node` is rewritten into other ops when the graph is bound: LSTM, GRU and RNN (all
// forms on the CPU; recurrent.h), Einsum (einsum.h), OneHot (one_hot.h), GatherElements
// (gather_elements.h). Their kernels are those
// of the ops they become, which every device has. bind_graph checks that their inputs are
// produced before it rewrites them: the rewriters take every input's type as given.
bool rewritten_at_binding(const Node& node);
// Those ops with a one-line summary each, for `cbtrain ops`.
std::vector<std::pair<std::string, std::string>> binding_rewrite_summaries();

// Infers the output types of `node` from `types` and constant `values` (no folding).
std::vector<ValueType> infer_types(const Node& node, const std::map<std::string, ValueType>& types,
                                   const std::map<std::string, Tensor>& values, int64_t opset);

}  // namespace cbt
