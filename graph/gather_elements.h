// GatherElements, rewritten when the graph is bound (shapes are known only then) into a one-hot
// selection: Equal of the indices against a constant range along a new axis, Where of the data
// there, ReduceSum over it. Gradients reach the data through Where; memory is the output's size
// times the gathered axis' (fine for a class axis, heavy for a vocabulary).
#pragma once
#include <map>
#include <string>
#include <utility>

#include "graph/expansion.h"
#include "graph/ir.h"

namespace cbt {

bool is_gather_elements(const Node& n);

// Throws ModelError naming the node for ranks that differ, an axis out of range, indices larger
// than the data along another axis. `types` holds every input's type (bind_graph checks).
Expansion expand_gather_elements(const Node& n, const std::map<std::string, ValueType>& types, int64_t opset,
                                 const FreshName& fresh);

// For `cbtrain ops`: the op and a one-line summary.
std::pair<std::string, std::string> gather_elements_op_summary();

}  // namespace cbt
