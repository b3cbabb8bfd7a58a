// Switches read from the environment (the diagnostics' CBT_LOG_* variables).
#pragma once
#include <cstdlib>
#include <string_view>

namespace cbt {

// Whether the environment variable `name` is set to something other than "" or "0".
inline bool env_switch_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

}  // namespace cbt
