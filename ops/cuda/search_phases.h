// Where a convolution search's milliseconds go, for the log of CBT_LOG_CONV_ALGOS=1: the host's
// clock split into named laps (the device's work counts where the host waits for it).
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace cbt::cuda {

class SearchPhases {
 public:
  // The time since the last lap (or since this was made) goes to `name`; laps of one name add up.
  void lap(const char* name);
  double total_ms() const;
  // "name 1.2 + name 0.3 ms", in the order the names first came.
  std::string str() const;
  // (name, milliseconds) in that order.
  const std::vector<std::pair<std::string, double>>& laps() const { return ms_; }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, double>> ms_;
};

// Laps `name` on `phases` when there is one (the searches pass null when they do not log).
inline void lap(SearchPhases* phases, const char* name) {
  if (phases) phases->lap(name);
}

}  // namespace cbt::cuda
