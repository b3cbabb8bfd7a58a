// The training step's rewrites around Reshapes (graph/layout_fusion.h).
#include "graph/layout_fusion.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "graph/node_links.h"
#include "graph/ops/shape_ops_params.h"
#include "graph/shape_utils.h"

namespace cbt {

int fuse_linear(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  const auto readers = readers_of(g);
  // What replaces each Add that ends a fused pair (by the Add's index); the MatMuls go.
  std::map<size_t, std::vector<Node>> at_add;
  std::vector<bool> drop(g.nodes.size(), false);
  auto is_float = [&types](const std::string& v) {
    auto t = types.find(v);
    return t != types.end() && t->second.dtype == DType::Float32;
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& mm = g.nodes[i];
    if (!is_node(mm, "MatMul", 2)) continue;
    const auto r = sole_reader(readers, exposed, mm.outputs[0]);
    if (!r || at_add.count(*r)) continue;
    const Node& add = g.nodes[*r];
    if (!is_node(add, "Add", 2)) continue;
    const std::string& bias = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
    const std::string &x = mm.inputs[0], &w = mm.inputs[1];
    if (bias == mm.outputs[0] || !is_float(x) || !is_float(w) || !is_float(bias)) continue;
    const Shape &xs = types.at(x).shape, &ws = types.at(w).shape, &ys = types.at(mm.outputs[0]).shape;
    if (xs.size() < 2 || ws.size() != 2 || types.at(add.outputs[0]) != types.at(mm.outputs[0])) continue;
    const int64_t K = ws[0], N = ws[1];
    if (types.at(bias).shape != Shape{N} || N < 2 || xs.back() != K) continue;
    // The rows: X as (M, K), the product as (M, N), back to the Add's shape after.
    std::vector<Node> nodes;
    auto shape_constant = [&](std::vector<int64_t> dims, const std::string& hint) {
      const std::string name = unique_name(hint, types);
      Shape s{static_cast<int64_t>(dims.size())};
      types[name] = ValueType{DType::Int64, s};
      g.initializers[name] = Tensor::from_i64(dims, s);
      g.constant_initializers.insert(name);
      return name;
    };
    std::string rows = x, product = add.outputs[0];
    if (xs.size() > 2) {
      rows = unique_name(x + "_rows", types);
      types[rows] = ValueType{DType::Float32, {shape_numel(xs) / K, K}};
      Node flat = fused_node("Reshape", "", add, "linear_rows");
      flat.inputs = {x, shape_constant({-1, K}, rows + "_shape")};
      flat.outputs = {rows};
      nodes.push_back(std::move(flat));
      product = unique_name(add.outputs[0] + "_rows", types);
      types[product] = ValueType{DType::Float32, {shape_numel(ys) / N, N}};
    }
    Node gemm = fused_node("Gemm", "", add, "linear");
    gemm.inputs = {rows, w, bias};
    gemm.outputs = {product};
    nodes.push_back(std::move(gemm));
    if (xs.size() > 2) {
      std::vector<int64_t> back(ys.begin(), ys.end());
      back[0] = -1;
      Node unflat = fused_node("Reshape", "", add, "linear_back");
      unflat.inputs = {product, shape_constant(back, add.outputs[0] + "_shape")};
      unflat.outputs = {add.outputs[0]};
      nodes.push_back(std::move(unflat));
    }
    types.erase(mm.outputs[0]);
    drop[i] = true;
    at_add[*r] = std::move(nodes);
  }
  if (at_add.empty()) return 0;
  std::vector<Node> out;
  out.reserve(g.nodes.size() + 2 * at_add.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (drop[i]) continue;
    auto it = at_add.find(i);
    if (it == at_add.end()) {
      out.push_back(std::move(g.nodes[i]));
      continue;
    }
    for (Node& n : it->second) out.push_back(std::move(n));
  }
  g.nodes = std::move(out);
  return static_cast<int>(at_add.size());
}

namespace {

// M (shape ms, float32) broadcast to shape `to`, row-major.
std::vector<float> broadcast_values(const Tensor& m, const Shape& to) {
  const std::vector<int64_t> st = broadcast_strides(m.shape(), to);
  const int64_t n = shape_numel(to);
  std::vector<float> out(static_cast<size_t>(n));
  const float* src = m.ptr<float>();
  std::vector<int64_t> idx(to.size(), 0);
  int64_t off = 0;
  for (int64_t f = 0; f < n; ++f) {
    out[static_cast<size_t>(f)] = src[off];
    for (size_t d = to.size(); d-- > 0;) {  // next index, row-major
      off += st[d];
      if (++idx[d] < to[d]) break;
      off -= st[d] * to[d];
      idx[d] = 0;
    }
  }
  return out;
}

// `values` (row-major over `shape`) kept at index 0 along every dim they do not vary along (bit
// for bit): the smallest tensor that broadcasts back to them.
Tensor collapse_constant_dims(const std::vector<float>& values, const Shape& shape) {
  const size_t rank = shape.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  Shape kept = shape;
  for (size_t d = 0; d < rank; ++d) {
    bool same = true;
    for (size_t f = 0; f < values.size() && same; ++f) {
      const int64_t k = (static_cast<int64_t>(f) / stride[d]) % shape[d];  // f's index along d
      const size_t first = f - static_cast<size_t>(k * stride[d]);         // the same at index 0
      same = std::memcmp(&values[f], &values[first], sizeof(float)) == 0;
    }
    if (same) kept[d] = 1;
  }
  std::vector<float> out(static_cast<size_t>(shape_numel(kept)));
  std::vector<int64_t> idx(rank, 0);
  for (float& o : out) {
    int64_t f = 0;
    for (size_t d = 0; d < rank; ++d) f += idx[d] * stride[d];
    o = values[static_cast<size_t>(f)];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < kept[d]) break;
      idx[d] = 0;
    }
  }
  return Tensor::from_f32(out, kept);
}

