// Named start-up totals (start_costs.h).
#include "ops/start_costs.h"

#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include "ops/env_switch.h"

namespace cbt {
namespace {

struct Totals {
  std::mutex m;
  std::vector<std::pair<std::string, std::pair<double, long>>> entries;  // name -> (ms, count)
};

Totals& totals() {
  static Totals t;
  return t;
}

}  // namespace

void add_start_cost(std::string_view name, double ms) {
  Totals& t = totals();
  std::lock_guard lock(t.m);
  for (auto& [n, v] : t.entries)
    if (n == name) {
      v.first += ms, ++v.second;
      return;
    }
  t.entries.push_back({std::string(name), {ms, 1}});
}

std::string start_costs() {
  Totals& t = totals();
  std::lock_guard lock(t.m);
  std::string out;
  char buf[128];
  for (const auto& [n, v] : t.entries) {
    std::snprintf(buf, sizeof buf, "%s%s %.1f ms (%ld)", out.empty() ? "" : ", ", n.c_str(), v.first, v.second);
    out += buf;
  }
  return out;
}

bool log_start_costs() {
  static const bool on = env_switch_on("CBT_LOG_START");
  return on;
}

}  // namespace cbt
