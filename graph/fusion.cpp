// fuse_relu: a BatchNormTraining, Gemm, Conv or Add and the Relu after it as one node;
// fuse_gradient_sum_relu: a sum of two gradients and the ReluGrad after it as one node;
// fuse_loss_gradient: the softmax cross-entropy and its gradient as one node; fuse_gelu: the
// erf form of GELU as one Gelu node; fuse_silu: X * Sigmoid(X) as one Silu node; fuse_rms_norm: the root-mean-square
// norm written out as one RMSNorm node; fuse_attention: MatMul, Softmax, MatMul as one SoftmaxAttention node.
#include "graph/fusion.h"

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "graph/node_links.h"
#include "graph/shape_utils.h"
#include "graph/softmax_attention.h"

namespace cbt {

namespace {

// An Add of two float tensors of its output's type: no broadcasting.
bool is_plain_float_add(const Node& n, const std::map<std::string, ValueType>& types) {
  if (!is_node(n, "Add", 2)) return false;
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
    const auto r = sole_reader(readers, exposed, y);
    if (!r) continue;
    const Node& relu = g.nodes[*r];
    if (!relu.domain.empty() || relu.op_type != "Relu") continue;
    n.outputs[0] = relu.outputs[0];
    n.attrs.set("relu", int64_t{1});
    drop[*r] = true;
    types.erase(y);
    ++fused;
  }
  if (fused) drop_nodes(g, drop);
  return fused;
}

namespace {

// The chains of one graph that fuse_gelu and fuse_rms_norm look for: the values that may be
// folded read by one node, and scalar constants.
struct ChainMatcher {
  const Graph& g;
  const std::map<std::string, ValueType>& types;
  const std::set<std::string>& exposed;
  std::map<std::string, std::vector<size_t>> readers = readers_of(g);
  std::map<std::string, size_t> producer = producers_of(g);

