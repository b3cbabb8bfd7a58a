// The learner auto-tuner: its rule fed made-up throughputs, and one real run on the CPU.
#include "runtime/autotune.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <sstream>
#include <vector>

#include "common/paths.h"
#include "onnx_import/model_io.h"

namespace cbt {
namespace {

// Feeds rates[k-1] for k = 1, 2, ... (going up) or k = rates.size(), ..., 1 (going down) until
// the search ends; returns the chosen count and how many counts it measured.
std::pair<int, int> run_search(const std::vector<double>& rates, double threshold, int patience,
                               LearnerSearch::Direction direction = LearnerSearch::Direction::Up) {
  LearnerSearch s(threshold, patience, direction);
  const bool up = direction == LearnerSearch::Direction::Up;
  const int n = static_cast<int>(rates.size());
  int measured = 0;
  for (int i = 0; i < n; ++i) {
    const int k = up ? i + 1 : n - i;
    ++measured;
    if (!s.add(k, rates[static_cast<size_t>(k - 1)])) break;
  }
  return {s.best_learners(), measured};
}
std::pair<int, int> run_search_down(const std::vector<double>& rates, double threshold, int patience) {
  return run_search(rates, threshold, patience, LearnerSearch::Direction::Down);
}

TEST(LearnerSearch, AddsLearnersWhileEachBringsMoreThanTheThresholdOfAShare) {
  // Gains of 90, 80, 60 and 5 (a share is 100, then 95, 90, 82.5): the fifth learner brings 6%.
  auto [best, measured] = run_search({100, 190, 270, 330, 335, 336}, 0.10, 0);
  EXPECT_EQ(best, 4);
  EXPECT_EQ(measured, 5);
}

TEST(LearnerSearch, OneSlowMeasurementDoesNotEndTheSearch) {
  // The measurement of 5 learners came out low (noise); 6 beats 4 by far more than two
  // learners' threshold, so the search goes on and ends at the plateau.
  const std::vector<double> rates = {100, 190, 270, 340, 300, 460, 520, 525, 526, 527};
  EXPECT_EQ(run_search(rates, 0.10, 0).first, 4);  // without patience: stuck at the dip
  auto [best, measured] = run_search(rates, 0.10, 1);
  EXPECT_EQ(best, 7);
  EXPECT_EQ(measured, 9);  // 8 and 9 both fall short: stop
}

TEST(LearnerSearch, AfterAShortfallTheNextCountMustPayForBothLearners) {
  // 5 learners add 2% of a share, 6 add 30% over 4 learners: 15% each, above 10%: kept.
  EXPECT_EQ(run_search({100, 200, 300, 400, 402, 430}, 0.10, 1).first, 6);
  // 6 add 16% over 4 learners: 8% each, below 10%: the search ends at 4.
  auto [best, measured] = run_search({100, 200, 300, 400, 402, 416, 900}, 0.10, 1);
  EXPECT_EQ(best, 4);
  EXPECT_EQ(measured, 6);
}

TEST(LearnerSearch, ThroughputThatFallsIsNeverChosen) {
  auto [best, measured] = run_search({100, 90, 80, 70}, 0.10, 1);
  EXPECT_EQ(best, 1);
  EXPECT_EQ(measured, 3);
}

TEST(LearnerSearch, TheVerdictNamesTheDecision) {
  LearnerSearch s(0.10, 1);
  std::string v;
  EXPECT_TRUE(s.add(1, 100, &v));
  EXPECT_TRUE(s.add(2, 195, &v));
  EXPECT_NE(v.find("keep"), std::string::npos) << v;
  EXPECT_TRUE(s.add(3, 196, &v));
  EXPECT_NE(v.find("one more count"), std::string::npos) << v;
  EXPECT_FALSE(s.add(4, 197, &v));
  EXPECT_NE(v.find("stop"), std::string::npos) << v;
  EXPECT_EQ(s.best_learners(), 2);
  EXPECT_DOUBLE_EQ(s.best_rate(), 195);
}

TEST(LearnerSearchDown, DropsLearnersWhileTheExtraOnesBringAtMostTheThresholdOfAShare) {
  // The curve of the first test above, from the top: 6 and 5 learners bring 1.5% and 6% of a
  // share over 5 and 4; 4 brings 67% over 3: the same 4 as the climb.
  auto [best, measured] = run_search_down({100, 190, 270, 330, 335, 336}, 0.10, 0);
  EXPECT_EQ(best, 4);
  EXPECT_EQ(measured, 4);
  // Every learner pays: the first count is kept after one more.
  auto [all, timed] = run_search_down({100, 200, 300, 400}, 0.10, 0);
  EXPECT_EQ(all, 4);
  EXPECT_EQ(timed, 2);
}

TEST(LearnerSearchDown, OneSlowMeasurementDoesNotHoldTheSearch) {
  // 5 learners came out low (noise), which makes the sixth look worth keeping; 4 does within
  // two learners' threshold of 6 (14% of a share for two), so the search goes on down to it.
  const std::vector<double> rates = {100, 150, 200, 290, 240, 300};
  EXPECT_EQ(run_search_down(rates, 0.10, 0).first, 6);
  auto [best, measured] = run_search_down(rates, 0.10, 1);
  EXPECT_EQ(best, 4);
  EXPECT_EQ(measured, 5);  // 3 and 2 both fall short of 4: stop
}

TEST(LearnerSearchDown, ThroughputThatRisesWithFewerLearnersTakesTheFewest) {
  auto [best, measured] = run_search_down({100, 90, 80, 70}, 0.10, 1);
  EXPECT_EQ(best, 1);
  EXPECT_EQ(measured, 4);
}

TEST(LearnerSearchDown, TheVerdictNamesTheDecision) {
  LearnerSearch s(0.10, 1, LearnerSearch::Direction::Down);
  std::string v;
  EXPECT_TRUE(s.add(4, 400, &v));
  EXPECT_EQ(v, "");
  EXPECT_TRUE(s.add(3, 396, &v));
  EXPECT_NE(v.find("1 more brings +3% of a learner's share each (threshold 10%): drop to 3"), std::string::npos) << v;
  EXPECT_TRUE(s.add(2, 200, &v));
  EXPECT_NE(v.find("keep 3, one more count"), std::string::npos) << v;
  EXPECT_FALSE(s.add(1, 100, &v));
  EXPECT_NE(v.find("2 more bring +148% of a learner's share each: keep 3, stop"), std::string::npos) << v;
  EXPECT_EQ(s.best_learners(), 3);
  EXPECT_DOUBLE_EQ(s.best_rate(), 396);
  LearnerSearch one(0.10, 1, LearnerSearch::Direction::Down);
  EXPECT_FALSE(one.add(1, 100)) << "one learner: nothing to drop";
  EXPECT_EQ(one.best_learners(), 1);
}

// A search of short timings (one warm-up round, windows of 2 rounds and 20 ms) up to `max_learners`.
AutotuneOptions quick_search(int max_learners) {
  AutotuneOptions ao;
  ao.max_learners = max_learners;
  ao.warmup_rounds = 1;
  ao.measure_rounds = 2;
  ao.min_window_seconds = 0.02;
  return ao;
}

// On the CPU with LeNet-5 and at most 2 learners: a count within the limit, each measured
// count logged with its throughput, and the choice logged.
TEST(Autotune, ChoosesWithinTheLimitAndLogsEveryCount) {
  ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  TrainerOptions to;
  to.batch_size = 16;
  to.cpu_threads = 1;
  AutotuneOptions ao = quick_search(2);
  std::ostringstream log;
  const int k = autotune_learners(m.graph, to, ao, log);
  EXPECT_GE(k, 1);
  EXPECT_LE(k, 2);
  const std::string s = log.str();
  EXPECT_NE(s.find("autotune: 1 learner(s): "), std::string::npos) << s;
  EXPECT_NE(s.find("images/s"), std::string::npos) << s;
  EXPECT_NE(s.find("autotune: chose " + std::to_string(k)), std::string::npos) << s;
}

// The CPU allocator wrapped: it counts the bytes held and refuses (std::bad_alloc) what would
// take them beyond `limit`; the wrapped one is put back when this goes.
class BudgetAllocator {
 public:
  BudgetAllocator() {
    auto st = state_;
    prev_ = set_allocator(DeviceKind::CPU, [st](size_t bytes, Device d) -> std::shared_ptr<std::byte> {
      const auto n = static_cast<int64_t>(bytes);
      if (st->held + n > st->limit) throw std::bad_alloc();
      std::shared_ptr<std::byte> p = st->inner(bytes, d);
      st->held += n;
      return std::shared_ptr<std::byte>(p.get(), [p, st, n](std::byte*) mutable {
        p.reset();
        st->held -= n;
      });
    });
    state_->inner = prev_;
  }
  ~BudgetAllocator() { set_allocator(DeviceKind::CPU, prev_); }
  int64_t held() const { return state_->held; }
  void limit(int64_t bytes) { state_->limit = bytes; }

