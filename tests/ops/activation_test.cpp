// Tests of activations and Dropout: values against formulas, gradients, inference failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "common/op_harness.h"

namespace cbt::test {
namespace {

const Shape kShapes[] = {{7}, {1, 3}, {2, 3, 4, 5}, {}};

Attributes attr_f(const char* name, float v) {
  Attributes a;
  a.set(name, v);
  return a;
}
Attributes attr_fs(std::initializer_list<std::pair<const char*, float>> values) {
  Attributes a;
  for (auto [name, v] : values) a.set(name, v);
  return a;
}
Attributes attr_s(const char* name, const char* v) {
  Attributes a;
  a.set(name, std::string(v));
  return a;
}

struct Act {
  const char* op;
  Attributes attrs;
  double (*ref)(double);
  const char* domain = "";
};

std::vector<Act> activations() {
  return {
      {"Relu", {}, [](double x) { return x > 0 ? x : 0.0; }},
      // alpha is a float attribute: the reference uses the same float value.
      {"LeakyRelu", attr_f("alpha", 0.2f), [](double x) { return x >= 0 ? x : double(0.2f) * x; }},
      {"Sigmoid", {}, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"Tanh", {}, [](double x) { return std::tanh(x); }},
      {"Silu", {}, [](double x) { return x / (1 + std::exp(-x)); }, kCbtDomain},  // fused X * Sigmoid(X)
      {"Gelu", {}, [](double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }},
      {"Gelu", attr_s("approximate", "tanh"),
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }},
      {"Elu", {}, [](double x) { return x > 0 ? x : std::exp(x) - 1; }},
      {"Elu", attr_f("alpha", 0.7f), [](double x) { return x > 0 ? x : double(0.7f) * (std::exp(x) - 1); }},
      {"Selu",
       {},
       [](double x) {
         const double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
         return gamma * (x > 0 ? x : alpha * (std::exp(x) - 1));
       }},
      {"Selu", attr_fs({{"alpha", 1.5f}, {"gamma", 0.5f}}),
       [](double x) { return 0.5 * (x > 0 ? x : 1.5 * (std::exp(x) - 1)); }},
      {"Softplus", {}, [](double x) { return std::log(1 + std::exp(x)); }},
      {"Softsign", {}, [](double x) { return x / (1 + std::fabs(x)); }},
      {"HardSigmoid", {}, [](double x) { return std::max(0.0, std::min(1.0, double(0.2f) * x + 0.5)); }},
      {"HardSigmoid", attr_fs({{"alpha", 0.25f}, {"beta", 0.375f}}),
       [](double x) { return std::max(0.0, std::min(1.0, 0.25 * x + 0.375)); }},
      {"HardSwish", {}, [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }},
      {"Mish", {}, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }},
      {"Celu", {}, [](double x) { return std::max(0.0, x) + std::min(0.0, std::exp(x) - 1); }},
      {"Celu", attr_f("alpha", 0.5f),
       [](double x) { return std::max(0.0, x) + std::min(0.0, 0.5 * (std::exp(x / 0.5) - 1)); }},
      {"ThresholdedRelu", {}, [](double x) { return x > 1.0 ? x : 0.0; }},
      {"ThresholdedRelu", attr_f("alpha", -0.75f), [](double x) { return x > -0.75 ? x : 0.0; }},
  };
}

TEST(ActivationTest, ForwardMatchesFormulas) {
  Tensor x = random_tensor(DType::Float64, {4, 33}, 3, 3.0);
  x.ptr<double>()[0] = 40;  // sigmoid/tanh saturation stays finite
  x.ptr<double>()[1] = -40;
  x.ptr<double>()[2] = 3;  // HardSwish's and HardSigmoid's clamps at their edges
  x.ptr<double>()[3] = -3;
  x.ptr<double>()[4] = 0;
  for (const Act& a : activations()) {
    auto y = run_node(make_node(a.op, 1, 1, a.attrs, a.domain), {x})[0];
    for (int64_t i = 0; i < x.numel(); ++i)
      EXPECT_NEAR(y.at_f64(i), a.ref(x.at_f64(i)), 1e-12) << a.op << " at " << x.at_f64(i);
  }
  Tensor xf = random_tensor(DType::Float32, {100, 400}, 4);  // parallel path, float
  auto yf = run_node(make_node("Sigmoid", 1, 1), {xf})[0];
  for (int64_t i = 0; i < xf.numel(); i += 97) EXPECT_NEAR(yf.at_f64(i), 1 / (1 + std::exp(-xf.at_f64(i))), 1e-6);
}

