// LearnerThreads: every learner index runs once per call on a thread of its own, the same
// thread from call to call, with the CPU kernels' OpenMP thread count; errors reach the caller.
#include "runtime/learner_threads.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace cbt {
namespace {

TEST(LearnerThreads, EveryIndexRunsOncePerCallOnItsOwnLastingThread) {
  constexpr size_t n = 5;
  LearnerThreads pool(n, 1);
  ASSERT_EQ(pool.size(), n);
  std::vector<std::atomic<int>> calls(n);
  std::vector<std::thread::id> first(n), later(n);
  for (int round = 0; round < 40; ++round)
    pool.run([&](size_t j) {
      calls[j]++;
      (round == 0 ? first : later)[j] = std::this_thread::get_id();
    });
  std::set<std::thread::id> distinct(first.begin(), first.end());
  EXPECT_EQ(distinct.size(), n);
  EXPECT_EQ(distinct.count(std::this_thread::get_id()), 0u);
  for (size_t j = 0; j < n; ++j) {
    EXPECT_EQ(calls[j], 40) << "learner " << j;
    EXPECT_EQ(first[j], later[j]) << "learner " << j << " moved to another thread";
  }
}

TEST(LearnerThreads, TheKernelsOfEachLearnerUseTheGivenOpenMpThreadCount) {
  // What a thread started without the pool's setting would get.
  int fresh = 0;
  std::thread([&] { fresh = omp_get_max_threads(); }).join();
  for (int want : {1, fresh + 1}) {
    LearnerThreads pool(3, want);
    std::map<size_t, int> seen;
    std::mutex m;
    pool.run([&](size_t j) {
      int team = 0;
#pragma omp parallel
      {
#pragma omp single
        team = omp_get_num_threads();
      }
      std::lock_guard lock(m);
      seen[j] = team;
    });
    ASSERT_EQ(seen.size(), 3u);
    for (auto [j, team] : seen) EXPECT_EQ(team, want) << "learner " << j;
  }
}

TEST(LearnerThreads, AnErrorOfOneLearnerReachesTheCallerAndThePoolGoesOn) {
  LearnerThreads pool(4, 1);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.run([&](size_t j) {
    ran++;
    if (j == 2) throw std::runtime_error("learner 2 failed");
  }),
               std::runtime_error);
  EXPECT_EQ(ran, 4) << "the other learners finish their work before the error is thrown";
  ran = 0;
  EXPECT_NO_THROW(pool.run([&](size_t) { ran++; }));
  EXPECT_EQ(ran, 4);
}

}  // namespace
}  // namespace cbt