bool all_zero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.ptr<float>()[i] != 0.0f) return false;
  return true;
}

}  // namespace

int fold_reshaped_constant_adds(Graph& g, std::map<std::string, ValueType>& types,
                                const std::set<std::string>& exposed) {
  const auto readers = readers_of(g);
  std::vector<bool> drop(g.nodes.size(), false);
  std::map<std::string, std::string> renamed;  // a Reshape back's output -> A, where M is zeros
  std::vector<std::string> gone;               // values the folds removed
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& there = g.nodes[i];
    if (!is_node(there, "Reshape", 2)) continue;
    const auto a_idx = sole_reader(readers, exposed, there.outputs[0]);
    if (!a_idx || !is_node(g.nodes[*a_idx], "Add", 2)) continue;
    const Node& add = g.nodes[*a_idx];
    const std::string& m = add.inputs[0] == there.outputs[0] ? add.inputs[1] : add.inputs[0];
    const auto b_idx = sole_reader(readers, exposed, add.outputs[0]);
    if (m == there.outputs[0] || !b_idx || !is_node(g.nodes[*b_idx], "Reshape", 2)) continue;
    const Node& back = g.nodes[*b_idx];
    auto init = g.initializers.find(m);
    if (init == g.initializers.end() || !g.constant_initializers.count(m) || init->second.dtype() != DType::Float32)
      continue;
    auto r = renamed.find(there.inputs[0]);
    const std::string a = r == renamed.end() ? there.inputs[0] : r->second;
    const ValueType &at = types.at(there.inputs[0]), &mid = types.at(there.outputs[0]);
    if (at.dtype != DType::Float32 || types.at(add.outputs[0]) != mid || types.at(back.outputs[0]) != at) continue;
    Tensor laid = collapse_constant_dims(broadcast_values(init->second, mid.shape), at.shape);
    drop[i] = drop[*a_idx] = true;
    gone.insert(gone.end(), {there.outputs[0], add.outputs[0]});
    ++folded;
    if (all_zero(laid) && !exposed.count(back.outputs[0])) {  // x + 0 is x but for a zero's sign
      renamed[back.outputs[0]] = a;
      gone.push_back(back.outputs[0]);
      drop[*b_idx] = true;
      continue;
    }
    const std::string name = unique_name(m + "_laid_out", types);
    types[name] = ValueType{DType::Float32, laid.shape()};
    g.initializers[name] = std::move(laid);
    g.constant_initializers.insert(name);
    Node sum = fused_node("Add", "", add, "unreshaped");
    sum.inputs = add.inputs[0] == m ? std::vector<std::string>{name, a} : std::vector<std::string>{a, name};
    sum.outputs = {back.outputs[0]};
    g.nodes[*b_idx] = std::move(sum);
  }
  if (!folded) return 0;
  drop_nodes(g, drop);
  for (Node& n : g.nodes)
    for (auto& in : n.inputs)
      if (auto r = renamed.find(in); r != renamed.end()) in = r->second;
  for (const auto& v : gone) types.erase(v);
  return folded;
}

