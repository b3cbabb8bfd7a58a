// The bfloat16 channels-last region of the training step (graph/channels_last.h).
#include "graph/channels_last.h"

#include <algorithm>
#include <cstddef>

#include "graph/node_links.h"

namespace cbt {
namespace {

bool is_f32_4d(const std::map<std::string, ValueType>& types, const std::string& v) {
  auto it = types.find(v);
  return it != types.end() && it->second.dtype == DType::Float32 && it->second.shape.size() == 4;
}

// The inputs and outputs of a bfloat16 node that are its channels-last tensors (the others,
// BatchNorm's per-channel ones, stay float32).
struct Roles {
  std::vector<size_t> in, out;
};

// cuDNN pads both sides alike; a Conv padded otherwise pads its float32 image explicitly, which
// the bfloat16 path has no kernel for.
bool symmetric_pads(const Node& n) {
  const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  const auto pads = n.attrs.get_ints("pads");
  for (size_t i = 0; i < pads.size() / 2; ++i)
    if (pads[i] != pads[i + pads.size() / 2]) return false;
  return true;
}

// cuDNN's bfloat16 NHWC tensor-core kernels take 8 channels at a time: a convolution of fewer
// (or another count) on either side, a network's stem of 1 or 3 channels, falls to kernels that
// are slower than float32's (ResNet-20's 1-channel stem: 85 us for its filter gradient, one H200).
bool channels_of_eights(const std::map<std::string, ValueType>& types, const Node& conv) {
  const Shape& w = types.at(conv.inputs[1]).shape;  // (M, C/G, KH, KW)
  return w[0] % 8 == 0 && w[1] % 8 == 0;
}

Roles roles_of(const Node& n) {
  if (n.op_type == "Conv") return {{0, 1}, {0}};
  if (n.op_type == "ConvGrad") return {{0, 1, 2}, {0, 1}};
  if (n.op_type == "BatchNormTraining") return {{0}, {0}};
  if (n.op_type == "BatchNormGrad")
    return {n.attrs.get_int("relu", 0) ? std::vector<size_t>{0, 1, 5} : std::vector<size_t>{0, 1}, {0}};
  if (n.op_type == "Add") return {{0, 1}, {0}};
  std::vector<size_t> all(n.inputs.size());  // ReluGrad
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return {all, {0}};
}

bool needed(const Node& n, size_t out) {
  auto want = n.attrs.get_ints("outputs_needed");
  return out < n.outputs.size() && !n.outputs[out].empty() && (want.size() <= out || want[out] != 0);
}

// Which nodes run in bfloat16, in node order (a producer is decided before its readers).
std::vector<bool> choose_nodes(const Graph& g, const std::map<std::string, ValueType>& types) {
  std::vector<bool> bf16(g.nodes.size(), false);
  std::set<std::pair<std::string, std::string>> convs;  // (X, W) of the bfloat16 Convs
  std::set<std::string> norms;                          // X of the bfloat16 BatchNormTrainings
  std::set<std::string> made;                           // values the chosen nodes write as bfloat16
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const bool onnx = n.domain.empty(), ours = n.domain == kCbtDomain;
    bool take = false;
    if (onnx && n.op_type == "Conv")
      take = n.inputs.size() == 2 && n.attrs.get_int("relu", 0) == 0 && symmetric_pads(n) &&
             is_f32_4d(types, n.inputs[0]) && is_f32_4d(types, n.inputs[1]) && channels_of_eights(types, n);
    else if (ours && n.op_type == "ConvGrad")
      take = n.attrs.get_int("relu", 0) == 0 && !needed(n, 2) && convs.count({n.input(1), n.input(2)});
    else if (ours && n.op_type == "BatchNormTraining")
      take = is_f32_4d(types, n.inputs[0]);
    else if (ours && n.op_type == "BatchNormGrad")
      take = n.attrs.get_int("frozen_stats", 0) == 0 && norms.count(n.input(1));
    else if ((onnx && n.op_type == "Add") || (ours && n.op_type == "ReluGrad")) {
      const Shape& shape = types.at(n.outputs[0]).shape;
      bool same = shape.size() == 4, any_made = false;
      for (const auto& v : n.inputs) {
        same = same && (made.count(v) || is_f32_4d(types, v)) && types.at(v).shape == shape;
        any_made = any_made || made.count(v);
      }
      take = same && any_made;
    }
    if (!take) continue;
    bf16[i] = true;
    if (n.op_type == "Conv") convs.insert({n.inputs[0], n.inputs[1]});
    if (n.op_type == "BatchNormTraining") norms.insert(n.inputs[0]);
    for (size_t o : roles_of(n).out)
      if (o < n.outputs.size() && !n.outputs[o].empty()) made.insert(n.outputs[o]);
  }
  return bf16;
}

}  // namespace

