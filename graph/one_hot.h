// OneHot, rewritten when the graph is bound (the indices' rank is known only then) into Cast,
// Less, Add, Where, Reshape, Equal against a constant range and Where of the on/off values.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "graph/expansion.h"
#include "graph/ir.h"

namespace cbt {

bool is_one_hot(const Node& n);

// The value of an initializer or folded constant by name (null for values computed from data).
using ConstantOf = std::function<const Tensor*(const std::string&)>;

// Depth must be a constant (an initializer of any type: it is read, never trained). Throws
// ModelError naming the node for a depth that is not a positive constant, an axis out of
// range, values that are not two. `types` holds every input's type (bind_graph checks).
Expansion expand_one_hot(const Node& n, const std::map<std::string, ValueType>& types, const ConstantOf& constant_of,
                         const FreshName& fresh);

// Writes the bool mask of the one-hot positions: `indices` (of `type`; cast to int64, negative
// ones counted from `depth`) with a new axis of `depth` at `axis` (0..rank), true where the
// position along it equals the index. Its name. (GatherElements selects with it too.)
std::string write_one_hot_mask(ExpansionWriter& w, const std::string& indices, const ValueType& type, int64_t depth,
                               int64_t axis);

// For `cbtrain ops`: the op and a one-line summary.
std::pair<std::string, std::string> one_hot_op_summary();

}  // namespace cbt
