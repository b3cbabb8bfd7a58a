// The start-up totals of CBT_LOG_START (ops/start_costs.h): sums and counts by name, in the
// order the names came, from several threads at once.
#include "ops/start_costs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cbt {
namespace {

// The total and count start_costs() prints for `name` (-1 when it is absent).
std::pair<double, long> entry(const std::string& all, const std::string& name) {
  const size_t at = all.find(name + " ");
  if (at == std::string::npos) return {-1, -1};
  double ms = 0;
  long n = 0;
  if (std::sscanf(all.c_str() + at + name.size(), " %lf ms (%ld)", &ms, &n) != 2) return {-1, -1};
  return {ms, n};
}

TEST(StartCosts, AddUpByNameFromManyThreads) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ms(0.5, 3.0);
  const std::string a = "test cost a " + std::to_string(rng()), b = "test cost b " + std::to_string(rng());
  std::vector<double> add_a(64), add_b(40);
  double sum_a = 0, sum_b = 0;
  for (double& v : add_a) sum_a += v = ms(rng);
  for (double& v : add_b) sum_b += v = ms(rng);
  add_start_cost(a, add_a[0]);  // a comes first
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    for (size_t i = 1; i < add_a.size(); ++i) add_start_cost(a, add_a[i]);
  });
  threads.emplace_back([&] {
    for (double v : add_b) add_start_cost(b, v);
  });
  for (auto& t : threads) t.join();
  const std::string all = start_costs();
  const auto [ta, na] = entry(all, a);
  const auto [tb, nb] = entry(all, b);
  EXPECT_EQ(na, 64) << all;
  EXPECT_EQ(nb, 40) << all;
  EXPECT_NEAR(ta, sum_a, 0.051) << all;  // printed to 0.1 ms
  EXPECT_NEAR(tb, sum_b, 0.051) << all;
  EXPECT_LT(all.find(a + " "), all.find(b + " ")) << all;
}

TEST(StartCosts, AScopeAddsItsDuration) {
  const std::string name = "test scope " + std::to_string(std::random_device{}());
  {
    StartCost cost(name);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto [ms, n] = entry(start_costs(), name);
  EXPECT_EQ(n, 1);
  EXPECT_GE(ms, 19.9);
}

}  // namespace
}  // namespace cbt
