// SplitToSequence read only by SequenceAt at constant positions (what PyTorch's dynamo exporter
// writes for torch.split and torch.chunk with optimize=False): at load, the SequenceAt nodes are
// folded into the SplitToSequence node, whose outputs become theirs; when the graph is bound
// (the split axis' size is known only then) it becomes a Split, and an Identity (a Squeeze for
// keepdims 0) per position. Sequences used otherwise stay unsupported.
#pragma once
#include <map>
#include <string>
#include <utility>

#include "graph/expansion.h"
#include "graph/ir.h"
#include "graph/one_hot.h"

namespace cbt {

// Folds the SequenceAt readers into their SplitToSequence node where every reader of the
// sequence is a SequenceAt at a constant position and the sequence is no graph output.
void fold_sequence_reads(Graph& g);

// A SplitToSequence node that fold_sequence_reads rewrote.
bool is_folded_split_to_sequence(const Node& n);

// Throws ModelError naming the node for a split that does not fit the axis, a position out of
// range or an axis out of range. `types` holds every input's type (bind_graph checks).
Expansion expand_split_to_sequence(const Node& n, const std::map<std::string, ValueType>& types,
                                   const ConstantOf& constant_of, int64_t opset, const FreshName& fresh);

// For `cbtrain ops`: the op and a one-line summary.
std::pair<std::string, std::string> split_to_sequence_op_summary();

}  // namespace cbt
