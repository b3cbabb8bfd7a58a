// Trainer::set_active_learners: the first k of more built learners train exactly as a trainer
// built with k learners, and a learner that joins starts from the model.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "common/op_harness.h"
#include "common/paths.h"
#include "onnx_import/model_io.h"
#include "runtime/npy.h"
#include "runtime/trainer.h"

namespace cbt {
namespace {

std::string data(const std::string& f) { return test::source_path("tests/runtime/data/" + f); }

struct Batches {
  Tensor xs = load_npy(data("sma_batches_x.npy"));  // (rounds, 3, B, D), random
  Tensor ys = load_npy(data("sma_batches_y.npy"));  // (rounds, 3, B)
  int64_t rounds() const { return xs.dim(0); }
  int64_t batch() const { return xs.dim(2); }
  // Round r's batches of learners 0..k-1.
  void of(int64_t r, int k, std::vector<Tensor>& bx, std::vector<Tensor>& by) const {
    const int64_t n = xs.dim(1), b = xs.dim(2), d = xs.dim(3);
    bx.clear(), by.clear();
    for (int64_t j = 0; j < k; ++j) {
      const int64_t at = r % xs.dim(0) * n + j % n;
      bx.push_back(Tensor::view(DType::Float32, {b, d}, xs.ptr<float>() + at * b * d, Device{}, xs.storage()));
      by.push_back(Tensor::view(DType::Int64, {b}, ys.ptr<int64_t>() + at * b, Device{}, ys.storage()));
    }
  }
};

TrainerOptions options(Algorithm algo, int learners, int64_t batch) {
  TrainerOptions to;
  to.batch_size = batch;
  to.learners = learners;
  to.algorithm = algo;
  to.optimizer.lr = 0.1f;
  to.deterministic = true;  // fixed reduction orders: equal runs give equal bits
  return to;
}

void train(Trainer& t, const Batches& b, int64_t first_round, int64_t rounds) {
  std::vector<Tensor> bx, by;
  for (int64_t r = first_round; r < first_round + rounds; ++r) {
    b.of(r, t.learners(), bx, by);
    t.round(bx, by);
  }
}

void expect_equal(const std::map<std::string, Tensor>& got, const std::map<std::string, Tensor>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, w] : want) {
    const Tensor& g = got.at(name);
    ASSERT_EQ(g.numel(), w.numel()) << what << " " << name;
    int64_t differ = 0;
    for (int64_t i = 0; i < w.numel(); ++i) differ += g.ptr<float>()[i] != w.ptr<float>()[i];
    EXPECT_EQ(differ, 0) << what << " " << name << ": values that differ";
  }
}

class ActiveLearners : public ::testing::TestWithParam<Algorithm> {};

TEST_P(ActiveLearners, TwoOfFourBuiltTrainAsATrainerOfTwo) {
  ImportedModel m = load_model(data("sma_model.onnx"));
  Batches b;
  Trainer two(m.graph, options(GetParam(), 2, b.batch()));
  Trainer four(m.graph, options(GetParam(), 4, b.batch()));
  EXPECT_EQ(four.learners(), 4);
  four.set_active_learners(2);
  EXPECT_EQ(four.learners(), 2);
  EXPECT_EQ(four.built_learners(), 4);
  EXPECT_EQ(four.total_learners(), 2);
  EXPECT_FLOAT_EQ(four.options().alpha, two.options().alpha);
  train(two, b, 0, 20);
  train(four, b, 0, 20);
  expect_equal(four.central_parameters(), two.central_parameters(), "z");
  for (int j = 0; j < 2; ++j)
    expect_equal(four.replica_parameters(j), two.replica_parameters(j), "replica " + std::to_string(j));
  // The idle learners did not move: they still hold the model's initial parameters.
  for (const auto& [name, w] : four.replica_parameters(3)) {
    const Tensor& init = m.graph.initializers.at(name);
    for (int64_t i = 0; i < w.numel(); ++i) ASSERT_EQ(w.ptr<float>()[i], init.ptr<float>()[i]) << name;
  }
}

