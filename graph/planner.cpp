// Greedy-by-size offset assignment over value lifetimes (largest first, lowest free offset).
#include "graph/planner.h"

#include <algorithm>
#include <cstdio>

namespace cbt {

namespace {
struct Interval {
  std::string name;
  size_t bytes;
  size_t first, last;  // node indices: defined at `first`, last read at `last`
};
}  // namespace

bool is_view_op(const Node& n) {
  if (n.domain == kCbtDomain) return n.op_type == "ReshapeTo";
  return n.domain.empty() &&
         (n.op_type == "Flatten" || n.op_type == "Reshape" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze");
}

MemoryPlan plan_memory(const std::vector<Node>& nodes, const std::map<std::string, ValueType>& types,
                       const std::set<std::string>& external, const std::set<std::string>& keep_alive,
                       size_t alignment) {
  MemoryPlan plan;
  plan.alignment = alignment;
  std::map<std::string, Interval> live;
  auto root = [&](const std::string& v) {
    auto it = plan.alias.find(v);
    return it == plan.alias.end() ? v : it->second;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& in : nodes[i].inputs)
      if (auto it = live.find(root(in)); it != live.end()) it->second.last = i;
    const Node& n = nodes[i];
    if (is_view_op(n) && n.has_input(0) && n.outputs.size() == 1 && !n.outputs[0].empty() &&
        !external.count(n.outputs[0]) && !keep_alive.count(n.outputs[0]) && !live.count(n.outputs[0]) &&
        !plan.alias.count(n.outputs[0])) {
      plan.alias[n.outputs[0]] = root(n.inputs[0]);
      continue;
    }
    for (const auto& out : nodes[i].outputs) {
      if (out.empty() || external.count(out) || live.count(out)) continue;
      const ValueType& t = types.at(out);
      size_t bytes = static_cast<size_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
      bytes = (bytes + alignment - 1) / alignment * alignment;
      live[out] = Interval{out, bytes, i, i};
    }
  }
  std::vector<Interval> order;
  for (auto& [name, iv] : live) {
    if (keep_alive.count(name)) iv.last = nodes.size();
    plan.naive_bytes += iv.bytes;
    order.push_back(iv);
  }
  std::sort(order.begin(), order.end(), [](const Interval& a, const Interval& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
  });
  struct Placed {
    size_t offset, bytes, first, last;
  };
  std::vector<Placed> placed;
  for (const auto& iv : order) {
    // Blocks whose lifetimes overlap this one, by offset; take the first gap that fits.
    std::vector<Placed> clash;
    for (const auto& p : placed)
      if (!(p.last < iv.first || iv.last < p.first)) clash.push_back(p);
    std::sort(clash.begin(), clash.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    size_t offset = 0;
    for (const auto& p : clash) {
      if (offset + iv.bytes <= p.offset) break;
      offset = std::max(offset, p.offset + p.bytes);
    }
    placed.push_back(Placed{offset, iv.bytes, iv.first, iv.last});
    plan.offset[iv.name] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + iv.bytes);
  }
  return plan;
}

std::string format_bytes(size_t bytes) {
  char buf[64];
  if (bytes >= (1u << 20))
    std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  return buf;
}

}  // namespace cbt
