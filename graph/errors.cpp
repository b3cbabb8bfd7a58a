// Out-of-line helper of the check macros.
#include "graph/errors.h"

namespace cbt::detail {

void throw_internal(const char* expr, const char* file, int line, const std::string& msg) {
  std::ostringstream os;
  os << "internal error: check `" << expr << "` failed at " << file << ":" << line;
  if (!msg.empty()) os << ": " << msg;
  throw InternalError(os.str());
}

}  // namespace cbt::detail
