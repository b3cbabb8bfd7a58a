// fuse_relu: a BatchNormTraining, Gemm, Conv or Add and the Relu after it as one node;
// fuse_gradient_sum_relu: a sum of two gradients and the ReluGrad after it as one node;
// fuse_loss_gradient: the softmax cross-entropy and its gradient as one node.
#include "graph/fusion.h"

#include <utility>
#include <vector>

namespace cbt {

namespace {

// An Add of two float tensors of its output's type: no broadcasting.
bool is_plain_float_add(const Node& n, const std::map<std::string, ValueType>& types) {
  if (!n.domain.empty() || n.op_type != "Add" || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  auto y = types.find(n.outputs[0]);
  if (y == types.end() || (y->second.dtype != DType::Float32 && y->second.dtype != DType::Float64)) return false;
  for (const auto& in : n.inputs) {
    auto t = types.find(in);
    if (in.empty() || t == types.end() || t->second != y->second) return false;
  }
  return true;
}

}  // namespace

bool takes_fused_relu(const Node& n, const std::map<std::string, ValueType>& types) {
  if (n.domain == kCbtDomain) return n.op_type == "BatchNormTraining";
  return n.domain.empty() && (n.op_type == "Gemm" || n.op_type == "Conv" || is_plain_float_add(n, types));
}

namespace {

std::map<std::string, std::vector<size_t>> readers_of(const Graph& g) {
  std::map<std::string, std::vector<size_t>> readers;  // value -> nodes that read it
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) readers[in].push_back(i);
  return readers;
}

std::map<std::string, size_t> producers_of(const Graph& g) {
  std::map<std::string, size_t> producer;  // value -> the node that writes it
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& out : g.nodes[i].outputs)
      if (!out.empty()) producer[out] = i;
  return producer;
}

void drop_nodes(Graph& g, const std::vector<bool>& drop) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

// The fused loss `loss` also sums dLogits into the bias gradient of the Gemm that produced the
// logits, when that Gemm's gradient reads dLogits itself (fuse_loss_gradient).
void take_bias_gradient(Graph& g, const std::map<std::string, ValueType>& types,
                        const std::map<std::string, std::vector<size_t>>& readers,
                        const std::map<std::string, size_t>& producer, Node& loss) {
  auto p = producer.find(loss.inputs[0]);
  auto r = readers.find(loss.outputs[2]);
  if (p == producer.end() || r == readers.end() || r->second.size() != 1) return;
  const Node& gemm = g.nodes[p->second];
  Node& grad = g.nodes[r->second[0]];
  if (!gemm.domain.empty() || gemm.op_type != "Gemm" || gemm.attrs.get_int("relu", 0) || !gemm.has_input(2) ||
      grad.domain != kCbtDomain || grad.op_type != "GemmGrad" || grad.attrs.get_int("relu", 0) ||
      grad.inputs[0] != loss.outputs[2] || grad.inputs.size() < 4 || grad.inputs[3] != gemm.input(2) ||
      grad.outputs.size() < 3 || grad.outputs[2].empty() || grad.attrs.get_float("beta", 1.0f) != 1.0f)
    return;
  auto c = types.find(grad.inputs[3]);
  auto logits = types.find(loss.inputs[0]);
  if (c == types.end() || logits == types.end() || logits->second.shape.size() != 2 ||
      c->second.shape != Shape{logits->second.shape[1]})
    return;
  loss.outputs.push_back(grad.outputs[2]);
  grad.outputs[2].clear();
  auto mask = grad.attrs.get_ints("outputs_needed", {1, 1, 1});
  if (mask.size() > 2) mask[2] = 0;
  grad.attrs.set("outputs_needed", mask);
}

}  // namespace

int fuse_relu(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  const auto readers = readers_of(g);
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (Node& n : g.nodes) {
    if (!takes_fused_relu(n, types) || n.attrs.get_int("relu", 0)) continue;
    const std::string y = n.outputs[0];
    auto it = readers.find(y);
    if (exposed.count(y) || it == readers.end() || it->second.size() != 1) continue;
    const Node& relu = g.nodes[it->second[0]];
    if (!relu.domain.empty() || relu.op_type != "Relu") continue;
    n.outputs[0] = relu.outputs[0];
    n.attrs.set("relu", int64_t{1});
    drop[it->second[0]] = true;
    types.erase(y);
    ++fused;
  }
  if (fused) drop_nodes(g, drop);
  return fused;
}

int fuse_gradient_sum_relu(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  const auto readers = readers_of(g);
  const auto producer = producers_of(g);
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (Node& rg : g.nodes) {
    if (rg.domain != kCbtDomain || rg.op_type != "ReluGrad" || rg.inputs.size() != 2) continue;
    const std::string sum = rg.inputs[0];
    auto p = producer.find(sum);
    if (p == producer.end() || drop[p->second] || exposed.count(sum) || readers.at(sum).size() != 1) continue;
    const Node& add = g.nodes[p->second];
    auto y = types.find(rg.inputs[1]);
    if (!is_plain_float_add(add, types) || add.attrs.get_int("relu", 0) || y == types.end() ||
        types.at(sum) != y->second)
      continue;
    rg.inputs = {add.inputs[0], rg.inputs[1], add.inputs[1]};
    drop[p->second] = true;
    types.erase(sum);
    ++fused;
  }
  if (fused) drop_nodes(g, drop);
  return fused;
}

int fuse_loss_gradient(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  const auto readers = readers_of(g);
  const auto producer = producers_of(g);
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& grad = g.nodes[i];
    if (grad.domain != kCbtDomain || grad.op_type != "SoftmaxCrossEntropyGrad") continue;
    const std::string &dloss = grad.inputs[0], &lp = grad.inputs[1];
    if (!g.constant_initializers.count(dloss) || exposed.count(lp)) continue;
    auto p = producer.find(lp);
    if (p == producer.end()) continue;
    Node& loss = g.nodes[p->second];
    if (loss.domain != kCbtDomain || loss.op_type != "SoftmaxCrossEntropy" || loss.outputs.size() != 2 ||
        loss.outputs[1] != lp || loss.inputs.size() != 2 || loss.inputs[1] != grad.inputs[2] ||
        readers.at(lp).size() != 1 ||
        loss.attrs.get_float("label_smoothing", 0.0f) != grad.attrs.get_float("label_smoothing", 0.0f))
      continue;
    loss.inputs.push_back(dloss);
    loss.outputs[1].clear();
    loss.outputs.push_back(grad.outputs[0]);
    types.erase(lp);
    drop[i] = true;
    ++fused;
    take_bias_gradient(g, types, readers, producer, loss);
  }
  if (fused) drop_nodes(g, drop);
  return fused;
}

}  // namespace cbt
