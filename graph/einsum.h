// Einsum, rewritten when the graph is bound (its operands' ranks are known only then) into
// Transpose, Reshape, MatMul and ReduceSum: their gradients and CUDA kernels are Einsum's.
// Operands are combined left to right; each pair becomes one batched matrix product of its
// shared labels (batch: kept in the result; contracted: summed), labels only one side needs
// are summed first. A label repeated within an operand takes its diagonal first (Mul by an
// identity over the two dims, ReduceSum of the later). Ellipses broadcast from the right; the
// implicit output (no "->") is the ellipsis, then the labels seen once, sorted.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/expansion.h"
#include "graph/ir.h"

namespace cbt {

bool is_einsum(const Node& n);

// Throws ModelError naming the node for what it does not take: a label whose sizes differ
// (size-1 broadcasting of a label), operands that are not float. `types` holds every input's type (bind_graph checks).
Expansion expand_einsum(const Node& n, const std::map<std::string, ValueType>& types, int64_t opset,
                        const FreshName& fresh);

// For `cbtrain ops`: the op and a one-line summary.
std::pair<std::string, std::string> einsum_op_summary();

}  // namespace cbt
