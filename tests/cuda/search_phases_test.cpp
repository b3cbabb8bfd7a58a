// The laps of a convolution search's log (SearchPhases): each name's laps add up, the names keep
// the order they first came in, and the total is the time since the clock was made.
#include "ops/cuda/search_phases.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <regex>
#include <string>
#include <thread>

namespace cbt::cuda {
namespace {

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

TEST(SearchPhases, LapsOfOneNameAddUpInTheOrderTheyFirstCame) {
  std::mt19937 rng(5);
  const int a1 = 2 + static_cast<int>(rng() % 5), b = 2 + static_cast<int>(rng() % 5),
            a2 = 2 + static_cast<int>(rng() % 5);
  const auto start = std::chrono::steady_clock::now();
  SearchPhases laps;
  sleep_ms(a1);
  laps.lap("alpha");
  sleep_ms(b);
  laps.lap("beta");
  sleep_ms(a2);
  laps.lap("alpha");
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::smatch m;
  const std::string s = laps.str();
  ASSERT_TRUE(std::regex_match(s, m, std::regex(R"(alpha ([0-9.]+) \+ beta ([0-9.]+) ms)"))) << s;
  const double alpha = std::stod(m[1]), beta = std::stod(m[2]);
  EXPECT_GE(alpha, a1 + a2 - 0.1) << s;  // sleeps last at least as long as asked
  EXPECT_GE(beta, b - 0.1) << s;
  EXPECT_LE(laps.total_ms(), wall) << s;
  EXPECT_NEAR(laps.total_ms(), alpha + beta, 0.11) << s;  // str() rounds each to 0.1
  // lap() on no clock does nothing (the searches that do not log pass none).
  lap(nullptr, "alpha");
  lap(&laps, "gamma");
  EXPECT_NE(laps.str().find(" + gamma "), std::string::npos) << laps.str();
}

}  // namespace
}  // namespace cbt::cuda
