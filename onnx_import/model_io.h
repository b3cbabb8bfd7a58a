// Reading ONNX models into the IR (validated as untrusted input) and writing trained ones back.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "graph/tensor.h"

namespace cbt {

// Limits applied before anything large is read or allocated.
struct ImportOptions {
  uint64_t max_file_bytes = 2ull << 30;    // the .onnx file itself (protobuf cannot exceed 2 GiB)
  uint64_t max_tensor_bytes = 4ull << 30;  // all initializers and tensor attributes together
};

// The original ModelProto (and where it came from); defined inside onnx_import/ only so that
// no ONNX or protobuf header leaks out.
struct OnnxModelProto;

struct ImportedModel {
  Graph graph;
  std::string path;  // the file it was loaded from
  std::string producer_name;
  std::string producer_version;
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;        // domain ("" for the default domain) -> version
  std::shared_ptr<const OnnxModelProto> proto;  // the original (untied, below), for save_model
  // Initializers that an exporter had merged and that load_model gave each layer a copy of
  // (untie_layer_parameters): "name -> copy (op 'node')". save_model writes the copies.
  std::vector<std::string> untied;
  // Float initializers that the exporter made from parameters, buffers or constants (constant
  // folding: e.g. a transposed weight, a gathered position bias) where torch.export's graph
  // signature in the file shows folded parameters: trained as parameters (apply_torch_signature).
  std::vector<std::string> exporter_made;
  // BatchNorm layers that the exporter folded into the convolutions (the signature names their
  // running statistics, the file lacks them): they train as the convolutions' scale and shift.
  int folded_batch_norms = 0;
};

// Supported default-domain opsets; per-op support is checked by the schemas.
inline constexpr int64_t kMinOpset = 7;
inline constexpr int64_t kMaxOpset = 25;

// Reads, validates and converts a model. Throws UserError when the file cannot be read and
// ModelError (naming the file and the node/tensor) for an invalid or unsupported model.
ImportedModel load_model(const std::string& path, const ImportOptions& opts = {});

struct SaveOptions {
  // Models whose weights exceed this are written with external data in "<path>.data"
  // next to the model (protobuf messages are limited to 2 GiB).
  uint64_t inline_limit_bytes = 2ull << 30;
};

// Writes `original` with the data of every initializer named in `trained` replaced (same
// dtype and shape required); graph and opsets stay as they were. Names that came from
// Constant nodes are skipped (they are constants, never trained). The file is written
// atomically; on failure a UserError names the path and no partial file is left behind.
void save_model(const ImportedModel& original, const std::map<std::string, Tensor>& trained, const std::string& path,
                const SaveOptions& opts = {});

}  // namespace cbt
