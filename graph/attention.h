// Attention (opsets 23-25), rewritten when the graph is bound (its inputs' shapes are known only
// then) into the ops it is made of, so that its gradient and CUDA kernels are those ops': Q and K
// scaled by sqrt(scale), MatMul with K transposed (grouped-query attention by a Reshape of Q into
// its key/value head's group: K and V are not copied), the soft cap, the bias of attn_mask (bool:
// -inf where false; float: added) and of is_causal and the sliding window (one constant),
// Softmax, MatMul with V. A query row that no key may attend gives zeros (ONNX's rule), by a
// guard of ReduceMax, Greater and Where wherever such a row can occur. 3-D inputs are split into
// heads (q_num_heads, kv_num_heads) and joined after. The key/value cache (past_key, past_value,
// present_key, present_value, nonpad_kv_seqlen) is refused.
#pragma once
#include <map>
#include <string>
#include <utility>

#include "graph/expansion.h"
#include "graph/ir.h"

namespace cbt {

bool is_attention(const Node& n);

// Throws ModelError naming the node for what it does not take. `types` holds every input's type
// (bind_graph checks).
Expansion expand_attention(const Node& n, const std::map<std::string, ValueType>& types, int64_t opset,
                           const FreshName& fresh);

// For `cbtrain ops`: the op and a one-line summary.
std::pair<std::string, std::string> attention_op_summary();

}  // namespace cbt