TEST(ActivationTest, Gradients) {
  for (const Act& a : activations())
    for (const Shape& s : kShapes) {
      auto r = grad_check(make_node(a.op, 1, 1, a.attrs, a.domain), {random_tensor(DType::Float64, s, 5, 2.0)});
      EXPECT_TRUE(r.ok) << a.op << " " << shape_str(s) << "\n" << r.report;
    }
  // Negative alpha: the backward op must use X, not the sign of Y.
  auto r = grad_check(make_node("LeakyRelu", 1, 1, attr_f("alpha", -0.5f)), {random_tensor(DType::Float64, {3, 5}, 6)});
  EXPECT_TRUE(r.ok) << r.report;
}

// ReluGrad with a second dY (graph/fusion.h, fuse_gradient_sum_relu): (dY + dY2) where Y > 0,
// bit for bit as the Add and the ReluGrad it replaces.
TEST(ActivationTest, ReluGradWithASecondGradientAddsItWhereYIsPositive) {
  for (const Shape& s : {Shape{2, 3, 4, 5}, Shape{100, 400}}) {  // serial and parallel paths
    Tensor a = random_tensor(DType::Float32, s, 41), y = random_tensor(DType::Float32, s, 42),
           b = random_tensor(DType::Float32, s, 43);
    Tensor dx = run_node(make_node("ReluGrad", 3, 1, {}, kCbtDomain), {a, y, b})[0];
    Tensor sum = run_node(make_node("Add", 2, 1), {a, b})[0];
    Tensor plain = run_node(make_node("ReluGrad", 2, 1, {}, kCbtDomain), {sum, y})[0];
    int64_t zeros = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      ASSERT_EQ(dx.ptr<float>()[i], plain.ptr<float>()[i]) << i;
      zeros += y.ptr<float>()[i] <= 0;
    }
    EXPECT_GT(zeros, 0);
    EXPECT_LT(zeros, a.numel());
  }
}

TEST(ActivationTest, ShapeInferenceFailures) {
  Tensor i = Tensor::from_i64({1, 2}, {2});
  for (const Act& a : activations())
    EXPECT_THROW(infer_node(make_node(a.op, 1, 1, a.attrs), {i}, 20), ModelError) << a.op;
  EXPECT_THROW(
      infer_node(make_node("Gelu", 1, 1, attr_s("approximate", "fast")), {random_tensor(DType::Float32, {2}, 1)}, 20),
      ModelError);
  EXPECT_THROW(infer_node(make_node("ReluGrad", 2, 1, {}, kCbtDomain),
                          {random_tensor(DType::Float32, {2}, 1), random_tensor(DType::Float32, {3}, 1)}, 20),
               ModelError);
  // A second dY must have dY's shape, and only ReluGrad takes one.
  Tensor two = random_tensor(DType::Float32, {2}, 1);
  EXPECT_THROW(
      infer_node(make_node("ReluGrad", 3, 1, {}, kCbtDomain), {two, two, random_tensor(DType::Float32, {3}, 1)}, 20),
      ModelError);
  EXPECT_THROW(infer_node(make_node("SigmoidGrad", 3, 1, {}, kCbtDomain), {two, two, two}, 20), ModelError);
  EXPECT_EQ(infer_node(make_node("ReluGrad", 3, 1, {}, kCbtDomain), {two, two, two}, 20).at(0).shape, Shape{2});
}

