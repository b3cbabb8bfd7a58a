// Tests of the losses: hand-computed values, naive references, gradients, failures.
#include <gtest/gtest.h>

#include <cmath>

#include "common/op_harness.h"

namespace cbt::test {
namespace {

Node loss_node(const char* op, size_t outputs, float smoothing = 0) {
  Attributes a;
  if (smoothing > 0) a.set("label_smoothing", smoothing);
  return make_node(op, 2, outputs, a, kCbtDomain);
}

TEST(LossTest, SoftmaxCrossEntropyHandComputed) {
  Tensor logits = Tensor::from_f32({1, 2, 3, 1, 1, 1}, {2, 3});
  Tensor labels = Tensor::from_i64({2, 0}, {2});
  // Row 0: -log softmax(1,2,3)[2] = log(1 + e^-1 + e^-2) = 0.40760596; row 1: log 3.
  auto y = run_node(loss_node("SoftmaxCrossEntropy", 2), {logits, labels});
  EXPECT_EQ(y[0].shape(), Shape{});
  EXPECT_NEAR(y[0].at_f64(0), (0.40760596 + 1.09861229) / 2, 1e-6);
  EXPECT_NEAR(y[1].at_f64(2), -0.40760596, 1e-6);
  EXPECT_NEAR(y[1].at_f64(4), -1.09861229, 1e-6);
  // Smoothing 0.1: row 0 = 0.9 * 0.40760596 + 0.1/3 * (2.40760596 + 1.40760596 + 0.40760596).
  auto s = run_node(loss_node("SoftmaxCrossEntropy", 2, 0.1f), {logits, labels});
  EXPECT_NEAR(s[0].at_f64(0), (0.50760596 + 1.09861229) / 2, 1e-6);
  // Without a log_probs output (inference) the loss is the same.
  auto one = run_node(loss_node("SoftmaxCrossEntropy", 1), {logits, labels});
  EXPECT_NEAR(one[0].at_f64(0), y[0].at_f64(0), 1e-7);
}

TEST(LossTest, SoftmaxCrossEntropyGradients) {
  for (Shape s : {Shape{1, 4}, Shape{5, 7}, Shape{16, 10}})
    for (float eps : {0.0f, 0.2f}) {
      Tensor logits = random_tensor(DType::Float64, s, 3, 2.0);
      Tensor labels = random_int_tensor({s[0]}, 0, s[1], 4);
      // One output: the training rewrite adds log_probs for the backward op.
      auto r = grad_check(loss_node("SoftmaxCrossEntropy", 1, eps), {logits, labels});
      EXPECT_TRUE(r.ok) << shape_str(s) << " eps " << eps << "\n" << r.report;
    }
}

// With dLoss as a third input the loss node also writes dLogits, bit for bit what the
// gradient node computes from its log-probabilities (graph/fusion.h, fuse_loss_gradient).
TEST(LossTest, SoftmaxCrossEntropyWithDLossWritesTheGradientNodesResult) {
  for (float eps : {0.0f, 0.1f}) {
    Tensor logits = random_tensor(DType::Float32, {9, 10}, 31, 2.0);
    Tensor labels = random_int_tensor({9}, 0, 10, 32);
    Tensor dloss = Tensor::scalar_f32(0.75f);
    auto plain = run_node(loss_node("SoftmaxCrossEntropy", 2, eps), {logits, labels});
    Node grad = make_node("SoftmaxCrossEntropyGrad", 3, 1, {}, kCbtDomain);
    if (eps > 0) grad.attrs.set("label_smoothing", eps);
    auto dx = run_node(grad, {dloss, plain[1], labels});
    Node fused = make_node("SoftmaxCrossEntropy", 3, 3, grad.attrs, kCbtDomain);
    fused.outputs[1].clear();  // no log_probs kept
    auto f = run_node(fused, {logits, labels, dloss});
    EXPECT_EQ(f[0].at_f64(0), plain[0].at_f64(0)) << "eps " << eps;
    ASSERT_EQ(f[2].shape(), dx[0].shape());
    for (int64_t i = 0; i < dx[0].numel(); ++i)
      ASSERT_EQ(f[2].ptr<float>()[i], dx[0].ptr<float>()[i]) << "eps " << eps << " at " << i;
    // A fourth output: the bias gradient of a Gemm whose output the logits are, as GemmGrad
    // sums dLogits into it.
    Node with_bias = make_node("SoftmaxCrossEntropy", 3, 4, grad.attrs, kCbtDomain);
    with_bias.outputs[1].clear();
    auto fb = run_node(with_bias, {logits, labels, dloss});
    Node gemm_grad = make_node("GemmGrad", 4, 3, {}, kCbtDomain);
    auto g = run_node(gemm_grad, {dx[0], random_tensor(DType::Float32, {9, 5}, 33),
                                  random_tensor(DType::Float32, {5, 10}, 34), random_tensor(DType::Float32, {10}, 35)});
    ASSERT_EQ(fb[3].shape(), Shape{10});
    for (int64_t c = 0; c < 10; ++c)
      EXPECT_EQ(fb[3].ptr<float>()[c], g[2].ptr<float>()[c]) << "eps " << eps << " class " << c;
  }
}

TEST(LossTest, BadLabelIsUserError) {
  Tensor logits = random_tensor(DType::Float32, {2, 3}, 1);
  EXPECT_THROW(run_node(loss_node("SoftmaxCrossEntropy", 2), {logits, Tensor::from_i64({0, 3}, {2})}), UserError);
  EXPECT_THROW(run_node(loss_node("SoftmaxCrossEntropy", 2), {logits, Tensor::from_i64({-1, 0}, {2})}), UserError);
}

TEST(LossTest, MeanSquaredErrorAndBceMatchNaive) {
  Tensor p = random_tensor(DType::Float64, {3, 5}, 1, 3.0), t = random_tensor(DType::Float64, {3, 5}, 2);
  Tensor probs(DType::Float64, {3, 5});
  for (int64_t i = 0; i < 15; ++i) probs.ptr<double>()[i] = 1 / (1 + std::exp(-t.at_f64(i)));
  double mse = 0, bce = 0;
  for (int64_t i = 0; i < 15; ++i) {
    double d = p.at_f64(i) - t.at_f64(i), s = 1 / (1 + std::exp(-p.at_f64(i))), q = probs.at_f64(i);
    mse += d * d / 15;
    bce += -(q * std::log(s) + (1 - q) * std::log(1 - s)) / 15;
  }
  EXPECT_NEAR(run_node(loss_node("MeanSquaredError", 1), {p, t})[0].at_f64(0), mse, 1e-12);
  EXPECT_NEAR(run_node(loss_node("BinaryCrossEntropyWithLogits", 1), {p, probs})[0].at_f64(0), bce, 1e-12);
  // Extreme logits stay finite.
  Tensor big = Tensor::from_f32({100, -100}, {2}), tgt = Tensor::from_f32({1, 0}, {2});
  EXPECT_NEAR(run_node(loss_node("BinaryCrossEntropyWithLogits", 1), {big, tgt})[0].at_f64(0), 0, 1e-6);
}

TEST(LossTest, PointwiseLossGradients) {
  for (const char* op : {"MeanSquaredError", "BinaryCrossEntropyWithLogits"})
    for (Shape s : {Shape{1}, Shape{1, 3}, Shape{4, 3, 2}, Shape{}}) {
      Tensor p = random_tensor(DType::Float64, s, 5, 2.0);
      Tensor t = random_tensor(DType::Float64, s, 6);
      for (int64_t i = 0; i < t.numel(); ++i) t.ptr<double>()[i] = 1 / (1 + std::exp(t.at_f64(i)));
      auto r = grad_check(loss_node(op, 1), {p, t});
      EXPECT_TRUE(r.ok) << op << " " << shape_str(s) << "\n" << r.report;
    }
}

TEST(LossTest, ShapeInferenceFailures) {
  Tensor l23 = random_tensor(DType::Float32, {2, 3}, 1);
  auto infer = [](const Node& n, std::vector<Tensor> in) { return infer_node(n, in, 17); };
  Node sce = loss_node("SoftmaxCrossEntropy", 2);
  EXPECT_THROW(infer(sce, {l23, Tensor::from_i64({0, 1, 2}, {3})}), ModelError);
  EXPECT_THROW(infer(sce, {l23, Tensor::from_f32({0, 1}, {2})}), ModelError);
  EXPECT_THROW(infer(sce, {random_tensor(DType::Float32, {2, 3, 4}, 1), Tensor::from_i64({0, 1}, {2})}), ModelError);
  EXPECT_THROW(infer(loss_node("SoftmaxCrossEntropy", 2, 1.5f), {l23, Tensor::from_i64({0, 1}, {2})}), ModelError);
  EXPECT_THROW(infer(loss_node("MeanSquaredError", 1), {l23, random_tensor(DType::Float32, {3, 2}, 1)}), ModelError);
  EXPECT_THROW(infer(loss_node("BinaryCrossEntropyWithLogits", 1), {l23, random_tensor(DType::Float64, {2, 3}, 1)}),
               ModelError);
  auto ok = infer(sce, {l23, Tensor::from_i64({0, 1}, {2})});
  EXPECT_EQ(ok[0].shape, Shape{});
  EXPECT_EQ(ok[1].shape, l23.shape());
}

}  // namespace
}  // namespace cbt::test
