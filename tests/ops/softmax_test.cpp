// Tests of Softmax/LogSoftmax: values against a naive loop, gradients, opset rules.
#include <gtest/gtest.h>

#include <cmath>

#include "common/op_harness.h"

namespace cbt::test {
namespace {

Attributes axis_attr(int64_t axis) {
  Attributes a;
  a.set("axis", axis);
  return a;
}

// Naive softmax of a 3-D tensor along `axis` (0..2).
Tensor naive_softmax(const Tensor& x, int axis, bool log) {
  Shape s = x.shape();
  Tensor y(DType::Float64, s);
  auto at = [&](int64_t i, int64_t j, int64_t k) { return (i * s[1] + j) * s[2] + k; };
  int64_t d[3];
  for (d[0] = 0; d[0] < s[0]; ++d[0])
    for (d[1] = 0; d[1] < s[1]; ++d[1])
      for (d[2] = 0; d[2] < s[2]; ++d[2]) {
        double sum = 0;
        int64_t e[3] = {d[0], d[1], d[2]};
        for (e[axis] = 0; e[axis] < s[axis]; ++e[axis]) sum += std::exp(x.at_f64(at(e[0], e[1], e[2])));
        double v = x.at_f64(at(d[0], d[1], d[2]));
        y.ptr<double>()[at(d[0], d[1], d[2])] = log ? v - std::log(sum) : std::exp(v) / sum;
      }
  return y;
}

TEST(SoftmaxTest, ForwardMatchesNaive) {
  Tensor x = random_tensor(DType::Float64, {2, 3, 4}, 1, 2.0);
  for (bool log : {false, true})
    for (int64_t axis : {0, 1, 2, -1}) {
      auto y = run_node(make_node(log ? "LogSoftmax" : "Softmax", 1, 1, axis_attr(axis)), {x})[0];
      EXPECT_EQ(compare_tensors(y, naive_softmax(x, (axis + 3) % 3, log), 1e-12, 1e-12), "") << log << " axis " << axis;
    }
  // Default axis is the last one (opset 13); large logits stay finite.
  Tensor big = Tensor::from_f32({1000, 1001, 1002}, {1, 3});
  auto y = run_node(make_node("Softmax", 1, 1), {big})[0];
  EXPECT_NEAR(y.at_f64(2), 1 / (1 + std::exp(-1.0) + std::exp(-2.0)), 1e-6);
}

TEST(SoftmaxTest, LargeRowsInParallel) {
  Tensor x = random_tensor(DType::Float32, {64, 1000}, 2);
  auto y = run_node(make_node("Softmax", 1, 1), {x})[0];
  for (int64_t r = 0; r < 64; ++r) {
    double s = 0;
    for (int64_t c = 0; c < 1000; ++c) s += y.at_f64(r * 1000 + c);
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
}

TEST(SoftmaxTest, Gradients) {
  const std::vector<std::pair<Shape, int64_t>> cases = {{{5}, -1},      {{1, 7}, -1},    {{3, 4}, 0},
                                                        {{2, 3, 4}, 1}, {{2, 3, 4}, -1}, {{2, 3, 4, 5}, 2}};
  for (const char* op : {"Softmax", "LogSoftmax"})
    for (auto& [s, axis] : cases) {
      auto r = grad_check(make_node(op, 1, 1, axis_attr(axis)), {random_tensor(DType::Float64, s, 3)});
      EXPECT_TRUE(r.ok) << op << " " << shape_str(s) << " axis " << axis << "\n" << r.report;
    }
  // Opset 11 with the default axis 1 on 2-D input: same as the last axis.
  GradCheckOptions o;
  o.opset = 11;
  auto r = grad_check(make_node("LogSoftmax", 1, 1), {random_tensor(DType::Float64, {3, 5}, 4)}, o);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(SoftmaxTest, ShapeInferenceFailures) {
  Tensor x = random_tensor(DType::Float32, {2, 3, 4}, 1);
  EXPECT_THROW(infer_node(make_node("Softmax", 1, 1, axis_attr(3)), {x}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("LogSoftmax", 1, 1, axis_attr(-4)), {x}, 13), ModelError);
  // Before opset 13 the default axis 1 flattens (3, 4): not the one-axis form.
  EXPECT_THROW(infer_node(make_node("Softmax", 1, 1), {x}, 11), ModelError);
  EXPECT_NO_THROW(infer_node(make_node("Softmax", 1, 1, axis_attr(2)), {x}, 11));
  EXPECT_THROW(infer_node(make_node("Softmax", 1, 1), {Tensor::from_i64({1, 2}, {2})}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("Softmax", 1, 1), {Tensor::scalar_f32(1)}, 13), ModelError);
}

}  // namespace
}  // namespace cbt::test