TEST(DropoutTest, InferenceIsIdentity) {
  Tensor x = random_tensor(DType::Float32, {4, 50}, 1);
  auto y = run_node(make_node("Dropout", 2, 2), {x, Tensor::scalar_f32(0.5f)});
  EXPECT_EQ(compare_tensors(y[0], x, 0, 1e-12), "");
  ASSERT_EQ(y[1].dtype(), DType::Bool);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y[1].at_i64(i), 1);
}

Tensor bool_scalar(bool v) {
  Tensor t(DType::Bool, {});
  t.ptr<bool>()[0] = v;
  return t;
}

void expect_mask_statistics(const std::vector<Tensor>& y, const Tensor& x, double ratio) {
  int64_t kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    bool keep = y[1].at_i64(i) != 0;
    kept += keep;
    EXPECT_NEAR(y[0].at_f64(i), keep ? x.at_f64(i) / (1 - ratio) : 0.0, 1e-5);
  }
  double frac = static_cast<double>(kept) / x.numel();
  EXPECT_NEAR(frac, 1 - ratio, 0.02) << "kept fraction";
}

TEST(DropoutTest, TrainingMaskStatistics) {
  Tensor x = random_tensor(DType::Float32, {100, 100}, 2);
  EagerOptions train;
  train.training = true;
  train.seed = 1234;
  for (float ratio : {0.1f, 0.5f, 0.8f}) {
    auto y = run_node(make_node("Dropout", 2, 2), {x, Tensor::scalar_f32(ratio)}, train);
    expect_mask_statistics(y, x, ratio);
  }
  // training_mode = true activates dropout even when the runtime is in inference.
  auto y = run_node(make_node("Dropout", 3, 2), {x, Tensor::scalar_f32(0.3f), bool_scalar(true)});
  expect_mask_statistics(y, x, 0.3);
  // Old opsets: ratio attribute.
  EagerOptions old = train;
  old.opset = 10;
  auto y10 = run_node(make_node("Dropout", 1, 2, attr_f("ratio", 0.25f)), {x}, old);
  expect_mask_statistics(y10, x, 0.25);
  // A different seed draws a different mask.
  train.seed = 99;
  auto y2 = run_node(make_node("Dropout", 2, 2), {x, Tensor::scalar_f32(0.5f)}, train);
  auto y1 = run_node(make_node("Dropout", 2, 2), {x, Tensor::scalar_f32(0.5f)}, {true, 1234, 17});
  EXPECT_NE(compare_tensors(y2[1], y1[1], 0, 0.5), "");
}

TEST(DropoutTest, TrainingRewriteAndGradient) {
  for (Shape s : {Shape{1, 5}, Shape{3, 4, 5}}) {
    // One output: the training rewrite must add the mask.
    auto r = grad_check(make_node("Dropout", 2, 1), {random_tensor(DType::Float64, s, 3), Tensor::scalar_f32(0.4f)});
    EXPECT_TRUE(r.ok) << r.report;
  }
  auto r = grad_check(make_node("Dropout", 1, 1), {random_tensor(DType::Float64, {6, 7}, 4)});
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(DropoutTest, ShapeInferenceFailures) {
  Tensor x = random_tensor(DType::Float32, {2, 3}, 1);
  EXPECT_THROW(infer_node(make_node("Dropout", 2, 1), {x, Tensor::scalar_f32(1.0f)}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("Dropout", 2, 1), {x, Tensor::from_i64({0}, {})}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("Dropout", 1, 1), {Tensor::from_i64({1}, {1})}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("Dropout", 3, 1), {x, Tensor::scalar_f32(0.1f), Tensor::scalar_f32(1)}, 13),
               ModelError);
  auto t = infer_node(make_node("Dropout", 1, 2), {x}, 13);
  EXPECT_EQ(t[1].dtype, DType::Bool);
  EXPECT_EQ(t[1].shape, x.shape());
}

}  // namespace
}  // namespace cbt::test
