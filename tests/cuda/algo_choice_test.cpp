// The rule that picks a cuDNN convolution algorithm among cuDNN's candidates (plain data:
// runs without a GPU).
#include "ops/cuda/algo_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

namespace cbt::cuda {
namespace {

AlgoCandidate cand(float ms, bool det, bool usable = true) { return {ms, det, usable}; }

TEST(AlgoChoice, MeasuredTakesADeterministicCandidateWithinTheSlack) {
  // Find's order: a non-deterministic 0.100 ms one first, a deterministic one 20% slower.
  std::vector<AlgoCandidate> c = {cand(0.100f, false), cand(0.120f, true), cand(0.300f, true)};
  EXPECT_EQ(choose_candidate(c, true, 0.25), 1);
  EXPECT_EQ(choose_candidate(c, true, 0.0), 0);   // no slack: the fastest
  EXPECT_EQ(choose_candidate(c, true, 0.15), 0);  // 20% is beyond 15%
}

TEST(AlgoChoice, MeasuredKeepsTheFastestWhenTheFirstDeterministicIsTooSlow) {
  // Only the first deterministic candidate is compared: later ones are slower still.
  std::vector<AlgoCandidate> c = {cand(0.1f, false), cand(0.11f, false), cand(0.2f, true), cand(0.21f, true)};
  EXPECT_EQ(choose_candidate(c, true, 0.25), 0);
}

TEST(AlgoChoice, UnusableCandidatesAreSkippedOnBothSides) {
  // The fastest is unusable (e.g. beyond the workspace); so is a deterministic one.
  std::vector<AlgoCandidate> c = {cand(0.05f, true, false), cand(0.10f, false), cand(0.11f, true, false),
                                  cand(0.12f, true)};
  EXPECT_EQ(choose_candidate(c, true, 0.25), 3);
  EXPECT_EQ(choose_candidate(c, true, 0.1), 1);
  EXPECT_EQ(choose_candidate({cand(0.1f, false, false)}, true, 0.25), -1);
  EXPECT_EQ(choose_candidate({}, true, 0.25), -1);
}

TEST(AlgoChoice, HeuristicRankingPrefersAnyDeterministicCandidate) {
  // Times mean nothing in a heuristic ranking: the first usable deterministic one, however far.
  std::vector<AlgoCandidate> c = {cand(0, false), cand(0, false), cand(0, true), cand(0, true)};
  EXPECT_EQ(choose_candidate(c, false, 0.25), 2);
  EXPECT_EQ(choose_candidate({cand(0, false), cand(0, false)}, false, 0.25), 0);
}

TEST(AlgoChoice, EnginesThatChangeTheArithmeticAreNotAllowed) {
  const EngineNotes plain;
  EXPECT_TRUE(engine_allowed(plain, float_precision(false), false));
  EXPECT_TRUE(engine_allowed(plain, float_precision(false), true));
  EngineNotes tc;
  tc.tensor_core = true;  // TF32 for float32 data: only with --precision tf32
  EXPECT_FALSE(engine_allowed(tc, float_precision(false), false));
  EXPECT_TRUE(engine_allowed(tc, float_precision(true), false));
  EngineNotes nd;
  nd.nondeterministic = true;  // atomic sums: not under --deterministic
  EXPECT_TRUE(engine_allowed(nd, float_precision(false), false));
  EXPECT_FALSE(engine_allowed(nd, float_precision(false), true));
  // Never, whatever the flags: narrower inputs or sums, FFT or Winograd, run-time compiling.
  for (bool EngineNotes::*flag : {&EngineNotes::down_convert, &EngineNotes::reduced_precision, &EngineNotes::fft,
                                  &EngineNotes::runtime_compilation}) {
    EngineNotes n;
    n.*flag = true;
    for (bool tf32 : {false, true})
      for (bool det : {false, true}) EXPECT_FALSE(engine_allowed(n, float_precision(tf32), det));
  }
}

// float32 engines must agree with the reference to the order of their sums; TF32 ones (only
// under --precision tf32) to a few of TF32's roundoffs, but not as far as a Winograd engine
// (1e-2 on LeNet-5's first convolution). NaN and infinities never pass.
TEST(AlgoChoice, Tf32WidensTheToleranceButNotToWinogradsErrors) {
  std::mt19937 rng(5);
  for (int i = 0; i < 100; ++i) {
    const double fp32_ok = std::uniform_real_distribution<double>(0, 1e-4)(rng);
    const double tf32_only = std::uniform_real_distribution<double>(1.01e-4, 5e-3)(rng);
    const double never = std::uniform_real_distribution<double>(5.01e-3, 1.0)(rng);
    EXPECT_TRUE(accurate_enough(fp32_ok, float_precision(false)));
    EXPECT_TRUE(accurate_enough(fp32_ok, float_precision(true)));
    EXPECT_FALSE(accurate_enough(tf32_only, float_precision(false))) << tf32_only;
    EXPECT_TRUE(accurate_enough(tf32_only, float_precision(true))) << tf32_only;
    EXPECT_FALSE(accurate_enough(never, float_precision(true))) << never;
  }
  EXPECT_FALSE(accurate_enough(1e-2, float_precision(true)));
  EXPECT_LT(max_relative_error(float_precision(false)), max_relative_error(float_precision(true)));
  for (bool tf32 : {false, true}) {
    EXPECT_FALSE(accurate_enough(std::nan(""), float_precision(tf32)));
    EXPECT_FALSE(accurate_enough(HUGE_VAL, float_precision(tf32)));
  }
}

TEST(AlgoChoice, TheChoiceIsAlwaysUsableAndNeverSlowerThanTheSlackAllows) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> ms(0.01f, 1.0f);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<AlgoCandidate> c(1 + rng() % 8);
    for (auto& x : c) x = cand(ms(rng), rng() % 2 == 0, rng() % 4 != 0);
    std::sort(c.begin(), c.end(), [](const AlgoCandidate& a, const AlgoCandidate& b) { return a.ms < b.ms; });
    const double slack = (rng() % 5) * 0.1;
    const int i = choose_candidate(c, true, slack);
    int fastest = -1;
    for (int j = 0; j < static_cast<int>(c.size()); ++j)
      if (c[j].usable && fastest < 0) fastest = j;
    ASSERT_EQ(i < 0, fastest < 0);
    if (i < 0) continue;
    EXPECT_TRUE(c[i].usable);
    EXPECT_LE(c[i].ms, c[fastest].ms * (1.0 + slack) + 1e-6);
    if (i != fastest) EXPECT_TRUE(c[i].deterministic);
  }
}

TEST(AlgoChoice, TheDefaultSlackIsAQuarterUnlessTheEnvironmentSaysOtherwise) {
  const char* v = std::getenv("CBT_CONV_DET_SLACK");
  if (!v || !*v)
    EXPECT_DOUBLE_EQ(deterministic_slack(), 0.25);
  else
    EXPECT_GE(deterministic_slack(), 0.0);
}

TEST(AlgoChoice, EnginesAreTimedAsManyAtOnceAsThereAreLearnersUpToEight) {
  const char* v = std::getenv("CBT_CONV_CONCURRENCY");
  if (v && *v) {  // an experiment's fixed count, the same for every learner count
    EXPECT_EQ(timing_concurrency(1), timing_concurrency(16));
    return;
  }
  EXPECT_EQ(timing_concurrency(1), 1);
  EXPECT_EQ(timing_concurrency(5), 5);
  EXPECT_EQ(timing_concurrency(16), 8);
  EXPECT_EQ(timing_concurrency(0), 1);
}

}  // namespace
}  // namespace cbt::cuda
