// Reverse-mode differentiation over the node list, driven by the gradient-rule table.
#include "graph/autodiff.h"

#include <algorithm>

#include "graph/channels_last.h"
#include "graph/fusion.h"
#include "graph/layout_fusion.h"
#include "graph/op_schema.h"

namespace cbt {

namespace {

// Appends nodes to the training graph and infers their types as they are added.
class GraphEmitter : public GradEmitter {
 public:
  GraphEmitter(Graph& g, std::map<std::string, ValueType>& types) : g_(g), types_(types) {}

  std::vector<std::string> emit(const std::string& op_type, const std::string& domain, std::vector<std::string> inputs,
                                size_t num_outputs, Attributes attrs, const std::string& hint) override {
    add(new_node(op_type, domain, std::move(inputs), num_outputs, std::move(attrs), hint));
    return g_.nodes.back().outputs;
  }

  void add(Node n) {
    auto out = infer_types(n, types_, constants(), g_.opset);
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) types_[n.outputs[i]] = out[i];
    g_.nodes.push_back(std::move(n));
  }

  const ValueType& type(const std::string& v) const override {
    auto it = types_.find(v);
    CBT_CHECK(it != types_.end(), "autodiff: unknown value ", v);
    return it->second;
  }

  std::string fresh(const std::string& hint) override {
    std::string base = hint.empty() ? "v" : hint;
    for (;; ++counter_) {
      std::string n = base + "__" + std::to_string(counter_);
      if (!types_.count(n) && !reserved_.count(n)) {
        reserved_.insert(n);
        ++counter_;
        return n;
      }
    }
  }

 private:
  std::map<std::string, Tensor> constants() const {
    std::map<std::string, Tensor> c;
    for (const auto& name : g_.constant_initializers) c[name] = g_.initializers.at(name);
    for (const auto& [name, t] : g_.initializers)
      if (!is_floating(t.dtype())) c[name] = t;
    return c;
  }
  Graph& g_;
  std::map<std::string, ValueType>& types_;
  std::set<std::string> reserved_;
  int counter_ = 0;
};

const Node* producer_of(const Graph& g, const std::string& v) {
  for (const auto& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end()) return &n;
  return nullptr;
}

}  // namespace

std::vector<std::string> state_initializers(const Graph& g) {
  std::vector<std::string> out;
  for (const auto& [name, t] : g.initializers)
    if (is_floating(t.dtype()) && !g.constant_initializers.count(name)) out.push_back(name);
  return out;
}

