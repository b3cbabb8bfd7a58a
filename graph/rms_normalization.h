// RMSNormalization (opset 23), rewritten when the graph is bound (X's rank is known only then)
// into the ops it is made of, so that its gradient and CUDA kernels are those ops': Mul(X, X),
// ReduceMean over axis and the axes after it, Add epsilon, Sqrt, Div, Mul by scale. It runs in
// X's type (stash_type is not followed: float32 stays float32, float64 float64).
#pragma once
#include <map>
#include <string>
#include <utility>

#include "graph/expansion.h"
#include "graph/ir.h"

namespace cbt {

bool is_rms_normalization(const Node& n);

// Throws ModelError naming the node for what it does not take. `types` holds every input's type
// (bind_graph checks).
Expansion expand_rms_normalization(const Node& n, const std::map<std::string, ValueType>& types,
                                   const FreshName& fresh);

// For `cbtrain ops`: the op and a one-line summary.
std::pair<std::string, std::string> rms_normalization_op_summary();

}  // namespace cbt