TEST_P(ActiveLearners, AJoiningLearnerStartsFromTheModel) {
  ImportedModel m = load_model(data("sma_model.onnx"));
  Batches b;
  Trainer t(m.graph, options(GetParam(), 3, b.batch()));
  t.set_active_learners(1);
  train(t, b, 0, 10);
  t.set_active_learners(3);
  EXPECT_EQ(t.learners(), 3);
  EXPECT_FLOAT_EQ(t.options().alpha, default_sma_alpha(3, 0.9f));  // the default alpha follows the count
  // SMA: from z; synchronous SGD: a copy of the replica that trained (which z mirrors).
  const auto z = t.central_parameters();
  for (int j = 1; j < 3; ++j) expect_equal(t.replica_parameters(j), z, "replica " + std::to_string(j));
  train(t, b, 10, 10);
  // Every replica trained: none still equals the model it started from.
  const auto z2 = t.central_parameters();
  for (int j = 0; j < 3; ++j) {
    const Tensor w = t.replica_parameters(j).at("W");  // a copy: the map is a temporary
    double moved = 0;
    for (int64_t i = 0; i < w.numel(); ++i) moved += std::fabs(w.ptr<float>()[i] - z.at("W").ptr<float>()[i]);
    EXPECT_GT(moved, 0) << "replica " << j;
  }
  if (GetParam() == Algorithm::Ssgd)  // one model: the replicas stay equal
    for (int j = 1; j < 3; ++j)
      expect_equal(t.replica_parameters(j), t.replica_parameters(0), "replica " + std::to_string(j));
  double zmoved = 0;
  for (int64_t i = 0; i < z2.at("W").numel(); ++i)
    zmoved += std::fabs(z2.at("W").ptr<float>()[i] - z.at("W").ptr<float>()[i]);
  EXPECT_GT(zmoved, 0);
}

// A model with BatchNorm under SMA: a learner that joins takes z, the mean BatchNorm statistics
// of the learners that trained and a zero momentum.
TEST(ActiveLearnersBatchNorm, AJoiningLearnerTakesTheMeanStatisticsAndAZeroMomentum) {
  ImportedModel m = load_model(test::source_path("models/opzoo/opzoo.ts17.onnx"));
  TrainerOptions to = options(Algorithm::Sma, 3, 8);
  to.optimizer.lr = 0.05f;
  Trainer t(m.graph, to);
  t.set_active_learners(2);
  std::mt19937_64 rng(5);
  for (int r = 0; r < 4; ++r) {
    std::vector<Tensor> x, y;
    for (int j = 0; j < 2; ++j) {
      x.push_back(test::random_tensor(DType::Float32, t.input_type().shape, rng()));
      y.push_back(test::random_int_tensor({8}, 0, 10, rng()));
    }
    t.round(x, y);
  }
  t.set_active_learners(3);
  std::map<std::string, Tensor> s;
  for (auto& [name, tensor] : t.state().tensors) s.emplace(name, tensor);
  const Tensor &b0 = s.at("learner0/buffers"), &b1 = s.at("learner1/buffers"), &b2 = s.at("learner2/buffers");
  const Tensor &z = s.at("central/z"), &x2 = s.at("learner2/params"), &v2 = s.at("learner2/moment1");
  ASSERT_GT(b2.numel(), 0);
  int64_t stats_off = 0, params_off = 0, momentum_nonzero = 0;
  double spread = 0;
  for (int64_t i = 0; i < b2.numel(); ++i) {
    const double mean = 0.5 * (static_cast<double>(b0.ptr<float>()[i]) + b1.ptr<float>()[i]);
    stats_off += std::fabs(b2.ptr<float>()[i] - mean) > 1e-6 * (1 + std::fabs(mean));
    spread += std::fabs(b0.ptr<float>()[i] - b1.ptr<float>()[i]);
  }
  for (int64_t i = 0; i < z.numel(); ++i) params_off += x2.ptr<float>()[i] != z.ptr<float>()[i];
  for (int64_t i = 0; i < v2.numel(); ++i) momentum_nonzero += v2.ptr<float>()[i] != 0;
  EXPECT_GT(spread, 0) << "the two learners' statistics should differ (different batches)";
  EXPECT_EQ(stats_off, 0) << "BatchNorm statistics of the joining learner vs the mean of the two";
  EXPECT_EQ(params_off, 0) << "parameters of the joining learner vs z";
  EXPECT_EQ(momentum_nonzero, 0);
  // Learner 1 trained: its momentum is not zero (the state is of the trained learners, kept).
  const Tensor& v1 = s.at("learner1/moment1");
  int64_t v1_nonzero = 0;
  for (int64_t i = 0; i < v1.numel(); ++i) v1_nonzero += v1.ptr<float>()[i] != 0;
  EXPECT_GT(v1_nonzero, 0);
}

INSTANTIATE_TEST_SUITE_P(Trainer, ActiveLearners, ::testing::Values(Algorithm::Sma, Algorithm::Ssgd),
                         [](const auto& info) { return info.param == Algorithm::Sma ? "Sma" : "Ssgd"; });

