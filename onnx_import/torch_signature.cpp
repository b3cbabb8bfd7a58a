// Reads torch.export's graph signature from a graph's metadata and applies what it says to the
// converted graph (proto_model.h). ONNX added
// GraphProto.metadata_props (field 16) in 1.16; a libonnx older than that keeps the field among
// the message's unknown fields, so both places are read.
#include <google/protobuf/unknown_field_set.h>

#include <regex>
#include <set>

#include "onnx_import/proto_model.h"

namespace cbt {
namespace {

constexpr int kGraphMetadataField = 16;  // GraphProto.metadata_props
constexpr int kNodeMetadataField = 9;    // NodeProto.metadata_props
constexpr const char* kSignatureKey = "pkg.torch.export.ExportedProgram.graph_signature";
constexpr const char* kFxNodeKey = "pkg.torch.onnx.fx_node";

// The value of the metadata entry `key` of `m`, whose metadata_props is field `number`, or "".
std::string metadata(const google::protobuf::Message& m, int number, const std::string& key) {
  const auto* reflection = m.GetReflection();
  const auto* field = m.GetDescriptor()->FindFieldByNumber(number);
  if (field && field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
    for (int i = 0; i < reflection->FieldSize(m, field); ++i) {
      onnx::StringStringEntryProto e;
      e.CopyFrom(reflection->GetRepeatedMessage(m, field, i));
      if (e.key() == key) return e.value();
    }
    return "";
  }
  const google::protobuf::UnknownFieldSet& unknown = reflection->GetUnknownFields(m);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& f = unknown.field(i);
    if (f.number() != number || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) continue;
    onnx::StringStringEntryProto e;
    if (e.ParseFromString(f.length_delimited()) && e.key() == key) return e.value();
  }
  return "";
}

}  // namespace

TorchSignature read_torch_signature(const onnx::GraphProto& g) {
  TorchSignature s;
  const std::string text = metadata(g, kGraphMetadataField, kSignatureKey);
  if (text.empty()) return s;
  s.present = true;
  // Lines such as "p_fc_weight: PARAMETER target='fc.weight'" and "b_bn_running_mean: BUFFER
  // target='bn.running_mean' persistent=True".
  static const std::regex entry(R"((\w+): (PARAMETER|BUFFER|CONSTANT_TENSOR) target='([^']+)')");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
    if ((*it)[2] == "PARAMETER") {
      s.parameters.insert((*it)[3]);
      s.placeholders[(*it)[1]] = (*it)[3];
    } else {
      s.buffers.insert((*it)[3]);
    }
  }
  std::set<std::string> present;
  for (const auto& t : g.initializer()) present.insert(t.name());
  for (const auto& p : s.parameters)
    if (!present.count(p)) ++s.missing_parameters;
  const std::string mean = ".running_mean";
  for (const auto& b : s.buffers)
    if (b.size() > mean.size() && b.compare(b.size() - mean.size(), mean.size(), mean) == 0 && !present.count(b))
      ++s.folded_batch_norms;
  return s;
}

std::vector<std::string> parameters_read_by(const onnx::NodeProto& n, const TorchSignature& sig) {
  std::vector<std::string> out;
  const std::string fx = metadata(n, kNodeMetadataField, kFxNodeKey);
  static const std::regex placeholder(R"(%(\w+))");
  for (auto it = std::sregex_iterator(fx.begin(), fx.end(), placeholder); it != std::sregex_iterator(); ++it) {
    auto p = sig.placeholders.find((*it)[1]);
    if (p != sig.placeholders.end()) out.push_back(p->second);
  }
  return out;
}

std::vector<std::string> apply_torch_signature(const TorchSignature& sig,
                                               const std::map<std::string, std::string>& original_of, Graph& g) {
  std::vector<std::string> made;
  if (!sig.present) return made;
  // A copy that untie_layer_parameters made stands for the tensor it copies.
  auto original = [&original_of](const std::string& name) {
    auto it = original_of.find(name);
    return it == original_of.end() ? name : it->second;
  };
  std::set<std::string> statistics;  // BatchNormalization's running mean and variance
  for (const Node& n : g.nodes)
    if (n.domain.empty() && n.op_type == "BatchNormalization")
      for (size_t k : {3, 4})
        if (n.has_input(k)) statistics.insert(n.inputs[k]);
  for (const auto& [name, t] : g.initializers) {
    if (!is_floating(t.dtype()) || g.constant_initializers.count(name)) continue;
    const std::string from = original(name);
    if (sig.buffers.count(from)) {
      if (!statistics.count(name)) g.constant_initializers.insert(name);
    } else if (!sig.parameters.count(from)) {
      if (t.numel() == 1)
        g.constant_initializers.insert(name);
      else if (sig.missing_parameters > 0)
        made.push_back(name);
    }
  }
  return made;
}

}  // namespace cbt