 private:
  struct State {
    std::atomic<int64_t> held{0}, limit{INT64_MAX};
    Allocator inner;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
  Allocator prev_;
};

// When the trainer of the largest count does not fit in memory, the tuner builds one of half
// as many learners, and searches up to that count.
TEST(Autotune, BuildsHalfAsManyLearnersWhenTheirTrainerDoesNotFit) {
  ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  TrainerOptions to;
  to.batch_size = 16;
  to.cpu_threads = 1;
  BudgetAllocator budget;
  auto bytes_of = [&](int learners) {
    TrainerOptions o = to;
    o.learners = learners;
    o.algorithm = Algorithm::Sma;
    const int64_t before = budget.held();
    Trainer t(m.graph, o);
    return budget.held() - before;
  };
  const int64_t two = bytes_of(2), four = bytes_of(4);
  ASSERT_GT(four, two);
  budget.limit(budget.held() + (two + four) / 2);  // two learners fit, four do not
  EXPECT_THROW(bytes_of(4), std::bad_alloc);
  AutotuneOptions ao = quick_search(4);
  std::ostringstream log;
  const int k = autotune_learners(m.graph, to, ao, log);
  const std::string s = log.str();
  EXPECT_NE(s.find("autotune: 4 learner(s) do not fit in memory; at most 2"), std::string::npos) << s;
  EXPECT_NE(s.find("autotune: built 2 learner(s) to time 1 to 2 of them"), std::string::npos) << s;
  EXPECT_GE(k, 1);
  EXPECT_LE(k, 2);
  EXPECT_EQ(s.find("autotune: 3 learner(s)"), std::string::npos) << s;
}

// A group of `n` processes whose collectives are never called: the limit reads only its size.
class SizedGroup : public ProcessGroup {
 public:
  explicit SizedGroup(int n) : n_(n) {}
  int rank() const override { return 0; }
  int size() const override { return n_; }
  int local_rank() const override { return 0; }
  double timeout_s() const override { return 1; }
  void all_reduce_sum(float*, size_t, const char*) override { ADD_FAILURE(); }
  void all_reduce_sum(double*, size_t, const char*) override { ADD_FAILURE(); }
  void broadcast(void*, size_t, int, const char*) override { ADD_FAILURE(); }
  std::vector<std::string> gather(const std::string&, const char*) override { return {}; }
  std::string scatter(const std::vector<std::string>&, const char*) override { return {}; }
  void barrier(const char*) override { ADD_FAILURE(); }
  void abort(int) override { ADD_FAILURE(); }

