// RotaryEmbedding (opset 23), rewritten when the graph is bound (its input's shape is known only
// then) into the ops it is made of, so that its gradient and CUDA kernels are those ops': the
// rotated part of each head (rotary_embedding_dim, or all of it) split in halves (or taken at
// even and odd places: interleaved), turned by the cosines and sines of each token's position
// (Gather from the caches by position_ids, or the caches as given per token), joined back with
// the part not rotated. 3-D inputs are split into num_heads heads and joined after. The caches
// are tables, never trained: initializers that feed them are constants from load on.
#pragma once
#include <map>
#include <string>
#include <utility>

#include "graph/expansion.h"
#include "graph/ir.h"

namespace cbt {

bool is_rotary_embedding(const Node& n);

// Makes the initializers that RotaryEmbedding nodes read as caches constants (at load).
void mark_rotary_caches_constant(Graph& g);

// Throws ModelError naming the node for what it does not take. `types` holds every input's type
// (bind_graph checks).
Expansion expand_rotary_embedding(const Node& n, const std::map<std::string, ValueType>& types, const FreshName& fresh);

// For `cbtrain ops`: the op and a one-line summary.
std::pair<std::string, std::string> rotary_embedding_op_summary();

}  // namespace cbt