TrainingGraph build_training_graph(const BoundGraph& bound, const TrainingGraphOptions& opt) {
  TrainingGraph tg;
  Graph& g = tg.graph;
  g.name = bound.graph.name;
  g.opset = bound.graph.opset;
  g.inputs = bound.graph.inputs;
  g.outputs = bound.graph.outputs;
  g.initializers = bound.graph.initializers;
  g.constant_initializers = bound.graph.constant_initializers;
  tg.types = bound.types;
  GraphEmitter em(g, tg.types);

  CBT_MODEL_CHECK(!bound.graph.inputs.empty(), "the model has no data input");
  CBT_MODEL_CHECK(bound.graph.inputs.size() == 1, "the model has ", bound.graph.inputs.size(),
                  " data inputs; training supports models with one input");
  tg.data_input = bound.graph.inputs[0].name;

  // 1. Forward nodes in their training form.
  for (Node n : bound.graph.nodes) {
    const OpSchema* s = find_schema(n.domain, n.op_type);
    CBT_MODEL_CHECK(s, "unsupported op ", n.op_type);
    if (s->training_rewrite) s->training_rewrite(n, em);
    em.add(std::move(n));
  }
  if (opt.fuse) {
    std::set<std::string> exposed{opt.output};
    for (const auto& o : g.outputs) exposed.insert(o.name);
    fuse_rms_norm(g, tg.types, exposed);
    fuse_roll(g, tg.types, exposed);
    if (opt.gpu_fusions) {
      fuse_silu(g, tg.types, exposed);
      fuse_linear(g, tg.types, exposed);
      fold_reshaped_constant_adds(g, tg.types, exposed);
      fuse_gelu(g, tg.types, exposed);
      fuse_attention(g, tg.types, exposed);
    }
    fuse_relu(g, tg.types, exposed);
  }

  // 2. The loss on the chosen output. A trailing Softmax/LogSoftmax is skipped for cross
  // entropy: the loss takes logits (numerically stable, and the gradient is the same).
  std::string out = opt.output.empty() ? bound.graph.outputs.at(0).name : opt.output;
  CBT_MODEL_CHECK(tg.types.count(out), "model output '", out, "' does not exist");
  tg.prediction = out;
  std::string logits = out;
  if (opt.loss == LossKind::CrossEntropy) {
    const Node* p = producer_of(g, out);
    if (p && p->domain.empty() && (p->op_type == "Softmax" || p->op_type == "LogSoftmax")) {
      const ValueType& t = tg.types.at(p->inputs[0]);
      int64_t axis = p->attrs.get_int("axis", -1);
      if (axis < 0) axis += static_cast<int64_t>(t.shape.size());
      if (axis == static_cast<int64_t>(t.shape.size()) - 1) logits = p->inputs[0];
    }
    CBT_MODEL_CHECK(tg.types.at(logits).shape.size() == 2, "output '", out, "' has shape ",
                    shape_str(tg.types.at(logits).shape),
                    "; cross-entropy needs (batch, classes); choose another --output or loss");
  }
  const ValueType& lt = tg.types.at(logits);
  // The labels are class indices (N) for every loss; MSE and BCE compare the output with
  // their one-hot encoding (N, C), or with the label itself for one value per sample.
  tg.labels_input = em.fresh("labels");
  ValueInfo labels{tg.labels_input, DType::Int64, {Dim{lt.shape.at(0), ""}}};
  g.inputs.push_back(labels);
  tg.types[tg.labels_input] = ValueType{DType::Int64, {lt.shape.at(0)}};
  auto constant = [&](const std::string& hint, Tensor t) {
    std::string name = em.fresh(hint);
    tg.types[name] = ValueType{t.dtype(), t.shape()};
    g.initializers[name] = std::move(t);
    g.constant_initializers.insert(name);
    return name;
  };

  if (opt.loss == LossKind::CrossEntropy) {
    Attributes a;
    a.set("label_smoothing", opt.label_smoothing);
    tg.loss = em.emit("SoftmaxCrossEntropy", kCbtDomain, {logits, tg.labels_input}, 2, a, "loss")[0];
  } else {
    const int64_t n = lt.shape.at(0), per = n ? shape_numel(lt.shape) / n : 0;
    const bool one_hot = lt.shape.size() == 2 && lt.shape[1] >= 2;
    CBT_MODEL_CHECK(one_hot || per == 1, "output '", out, "' has shape ", shape_str(lt.shape),
                    "; --loss mse/bce need (batch, classes) or one value per sample");
    Attributes to;
    to.set("to", int64_t{lt.dtype == DType::Float64 ? 11 : 1});  // ONNX DOUBLE / FLOAT
    std::string target;
    if (one_hot) {
      std::vector<int64_t> cls(static_cast<size_t>(lt.shape[1]));
      for (size_t c = 0; c < cls.size(); ++c) cls[c] = static_cast<int64_t>(c);
      std::string col =
          em.emit("Reshape", "", {tg.labels_input, constant("label_column", Tensor::from_i64({-1, 1}, {2}))}, 1, {},
                  "label_column")[0];
      std::string hit =
          em.emit("Equal", "", {col, constant("classes", Tensor::from_i64(cls, {lt.shape[1]}))}, 1, {}, "one_hot")[0];
      target = em.emit("Cast", "", {hit}, 1, to, "target")[0];
    } else {
      std::vector<int64_t> dims(lt.shape.begin(), lt.shape.end());
      std::string shaped = em.emit(
          "Reshape", "",
          {tg.labels_input, constant("target_shape", Tensor::from_i64(dims, {static_cast<int64_t>(dims.size())}))}, 1,
          {}, "target")[0];
      target = em.emit("Cast", "", {shaped}, 1, to, "target")[0];
    }
    const char* op = opt.loss == LossKind::MeanSquaredError ? "MeanSquaredError" : "BinaryCrossEntropyWithLogits";
    tg.loss = em.emit(op, kCbtDomain, {logits, target}, 1, {}, "loss")[0];
  }
  size_t loss_node = g.nodes.size() - 1;

  // 3. Which values need gradients: forward propagation from trainable initializers.
  std::set<std::string> requires_grad;
  for (const auto& name : state_initializers(g))
    if (!opt.frozen.count(name)) requires_grad.insert(name);
  std::set<std::string> candidates = requires_grad;
  for (size_t i = 0; i <= loss_node; ++i) {
    const Node& n = g.nodes[i];
    const OpSchema* s = find_schema(n.domain, n.op_type);
    for (int k : s->diff_inputs)
      if (n.has_input(k) && requires_grad.count(n.inputs[k])) {
        for (const auto& o : n.outputs)
          if (!o.empty() && is_floating(tg.types.at(o).dtype)) requires_grad.insert(o);
        break;
      }
  }
  CBT_MODEL_CHECK(requires_grad.count(tg.loss), "no trainable parameter influences the loss on output '", out, "'");

  // 4. Reverse sweep. Gradients with several contributions are summed with Add.
  std::map<std::string, std::vector<std::string>> contrib;
  Tensor one = Tensor::scalar_f32(1.0f);
  if (lt.dtype == DType::Float64) one = cast_float(one, DType::Float64);
  std::string seed = em.fresh("loss_grad_seed");
  g.initializers[seed] = one;
  g.constant_initializers.insert(seed);
  tg.types[seed] = ValueType{one.dtype(), {}};
  contrib[tg.loss].push_back(seed);

  auto gradient_of = [&](const std::string& v) -> std::string {
    auto it = contrib.find(v);
    if (it == contrib.end() || it->second.empty()) return "";
    auto& parts = it->second;
    while (parts.size() > 1) {
      std::string sum = em.emit("Add", "", {parts[0], parts[1]}, 1, {}, "grad_sum")[0];
      parts.erase(parts.begin(), parts.begin() + 2);
      parts.insert(parts.begin(), sum);
    }
    return parts[0];
  };

  std::vector<std::string> missing_rules;
  for (size_t i = loss_node + 1; i-- > 0;) {
    Node n = g.nodes[i];  // copy: emitting appends to g.nodes
    const OpSchema* s = find_schema(n.domain, n.op_type);
    GradContext gc{n, {}, {}, em};
    bool any = false;
    for (const auto& o : n.outputs) {
      gc.dY.push_back(o.empty() ? "" : gradient_of(o));
      any = any || !gc.dY.back().empty();
    }
    if (!any) continue;
    gc.wants.assign(n.inputs.size(), false);
    bool wants_any = false;
    for (int k : s->diff_inputs)
      if (n.has_input(k) && requires_grad.count(n.inputs[k])) gc.wants[k] = wants_any = true;
    if (!wants_any) continue;
    if (!s->grad) {
      missing_rules.push_back(n.describe());
      continue;
    }
    auto dX = s->grad(gc);
    for (size_t k = 0; k < n.inputs.size() && k < dX.size(); ++k)
      if (gc.wants[k] && !dX[k].empty()) contrib[n.inputs[k]].push_back(dX[k]);
  }
  if (!missing_rules.empty()) {
    std::string msg = "these ops lie on the gradient path but have no gradient rule:";
    for (const auto& m : missing_rules) msg += "\n  " + m;
    throw ModelError(msg);
  }

  // Frozen initializers that every node only reads at a differentiable input become
  // constants; one that a node updates in place (BatchNorm statistics) stays a buffer.
  for (const auto& name : opt.frozen) {
    if (!g.initializers.count(name) || g.constant_initializers.count(name)) continue;
    bool read_only = true;
    for (size_t i = 0; i <= loss_node && read_only; ++i) {
      const Node& n = g.nodes[i];
      const OpSchema* s = find_schema(n.domain, n.op_type);
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] == name &&
            std::find(s->diff_inputs.begin(), s->diff_inputs.end(), static_cast<int>(k)) == s->diff_inputs.end())
          read_only = false;
    }
    if (!read_only) continue;
    g.constant_initializers.insert(name);
    tg.frozen.push_back(name);
  }

  if (opt.fuse) {
    std::set<std::string> exposed{tg.loss, tg.prediction};
    for (const auto& o : g.outputs) exposed.insert(o.name);
    fuse_loss_gradient(g, tg.types, exposed);
    fuse_gradient_sum_relu(g, tg.types, exposed);
  }

  std::set<std::string> taken;  // each parameter's gradient must be a value of its own
  for (const auto& name : state_initializers(g)) {
    std::string gname = requires_grad.count(name) ? gradient_of(name) : "";
    if (!gname.empty() && (taken.count(gname) || !producer_of(g, gname)))
      gname = em.emit("Identity", "", {gname}, 1, {}, "grad_copy")[0];
    if (!gname.empty()) {
      taken.insert(gname);
      tg.params.push_back(name);
      tg.grads[name] = gname;
    } else {
      tg.buffers.push_back(name);
    }
  }
  if (opt.bf16_channels_last) {
    std::set<std::string> exposed{tg.loss, tg.prediction};
    for (const auto& o : g.outputs) exposed.insert(o.name);
    for (const auto& [param, grad] : tg.grads) exposed.insert(grad);
    to_channels_last_bf16(g, tg.types, exposed);
  }
  return tg;
}

}  // namespace cbt
