// Named laps of a convolution search (search_phases.h).
#include "ops/cuda/search_phases.h"

#include <cstdio>

namespace cbt::cuda {

void SearchPhases::lap(const char* name) {
  const auto now = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
  last_ = now;
  for (auto& [n, t] : ms_)
    if (n == name) {
      t += ms;
      return;
    }
  ms_.emplace_back(name, ms);
}

double SearchPhases::total_ms() const {
  double sum = 0;
  for (const auto& entry : ms_) sum += entry.second;
  return sum;
}

std::string SearchPhases::str() const {
  std::string out;
  char buf[64];
  for (const auto& [n, t] : ms_) {
    std::snprintf(buf, sizeof buf, "%s%s %.1f", out.empty() ? "" : " + ", n.c_str(), t);
    out += buf;
  }
  return out + " ms";
}

}  // namespace cbt::cuda
