// load_model: ModelProto -> IR Graph (nodes, attributes, values, initializers, constants).
#include <unordered_set>

#include "graph/composite_ops.h"
#include "graph/decomposition_constants.h"
#include "graph/legacy_ops.h"
#include "graph/op_schema.h"
#include "graph/rotary_embedding.h"
#include "graph/split_to_sequence.h"
#include "onnx_import/proto_model.h"

namespace cbt {

namespace fs = std::filesystem;

namespace {

using AP = onnx::AttributeProto;

std::string normalise_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

std::string node_desc(const onnx::NodeProto& n) {
  std::string d = n.op_type();
  if (!n.name().empty())
    d += " '" + n.name() + "'";
  else if (n.output_size() > 0)
    d += " (output '" + n.output(0) + "')";
  return "node " + d;
}

void check_domain(const onnx::NodeProto& n) {
  const std::string d = normalise_domain(n.domain());
  CBT_MODEL_CHECK(d != "ai.onnx.ml", node_desc(n), ": ONNX-ML operators (domain ai.onnx.ml) are ",
                  "not supported; export the model without classical-ML operators");
  CBT_MODEL_CHECK(d.empty(), node_desc(n), ": unknown operator domain '", n.domain(),
                  "' (only the default ONNX domain is supported)");
}

// Total bytes of all tensors in the model, admitted against the budget before any is read.
void admit_tensor_bytes(const onnx::GraphProto& g, const ImportOptions& opts) {
  uint64_t total = 0;
  auto add = [&](const onnx::TensorProto& t, const std::string& what) {
    uint64_t b = tensor_proto_bytes(t, what);
    CBT_MODEL_CHECK(!__builtin_add_overflow(total, b, &total), what, ": total tensor size overflows");
    CBT_MODEL_CHECK(total <= opts.max_tensor_bytes, what, ": tensors need more than ", opts.max_tensor_bytes,
                    " bytes in total, over the import budget");
  };
  for (const auto& t : g.initializer()) add(t, "initializer '" + t.name() + "'");
  CBT_MODEL_CHECK(g.sparse_initializer_size() == 0, "sparse initializers are not supported");
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_t()) add(a.t(), node_desc(n) + ": attribute '" + a.name() + "'");
      for (const auto& t : a.tensors()) add(t, node_desc(n) + ": attribute '" + a.name() + "'");
    }
}

// Older files leave `type` unset; infer it from the field that is present.
AP::AttributeType attr_type(const AP& a) {
  if (a.type() != AP::UNDEFINED) return a.type();
  if (a.has_g()) return AP::GRAPH;
  if (a.has_t()) return AP::TENSOR;
  if (a.has_s()) return AP::STRING;
  if (a.has_f()) return AP::FLOAT;
  if (a.has_i()) return AP::INT;
  if (a.floats_size()) return AP::FLOATS;
  if (a.ints_size()) return AP::INTS;
  if (a.strings_size()) return AP::STRINGS;
  if (a.graphs_size()) return AP::GRAPHS;
  if (a.tensors_size()) return AP::TENSORS;
  return AP::UNDEFINED;
}

AttrValue convert_attr(const AP& a, const std::string& what, const fs::path& folder) {
  CBT_MODEL_CHECK(a.ref_attr_name().empty(), what,
                  ": attribute references (ref_attr_name) are only valid inside functions");
  switch (attr_type(a)) {
    case AP::INT:
      return a.i();
    case AP::FLOAT:
      return a.f();
    case AP::STRING:
      return a.s();
    case AP::INTS:
      return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case AP::FLOATS:
      return std::vector<float>(a.floats().begin(), a.floats().end());
    case AP::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case AP::TENSOR:
      return tensor_from_proto(a.t(), what, folder);
    case AP::GRAPH:
    case AP::GRAPHS:
      throw ModelError(what + ": sub-graph attributes (If/Loop/Scan bodies) are not supported");
    case AP::TENSORS:
      throw ModelError(what + ": tensor-list attributes are not supported");
    case AP::SPARSE_TENSOR:
    case AP::SPARSE_TENSORS:
      throw ModelError(what + ": sparse tensor attributes are not supported");
    case AP::TYPE_PROTO:
    case AP::TYPE_PROTOS:
      throw ModelError(what + ": type attributes are not supported");
    case AP::UNDEFINED:
      break;
  }
  throw ModelError(what + ": attribute has no value or an unknown type");
}

// The value of a Constant node as a tensor (attribute forms of opsets 1..21).
Tensor constant_value(const onnx::NodeProto& n, const fs::path& folder) {
  CBT_MODEL_CHECK(n.attribute_size() == 1, node_desc(n), ": a Constant needs exactly one value attribute, found ",
                  n.attribute_size());
  CBT_MODEL_CHECK(n.output_size() == 1 && !n.output(0).empty(), node_desc(n), ": a Constant needs exactly one output");
  const AP& a = n.attribute(0);
  const std::string what = node_desc(n) + ": attribute '" + a.name() + "'";
  const std::string& k = a.name();
  if (k == "value") {
    CBT_MODEL_CHECK(a.has_t(), what, " must be a tensor");
    return tensor_from_proto(a.t(), what, folder);
  }
  if (k == "value_float") return Tensor::scalar_f32(a.f());
  if (k == "value_floats") {
    std::vector<float> v(a.floats().begin(), a.floats().end());
    return Tensor::from_f32(v, {static_cast<int64_t>(v.size())});
  }
  if (k == "value_int") return Tensor::from_i64({a.i()}, {});
  if (k == "value_ints") {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    return Tensor::from_i64(v, {static_cast<int64_t>(v.size())});
  }
  throw ModelError(what + ": Constant attribute '" + k + "' is not supported");
}