ChannelsLastCounts to_channels_last_bf16(Graph& g, std::map<std::string, ValueType>& types,
                                         const std::set<std::string>& exposed) {
  const std::vector<bool> bf16 = choose_nodes(g, types);
  // The values the chosen nodes write that something reads as float32 (or the caller does).
  std::set<std::string> read_as_f32(exposed.begin(), exposed.end());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::vector<size_t> cl_in = bf16[i] ? roles_of(n).in : std::vector<size_t>{};
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (std::find(cl_in.begin(), cl_in.end(), k) == cl_in.end()) read_as_f32.insert(n.inputs[k]);
  }
  // A fresh name for v's bfloat16 channels-last twin, typed.
  auto twin_of = [&](const std::string& v) {
    const std::string name = unique_name(v + "_cl", types);
    types[name] = ValueType{DType::BFloat16, types.at(v).shape};
    return name;
  };
  auto conversion = [&](const char* op, std::vector<std::string> from, std::vector<std::string> to) {
    Node c;
    c.op_type = op;
    c.domain = kCbtDomain;
    c.name = to.front();
    c.inputs = std::move(from);
    c.outputs = std::move(to);
    return c;
  };
  const auto readers = readers_of(g);

  ChannelsLastCounts counts;
  std::map<std::string, std::string> cl;  // float32 value -> its bfloat16 channels-last twin
  std::vector<Node> out;
  out.reserve(g.nodes.size() * 2);
  // The filters go over in one node before the first reader of any, their gradients back in one
  // at the end (nothing in the step reads them): one launch each way instead of one a filter.
  std::vector<std::string> filters, filter_twins, late_twins, late;
  size_t filters_at = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node n = g.nodes[i];
    if (!bf16[i]) {
      out.push_back(std::move(n));
      continue;
    }
    ++counts.nodes;
    const Roles r = roles_of(n);
    for (size_t k : r.in) {
      if (k >= n.inputs.size() || n.inputs[k].empty()) continue;
      std::string& twin = cl[n.inputs[k]];
      if (twin.empty()) {  // a float32 value read here first: converted once, before this node
        twin = twin_of(n.inputs[k]);
        if (g.initializers.count(n.inputs[k])) {
          if (filters.empty()) filters_at = out.size();
          filters.push_back(n.inputs[k]);
          filter_twins.push_back(twin);
        } else {
          out.push_back(conversion("ToChannelsLast", {n.inputs[k]}, {twin}));
          ++counts.conversions;
        }
      }
      n.inputs[k] = twin;
    }
    std::vector<Node> after;
    for (size_t o : r.out) {
      if (o >= n.outputs.size() || n.outputs[o].empty()) continue;
      const std::string v = n.outputs[o];
      const std::string twin = twin_of(v);
      cl[v] = twin;
      n.outputs[o] = twin;
      if (read_as_f32.count(v) && !readers.count(v)) {
        late_twins.push_back(twin);
        late.push_back(v);
      } else if (read_as_f32.count(v)) {
        after.push_back(conversion("FromChannelsLast", {twin}, {v}));
        ++counts.conversions;
      } else {
        types.erase(v);
      }
    }
    if (n.op_type != "Add" && n.op_type != "ReluGrad") n.attrs.set(kChannelsLastAttr, int64_t{1});
    out.push_back(std::move(n));
    for (auto& c : after) out.push_back(std::move(c));
  }
  if (!filters.empty()) {
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(filters_at),
               conversion("ToChannelsLast", std::move(filters), std::move(filter_twins)));
    ++counts.conversions;
  }
  if (!late.empty()) {
    out.push_back(conversion("FromChannelsLast", std::move(late_twins), std::move(late)));
    ++counts.conversions;
  }
  g.nodes = std::move(out);
  return counts;
}

}  // namespace cbt
