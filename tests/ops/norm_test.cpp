// BatchNormalization (inference, training, running statistics), LayerNormalization, RMSNorm and
// Instance/GroupNormalization tests.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/op_harness.h"

namespace cbt::test {
namespace {

Tensor positive(const Shape& s, uint64_t seed) {
  Tensor t = random_tensor(DType::Float64, s, seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<double>()[i] = 0.5 + std::fabs(t.ptr<double>()[i]);
  return t;
}

// Only fresh() is used by training rewrites.
struct FreshNames : GradEmitter {
  int k = 0;
  std::vector<std::string> emit(const std::string&, const std::string&, std::vector<std::string>, size_t, Attributes,
                                const std::string&) override {
    ADD_FAILURE() << "a training rewrite emitted a node";
    return {};
  }
  const ValueType& type(const std::string&) const override {
    static ValueType t;
    return t;
  }
  std::string fresh(const std::string& h) override { return h + "#" + std::to_string(k++); }
};

std::vector<Tensor> bn_inputs(const Shape& x, uint64_t seed) {
  Shape c{x[1]};
  return {random_tensor(DType::Float64, x, seed), random_tensor(DType::Float64, c, seed + 1),
          random_tensor(DType::Float64, c, seed + 2), random_tensor(DType::Float64, c, seed + 3),
          positive(c, seed + 4)};
}

TEST(BatchNormTest, InferenceUsesRunningStatistics) {
  auto in = bn_inputs({3, 4, 2, 3}, 1);
  Attributes a;
  a.set("epsilon", 1e-3f);
  auto y = run_node(make_node("BatchNormalization", 5, 1, a), in);
  Tensor ref(DType::Float64, in[0].shape());
  for (int64_t i = 0; i < ref.numel(); ++i) {
    int64_t c = (i / 6) % 4;
    ref.ptr<double>()[i] =
        in[1].at_f64(c) * (in[0].at_f64(i) - in[3].at_f64(c)) / std::sqrt(in[4].at_f64(c) + double(1e-3f)) +
        in[2].at_f64(c);
  }
  EXPECT_EQ(compare_tensors(y[0], ref, 1e-12, 1e-12), "");
}

TEST(BatchNormTest, TrainingUpdatesRunningStatistics) {
  auto in = bn_inputs({4, 3, 2, 2}, 2);
  Tensor run_mean0 = in[3].clone(), run_var0 = in[4].clone();
  Attributes a;
  a.set("momentum", 0.8f);
  a.set("epsilon", 1e-5f);
  Node n = make_node("BatchNormalization", 5, 1, a);
  // Apply the training rewrite the way the training-graph builder does.
  FreshNames names;
  find_schema("", "BatchNormalization")->training_rewrite(n, names);
  ASSERT_EQ(n.op_type, "BatchNormTraining");
  ASSERT_EQ(n.outputs.size(), 3u);
  auto out = run_node(n, in, EagerOptions{true});
  int64_t m = 4 * 4;
  for (int64_t c = 0; c < 3; ++c) {
    double sum = 0, sq = 0;
    for (int64_t nn = 0; nn < 4; ++nn)
      for (int64_t s = 0; s < 4; ++s) sum += in[0].at_f64((nn * 3 + c) * 4 + s);
    double mean = sum / m;
    for (int64_t nn = 0; nn < 4; ++nn)
      for (int64_t s = 0; s < 4; ++s) {
        double v = in[0].at_f64((nn * 3 + c) * 4 + s) - mean;
        sq += v * v;
      }
    double var = sq / m, invstd = 1 / std::sqrt(var + double(1e-5f));
    double mom = double(0.8f);
    EXPECT_NEAR(out[1].at_f64(c), mean, 1e-12);
    EXPECT_NEAR(out[2].at_f64(c), invstd, 1e-9);
    EXPECT_NEAR(in[3].at_f64(c), mom * run_mean0.at_f64(c) + (1 - mom) * mean, 1e-12);
    EXPECT_NEAR(in[4].at_f64(c), mom * run_var0.at_f64(c) + (1 - mom) * sq / (m - 1), 1e-12);
    for (int64_t nn = 0; nn < 4; ++nn)
      for (int64_t s = 0; s < 4; ++s) {
        int64_t i = (nn * 3 + c) * 4 + s;
        EXPECT_NEAR(out[0].at_f64(i), in[1].at_f64(c) * (in[0].at_f64(i) - mean) * invstd + in[2].at_f64(c), 1e-9);
      }
  }
}

TEST(BatchNormTest, TrainingGradCheck) {
  for (Shape s : {Shape{4, 3, 2, 3}, Shape{1, 2, 3, 3}, Shape{5, 3}, Shape{3, 2, 5}}) {
    auto res = grad_check(make_node("BatchNormalization", 5, 1), bn_inputs(s, 3));
    EXPECT_TRUE(res.ok) << shape_str(s) << "\n" << res.report;
  }
}

TEST(BatchNormTest, FrozenStatisticsGradCheck) {
  GradCheckOptions opt;
  opt.training = false;
  for (Shape s : {Shape{2, 3, 2, 3}, Shape{3, 4}}) {
    auto res = grad_check(make_node("BatchNormalization", 5, 1), bn_inputs(s, 4), opt);
    EXPECT_TRUE(res.ok) << shape_str(s) << "\n" << res.report;
  }
}

TEST(BatchNormTest, ShapeInference) {
  std::vector<Tensor> in{Tensor(DType::Float32, {8, 16, 4, 4})};
  for (int i = 0; i < 4; ++i) in.push_back(Tensor(DType::Float32, {16}));
  auto t = infer_node(make_node("BatchNormalization", 5, 1), in, 15);
  EXPECT_EQ(t[0].shape, (Shape{8, 16, 4, 4}));
  t = infer_node(make_node("BatchNormTraining", 5, 3, {}, kCbtDomain), in, 15);
  EXPECT_EQ(t[2].shape, (Shape{16}));
  in[3] = Tensor(DType::Float32, {15});
  EXPECT_THROW(infer_node(make_node("BatchNormalization", 5, 1), in, 15), ModelError);
  // Exported in training mode (running-stat outputs) cannot be turned into a training node.
  Node n = make_node("BatchNormalization", 5, 3);
  FreshNames names;
  EXPECT_THROW(find_schema("", "BatchNormalization")->training_rewrite(n, names), ModelError);
}

TEST(LayerNormTest, ForwardMatchesFormula) {
  Tensor x = random_tensor(DType::Float64, {2, 3, 4}, 5);
  Tensor scale = random_tensor(DType::Float64, {3, 4}, 6), b = random_tensor(DType::Float64, {3, 4}, 7);
  Attributes a;
  a.set("axis", int64_t{1});
  a.set("epsilon", 1e-4f);
  auto y = run_node(make_node("LayerNormalization", 3, 3, a), {x, scale, b});
  ASSERT_EQ(y[1].shape(), (Shape{2, 1, 1}));
  for (int64_t r = 0; r < 2; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < 12; ++j) mean += x.at_f64(r * 12 + j) / 12;
    for (int64_t j = 0; j < 12; ++j) var += std::pow(x.at_f64(r * 12 + j) - mean, 2) / 12;
    double invstd = 1 / std::sqrt(var + double(1e-4f));
    EXPECT_NEAR(y[1].at_f64(r), mean, 1e-12);
    EXPECT_NEAR(y[2].at_f64(r), invstd, 1e-9);
    for (int64_t j = 0; j < 12; ++j)
      EXPECT_NEAR(y[0].at_f64(r * 12 + j), (x.at_f64(r * 12 + j) - mean) * invstd * scale.at_f64(j) + b.at_f64(j),
                  1e-9);
  }
}

TEST(LayerNormTest, GradCheck) {
  struct Case {
    Shape x;
    int64_t axis;
    bool bias;
    size_t outputs;
  };
  for (const Case& c : std::vector<Case>{
           {{3, 5}, -1, true, 1}, {{2, 3, 4}, 1, true, 3}, {{1, 2, 6}, -1, false, 1}, {{4, 2, 3}, 2, true, 3}}) {
    Attributes a;
    a.set("axis", c.axis);
    Shape inner(c.x.begin() + (c.axis < 0 ? c.axis + c.x.size() : c.axis), c.x.end());
    std::vector<Tensor> in{random_tensor(DType::Float64, c.x, 8), random_tensor(DType::Float64, inner, 9)};
    if (c.bias) in.push_back(random_tensor(DType::Float64, inner, 10));
    auto res = grad_check(make_node("LayerNormalization", in.size(), c.outputs, a), in);
    EXPECT_TRUE(res.ok) << shape_str(c.x) << " axis " << c.axis << "\n" << res.report;
  }
}

// RMSNorm (cbtrain's domain, made by fusion): X / sqrt(mean(X^2) + eps) * scale over the dims
// from axis, and 1 / sqrt(mean(X^2) + eps) a row.
TEST(RMSNormTest, ForwardMatchesFormula) {
  Tensor x = random_tensor(DType::Float64, {2, 3, 4}, 15), scale = random_tensor(DType::Float64, {3, 4}, 16);
  Attributes a;
  a.set("axis", int64_t{1});
  a.set("epsilon", 1e-4f);
  for (bool scaled : {true, false}) {
    std::vector<Tensor> in{x};
    if (scaled) in.push_back(scale);
    auto y = run_node(make_node("RMSNorm", in.size(), 2, a, kCbtDomain), in);
    ASSERT_EQ(y[1].shape(), (Shape{2, 1, 1}));
    for (int64_t r = 0; r < 2; ++r) {
      double sq = 0;
      for (int64_t j = 0; j < 12; ++j) sq += std::pow(x.at_f64(r * 12 + j), 2) / 12;
      const double inv = 1 / std::sqrt(sq + double(1e-4f));
      EXPECT_NEAR(y[1].at_f64(r), inv, 1e-9);
      for (int64_t j = 0; j < 12; ++j)
        EXPECT_NEAR(y[0].at_f64(r * 12 + j), x.at_f64(r * 12 + j) * inv * (scaled ? scale.at_f64(j) : 1.0), 1e-9);
    }
  }
}

// The gradients of X and the scale, from the forward's saved InvRms (two outputs) and
// recomputed (one), with and without a scale.
TEST(RMSNormTest, GradCheck) {
  struct Case {
    Shape x;
    int64_t axis;
    bool scaled;
    size_t outputs;
  };
  for (const Case& c : std::vector<Case>{
           {{3, 5}, -1, true, 2}, {{2, 3, 4}, 1, true, 1}, {{1, 2, 6}, -1, false, 2}, {{4, 2, 3}, 2, false, 1}}) {
    Attributes a;
    a.set("axis", c.axis);
    Shape inner(c.x.begin() + (c.axis < 0 ? c.axis + c.x.size() : c.axis), c.x.end());
    std::vector<Tensor> in{random_tensor(DType::Float64, c.x, 18)};
    if (c.scaled) in.push_back(random_tensor(DType::Float64, inner, 19));
    auto res = grad_check(make_node("RMSNorm", in.size(), c.outputs, a, kCbtDomain), in);
    EXPECT_TRUE(res.ok) << shape_str(c.x) << " axis " << c.axis << "\n" << res.report;
  }
}

TEST(LayerNormTest, ShapeInference) {
  auto t = infer_node(make_node("LayerNormalization", 2, 3),
                      {Tensor(DType::Float32, {2, 7, 16}), Tensor(DType::Float32, {16})}, 17);
  EXPECT_EQ(t[0].shape, (Shape{2, 7, 16}));
  EXPECT_EQ(t[2].shape, (Shape{2, 7, 1}));
  EXPECT_THROW(infer_node(make_node("LayerNormalization", 2, 1),
                          {Tensor(DType::Float32, {2, 7, 16}), Tensor(DType::Float32, {7})}, 17),
               ModelError);
  Attributes a;
  a.set("axis", int64_t{3});
  EXPECT_THROW(infer_node(make_node("LayerNormalization", 2, 1, a),
                          {Tensor(DType::Float32, {2, 7, 16}), Tensor(DType::Float32, {16})}, 17),
               ModelError);
}

// Y of Instance/GroupNormalization by the definition: sample n's group g of channels
// normalised over its values, then scaled per channel (or per group: `per_group`).
std::vector<double> group_norm_naive(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t groups,
                                     bool per_group, double eps) {
  const int64_t n = x.dim(0), c = x.dim(1), s = x.numel() / (n * c), cpg = c / groups;
  std::vector<double> y(x.numel());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t first = (i * c + g * cpg) * s, count = cpg * s;
      double mean = 0, var = 0;
      for (int64_t k = 0; k < count; ++k) mean += x.at_f64(first + k) / double(count);
      for (int64_t k = 0; k < count; ++k) var += std::pow(x.at_f64(first + k) - mean, 2) / double(count);
      for (int64_t k = 0; k < count; ++k) {
        const int64_t p = per_group ? g : g * cpg + k / s;
        y[first + k] = (x.at_f64(first + k) - mean) / std::sqrt(var + eps) * scale.at_f64(p) + bias.at_f64(p);
      }
    }
  return y;
}

Attributes group_attrs(int64_t groups, float eps) {
  Attributes a;
  a.set("num_groups", groups);
  a.set("epsilon", eps);
  return a;
}

TEST(GroupNormTest, InstanceNormMatchesTheDefinition) {
  Tensor x = random_tensor(DType::Float64, {2, 3, 4, 5}, 21, 2.0);
  Tensor scale = random_tensor(DType::Float64, {3}, 22), b = random_tensor(DType::Float64, {3}, 23);
  Attributes a;
  a.set("epsilon", 1e-3f);
  auto y = run_node(make_node("InstanceNormalization", 3, 1, a), {x, scale, b});
  auto want = group_norm_naive(x, scale, b, 3, false, double(1e-3f));
  ASSERT_EQ(y[0].shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(y[0].at_f64(i), want[i], 1e-9) << i;
}

TEST(GroupNormTest, GroupNormPerChannelAndPerGroupMatchTheDefinition) {
  Tensor x = random_tensor(DType::Float64, {3, 6, 7}, 24, 3.0);
  // Opset 21: scale and bias per channel.
  Tensor scale = random_tensor(DType::Float64, {6}, 25), b = random_tensor(DType::Float64, {6}, 26);
  EagerOptions o21;
  o21.opset = 21;
  auto y = run_node(make_node("GroupNormalization", 3, 1, group_attrs(2, 1e-5f)), {x, scale, b}, o21);
  auto want = group_norm_naive(x, scale, b, 2, false, double(1e-5f));
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(y[0].at_f64(i), want[i], 1e-9) << i;
  // Opset 18: scale and bias per group.
  Tensor gs = random_tensor(DType::Float64, {3}, 27), gb = random_tensor(DType::Float64, {3}, 28);
  EagerOptions o18;
  o18.opset = 18;
  y = run_node(make_node("GroupNormalization", 3, 1, group_attrs(3, 1e-5f)), {x, gs, gb}, o18);
  want = group_norm_naive(x, gs, gb, 3, true, double(1e-5f));
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(y[0].at_f64(i), want[i], 1e-9) << i;
}

TEST(GroupNormTest, GradCheck) {
  struct Case {
    const char* op;
    Shape x;
    int64_t groups;
    int64_t opset;
    int64_t params;
  };
  for (const Case& c : std::vector<Case>{{"InstanceNormalization", {2, 3, 4}, 3, 17, 3},
                                         {"InstanceNormalization", {1, 2, 3, 3}, 2, 17, 2},
                                         {"GroupNormalization", {2, 4, 3}, 2, 21, 4},
                                         {"GroupNormalization", {2, 6, 2, 2}, 3, 18, 3},
                                         {"GroupNormalization", {3, 4, 5}, 1, 21, 4}}) {
    std::vector<Tensor> in{random_tensor(DType::Float64, c.x, 30, 2.0), random_tensor(DType::Float64, {c.params}, 31),
                           random_tensor(DType::Float64, {c.params}, 32)};
    GradCheckOptions opt;
    opt.opset = c.opset;
    Attributes a = std::string(c.op) == "GroupNormalization" ? group_attrs(c.groups, 1e-5f) : Attributes{};
    auto res = grad_check(make_node(c.op, 3, 1, a), in, opt);
    EXPECT_TRUE(res.ok) << c.op << " " << shape_str(c.x) << " groups " << c.groups << "\n" << res.report;
  }
}

TEST(GroupNormTest, ShapeInferenceNamesTheProblem) {
  auto f = [](const Shape& s) { return Tensor(DType::Float32, s); };
  auto t = infer_node(make_node("GroupNormalization", 3, 1, group_attrs(2, 1e-5f)), {f({2, 4, 8}), f({4}), f({4})}, 21);
  EXPECT_EQ(t[0].shape, (Shape{2, 4, 8}));
  t = infer_node(make_node("GroupNormalization", 3, 1, group_attrs(2, 1e-5f)), {f({2, 4, 8}), f({2}), f({2})}, 18);
  EXPECT_EQ(t[0].shape, (Shape{2, 4, 8}));
  auto message = [&](const Node& n, const std::vector<Tensor>& in, int64_t opset) -> std::string {
    try {
      infer_node(n, in, opset);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "no error";
  };
  // Per-channel parameters under opset 18, per-group under 21.
  EXPECT_NE(message(make_node("GroupNormalization", 3, 1, group_attrs(2, 1e-5f)), {f({2, 4, 8}), f({4}), f({4})}, 18)
                .find("must be (2,)"),
            std::string::npos);
  EXPECT_NE(message(make_node("GroupNormalization", 3, 1, group_attrs(2, 1e-5f)), {f({2, 4, 8}), f({2}), f({2})}, 21)
                .find("must be (4,)"),
            std::string::npos);
  EXPECT_NE(message(make_node("GroupNormalization", 3, 1, group_attrs(3, 1e-5f)), {f({2, 4, 8}), f({4}), f({4})}, 21)
                .find("does not divide the 4 channels"),
            std::string::npos);
  EXPECT_NE(message(make_node("GroupNormalization", 3, 1), {f({2, 4, 8}), f({4}), f({4})}, 21).find("num_groups"),
            std::string::npos);
  EXPECT_NE(message(make_node("InstanceNormalization", 3, 1), {f({2, 4}), f({4}), f({4})}, 17).find("(N, C, D1"),
            std::string::npos);
}

}  // namespace
}  // namespace cbt::test
