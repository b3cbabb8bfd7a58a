// save_model: the original ModelProto with trained initializers, written atomically.
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <unordered_map>

#include "graph/atomic_file.h"
#include "onnx_import/proto_model.h"

namespace cbt {

namespace fs = std::filesystem;

namespace {

// Inlines tensors whose data live in external files of the original model's folder.
void inline_external(onnx::TensorProto& t, const fs::path& folder, const std::string& what) {
  if (!is_external(t)) return;
  Tensor v(dtype_from_onnx(t.data_type(), what), Shape(t.dims().begin(), t.dims().end()));
  read_external_data(t, folder, v.data(), v.nbytes(), what);
  set_tensor_proto_data(t, v);
}

// Moves the data of initializers of 1 KiB or more (ONNX's convention: small ones, such as
// shape tensors, stay inline where shape inference can read them) into `data_path`, written
// atomically before the model.
void externalise(onnx::GraphProto& g, const fs::path& data_path) {
  constexpr size_t kMinExternalBytes = 1024;
  std::vector<onnx::TensorProto*> moved;
  for (auto& t : *g.mutable_initializer()) {
    const std::string what = "initializer '" + t.name() + "'";
    if (tensor_proto_bytes(t, what) < kMinExternalBytes) continue;
    // Typed fields (float_data, ...) become raw bytes first.
    if (!t.has_raw_data()) set_tensor_proto_data(t, tensor_from_proto(t, what, {}));
    moved.push_back(&t);
  }
  write_file_atomically(data_path.string(), [&](int fd) {
    for (auto* t : moved)
      if (int e = write_all(fd, t->raw_data().data(), t->raw_data().size())) return e;
    return 0;
  });
  uint64_t offset = 0;
  for (auto* t : moved) {
    const uint64_t len = t->raw_data().size();
    t->clear_raw_data();
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", data_path.filename().string());
    add("offset", std::to_string(offset));
    add("length", std::to_string(len));
    offset += len;
  }
}

}  // namespace

void save_model(const ImportedModel& original, const std::map<std::string, Tensor>& trained, const std::string& path,
                const SaveOptions& opts) {
  CBT_CHECK(original.proto, "save_model needs a model returned by load_model");
  const OnnxModelProto& src = *original.proto;
  onnx::ModelProto m = src.model;
  onnx::GraphProto& g = *m.mutable_graph();

  std::unordered_map<std::string, onnx::TensorProto*> by_name;
  for (auto& t : *g.mutable_initializer()) by_name[t.name()] = &t;
  for (const auto& [name, value] : trained) {
    if (src.constant_outputs.count(name)) continue;
    auto it = by_name.find(name);
    if (it == by_name.end())
      throw UserError(path + ": cannot save: the original model has no initializer '" + name + "'");
    onnx::TensorProto& t = *it->second;
    const std::string what = "initializer '" + name + "'";
    const DType dt = dtype_from_onnx(t.data_type(), what);
    const Shape dims(t.dims().begin(), t.dims().end());
    if (value.dtype() != dt || value.shape() != dims)
      throw UserError(detail::concat(path, ": cannot save ", what, ": trained value is ", dtype_name(value.dtype()),
                                     " ", shape_str(value.shape()), ", the model has ", dtype_name(dt), " ",
                                     shape_str(dims)));
    set_tensor_proto_data(t, value);
  }
  try {
    for (auto& t : *g.mutable_initializer()) inline_external(t, src.folder, "initializer '" + t.name() + "'");
    for (auto& n : *g.mutable_node())
      for (auto& a : *n.mutable_attribute())
        if (a.has_t()) inline_external(*a.mutable_t(), src.folder, "attribute '" + a.name() + "'");
  } catch (const ModelError& e) {
    throw UserError(path + ": cannot save: reading " + original.path + ": " + e.what());
  }

  const fs::path data_path(path + ".data");
  const bool external = m.ByteSizeLong() > std::min<uint64_t>(opts.inline_limit_bytes, INT32_MAX);
  if (external) externalise(g, data_path);
  try {
    write_file_atomically(path, [&](int fd) {
      google::protobuf::io::FileOutputStream os(fd);
      if (m.SerializeToZeroCopyStream(&os) && os.Flush()) return 0;
      return os.GetErrno() ? os.GetErrno() : EIO;
    });
  } catch (const UserError&) {
    // The data file is useless without its model.
    if (external) ::unlink(data_path.c_str());
    throw;
  }
}

}  // namespace cbt
