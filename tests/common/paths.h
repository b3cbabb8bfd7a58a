// Paths of the source tree and the built cbtrain binary, for tests.
#pragma once
#include <cstdlib>
#include <string>

namespace cbt::test {

inline std::string source_path(const std::string& rel) { return std::string(CBT_SOURCE_DIR) + "/" + rel; }

// The cbtrain executable (CTest sets CBTRAIN; direct runs fall back to the build tree).
inline std::string cbtrain_binary() {
  const char* env = std::getenv("CBTRAIN");
  return env ? env : std::string(CBT_BINARY_DIR) + "/tools/cbtrain";
}

}  // namespace cbt::test