 private:
  int n_;
};

// The tuner's limit is on the learners of every device together: each GPU of each process
// gets its share, and never less than one.
TEST(Autotune, TheLearnersLimitIsSharedByEveryDeviceOfEveryProcess) {
  AutotuneOptions ao;
  ao.max_learners = 16;
  TrainerOptions to;
  EXPECT_EQ(autotune_limit_per_device(to, ao), 16);
  to.gpus = {0, 1};
  EXPECT_EQ(autotune_limit_per_device(to, ao), 8);
  to.gpus = {0, 1, 2};
  EXPECT_EQ(autotune_limit_per_device(to, ao), 5);
  to.processes = std::make_shared<SizedGroup>(2);
  EXPECT_EQ(autotune_limit_per_device(to, ao), 2);
  to.gpus.clear();
  EXPECT_EQ(autotune_limit_per_device(to, ao), 8);
  to.processes = std::make_shared<SizedGroup>(40);
  EXPECT_EQ(autotune_limit_per_device(to, ao), 1);
  ao.max_learners = 100;
  EXPECT_EQ(autotune_limit_per_device(to, ao), 2);
  // Ranks that each search alone (mpirun) name their number in the tuner's options.
  to.processes.reset();
  ao.max_learners = 16;
  ao.processes = 2;
  EXPECT_EQ(autotune_limit_per_device(to, ao), 8);
  to.gpus = {0, 1};
  EXPECT_EQ(autotune_limit_per_device(to, ao), 4);
}

}  // namespace
}  // namespace cbt
