// The learner search run while training: TrainingTuner on a made-up clock, and fit() with it.
#include "runtime/training_tuner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/op_harness.h"
#include "common/paths.h"
#include "common/random_dataset.h"
#include "common/tiny_dataset.h"
#include "onnx_import/model_io.h"
#include "runtime/fit.h"

namespace cbt {
namespace {

const Graph& lenet() {
  static const ImportedModel m = load_model(test::source_path("models/lenet5/lenet5.ts17.onnx"));
  return m.graph;
}

// `learners` LeNet-5 learners of batch 8 on one CPU thread, SMA.
TrainerOptions options(int learners) {
  TrainerOptions to;
  to.batch_size = 8;
  to.cpu_threads = 1;
  to.learners = learners;
  to.algorithm = Algorithm::Sma;
  to.optimizer.lr = 0.05f;
  return to;
}

// One warm-up round, then a sizing window of 2 rounds, then three windows of at least
// `min_window` seconds.
AutotuneOptions short_windows(double min_window = 0) {
  AutotuneOptions ao;
  ao.warmup_rounds = 1;
  ao.measure_rounds = 2;
  ao.min_window_seconds = min_window;
  return ao;
}

// Random batches, one per learner.
void random_batches(int k, std::vector<Tensor>& xs, std::vector<Tensor>& ys, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  xs.clear(), ys.clear();
  for (int j = 0; j < k; ++j) {
    xs.emplace_back(DType::Float32, Shape{8, 1, 28, 28});
    for (int64_t i = 0; i < xs.back().numel(); ++i) xs.back().ptr<float>()[i] = normal(rng);
    ys.push_back(test::random_int_tensor({8}, 0, 10, rng()));
  }
}

// Trains rounds of random batches until the tuner ends (at most `max_rounds`): each round adds
// `round_seconds(k)` to the made-up clock; every third round (with `evaluate`) a pause of 100 s
// that the tuner must not count. Returns the rounds trained.
int run_rounds(Trainer& t, TrainingTuner& tuner, double& clock, const std::function<double(int)>& round_seconds,
               bool evaluate = false, int max_rounds = 500) {
  std::mt19937 rng(3);
  std::vector<Tensor> xs, ys;
  int rounds = 0;
  while (tuner.searching() && rounds < max_rounds) {
    random_batches(t.learners(), xs, ys, rng);
    t.round(xs, ys, false);
    clock += round_seconds(t.learners());
    ++rounds;
    tuner.after_round();
    if (evaluate && rounds % 3 == 0) {
      tuner.pause();
      clock += 100;
      tuner.resume();
    }
  }
  return rounds;
}

// Rounds of 1 s for up to 3 learners and 2 s for 4: 8, 16, 24 and 16 images/s. The tuner
// starts with all 4, times every count on the clock it is given going down (3 does better than
// 4; 2 and then 1 fall short of 3), keeps 3 and trains on with 3.
TEST(TrainingTuner, TimesEachCountOnTheTrainingRoundsAndKeepsTheFastest) {
  for (bool evaluate : {false, true}) {
    Trainer t(lenet(), options(4));
    double clock = 0;
    std::ostringstream log;
    TrainingTuner tuner(t, short_windows(), log, [&] { return clock; });
    EXPECT_EQ(t.learners(), 4);
    const int rounds = run_rounds(
        t, tuner, clock, [](int k) { return k < 4 ? 1.0 : 2.0; }, evaluate);
    const std::string s = log.str();
    EXPECT_FALSE(tuner.searching()) << s;
    // Each count: 1 warm-up round, a sizing window of 2 (long enough: the first timed one),
    // then 2 more.
    EXPECT_EQ(rounds, 4 * 7) << s;
    EXPECT_EQ(tuner.best(), 3) << s;
    EXPECT_EQ(t.learners(), 3) << s;
    for (const char* line : {"autotune: 1 learner(s): 8 images/s", "autotune: 2 learner(s): 16 images/s",
                             "autotune: 3 learner(s): 24 images/s", "autotune: 4 learner(s): 16 images/s"})
      EXPECT_NE(s.find(line), std::string::npos) << line << " (evaluate " << evaluate << ") in\n" << s;
    EXPECT_NE(s.find("autotune: chose 3 learner(s) per device after"), std::string::npos) << s;
    // Pauses are not training: 28 rounds of up to 2 s, never the 100 s pauses.
    EXPECT_LE(tuner.seconds(), 28 * 2.0) << s;
  }
}

// Trains rounds of the first count (every built learner) until the tuner has timed it (at most
// `max_rounds`); round r (from 0) adds `round_seconds(r)` to the made-up clock. Returns the
// rounds trained.
int rounds_of_the_first_count(Trainer& t, TrainingTuner& tuner, double& clock,
                              const std::function<double(int)>& round_seconds, int max_rounds) {
  std::mt19937 rng(4);
  std::vector<Tensor> xs, ys;
  const int first = t.learners();
  int rounds = 0;
  while (t.learners() == first && rounds < max_rounds) {
    random_batches(first, xs, ys, rng);
    t.round(xs, ys, false);
    clock += round_seconds(rounds++);
    if (tuner.after_round()) break;
  }
  return rounds;
}

// A first window shorter than min_window_seconds sizes the next three: 2 rounds of 0.01 s
// against 0.1 s make windows of 2 * 0.1 / 0.02 + 1 = 11 rounds.
TEST(TrainingTuner, ShortWindowsGrowToTheMinimumTime) {
  Trainer t(lenet(), options(2));
  double clock = 0;
  std::ostringstream log;
  TrainingTuner tuner(t, short_windows(0.1), log, [&] { return clock; });
  const int rounds = rounds_of_the_first_count(
      t, tuner, clock, [](int) { return 0.01; }, 100);
  EXPECT_EQ(rounds, 1 + 2 + 3 * 11) << log.str();
  EXPECT_EQ(t.learners(), 1) << log.str();
}

// A first window that lasts min_window_seconds is the first of the three: after a warm-up round,
// rounds of 1, 2 and 4 s in the first, second and third window of 2 rounds (16, 8 and 4 images/s
// for two learners of 8) time the first count in 1 + 2 + 2 * 2 rounds, at the median 8 images/s.
TEST(TrainingTuner, AFirstWindowLongEnoughIsTheFirstTimedOne) {
  Trainer t(lenet(), options(2));
  double clock = 0;
  std::ostringstream log;
  TrainingTuner tuner(t, short_windows(0.015), log, [&] { return clock; });
  const double seconds[] = {0.01, 1, 1, 2, 2, 4, 4, 8, 8};
  const int rounds = rounds_of_the_first_count(
      t, tuner, clock, [&](int r) { return seconds[r]; }, 9);
  EXPECT_EQ(rounds, 1 + 2 + 2 * 2) << log.str();
  EXPECT_EQ(t.learners(), 1) << log.str();
  EXPECT_NE(log.str().find("autotune: 2 learner(s): 8 images/s"), std::string::npos) << log.str();
}

// A search that keeps every built learner says whether the cap (--autotune-max-learners) or the
// learners built held it: two learners built, the second doubling the images, with a cap of 2
// and of 8.
TEST(TrainingTuner, ASearchEndedByTheCapSaysSo) {
  for (int cap : {2, 8}) {
    Trainer t(lenet(), options(2));
    double clock = 0;
    std::ostringstream log;
    AutotuneOptions ao = short_windows();
    ao.max_learners = cap;
    TrainingTuner tuner(t, ao, log, [&] { return clock; });
    run_rounds(t, tuner, clock, [](int) { return 1.0; });
    const std::string s = log.str();
    EXPECT_FALSE(tuner.searching()) << s;
    EXPECT_EQ(tuner.best(), 2) << s;
    EXPECT_NE(s.find("autotune: timing 2 down to 1 learner(s) per device while training"), std::string::npos) << s;
    EXPECT_NE(s.find("autotune: 1 learner(s): 8 images/s"), std::string::npos) << s;
    EXPECT_NE(s.find("autotune: chose 2 learner(s) per device after 14.0 s of training, the most learners built"),
              std::string::npos)
        << s;
    EXPECT_EQ(s.find("the cap, --autotune-max-learners 2 in all\n") != std::string::npos, cap == 2) << cap << "\n" << s;
  }
}

// Training that ends first: the best count so far is the choice, and says so. Rounds of k
// seconds for k learners (8 images/s whatever the count): 3 does as well as 4 and is kept, and
// training ends while 2 is timed; the third learner rejoins.
TEST(TrainingTuner, TrainingThatEndsFirstKeepsTheBestCountSoFar) {
  Trainer t(lenet(), options(4));
  double clock = 0;
  std::ostringstream log;
  TrainingTuner tuner(t, short_windows(), log, [&] { return clock; });
  run_rounds(
      t, tuner, clock, [](int k) { return static_cast<double>(k); }, false,
      2 * 7 + 3);  // counts 4 and 3, then 3 rounds of 2
  EXPECT_TRUE(tuner.searching());
  EXPECT_EQ(t.learners(), 2);
  EXPECT_NE(log.str().find("1 more brings +0% of a learner's share each (threshold 10%): drop to 3"), std::string::npos)
      << log.str();
  tuner.finish();
  EXPECT_FALSE(tuner.searching());
  EXPECT_EQ(t.learners(), 3) << log.str();
  EXPECT_NE(log.str().find("autotune: chose 3 learner(s) per device after 55.0 s of training, when training ended"),
            std::string::npos)
      << log.str();
}

// fit() with the tuner: the count changes within the first epochs; every epoch still trains
// each sample at most once and leaves fewer than a round's samples; the cosine schedule ends
// near zero at the final count's last round; each metrics line says how many learners trained.
TEST(FitTuning, EveryEpochTrainsItsSamplesOnceWhileTheCountChanges) {
  TrainTestData data{test::random_dataset(240, 5), test::random_dataset(40, 6)};
  std::ostringstream log;
  std::unique_ptr<Trainer> t = build_search_trainer(lenet(), options(4), log);
  ASSERT_EQ(t->built_learners(), 4);
  FitOptions fo;
  fo.epochs = 6;
  fo.log_every = 0;
  fo.schedule.kind = LrSchedule::Kind::Cosine;
  fo.schedule.base_lr = 0.05f;
  fo.tune_learners = short_windows();
  const std::filesystem::path metrics = test::temp_dir("fit_tuning") / "m.jsonl";
  fo.metrics_path = metrics.string();
  FitResult r = fit(*t, data, fo, log);
  const std::string s = log.str();
  EXPECT_NE(s.find("autotune: 4 learner(s): "), std::string::npos) << s;
  EXPECT_NE(s.find("autotune: 3 learner(s): "), std::string::npos) << s;
  EXPECT_NE(s.find("autotune: chose "), std::string::npos) << s;
  EXPECT_GE(r.learners, 1);
  EXPECT_LE(r.learners, 4);
  EXPECT_EQ(t->learners(), r.learners);
  // A round takes k * 8 samples, at most 32: an epoch trains from 240 - 31 to 240.
  EXPECT_LE(r.images, 6 * 240);
  EXPECT_GE(r.images, 6 * (240 - 31));
  EXPECT_GT(r.search_seconds, 0.0);
  EXPECT_LT(t->learning_rate(), 0.1f * 0.05f);
  std::ifstream m(metrics);
  std::string line;
  std::vector<int> learners;
  std::smatch field;
  while (std::getline(m, line)) {
    ASSERT_TRUE(std::regex_search(line, field, std::regex(R"("learners": ([0-9]+)\})"))) << line;
    learners.push_back(std::stoi(field[1].str()));
  }
  ASSERT_EQ(learners.size(), 6u);
  EXPECT_EQ(learners.back(), r.learners);
}

// Tuning while training needs a count that does not change under a checkpoint.
TEST(FitTuning, CheckpointsNeedTheCountBeforeTraining) {
  TrainTestData data{test::random_dataset(64, 7), test::random_dataset(8, 8)};
  std::ostringstream log;
  Trainer t(lenet(), options(2));
  FitOptions fo;
  fo.epochs = 1;
  fo.log_every = 0;
  fo.tune_learners = short_windows();
  fo.checkpoint.dir = test::temp_dir("fit_tuning_ckpt").string();
  try {
    fit(t, data, fo, log);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no checkpoints"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cbt