ValueInfo convert_value_info(const onnx::ValueInfoProto& v, bool require_shape) {
  const std::string what = "graph value '" + v.name() + "'";
  CBT_MODEL_CHECK(!v.name().empty(), "a graph input or output has no name");
  ValueInfo out;
  out.name = v.name();
  out.dtype = DType::Undefined;  // outputs may leave it to shape inference
  // Outputs may come without a type; shape inference supplies it.
  if (!v.has_type() && !require_shape) return out;
  CBT_MODEL_CHECK(v.type().has_tensor_type(), what, ": only tensor values are supported");
  const auto& tt = v.type().tensor_type();
  CBT_MODEL_CHECK(tt.elem_type() != 0 || !require_shape, what, ": element type is missing");
  if (tt.elem_type() != 0) out.dtype = dtype_from_onnx(tt.elem_type(), what);
  CBT_MODEL_CHECK(tt.has_shape() || !require_shape, what, ": shape is missing");
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    Dim dim;
    if (d.has_dim_value()) {
      CBT_MODEL_CHECK(d.dim_value() >= 0, what, ": negative dimension ", d.dim_value(), " at axis ", i);
      dim.value = d.dim_value();
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      dim.symbol = d.dim_param();
    } else {
      // Unknown: a symbol of its own, so that it is never equated with another dim.
      dim.symbol = "?" + v.name() + ":" + std::to_string(i);
    }
    out.dims.push_back(std::move(dim));
  }
  return out;
}

void convert_graph(const OnnxModelProto& p, Graph& g, std::set<std::string>& constant_outputs) {
  const onnx::GraphProto& gp = p.model.graph();
  g.name = gp.name();

  for (const auto& t : gp.initializer()) {
    const std::string what = "initializer '" + t.name() + "'";
    CBT_MODEL_CHECK(!t.name().empty(), "an initializer has no name");
    CBT_MODEL_CHECK(!g.initializers.count(t.name()), "duplicate initializer '", t.name(), "'");
    Tensor v = tensor_from_proto(t, what, p.folder);
    // Rank-0 floats are scalars in expressions (epsilon, exponents), never parameters.
    if (v.rank() == 0 && is_floating(v.dtype())) g.constant_initializers.insert(t.name());
    g.initializers.emplace(t.name(), std::move(v));
  }

  std::unordered_set<std::string> input_names;
  for (const auto& v : gp.input()) {
    CBT_MODEL_CHECK(input_names.insert(v.name()).second, "graph input '", v.name(), "' is listed twice");
    // Older exporters list initializers as inputs too; they are not inputs to feed.
    if (g.initializers.count(v.name())) continue;
    g.inputs.push_back(convert_value_info(v, true));
  }
  for (const auto& v : gp.output()) g.outputs.push_back(convert_value_info(v, false));

  for (const auto& n : gp.node()) {
    check_domain(n);
    if (n.op_type() == "Constant") {
      Tensor v = constant_value(n, p.folder);
      const std::string& name = n.output(0);
      CBT_MODEL_CHECK(!g.initializers.count(name), node_desc(n), ": output '", name,
                      "' is also an initializer (two producers)");
      g.initializers.emplace(name, std::move(v));
      g.constant_initializers.insert(name);
      constant_outputs.insert(name);
      continue;
    }
    Node node;
    node.name = n.name();
    node.op_type = n.op_type();
    node.domain = normalise_domain(n.domain());
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const auto& a : n.attribute()) {
      const std::string what = node_desc(n) + ": attribute '" + a.name() + "'";
      CBT_MODEL_CHECK(!node.attrs.has(a.name()), what, " is given twice");
      node.attrs.set(a.name(), convert_attr(a, what, p.folder));
    }
    g.nodes.push_back(std::move(node));
  }
}

}  // namespace

ImportedModel load_model(const std::string& path, const ImportOptions& opts) {
  auto proto = std::make_shared<OnnxModelProto>();
  ImportedModel m;
  m.path = path;
  try {
    read_model_proto(path, opts, proto->model);
    proto->folder = fs::path(path).parent_path();
    const onnx::ModelProto& mp = proto->model;
    for (const auto& n : mp.graph().node()) check_domain(n);
    admit_tensor_bytes(mp.graph(), opts);
    const TorchSignature signature = read_torch_signature(mp.graph());
    Untied untied = untie_layer_parameters(*proto->model.mutable_graph(), signature);
    m.untied = std::move(untied.notes);
    for (const auto& op : mp.opset_import()) m.opsets[normalise_domain(op.domain())] = op.version();
    convert_graph(*proto, m.graph, proto->constant_outputs);
    m.graph.opset = m.opsets.at("");
    upgrade_legacy_ops(m.graph);
    expand_composite_ops(m.graph);
    fold_sequence_reads(m.graph);
    check_and_sort_graph(m.graph);
    mark_constant_inputs(m.graph);
    mark_rotary_caches_constant(m.graph);
    mark_decomposition_constants(m.graph);
    m.exporter_made = apply_torch_signature(signature, untied.original_of, m.graph);
    m.folded_batch_norms = signature.folded_batch_norms;
    m.producer_name = mp.producer_name();
    m.producer_version = mp.producer_version();
    m.ir_version = mp.ir_version();
  } catch (const ModelError& e) {
    throw ModelError(path + ": " + e.what());
  }
  m.proto = std::move(proto);
  return m;
}

}  // namespace cbt
