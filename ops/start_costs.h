// Where a run's start goes (CBT_LOG_START=1): named totals of host milliseconds and counts,
// added by whatever sets itself up on first use (convolution searches and execution plans, CUDA
// graph captures, a program's first run); fit() prints them as the first epoch's training ends,
// before its evaluation sets up kernels of its own.
#pragma once
#include <chrono>
#include <string>
#include <string_view>
#include <utility>

namespace cbt {

// Adds `ms` and one occurrence to the total of `name` (thread-safe).
void add_start_cost(std::string_view name, double ms);
// "name 12.3 ms (4), name 0.5 ms (1)" in the order the names first came; "" when none.
std::string start_costs();
// Whether CBT_LOG_START is set to something other than "" or "0".
bool log_start_costs();

// Adds the time from its construction to its destruction to `name`.
class StartCost {
 public:
  explicit StartCost(std::string name) : name_(std::move(name)) {}
  ~StartCost() {
    add_start_cost(name_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
  }
  StartCost(const StartCost&) = delete;
  StartCost& operator=(const StartCost&) = delete;

 private:
  std::string name_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace cbt
