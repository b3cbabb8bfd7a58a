// Opening, size-limiting and parsing an ONNX file; model-level version and domain checks.
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "onnx_import/proto_model.h"

namespace cbt {

namespace {

// IR 3 came with opset 7 (our oldest); IR 11 is the newest whose main-graph fields we read.
constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kMaxIrVersion = 13;

// Closes the descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void check_versions(const onnx::ModelProto& m) {
  CBT_MODEL_CHECK(m.has_ir_version() && m.ir_version() > 0, "missing ir_version (not an ONNX model?)");
  CBT_MODEL_CHECK(m.ir_version() >= kMinIrVersion && m.ir_version() <= kMaxIrVersion, "IR version ", m.ir_version(),
                  " is not supported (supported: ", kMinIrVersion, "..", kMaxIrVersion, ")");
  CBT_MODEL_CHECK(m.has_graph(), "the model has no graph");
  bool has_default = false;
  for (const auto& op : m.opset_import()) {
    const std::string& d = op.domain();
    if (d.empty() || d == "ai.onnx") {
      has_default = true;
      CBT_MODEL_CHECK(op.version() >= kMinOpset && op.version() <= kMaxOpset, "opset ", op.version(),
                      " of the default domain is not supported (supported: ", kMinOpset, "..", kMaxOpset,
                      "; re-export with an opset in that range)");
    }
  }
  CBT_MODEL_CHECK(has_default, "the model imports no opset of the default ONNX domain");
}

}  // namespace

void read_model_proto(const std::string& path, const ImportOptions& opts, onnx::ModelProto& out) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) throw UserError(path + ": cannot open model: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw UserError(path + ": cannot stat model: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw UserError(path + ": not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  CBT_MODEL_CHECK(size > 0, "the file is empty");
  CBT_MODEL_CHECK(size <= opts.max_file_bytes, "the file has ", size, " bytes, more than the limit of ",
                  opts.max_file_bytes);
  CBT_MODEL_CHECK(size <= static_cast<uint64_t>(INT_MAX), "the file has ", size,
                  " bytes; protobuf models are limited to 2 GiB (use external data)");

  google::protobuf::io::FileInputStream raw(f.fd);
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(static_cast<int>(size));
  bool ok = out.ParseFromCodedStream(&in);
  if (raw.GetErrno() != 0) throw UserError(path + ": cannot read model: " + std::strerror(raw.GetErrno()));
  CBT_MODEL_CHECK(ok, "not a valid ONNX model: protobuf parsing failed (truncated or corrupt file)");
  check_versions(out);
}

}  // namespace cbt
