// write_file_atomically: POSIX open/write/fsync/rename.
#include "runtime/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "graph/errors.h"

namespace cbt {

void write_file_atomically(const std::string& path, std::string_view contents) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = ".";  // built in place: GCC 12 warns wrongly (-Wrestrict) about "." + string
  name += target.filename().string();
  name += ".tmp.XXXXXX";
  std::string tmpl = (dir / name).string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0)
    throw UserError("cannot write " + path + ": " + std::strerror(errno));
  auto fail = [&](const char* what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw UserError("cannot write " + path + " (" + what + "): " + std::strerror(err));
  };
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (::fchmod(fd, 0644) != 0) fail("chmod");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw UserError("cannot write " + path + " (close): " + std::strerror(err));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw UserError("cannot write " + path + " (rename): " + std::strerror(err));
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void ensure_writable_folder(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError("cannot create " + what + " " + dir + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) throw UserError(what + " " + dir + " is not a folder");
  std::string probe = (fs::path(dir) / ".cbtrain.probe.XXXXXX").string();
  int fd = mkstemp(probe.data());
  if (fd < 0) throw UserError("cannot write in " + what + " " + dir + ": " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace cbt
