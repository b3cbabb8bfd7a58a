// Internal to onnx_import/: the ModelProto handle and the protobuf-facing helpers.
#pragma once
#include <onnx/onnx_pb.h>

#include <filesystem>
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

// Gives every normalisation node (scale, bias, statistics) and every Conv/ConvTranspose/Gemm
// (bias) its own copy of an initializer that an earlier node already uses: exporters merge
// initializers of equal value, which would tie such layers in training. Returns one note per
// copy ("name -> copy (op 'node')"); the copies are added to `g`.
std::vector<std::string> untie_layer_parameters(onnx::GraphProto& g);

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