  const Node* node(size_t i, const char* op) const {
    const Node& n = g.nodes[i];
    return n.domain.empty() && n.op_type == op && n.inputs.size() == 2 && n.outputs.size() == 1 ? &n : nullptr;
  }
  // Node i if it is a one-input `op`.
  const Node* unary(size_t i, const char* op) const {
    const Node& n = g.nodes[i];
    return n.domain.empty() && n.op_type == op && n.inputs.size() == 1 && n.outputs.size() == 1 ? &n : nullptr;
  }
  // The one node that reads `v`, if it is an `op` and v is nothing the caller reads.
  std::optional<size_t> sole_reader_of(const std::string& v, const char* op) const {
    auto r = sole_reader(readers, exposed, v);
    return r && node(*r, op) ? r : std::nullopt;
  }
  // The value of v where it is a float scalar constant.
  std::optional<double> float_constant(const std::string& v) const {
    auto it = g.initializers.find(v);
    if (it == g.initializers.end() || !g.constant_initializers.count(v)) return std::nullopt;
    const Tensor& t = it->second;
    if (!is_floating(t.dtype()) || t.numel() != 1) return std::nullopt;
    return t.at_f64(0);
  }
  // Whether v is a float scalar constant within 1e-6 of `value`.
  bool is_constant(const std::string& v, double value) const {
    const std::optional<double> c = float_constant(v);
    return c && std::abs(*c - value) <= 1e-6;
  }
  // The operand of binary node n other than the constant `value`, if one of them is it.
  std::optional<std::string> other_than(const Node& n, double value) const {
    if (is_constant(n.inputs[1], value)) return n.inputs[0];
    if (is_constant(n.inputs[0], value)) return n.inputs[1];
    return std::nullopt;
  }
  // Whether Mul n multiplies a and b, in either order.
  static bool multiplies(const Node& n, const std::string& a, const std::string& b) {
    return (n.inputs[0] == a && n.inputs[1] == b) || (n.inputs[0] == b && n.inputs[1] == a);
  }
  bool is_float(const std::string& v) const {
    auto t = types.find(v);
    return t != types.end() && (t->second.dtype == DType::Float32 || t->second.dtype == DType::Float64);
  }
};

// The GELU chains of one graph (fuse_gelu).
struct GeluMatcher : ChainMatcher {
  // The chain that ends at Erf node `e`: the nodes to drop, the last one (which becomes the
  // Gelu) and X.
  struct Chain {
    std::vector<size_t> nodes;
    size_t last = 0;
    std::string x;
  };
  std::optional<Chain> match(size_t e) const {
    const Node& erf = g.nodes[e];
    if (!erf.domain.empty() || erf.op_type != "Erf" || erf.inputs.size() != 1) return std::nullopt;
    // X / sqrt 2, or X * (1 / sqrt 2).
    auto p = producer.find(erf.inputs[0]);
    if (p == producer.end() || !sole_reader(readers, exposed, erf.inputs[0])) return std::nullopt;
    std::optional<std::string> x;
    if (const Node* div = node(p->second, "Div"); div && is_constant(div->inputs[1], std::sqrt(2.0)))
      x = div->inputs[0];
    else if (const Node* mul = node(p->second, "Mul"))
      x = other_than(*mul, std::sqrt(0.5));
    if (!x) return std::nullopt;
    auto xt = types.find(*x);
    if (xt == types.end() || (xt->second.dtype != DType::Float32 && xt->second.dtype != DType::Float64))
      return std::nullopt;
    Chain c{{p->second, e}, 0, *x};
    // 1 + Erf(...)
    auto add = sole_reader_of(erf.outputs[0], "Add");
    if (!add || other_than(g.nodes[*add], 1.0) != erf.outputs[0]) return std::nullopt;
    c.nodes.push_back(*add);
    const std::string sum = g.nodes[*add].outputs[0];
    // The product of X, the sum and 0.5 by two Muls.
    auto m1 = sole_reader_of(sum, "Mul");
    if (!m1) return std::nullopt;
    const Node& first = g.nodes[*m1];
    c.nodes.push_back(*m1);
    const std::string& y1 = first.outputs[0];
    if (multiplies(first, *x, sum) || other_than(first, 0.5) == sum) {  // (X * sum) * 0.5, X * (sum * 0.5)
      auto m2 = sole_reader_of(y1, "Mul");
      if (!m2) return std::nullopt;
      const Node& second = g.nodes[*m2];
      const bool ok = multiplies(first, *x, sum) ? other_than(second, 0.5) == y1 : multiplies(second, *x, y1);
      if (!ok) return std::nullopt;
      c.last = *m2;
    } else {  // (X * 0.5) * sum
      const std::string half = first.inputs[0] == sum ? first.inputs[1] : first.inputs[0];
      if (!multiplies(first, half, sum)) return std::nullopt;
      auto h = producer.find(half);
      if (h == producer.end() || !sole_reader(readers, exposed, half)) return std::nullopt;
      const Node* scale = node(h->second, "Mul");
      if (!scale || other_than(*scale, 0.5) != *x) return std::nullopt;
      c.nodes.push_back(h->second);
      c.last = *m1;
    }
    auto yt = types.find(g.nodes[c.last].outputs[0]);
    if (yt == types.end() || yt->second != xt->second) return std::nullopt;  // no broadcasting
    return c;
  }
};

// The RMSNorm chains of one graph (fuse_rms_norm).
struct RmsMatcher : ChainMatcher {
  struct Chain {
    std::vector<size_t> nodes;  // the chain's nodes; `last` becomes the RMSNorm
    size_t last = 0;
    std::string x, scale;  // scale: "" where the chain has none
    int64_t axis = 0;
    double epsilon = 0;
  };

