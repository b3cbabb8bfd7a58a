// RotaryEmbedding as Slice, Split, Gather, Mul, Sub, Add and Concat (rotary_embedding.h).
#include "graph/rotary_embedding.h"

#include <vector>

#include "graph/errors.h"

namespace cbt {

bool is_rotary_embedding(const Node& n) { return n.domain.empty() && n.op_type == "RotaryEmbedding"; }

void mark_rotary_caches_constant(Graph& g) {
  for (const Node& n : g.nodes)
    if (is_rotary_embedding(n))
      for (size_t i : {1, 2})
        if (n.has_input(i) && g.initializers.count(n.inputs[i])) g.constant_initializers.insert(n.inputs[i]);
}

Expansion expand_rotary_embedding(const Node& n, const std::map<std::string, ValueType>& types,
                                  const FreshName& fresh) {
  auto fail = [&n](const std::string& msg) { throw ModelError("node " + n.describe() + ": " + msg); };
  if (!n.has_input(0) || !n.has_input(1) || !n.has_input(2) || n.outputs.empty() || n.outputs[0].empty())
    fail("RotaryEmbedding takes X, cos_cache and sin_cache and gives Y");
  const ValueType& x = types.at(n.inputs[0]);
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
    fail(std::string("X must be float32 or float64, is ") + dtype_name(x.dtype));
  const size_t rank = x.shape.size();
  if (rank != 3 && rank != 4) fail("X must be 3-D or 4-D, is " + shape_str(x.shape));
  const int64_t heads = rank == 4 ? x.shape[1] : n.attrs.get_int("num_heads", 0);
  if (heads <= 0) fail("a 3-D X needs num_heads");
  const int64_t width = rank == 4 ? x.shape[1] * x.shape[3] : x.shape[2];
  if (width % heads) fail("X's hidden size " + std::to_string(width) + " is not a multiple of num_heads");
  const int64_t head = width / heads;
  const int64_t rot =
      n.attrs.get_int("rotary_embedding_dim", 0) > 0 ? n.attrs.get_int("rotary_embedding_dim", 0) : head;
  if (rot > head || rot % 2)
    fail("rotary_embedding_dim " + std::to_string(rot) + " must be even and at most " + std::to_string(head));
  const ValueType& cos = types.at(n.inputs[1]);
  if (cos.dtype != x.dtype || types.at(n.inputs[2]).dtype != x.dtype) fail("the caches must have X's type");
  if (cos.shape.empty() || cos.shape.back() != rot / 2 || types.at(n.inputs[2]).shape != cos.shape)
    fail("the caches " + shape_str(cos.shape) + " must end in rotary_embedding_dim / 2 = " + std::to_string(rot / 2) +
         " and have one shape");
  const bool by_position = n.has_input(3);
  if (cos.shape.size() != (by_position ? 2u : 3u))
    fail(by_position ? "with position_ids the caches must be 2-D (positions, rotary_embedding_dim / 2)"
                     : "without position_ids the caches must be 3-D (batch, sequence, rotary_embedding_dim / 2)");

  ExpansionWriter w(n.name.empty() ? n.outputs[0] : n.name, fresh);
  auto add = [&w](const std::string& op, std::vector<std::string> in, Attributes a = {}, const std::string& out = "") {
    return w.add(op, std::move(in), std::move(a), op, out);
  };
  auto perm = [&](const std::string& v, const std::string& out = "") {
    Attributes a;
    a.set("perm", std::vector<int64_t>{0, 2, 1, 3});
    return add("Transpose", {v}, a, out);
  };
  auto slice = [&](const std::string& v, int64_t from, int64_t to, int64_t step = 1) {
    return add("Slice",
               {v, w.ints({from}, "starts"), w.ints({to}, "ends"), w.ints({-1}, "axes"), w.ints({step}, "steps")});
  };
  auto concat = [&](std::vector<std::string> in, const std::string& out = "") {
    Attributes a;
    a.set("axis", int64_t{-1});
    return add("Concat", std::move(in), a, out);
  };
  // X as (batch, sequence, heads, head).
  const std::string xs =
      rank == 4 ? perm(n.inputs[0]) : add("Reshape", {n.inputs[0], w.ints({0, 0, heads, head}, "shape")});
  const std::string turned = rot == head ? xs : slice(xs, 0, rot);
  std::string c = n.inputs[1], s = n.inputs[2];
  if (by_position) {
    c = add("Gather", {c, n.inputs[3]});
    s = add("Gather", {s, n.inputs[3]});
  }
  const std::string axis2 = w.ints({2}, "axis2");
  c = add("Unsqueeze", {c, axis2});  // (batch, sequence, 1, rot / 2): the same for every head
  s = add("Unsqueeze", {s, axis2});
  const bool interleaved = n.attrs.get_int("interleaved", 0) != 0;
  const std::string x1 = interleaved ? slice(turned, 0, rot, 2) : slice(turned, 0, rot / 2);
  const std::string x2 = interleaved ? slice(turned, 1, rot, 2) : slice(turned, rot / 2, rot);
  const std::string re = add("Sub", {add("Mul", {c, x1}), add("Mul", {s, x2})});
  const std::string im = add("Add", {add("Mul", {s, x1}), add("Mul", {c, x2})});
  std::string y;
  if (interleaved) {
    const std::string last = w.ints({-1}, "last_axis");
    y = add("Reshape",
            {concat({add("Unsqueeze", {re, last}), add("Unsqueeze", {im, last})}), w.ints({0, 0, 0, rot}, "shape")});
  } else {
    y = concat({re, im});
  }
  if (rot < head) y = concat({y, slice(xs, rot, head)});
  if (rank == 4)
    perm(y, n.outputs[0]);
  else
    add("Reshape", {y, w.ints({0, 0, width}, "shape")}, {}, n.outputs[0]);
  return std::move(w.ex);
}

std::pair<std::string, std::string> rotary_embedding_op_summary() {
  return {"RotaryEmbedding",
          "rotary position embedding (3-D or 4-D, interleaved or halves, partial rotary_embedding_dim, position_ids or "
          "per-token caches; the caches never trained): Slice, Gather, Mul and Concat at binding"};
}

}  // namespace cbt