namespace {

// Node n's Slice range over the input's shape `in`, where every parameter it has is a constant
// of the graph; nullopt otherwise.
std::optional<SliceRange> constant_slice(const Graph& g, const Node& n, const Shape& in) {
  InputValues values(n.inputs.size(), nullptr);
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    if (n.inputs[i].empty()) continue;
    auto t = g.initializers.find(n.inputs[i]);
    if (t == g.initializers.end() || !g.constant_initializers.count(n.inputs[i])) return std::nullopt;
    values[i] = &t->second;
  }
  return node_slice_range(n, in, values);
}

// Whether r takes all of `in` but along `axis`, where it starts at `start` and takes `count`.
bool takes_only(const SliceRange& r, const Shape& in, size_t axis, int64_t start, int64_t count) {
  for (size_t d = 0; d < in.size(); ++d) {
    const bool along = d == axis;
    if (r.step[d] != 1 || r.start[d] != (along ? start : 0) || r.out[d] != (along ? count : in[d])) return false;
  }
  return true;
}

}  // namespace

int fuse_roll(Graph& g, std::map<std::string, ValueType>& types, const std::set<std::string>& exposed) {
  int fused = 0;
  {
    const auto readers = readers_of(g);
    const auto producer = producers_of(g);
    std::vector<bool> drop(g.nodes.size(), false);
    for (Node& cat : g.nodes) {
      if (!is_node(cat, "Concat", 2)) continue;
      const Node* slices[2];
      bool ok = true;
      for (int k = 0; k < 2 && ok; ++k) {
        auto p = producer.find(cat.inputs[k]);
        ok = p != producer.end() && sole_reader(readers, exposed, cat.inputs[k]) && !drop[p->second];
        if (ok) slices[k] = &g.nodes[p->second];
        ok = ok && slices[k]->domain.empty() && slices[k]->op_type == "Slice" && slices[k]->outputs.size() == 1;
      }
      if (!ok || slices[0]->inputs[0] != slices[1]->inputs[0] || cat.inputs[0] == cat.inputs[1]) continue;
      const std::string& x = slices[0]->inputs[0];
      const Shape& in = types.at(x).shape;
      const auto axis = static_cast<size_t>(normalize_axis(cat.attrs.get_int("axis", 0), in.size()));
      const auto first = constant_slice(g, *slices[0], in), second = constant_slice(g, *slices[1], in);
      if (!first || !second) continue;
      // [k, n) then [0, k): Y[i] = X[(i + k) mod n].
      const int64_t n = in[axis], k = first->start[axis];
      if (k <= 0 || k >= n || !takes_only(*first, in, axis, k, n - k) || !takes_only(*second, in, axis, 0, k)) continue;
      for (const Node* sl : slices) {
        drop[static_cast<size_t>(sl - g.nodes.data())] = true;
        types.erase(sl->outputs[0]);
      }
      Node roll = fused_node("Roll", kCbtDomain, cat, "roll");
      roll.inputs = {x};
      roll.outputs = cat.outputs;
      roll.attrs.set("axes", std::vector<int64_t>{static_cast<int64_t>(axis)});
      roll.attrs.set("shifts", std::vector<int64_t>{k});
      cat = std::move(roll);
      ++fused;
    }
    if (fused) drop_nodes(g, drop);
  }
  // A Roll of a Roll along other axes (torch.roll over two dims) is one Roll: they commute.
  const auto readers = readers_of(g);
  const auto producer = producers_of(g);
  std::vector<bool> drop(g.nodes.size(), false);
  auto is_roll = [](const Node& n) { return n.domain == kCbtDomain && n.op_type == "Roll"; };
  for (Node& outer : g.nodes) {
    if (!is_roll(outer)) continue;
    auto p = producer.find(outer.inputs[0]);
    if (p == producer.end() || drop[p->second] || !is_roll(g.nodes[p->second]) ||
        !sole_reader(readers, exposed, outer.inputs[0]))
      continue;
    const Node& inner = g.nodes[p->second];
    std::vector<int64_t> axes = inner.attrs.get_ints("axes"), shifts = inner.attrs.get_ints("shifts");
    const std::vector<int64_t> more = outer.attrs.get_ints("axes"), by = outer.attrs.get_ints("shifts");
    bool apart = true;
    for (int64_t a : more) apart = apart && std::find(axes.begin(), axes.end(), a) == axes.end();
    if (!apart) continue;
    axes.insert(axes.end(), more.begin(), more.end());
    shifts.insert(shifts.end(), by.begin(), by.end());
    drop[p->second] = true;
    types.erase(outer.inputs[0]);
    outer.inputs[0] = inner.inputs[0];
    outer.attrs.set("axes", axes);
    outer.attrs.set("shifts", shifts);
  }
  drop_nodes(g, drop);
  return fused;
}

}  // namespace cbt