  // The first of the dims a ReduceMean from shape x to m (kept dims) averages over, where those
  // are the trailing ones: m is x before it and 1 from it on (a dim of size 1 is the same
  // averaged or not).
  static std::optional<int64_t> trailing_axis(const Shape& x, const Shape& m) {
    const auto rank = static_cast<int64_t>(x.size());
    if (m.size() != x.size() || rank == 0) return std::nullopt;
    int64_t a = rank;
    while (a > 0 && m[a - 1] == 1) --a;
    if (a == rank) return std::nullopt;
    for (int64_t i = 0; i < a; ++i)
      if (m[i] != x[i]) return std::nullopt;
    return a;
  }
  // Whether w, multiplied into rows over x's dims from `axis`, is one value a column: its dims
  // are those dims (leading ones aside) and it has X's type.
  bool is_scale(const std::string& w, const ValueType& x, int64_t axis) const {
    auto t = types.find(w);
    if (t == types.end() || t->second.dtype != x.dtype) return false;
    const Shape& s = t->second.shape;
    const auto rank = static_cast<int64_t>(x.shape.size());
    if (static_cast<int64_t>(s.size()) > rank || shape_numel(s) != dims_product(x.shape, axis, x.shape.size()))
      return false;
    for (size_t k = 0; k < s.size(); ++k) {
      const int64_t i = rank - 1 - static_cast<int64_t>(k);
      if (s[s.size() - 1 - k] != (i >= axis ? x.shape[i] : 1)) return false;
    }
    return true;
  }

