// Type inference over a whole graph and folding of constant sub-graphs; recurrent nodes are
// unrolled here, where their sequence length is known (recurrent.h), and Einsum rewritten,
// where its operands' ranks are (einsum.h), OneHot (one_hot.h), GatherElements
// (gather_elements.h), Attention (attention.h), RMSNormalization (rms_normalization.h),
// RotaryEmbedding (rotary_embedding.h) and SplitToSequence read by SequenceAt
// (split_to_sequence.h).
#include "graph/bind.h"

#include <algorithm>
#include <set>

#include "graph/attention.h"
#include "graph/einsum.h"
#include "graph/gather_elements.h"
#include "graph/one_hot.h"
#include "graph/op_schema.h"
#include "graph/recurrent.h"
#include "graph/rms_normalization.h"
#include "graph/rotary_embedding.h"
#include "graph/split_to_sequence.h"

namespace cbt {

ValueType bind_input_type(const ValueInfo& in, const BindOptions& opt) {
  ValueType t{in.dtype, {}};
  for (size_t d = 0; d < in.dims.size(); ++d) {
    const Dim& dim = in.dims[d];
    if (d == 0) {
      t.shape.push_back(opt.batch);  // the batch dimension follows the run, static or not
    } else if (dim.is_static()) {
      t.shape.push_back(dim.value);
    } else if (auto it = opt.symbols.find(dim.symbol); it != opt.symbols.end()) {
      t.shape.push_back(it->second);
    } else {
      throw ModelError("graph input '" + in.name + "' has an unknown size in dimension " + std::to_string(d) +
                       (dim.symbol.empty() ? "" : " ('" + dim.symbol + "')") +
                       "; only the batch dimension (0) may be dynamic");
    }
  }
  return t;
}

namespace {

// What a rewrite at binding may read: the types bound so far, the constants, the opset, and
// fresh names for the values it adds.
struct RewriteInputs {
  const std::map<std::string, ValueType>& types;
  const ConstantOf& constant_of;
  int64_t opset;
  const FreshName& fresh;
};

// The ops rewritten at binding into others (but the recurrent ones, which cuDNN may run as
// they are, and whose unrolling reads every constant): which nodes, how, and the line
// `cbtrain ops` shows for them. One table, so that the three stay in step.
struct BindingRewrite {
  bool (*is)(const Node&);
  Expansion (*expand)(const Node&, const RewriteInputs&);
  std::pair<std::string, std::string> (*summary)();
};

const std::vector<BindingRewrite>& binding_rewrites() {
  static const std::vector<BindingRewrite> table{
      {is_einsum, [](const Node& n, const RewriteInputs& in) { return expand_einsum(n, in.types, in.opset, in.fresh); },
       einsum_op_summary},
      {is_one_hot,
       [](const Node& n, const RewriteInputs& in) { return expand_one_hot(n, in.types, in.constant_of, in.fresh); },
       one_hot_op_summary},
      {is_gather_elements,
       [](const Node& n, const RewriteInputs& in) { return expand_gather_elements(n, in.types, in.opset, in.fresh); },
       gather_elements_op_summary},
      {is_attention,
       [](const Node& n, const RewriteInputs& in) { return expand_attention(n, in.types, in.opset, in.fresh); },
       attention_op_summary},
      {is_rms_normalization,
       [](const Node& n, const RewriteInputs& in) { return expand_rms_normalization(n, in.types, in.fresh); },
       rms_normalization_op_summary},
      {is_rotary_embedding,
       [](const Node& n, const RewriteInputs& in) { return expand_rotary_embedding(n, in.types, in.fresh); },
       rotary_embedding_op_summary},
      {is_folded_split_to_sequence,
       [](const Node& n, const RewriteInputs& in) {
         return expand_split_to_sequence(n, in.types, in.constant_of, in.opset, in.fresh);
       },
       split_to_sequence_op_summary},
  };
  return table;
}

// The table's rewrite of `node`, if any.
const BindingRewrite* rewrite_of(const Node& node) {
  for (const auto& r : binding_rewrites())
    if (r.is(node)) return &r;
  return nullptr;
}

}  // namespace

bool rewritten_at_binding(const Node& node) { return is_recurrent(node) || rewrite_of(node) != nullptr; }

std::vector<std::pair<std::string, std::string>> binding_rewrite_summaries() {
  auto all = recurrent_op_summaries();
  for (const auto& r : binding_rewrites()) all.push_back(r.summary());
  return all;
}

std::vector<ValueType> infer_types(const Node& node, const std::map<std::string, ValueType>& types,
                                   const std::map<std::string, Tensor>& values, int64_t opset) {
  const OpSchema* s = find_schema(node.domain, node.op_type);
  CBT_MODEL_CHECK(s, "node ", node.describe(), ": unsupported op ", node.op_type);
  InferContext ctx{node, {}, {}, opset};
  for (const auto& name : node.inputs) {
    if (name.empty()) {
      ctx.in.emplace_back();
      ctx.values.push_back(nullptr);
      continue;
    }
    auto it = types.find(name);
    CBT_MODEL_CHECK(it != types.end(), "node ", node.describe(), ": input '", name,
                    "' is not produced by any earlier node");
    ctx.in.push_back(it->second);
    auto v = values.find(name);
    ctx.values.push_back(v == values.end() ? nullptr : &v->second);
  }
  std::vector<ValueType> out;
  try {
    out = s->infer(ctx);
  } catch (const ModelError& e) {
    // Attribute getters and shape helpers do not know the node: name it here.
    std::string msg = e.what();
    if (msg.rfind("node ", 0) == 0) throw;
    throw ModelError("node " + node.describe() + ": " + msg);
  }
  CBT_MODEL_CHECK(out.size() >= node.outputs.size() || node.outputs.empty(), "node ", node.describe(), ": has ",
                  node.outputs.size(), " outputs, op defines ", out.size());
  return out;
}

namespace {

bool is_random(const Node& n) { return n.op_type == "Dropout" || n.op_type.rfind("Random", 0) == 0; }

}  // namespace

BoundGraph bind_graph(const Graph& g, const BindOptions& opt, const NodeEvaluator& eval) {
  BoundGraph b;
  b.graph.name = g.name;
  b.graph.opset = g.opset;
  b.graph.inputs = g.inputs;
  b.graph.outputs = g.outputs;
  b.graph.initializers = g.initializers;
  b.graph.constant_initializers = g.constant_initializers;

  for (const auto& in : g.inputs) b.types[in.name] = bind_input_type(in, opt);
  // Constants that folding may use: never trainable float initializers.
  std::map<std::string, Tensor> consts;
  for (const auto& [name, t] : g.initializers) {
    b.types[name] = ValueType{t.dtype(), t.shape()};
    if (!is_floating(t.dtype()) || g.constant_initializers.count(name)) consts[name] = t;
  }

  // Names of every value of `g`, for the values that unrolled recurrent nodes add.
  std::set<std::string> taken;
  const bool unrolls = std::any_of(g.nodes.begin(), g.nodes.end(), rewritten_at_binding);
  if (unrolls) {
    for (const auto& [name, t] : g.initializers) taken.insert(name);
    for (const auto& in : g.inputs) taken.insert(in.name);
    for (const Node& n : g.nodes) taken.insert(n.outputs.begin(), n.outputs.end());
  }
  const FreshName fresh = [&taken](const std::string& hint) {
    std::string name = hint;
    for (int k = 1; taken.count(name); ++k) name = hint + "_" + std::to_string(k);
    taken.insert(name);
    return name;
  };

  // OneHot's depth may be a float initializer, which is read as a constant, never trained.
  const ConstantOf constant_of = [&](const std::string& name) -> const Tensor* {
    auto c = consts.find(name);
    if (c != consts.end()) return &c->second;
    auto i = b.graph.initializers.find(name);
    return i == b.graph.initializers.end() ? nullptr : &i->second;
  };
  std::function<void(const Node&)> bind_node = [&](const Node& node) {
    if (rewritten_at_binding(node))  // the rewrites read their inputs' types: one check for all
      for (const auto& in : node.inputs)
        CBT_MODEL_CHECK(in.empty() || b.types.count(in), "node ", node.describe(), ": input '", in,
                        "' is not produced by any earlier node");
    const auto type_of = [&](size_t i) -> const ValueType* { return &b.types.at(node.inputs[i]); };
    const auto value_of = [&](size_t i) {
      auto it = consts.find(node.inputs[i]);
      return it == consts.end() ? nullptr : &it->second;
    };
    const bool unroll =
        is_recurrent(node) && !(opt.fused_recurrent && read_recurrent_form(node, type_of, value_of).fused());
    const BindingRewrite* rewrite = is_recurrent(node) ? nullptr : rewrite_of(node);
    if (unroll || rewrite) {
      Expansion u = unroll ? unroll_recurrent(node, b.types, consts, g.opset, fresh)
                           : rewrite->expand(node, RewriteInputs{b.types, constant_of, g.opset, fresh});
      for (auto& [name, t] : u.constants) {
        b.types[name] = ValueType{t.dtype(), t.shape()};
        consts[name] = t;
        b.graph.constant_initializers.insert(name);
        b.graph.initializers.emplace(name, std::move(t));
      }
      for (const Node& n : u.nodes) bind_node(n);
      return;
    }
    auto out_types = infer_types(node, b.types, consts, g.opset);
    bool foldable = !is_random(node) && !node.outputs.empty();
    if (node.op_type == "Shape" && node.domain.empty()) {
      foldable = true;  // needs only the (now static) type of its input
    } else {
      for (const auto& name : node.inputs)
        if (!name.empty() && !consts.count(name)) foldable = false;
    }
    if (foldable) {
      std::vector<Tensor> in;
      for (const auto& name : node.inputs) {
        if (name.empty())
          in.emplace_back();
        else if (consts.count(name))
          in.push_back(consts.at(name));
        else
          in.push_back(Tensor(b.types.at(name).dtype, b.types.at(name).shape));  // Shape
      }
      auto out = eval(node, in);
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.outputs[i].empty()) continue;
        consts[node.outputs[i]] = out[i];
        b.graph.initializers[node.outputs[i]] = out[i];
        b.graph.constant_initializers.insert(node.outputs[i]);
        b.types[node.outputs[i]] = ValueType{out[i].dtype(), out[i].shape()};
        b.folded.push_back(node.outputs[i]);
      }
      return;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i].empty()) continue;
      CBT_MODEL_CHECK(!b.types.count(node.outputs[i]), "node ", node.describe(), ": output '", node.outputs[i],
                      "' is produced twice");
      b.types[node.outputs[i]] = out_types[i];
    }
    b.graph.nodes.push_back(node);
  };
  for (const Node& node : g.nodes) bind_node(node);
  for (const auto& out : g.outputs)
    CBT_MODEL_CHECK(b.types.count(out.name), "graph output '", out.name, "' is never produced");
  return b;
}

}  // namespace cbt