TEST(ActiveLearnersCount, MustBeBetweenOneAndTheLearnersBuilt) {
  ImportedModel m = load_model(data("sma_model.onnx"));
  Trainer t(m.graph, options(Algorithm::Sma, 2, Batches().batch()));
  for (int bad : {0, 3, -1}) {
    try {
      t.set_active_learners(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("2 built"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(t.learners(), 2);
}

// The default alpha is min(0.4, (1 + mu_z) / k) for the learners that train, and follows the
// count and the central momentum.
TEST(ActiveLearnersCount, TheDefaultAlphaFollowsTheCountAndTheCentralMomentum) {
  ImportedModel m = load_model(data("sma_model.onnx"));
  TrainerOptions to = options(Algorithm::Sma, 4, Batches().batch());
  to.sma_momentum = 0.5f;
  Trainer t(m.graph, to);
  EXPECT_FLOAT_EQ(t.options().alpha, 1.5f / 4);
  t.set_active_learners(3);
  EXPECT_FLOAT_EQ(t.options().alpha, 0.4f);  // 1.5 / 3 = 0.5, above the cap
  t.set_active_learners(1);
  EXPECT_FLOAT_EQ(t.options().alpha, 0.4f);
  t.set_active_learners(4);
  EXPECT_FLOAT_EQ(t.options().alpha, 1.5f / 4);
  EXPECT_FLOAT_EQ(default_sma_alpha(14, 0.9f), 1.9f / 14);
  EXPECT_FLOAT_EQ(default_sma_alpha(5, 0.9f), 0.38f);
  EXPECT_FLOAT_EQ(default_sma_alpha(4, 0.9f), 0.4f);
  EXPECT_FLOAT_EQ(default_sma_alpha(2, 0.9f), 0.4f);
  EXPECT_FLOAT_EQ(default_sma_alpha(4, 0.0f), 0.25f);
  EXPECT_FLOAT_EQ(default_sma_alpha(2, 0.0f), 0.4f);
}

// An alpha given in the options stays when the count changes.
TEST(ActiveLearnersCount, AGivenAlphaIsKept) {
  ImportedModel m = load_model(data("sma_model.onnx"));
  TrainerOptions to = options(Algorithm::Sma, 4, Batches().batch());
  to.alpha = 0.2f;
  Trainer t(m.graph, to);
  t.set_active_learners(2);
  EXPECT_FLOAT_EQ(t.options().alpha, 0.2f);
}

// SMA is stable while alpha (k + 1 + mu_z) < 2 (1 + mu_z): the most learners for a given alpha,
// which the default alpha min(0.4, (1 + mu_z) / k) leaves room for from 1 learner on.
TEST(ActiveLearnersCount, TheStableCountOfAGivenAlphaKeepsAlphaTimesKPlusOnePlusMuBelowItsBound) {
  EXPECT_EQ(sma_stable_learners(0.5f, 0.9f), 5);   // 0.5 x 6.9 < 3.8 < 0.5 x 7.9: 7 and 8 diverged on the GPU
  EXPECT_EQ(sma_stable_learners(0.3f, 0.9f), 10);  // 14 x 0.3 diverged too
  EXPECT_EQ(sma_stable_learners(0.25f, 0.0f), 6);  // 0.25 x (7 + 1) = 2 is the edge itself: not stable
  EXPECT_EQ(sma_stable_learners(1.0f, 0.9f), 1);
  EXPECT_EQ(sma_stable_learners(1.0f, 0.0f), 1);  // never fewer than one
  EXPECT_EQ(sma_stable_learners(0.0f, 0.9f), std::numeric_limits<int>::max());
  for (float mu : {0.0f, 0.5f, 0.9f, 0.99f})
    for (int k = 1; k <= 64; ++k) {
      EXPECT_GE(sma_stable_learners(default_sma_alpha(k, mu), mu), k) << k << " " << mu;
      // A margin below the bound: at most 0.63 of it from 8 learners on, 0.71 below (5 learners,
      // mu_z 0.99: 0.398 x 6.99 / 3.98 = 0.70), where (1 + mu_z) / k alone reached 0.975 (2, 0.9).
      const float share = default_sma_alpha(k, mu) * (static_cast<float>(k) + 1 + mu) / (2 * (1 + mu));
      EXPECT_LE(share, k >= 8 ? 0.63f : 0.71f) << k << " " << mu;
    }
}

// A trainer refuses a given alpha that would make SMA diverge with its count (naming the most
// learners it allows), and a central momentum of 1, as user errors; one learner fewer builds,
// and the default alpha never trips it.
TEST(ActiveLearnersCount, AnAlphaTooLargeForTheCountIsAUserError) {
  ImportedModel m = load_model(data("sma_model.onnx"));
  TrainerOptions to = options(Algorithm::Sma, 6, Batches().batch());
  to.alpha = 0.5f;
  try {
    Trainer t(m.graph, to);
    ADD_FAILURE() << "alpha 0.5 with 6 learners was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 5 learners with this alpha"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--alpha 0.5 with 6 learners"), std::string::npos) << e.what();
  }
  to.learners = 5;
  Trainer five(m.graph, to);
  EXPECT_EQ(five.learners(), 5);
  to.sma_momentum = 1.0f;
  EXPECT_THROW(Trainer(m.graph, to), UserError);
  to.sma_momentum = 0.0f;
  to.alpha = -1.0f;
  for (int k : {1, 2, 6}) {
    to.learners = k;
    EXPECT_NO_THROW(Trainer(m.graph, to)) << k;
  }
}

}  // namespace
}  // namespace cbt