  // The chain whose ReduceMean is node i.
  std::optional<Chain> match(size_t i) const {
    const Node& mean = g.nodes[i];
    if (!mean.domain.empty() || mean.op_type != "ReduceMean" || mean.inputs.empty() || mean.outputs.size() != 1 ||
        mean.attrs.get_int("keepdims", 1) != 1)
      return std::nullopt;
    // X * X, or X ^ 2.
    auto sq = producer.find(mean.inputs[0]);
    if (sq == producer.end() || !sole_reader(readers, exposed, mean.inputs[0])) return std::nullopt;
    const Node& square = g.nodes[sq->second];
    const bool squares = (node(sq->second, "Mul") && square.inputs[0] == square.inputs[1]) ||
                         (node(sq->second, "Pow") && is_constant(square.inputs[1], 2.0));
    if (!squares || !is_float(square.inputs[0]) || !types.count(mean.outputs[0])) return std::nullopt;
    Chain c{{sq->second, i}, 0, square.inputs[0], "", 0, 0};
    const ValueType& xt = types.at(c.x);
    const std::optional<int64_t> axis = trailing_axis(xt.shape, types.at(mean.outputs[0]).shape);
    if (!axis) return std::nullopt;
    c.axis = *axis;
    // + epsilon, Sqrt.
    auto add = sole_reader_of(mean.outputs[0], "Add");
    if (!add) return std::nullopt;
    const Node& plus = g.nodes[*add];
    const std::optional<double> eps = float_constant(plus.inputs[plus.inputs[0] == mean.outputs[0] ? 1 : 0]);
    if (!eps || *eps < 0) return std::nullopt;
    c.epsilon = *eps;
    auto root = sole_reader(readers, exposed, plus.outputs[0]);
    if (!root || !unary(*root, "Sqrt")) return std::nullopt;
    c.nodes.insert(c.nodes.end(), {*add, *root});
    // X / rms, or X * Reciprocal(rms).
    const std::string& rms = g.nodes[*root].outputs[0];
    auto r = sole_reader(readers, exposed, rms);
    if (!r) return std::nullopt;
    if (const Node* div = node(*r, "Div"); div && div->inputs[0] == c.x && div->inputs[1] == rms) {
      c.last = *r;
    } else if (unary(*r, "Reciprocal")) {
      c.nodes.push_back(*r);
      auto m = sole_reader_of(g.nodes[*r].outputs[0], "Mul");
      if (!m || !multiplies(g.nodes[*m], c.x, g.nodes[*r].outputs[0])) return std::nullopt;
      c.last = *m;
    } else {
      return std::nullopt;
    }
    c.nodes.push_back(c.last);
    const std::string& normed = g.nodes[c.last].outputs[0];
    auto nt = types.find(normed);
    if (nt == types.end() || nt->second != xt) return std::nullopt;
    // Times a scale, where one follows.
    if (auto m = sole_reader_of(normed, "Mul")) {
      const Node& times = g.nodes[*m];
      const std::string& w = times.inputs[times.inputs[0] == normed ? 1 : 0];
      auto yt = types.find(times.outputs[0]);
      if (w != normed && is_scale(w, xt, c.axis) && yt != types.end() && yt->second == xt) {
        c.scale = w;
        c.nodes.push_back(*m);
        c.last = *m;
      }
    }
    return c;
  }
};

// The SiLU pairs of one graph (fuse_silu): a Sigmoid of X read only by a Mul of X and it.
struct SiluMatcher : ChainMatcher {
  struct Chain {
    std::vector<size_t> nodes;  // the Sigmoid and the Mul, which becomes the Silu
    size_t last = 0;
    std::string x;
  };
  std::optional<Chain> match(size_t i) const {
    const Node* sig = unary(i, "Sigmoid");
    if (!sig || !is_float(sig->inputs[0])) return std::nullopt;
    auto mul = sole_reader_of(sig->outputs[0], "Mul");
    if (!mul || !multiplies(g.nodes[*mul], sig->inputs[0], sig->outputs[0])) return std::nullopt;
    auto xt = types.find(sig->inputs[0]), yt = types.find(g.nodes[*mul].outputs[0]);
    if (yt == types.end() || yt->second != xt->second) return std::nullopt;
    return Chain{{i, *mul}, *mul, sig->inputs[0]};
  }
};

// The chains `Matcher` finds, each replaced by one node: the chain's nodes but its last are
// dropped (their values leave `types`) and the last becomes fused(chain, last). Returns the
// chains replaced.
template <class Matcher, class Fused>
int replace_chains(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed,
                   Fused fused) {
  std::vector<typename Matcher::Chain> chains;
  {
    const Matcher m{{g, types, exposed}};
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (auto c = m.match(i)) chains.push_back(std::move(*c));
  }
  std::vector<bool> drop(g.nodes.size(), false);
  for (const auto& c : chains) {
    for (size_t i : c.nodes)
      if (i != c.last) {
        for (const auto& out : g.nodes[i].outputs) types.erase(out);
        drop[i] = true;
      }
    g.nodes[c.last] = fused(c, g.nodes[c.last]);
  }
  drop_nodes(g, drop);
  return static_cast<int>(chains.size());
}

}  // namespace

int fuse_rms_norm(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  return replace_chains<RmsMatcher>(g, types, exposed, [&types](const RmsMatcher::Chain& c, const Node& last) {
    ValueType stat = types.at(c.x);
    for (size_t d = static_cast<size_t>(c.axis); d < stat.shape.size(); ++d) stat.shape[d] = 1;
    std::string invrms = last.outputs[0] + "_invrms";
    while (types.count(invrms)) invrms += "_";
    types[invrms] = stat;
    Node norm = fused_node("RMSNorm", kCbtDomain, last, "rms_norm");
    norm.inputs = {c.x};
    if (!c.scale.empty()) norm.inputs.push_back(c.scale);
    norm.outputs = {last.outputs[0], invrms};
    norm.attrs.set("axis", c.axis);
    norm.attrs.set("epsilon", static_cast<float>(c.epsilon));
    return norm;
  });
}

int fuse_silu(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  return replace_chains<SiluMatcher>(g, types, exposed, [](const SiluMatcher::Chain& c, const Node& last) {
    Node silu = fused_node("Silu", kCbtDomain, last, "silu");
    silu.inputs = {c.x};
    silu.outputs = {last.outputs[0]};
    return silu;
  });
}

int fuse_gelu(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  return replace_chains<GeluMatcher>(g, types, exposed, [](const GeluMatcher::Chain& c, const Node& last) {
    Node gelu = fused_node("Gelu", "", last, "gelu");
    gelu.inputs = {c.x};
    gelu.outputs = {last.outputs[0]};
    gelu.attrs.set("approximate", std::string("none"));
    return gelu;
  });
}

int fuse_attention(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  const auto readers = readers_of(g);
  const auto producer = producers_of(g);
  // The one node reading v, if v is nothing the caller reads.
  auto reader = [&](const std::string& v) -> const Node* {
    auto r = sole_reader(readers, exposed, v);
    return r ? &g.nodes[*r] : nullptr;
  };
  auto is = [](const Node* n, const char* op, size_t inputs) { return n && is_node(*n, op, inputs); };
  std::vector<bool> drop(g.nodes.size(), false);
  // The other operand of `add`, an Add to `onto` (the scores' type) of a tensor that broadcasts
  // to them unchanged; empty when it is not such an Add.
  auto bias_of = [&](const Node* add, const std::string& onto) -> std::string {
    if (!is(add, "Add", 2)) return "";
    const std::string& b = add->inputs[0] == onto ? add->inputs[1] : add->inputs[0];
    const ValueType &s = types.at(onto), &bt = types.at(b);
    if (b == onto || types.at(add->outputs[0]) != s || bt.dtype != s.dtype || !score_bias_layout(bt.shape, s.shape))
      return "";
    return b;
  };
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& scores = g.nodes[i];
    if (!is(&scores, "MatMul", 2)) continue;
    const Node* softmax = reader(scores.outputs[0]);
    // Up to two masks or biases added to the scores (Swin's position bias, then its window
    // masks): B1 + B2 is summed first, one tensor for the kernel.
    const Node* adds[2] = {nullptr, nullptr};
    std::string biases[2];
    std::string onto = scores.outputs[0];
    for (int k = 0; k < 2; ++k) {
      biases[k] = bias_of(softmax, onto);
      if (biases[k].empty()) break;
      adds[k] = softmax;
      onto = softmax->outputs[0];
      softmax = reader(onto);
    }
    if (!is(softmax, "Softmax", 1)) continue;
    const ValueType& a = types.at(scores.outputs[0]);
    const auto rank = static_cast<int64_t>(a.shape.size());
    if (rank < 2 || normalize_axis(softmax->attrs.get_int("axis", g.opset < 13 ? 1 : -1), rank) != rank - 1) continue;
    const Node* out = reader(softmax->outputs[0]);
    if (!is(out, "MatMul", 2) || out->inputs[0] != softmax->outputs[0]) continue;
    const ValueType &x = types.at(scores.inputs[0]), &y = types.at(scores.inputs[1]), &v = types.at(out->inputs[1]);
    if ((x.dtype != DType::Float32 && x.dtype != DType::Float64) || y.dtype != x.dtype || v.dtype != x.dtype) continue;
    auto d = attention_dims(x.shape, y.shape, v.shape);
    if (!d || d->working_floats() > kAttentionMaxFloats) continue;
    const size_t last = static_cast<size_t>(out - g.nodes.data());
    Node core;
    core.op_type = "SoftmaxAttention";
    core.domain = kCbtDomain;
    core.name = out->name.empty() ? "attention" : out->name + "_attention";
    core.inputs = {scores.inputs[0], scores.inputs[1], out->inputs[1]};
    if (adds[1]) {  // B1 + B2 in the second Add's place: both exist by then
      const size_t at = static_cast<size_t>(adds[1] - g.nodes.data());
      const std::string sum = unique_name(biases[0] + "_plus_" + biases[1], types);
      types[sum] =
          ValueType{types.at(biases[0]).dtype, broadcast_shapes(types.at(biases[0]).shape, types.at(biases[1]).shape)};
      Node both = fused_node("Add", "", *adds[1], "biases");
      both.inputs = {biases[0], biases[1]};
      both.outputs = {sum};
      types.erase(adds[0]->outputs[0]);
      types.erase(adds[1]->outputs[0]);
      drop[static_cast<size_t>(adds[0] - g.nodes.data())] = true;
      g.nodes[at] = std::move(both);
      core.inputs.push_back(sum);
    } else if (adds[0]) {
      types.erase(adds[0]->outputs[0]);
      drop[static_cast<size_t>(adds[0] - g.nodes.data())] = true;
      core.inputs.push_back(biases[0]);
    }
    core.outputs = {out->outputs[0]};
    types.erase(scores.outputs[0]);
    types.erase(softmax->outputs[0]);
    drop[i] = drop[static_cast<size_t>(softmax - g.nodes.data())] = true;
    g.nodes[last] = std::move(core);
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
    if (p == producer.end() || drop[p->second] || !sole_reader(readers, exposed, sum)) continue;
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
