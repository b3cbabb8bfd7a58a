// write_file_atomically: POSIX mkstemp/write/fsync/rename, then fsync of the folder.
#include "graph/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "graph/errors.h"

namespace cbt {

int write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

void write_file_atomically(const std::string& path, const std::function<int(int fd)>& body) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = ".";  // built in place: GCC 12 warns wrongly (-Wrestrict) about "." + string
  name += target.filename().string();
  name += ".tmp.XXXXXX";
  std::string tmp = (dir / name).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw UserError("cannot write " + path + ": " + std::strerror(errno));
  const char* step = "chmod";
  int err = ::fchmod(fd, 0644) != 0 ? errno : 0;
  if (!err) step = "write", err = body(fd);
  if (!err && ::fsync(fd) != 0) step = "fsync", err = errno;
  if (::close(fd) != 0 && !err) step = "close", err = errno;
  if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) step = "rename", err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    throw UserError("cannot write " + path + " (" + step + "): " + std::strerror(err));
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    // Some filesystems cannot fsync a folder (EINVAL); the file itself is already durable.
    const int r = ::fsync(dfd);
    const int e = errno;
    ::close(dfd);
    if (r != 0 && e != EINVAL) throw UserError("cannot write " + path + " (fsync of its folder): " + std::strerror(e));
  }
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  write_file_atomically(path, [&](int fd) { return write_all(fd, contents.data(), contents.size()); });
}

void ensure_writable_folder(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError("cannot create " + what + " " + dir + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) throw UserError(what + " " + dir + " is not a folder");
  std::string probe = (fs::path(dir) / ".cbtrain.probe.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) throw UserError("cannot write in " + what + " " + dir + ": " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace cbt
