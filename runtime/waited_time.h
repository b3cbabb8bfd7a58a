// Time spent waiting as the waiting thread saw it, for the deadlines of collectives: counted
// from poll to poll, one poll adding at most a second. A job suspended as a whole (SIGSTOP and
// SIGCONT of every rank, a scheduler's suspend) has waited for nothing in the meantime, and a
// rank must not find its peers late when they all resume.
#pragma once
#include <algorithm>
#include <chrono>

namespace cbt {

class WaitedTime {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr double kMaxStepS = 1.0;  // the most one poll adds

  // Starts again from zero.
  void restart() {
    seconds_ = 0;
    last_ = Clock::now();
  }
  // Seconds waited so far, this poll included.
  double poll() {
    const auto now = Clock::now();
    seconds_ += std::min(kMaxStepS, std::chrono::duration<double>(now - last_).count());
    last_ = now;
    return seconds_;
  }

 private:
  double seconds_ = 0;
  Clock::time_point last_ = Clock::now();
};

}  // namespace cbt
