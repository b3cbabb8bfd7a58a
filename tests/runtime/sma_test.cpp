// SMA and synchronous SGD with several CPU learners against a NumPy implementation of the
// DESIGN.md equations (tests/runtime/data/make_sma_reference.py), and SMA's reduction to
// plain SGD with momentum for K = 1, alpha = 0.
#include <gtest/gtest.h>

#include <cmath>

#include "common/paths.h"
#include "onnx_import/model_io.h"
#include "runtime/npy.h"
#include "runtime/trainer.h"

namespace cbt {
namespace {

std::string data(const std::string& f) { return test::source_path("tests/runtime/data/" + f); }

// ||a - b|| / ||b|| over the flat layout W then b.
double rel_error(const std::map<std::string, Tensor>& got, const Tensor& want, int64_t row) {
  const Tensor& W = got.at("W");
  const Tensor& b = got.at("b");
  const int64_t n = W.numel() + b.numel();
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; ++i) {
    double g = i < W.numel() ? W.at_f64(i) : b.at_f64(i - W.numel());
    double w = want.at_f64(row * n + i);
    num += (g - w) * (g - w);
    den += w * w;
  }
  return std::sqrt(num / den);
}

void run_against_reference(Algorithm algo, const std::string& name) {
  ImportedModel m = load_model(data("sma_model.onnx"));
  Tensor xs = load_npy(data("sma_batches_x.npy"));  // (rounds, K, B, D)
  Tensor ys = load_npy(data("sma_batches_y.npy"));  // (rounds, K, B)
  Tensor ref_x = load_npy(data(name + "_replicas.npy"));
  Tensor ref_z = load_npy(data(name + "_z.npy"));
  const int64_t rounds = xs.dim(0), k = xs.dim(1), b = xs.dim(2), d = xs.dim(3);

  TrainerOptions to;
  to.batch_size = b;
  to.learners = static_cast<int>(k);
  to.algorithm = algo;
  to.sma_momentum = 0.9f;
  to.alpha = 1.0f / static_cast<float>(k);  // the reference's (make_sma_reference.py)
  to.optimizer.lr = 0.1f;
  to.optimizer.momentum = 0.9f;
  to.optimizer.weight_decay = 1e-3f;
  Trainer trainer(m.graph, to);
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<Tensor> bx, by;
    for (int64_t j = 0; j < k; ++j) {
      bx.push_back(Tensor::view(DType::Float32, {b, d}, xs.ptr<float>() + (r * k + j) * b * d, Device{}, xs.storage()));
      by.push_back(Tensor::view(DType::Int64, {b}, ys.ptr<int64_t>() + (r * k + j) * b, Device{}, ys.storage()));
    }
    trainer.round(bx, by);
  }
  for (int64_t j = 0; j < k; ++j)
    EXPECT_LT(rel_error(trainer.replica_parameters(static_cast<int>(j)), ref_x, j), 1e-5) << "replica " << j;
  EXPECT_LT(rel_error(trainer.central_parameters(), ref_z, 0), 1e-5) << "central model z";
  // The replicas must differ from each other under SMA (they explore), not under SSGD.
  double spread = rel_error(trainer.replica_parameters(0), ref_x, 1);
  if (algo == Algorithm::Sma)
    EXPECT_GT(spread, 1e-4);
  else
    EXPECT_LT(spread, 1e-5);
}

TEST(Sma, ThreeCpuLearnersMatchTheReferenceEquationsAfter50Rounds) { run_against_reference(Algorithm::Sma, "sma"); }

TEST(Ssgd, ThreeCpuLearnersMatchTheReferenceAfter50Rounds) { run_against_reference(Algorithm::Ssgd, "ssgd"); }

TEST(Sma, OneLearnerWithAlphaZeroIsPlainSgdWithMomentum) {
  std::string dir = test::source_path("models/lenet5/");
  ImportedModel m = load_model(dir + "lenet5.ts17.onnx");
  Tensor xs = load_npy(dir + "trajectory.x.npy"), ys = load_npy(dir + "trajectory.y.npy");
  const int64_t b = xs.dim(1), per = xs.numel() / (xs.dim(0) * b);
  TrainerOptions sgd;
  sgd.batch_size = b;
  sgd.optimizer.lr = 0.05f;
  TrainerOptions sma = sgd;
  sma.algorithm = Algorithm::Sma;
  sma.alpha = 0.0f;
  Trainer a(m.graph, sgd), s(m.graph, sma);
  for (int64_t step = 0; step < 10; ++step) {
    Tensor x = Tensor::view(DType::Float32, {b, per}, xs.ptr<float>() + step * b * per, Device{}, xs.storage());
    Tensor y = Tensor::view(DType::Int64, {b}, ys.ptr<int64_t>() + step * b, Device{}, ys.storage());
    EXPECT_EQ(a.step(x, y), s.step(x, y)) << "step " << step;
  }
  auto pa = a.replica_parameters(0), ps = s.replica_parameters(0);
  for (const auto& [name, t] : pa)
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.at_f64(i), ps.at(name).at_f64(i)) << name << "[" << i << "]";
}

}  // namespace
}  // namespace cbt
