// SplitToSequence and its SequenceAt readers as Split and Identity (split_to_sequence.h).
#include "graph/split_to_sequence.h"

#include <algorithm>
#include <set>
#include <vector>

#include "graph/errors.h"

namespace cbt {
namespace {

constexpr const char* kPositions = "cbt_sequence_positions";  // of the folded SequenceAt readers

}  // namespace

void fold_sequence_reads(Graph& g) {
  std::set<std::string> graph_outputs;
  for (const auto& o : g.outputs) graph_outputs.insert(o.name);
  std::map<std::string, std::vector<size_t>> readers;  // value -> nodes that read it
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs) readers[in].push_back(i);
  std::set<size_t> folded;
  for (Node& n : g.nodes) {
    if (!n.domain.empty() || n.op_type != "SplitToSequence" || n.outputs.size() != 1 ||
        graph_outputs.count(n.outputs[0]))
      continue;
    const std::vector<size_t>& reads = readers[n.outputs[0]];
    std::vector<int64_t> positions;
    std::vector<std::string> outputs;
    for (size_t r : reads) {
      const Node& at = g.nodes[r];
      auto index = at.inputs.size() == 2 ? g.initializers.find(at.inputs[1]) : g.initializers.end();
      if (!at.domain.empty() || at.op_type != "SequenceAt" || at.inputs[0] != n.outputs[0] ||
          index == g.initializers.end() || index->second.numel() != 1 || is_floating(index->second.dtype()) ||
          at.outputs.size() != 1)
        break;
      positions.push_back(index->second.at_i64(0));
      outputs.push_back(at.outputs[0]);
    }
    if (reads.empty() || positions.size() != reads.size()) continue;
    n.attrs.set(kPositions, positions);
    n.outputs = outputs;
    folded.insert(reads.begin(), reads.end());
  }
  if (folded.empty()) return;
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!folded.count(i)) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

bool is_folded_split_to_sequence(const Node& n) {
  return n.domain.empty() && n.op_type == "SplitToSequence" && n.attrs.has(kPositions);
}

Expansion expand_split_to_sequence(const Node& n, const std::map<std::string, ValueType>& types,
                                   const ConstantOf& constant_of, int64_t opset, const FreshName& fresh) {
  auto fail = [&n](const std::string& msg) { throw ModelError("node " + n.describe() + ": " + msg); };
  if (!n.has_input(0)) fail("SplitToSequence takes an input to split");
  const ValueType& x = types.at(n.inputs[0]);
  const auto rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.attrs.get_int("axis", 0);
  if (axis < -rank || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  const int64_t size = x.shape[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  const bool whole = !n.has_input(1);
  if (whole) {
    sizes.assign(static_cast<size_t>(size), 1);
  } else {
    const Tensor* split = constant_of(n.inputs[1]);
    if (!split || is_floating(split->dtype())) fail("split must be a constant of integers");
    if (split->rank() == 0) {
      const int64_t chunk = split->at_i64(0);
      if (chunk <= 0) fail("split must be positive, is " + std::to_string(chunk));
      for (int64_t at = 0; at < size; at += chunk) sizes.push_back(std::min(chunk, size - at));
    } else {
      sizes = split->to_i64_vector();
      int64_t sum = 0;
      for (int64_t s : sizes) sum += s;
      if (sum != size) fail("split sums to " + std::to_string(sum) + ", the axis has " + std::to_string(size));
    }
  }
  const auto count = static_cast<int64_t>(sizes.size());
  ExpansionWriter w(n.name.empty() ? n.outputs[0] : n.name, fresh);
  Attributes a;
  a.set("axis", axis);
  std::vector<std::string> in{n.inputs[0]};
  if (opset >= 13)
    in.push_back(w.ints(sizes, "split"));
  else
    a.set("split", sizes);
  const std::vector<std::string> parts = w.add_n("Split", std::move(in), static_cast<size_t>(count), a, "Split");
  const std::vector<int64_t> positions = n.attrs.get_ints(kPositions);
  const bool squeeze = whole && n.attrs.get_int("keepdims", 1) == 0;
  for (size_t i = 0; i < positions.size(); ++i) {
    int64_t p = positions[i];
    if (p < -count || p >= count)
      fail("SequenceAt reads position " + std::to_string(p) + " of a sequence of " + std::to_string(count));
    if (p < 0) p += count;
    const std::string& part = parts[static_cast<size_t>(p)];
    if (!squeeze) {
      w.add("Identity", {part}, {}, "Identity", n.outputs[i]);
    } else if (opset >= 13) {
      w.add("Squeeze", {part, w.ints({axis}, "axes")}, {}, "Squeeze", n.outputs[i]);
    } else {
      Attributes s;
      s.set("axes", std::vector<int64_t>{axis});
      w.add("Squeeze", {part}, s, "Squeeze", n.outputs[i]);
    }
  }
  return std::move(w.ex);
}

std::pair<std::string, std::string> split_to_sequence_op_summary() {
  return {"SplitToSequence",
          "split into a sequence read only by SequenceAt at constant positions (torch.split and torch.chunk of the "
          "dynamo exporter without optimisation): Split at binding"};
}

}  // namespace cbt
