// Internal to onnx_import/: the ModelProto handle and the protobuf-facing helpers.
#pragma once
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "onnx_import/model_io.h"

namespace cbt {

struct OnnxModelProto {
  onnx::ModelProto model;
  std::filesystem::path folder;            // external data is resolved below this folder
  std::set<std::string> constant_outputs;  // values that came from Constant nodes
};

// Opens, size-checks and parses `path`; checks IR version, opsets and domains.
void read_model_proto(const std::string& path, const ImportOptions& opts, onnx::ModelProto& out);

// Maps an ONNX element type to ours; throws ModelError (naming `what`) for unsupported ones.
DType dtype_from_onnx(int32_t elem_type, const std::string& what);
int32_t dtype_to_onnx(DType t);

// Bytes of the tensor's data from its dims and type, overflow-checked; rejects negative dims.
uint64_t tensor_proto_bytes(const onnx::TensorProto& t, const std::string& what);

// Converts a TensorProto (typed fields, raw_data or external data below `folder`).
Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& what, const std::filesystem::path& folder);

// What torch.export's graph signature, which PyTorch's dynamo exporter writes into the graph's
// metadata, says the model's tensors were: parameters and buffers by name (their initializers'
// names), and how many of the parameters are no initializer of the file (the exporter folded
// them into others, or merged equal ones).
struct TorchSignature {
  bool present = false;
  std::set<std::string> parameters, buffers;
  std::map<std::string, std::string> placeholders;  // the exported program's names -> parameters
  int missing_parameters = 0;
  int folded_batch_norms = 0;  // BatchNorms whose running mean is no initializer (folded away)
};
TorchSignature read_torch_signature(const onnx::GraphProto& g);
// The parameters that the PyTorch operation a node came from read (its "pkg.torch.onnx.fx_node"
// metadata, by the signature's placeholder names), in order; none where it has no such metadata.
std::vector<std::string> parameters_read_by(const onnx::NodeProto& n, const TorchSignature& sig);

// Gives layers their own parameters where an exporter merged equal ones (untie.cpp): the output
// of every Identity of a float initializer becomes an initializer of its own (the TorchScript
// exporter's form), every normalisation node (scale, bias, statistics) and every
// Conv/ConvTranspose/Gemm (bias) gets its own copy of an initializer that an earlier node already
// uses, and so does every node that reads, in place of a parameter of `sig` that is no
// initializer of the file, another parameter of equal value that the exporter kept (the node's
// metadata names the parameter it read); that copy takes the missing parameter's name. The
// copies are added to `g`.
struct Untied {
  std::vector<std::string> notes;                  // one per copy: "name -> copy (op 'node')"
  std::map<std::string, std::string> original_of;  // copy -> the initializer it copies
};
Untied untie_layer_parameters(onnx::GraphProto& g, const TorchSignature& sig);

// What `sig` says, applied to the converted graph: buffers (but BatchNormalization's running
// statistics, which training updates) and single values that are no parameter of the signature
// (exporter-made constants such as a folded attention scale) become constants. Returns the float
// initializers of more than one value that the signature does not name, where it shows folded
// parameters: made by the exporter from parameters, buffers or constants, they are trained. A
// copy that untie_layer_parameters made (`original_of`) is what it copies.
std::vector<std::string> apply_torch_signature(const TorchSignature& sig,
                                               const std::map<std::string, std::string>& original_of, Graph& g);

// Replaces the data of `t` with `value` stored inline as raw_data.
void set_tensor_proto_data(onnx::TensorProto& t, const Tensor& value);

// External data: resolves `location` below `folder` (no absolute paths, no "..", no links
// leading out) and reads exactly `bytes` bytes into `dst`.
bool is_external(const onnx::TensorProto& t);
void read_external_data(const onnx::TensorProto& t, const std::filesystem::path& folder, void* dst, uint64_t bytes,
                        const std::string& what);

// Checks names and producers of the converted graph and sorts its nodes topologically.
void check_and_sort_graph(Graph& g);

}  // namespace cbt
