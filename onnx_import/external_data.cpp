// External tensor data: confined to the model's folder, bounds-checked, read with pread.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "onnx_import/proto_model.h"

namespace cbt {

namespace fs = std::filesystem;

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

uint64_t parse_u64(const std::string& s, const std::string& key, const std::string& what) {
  CBT_MODEL_CHECK(!s.empty() && s.find_first_not_of("0123456789") == std::string::npos, what, ": external data ", key,
                  " '", s, "' is not a non-negative integer");
  uint64_t v = 0;
  for (char c : s)
    CBT_MODEL_CHECK(
        !__builtin_mul_overflow(v, 10u, &v) && !__builtin_add_overflow(v, static_cast<uint64_t>(c - '0'), &v), what,
        ": external data ", key, " '", s, "' overflows");
  return v;
}

bool is_within(const fs::path& inner, const fs::path& folder) {
  auto [f, i] = std::mismatch(folder.begin(), folder.end(), inner.begin(), inner.end());
  return f == folder.end() && i != inner.end();
}

// The file that `location` names, checked to stay below `folder` after resolving links.
fs::path resolve_location(const std::string& location, const fs::path& folder, const std::string& what) {
  CBT_MODEL_CHECK(!location.empty(), what, ": external data has no location");
  CBT_MODEL_CHECK(location.find('\0') == std::string::npos, what, ": external data location contains a NUL byte");
  fs::path rel(location);
  CBT_MODEL_CHECK(!rel.is_absolute() && !rel.has_root_name() && !rel.has_root_directory(), what,
                  ": external data location '", location,
                  "' is an absolute path; it must be relative to the model's folder");
  for (const auto& part : rel)
    CBT_MODEL_CHECK(part != "..", what, ": external data location '", location,
                    "' contains '..'; it must stay inside the model's folder");
  std::error_code ec;
  fs::path base = fs::canonical(folder.empty() ? fs::path(".") : folder, ec);
  CBT_MODEL_CHECK(!ec, what, ": cannot resolve the model's folder: ", ec.message());
  fs::path full = fs::weakly_canonical(base / rel, ec);
  CBT_MODEL_CHECK(!ec, what, ": cannot resolve external data location '", location, "': ", ec.message());
  CBT_MODEL_CHECK(is_within(full, base), what, ": external data location '", location, "' resolves to ", full.string(),
                  ", outside the model's folder ", base.string(), " (symbolic links must not lead out)");
  return full;
}

}  // namespace

bool is_external(const onnx::TensorProto& t) {
  return t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL;
}

void read_external_data(const onnx::TensorProto& t, const fs::path& folder, void* dst, uint64_t bytes,
                        const std::string& what) {
  std::string location;
  uint64_t offset = 0;
  bool has_length = false;
  uint64_t length = 0;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = parse_u64(kv.value(), "offset", what);
    else if (kv.key() == "length") {
      length = parse_u64(kv.value(), "length", what);
      has_length = true;
    }
  }
  fs::path file = resolve_location(location, folder, what);

  Fd f;
  // O_NOFOLLOW: the resolved path has no links left; one appearing now is refused.
  f.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  CBT_MODEL_CHECK(f.fd >= 0, what, ": cannot open external data '", location, "': ", std::strerror(errno));
  struct stat st {};
  CBT_MODEL_CHECK(::fstat(f.fd, &st) == 0, what, ": cannot stat external data '", location, "'");
  CBT_MODEL_CHECK(S_ISREG(st.st_mode), what, ": external data '", location, "' is not a regular file");
  // A second hard link may be a file from elsewhere placed in the folder under another name.
  CBT_MODEL_CHECK(st.st_nlink == 1, what, ": external data '", location, "' has ", st.st_nlink,
                  " hard links; refusing a file that may live outside the model's folder");
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  CBT_MODEL_CHECK(offset <= file_size, what, ": external data offset ", offset, " is beyond the end of '", location,
                  "' (", file_size, " bytes)");
  if (!has_length) length = file_size - offset;
  uint64_t end = 0;
  CBT_MODEL_CHECK(!__builtin_add_overflow(offset, length, &end) && end <= file_size, what, ": external data range [",
                  offset, ", +", length, ") exceeds '", location, "' (", file_size, " bytes)");
  CBT_MODEL_CHECK(length == bytes, what, ": external data length ", length, " does not match the tensor's size of ",
                  bytes, " bytes");

  auto* p = static_cast<char*>(dst);
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t r = ::pread(f.fd, p + done, bytes - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    CBT_MODEL_CHECK(r > 0, what, ": reading external data '", location,
                    "' failed: ", r < 0 ? std::strerror(errno) : "unexpected end of file");
    done += static_cast<uint64_t>(r);
  }
}

}  // namespace cbt
