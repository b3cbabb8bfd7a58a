// CumSum and Trilu tests: both against naive loops in every direction and diagonal, their
// gradients (each the op itself), and shape inference's errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/op_harness.h"

namespace cbt::test {
namespace {

Attributes cumsum_attrs(int64_t exclusive, int64_t reverse) {
  Attributes a;
  a.set("exclusive", exclusive);
  a.set("reverse", reverse);
  return a;
}

TEST(CumSumTest, MatchesANaiveRunningSumInEveryDirection) {
  Tensor x = random_tensor(DType::Float64, {3, 4, 5}, 61);
  for (int64_t axis : {0, 1, -1})
    for (int64_t exclusive = 0; exclusive < 2; ++exclusive)
      for (int64_t reverse = 0; reverse < 2; ++reverse) {
        Tensor y =
            run_node(make_node("CumSum", 2, 1, cumsum_attrs(exclusive, reverse)), {x, Tensor::from_i64({axis}, {})})[0];
        const int64_t a = axis < 0 ? axis + 3 : axis, len = x.dim(a), step = a == 0 ? 20 : a == 1 ? 5 : 1;
        for (int64_t e = 0; e < x.numel(); ++e) {
          const int64_t k = e / step % len, base = e - k * step;
          double want = 0;
          for (int64_t j = 0; j < len; ++j) {
            const bool in = reverse ? (exclusive ? j > k : j >= k) : (exclusive ? j < k : j <= k);
            if (in) want += x.at_f64(base + j * step);
          }
          EXPECT_NEAR(y.at_f64(e), want, 1e-12)
              << "axis " << axis << " exclusive " << exclusive << " reverse " << reverse;
        }
        auto r =
            grad_check(make_node("CumSum", 2, 1, cumsum_attrs(exclusive, reverse)), {x, Tensor::from_i64({axis}, {})});
        EXPECT_TRUE(r.ok) << "axis " << axis << "\n" << r.report;
      }
  // Integers, an int32 axis.
  Tensor xi = random_int_tensor({2, 6}, -50, 50, 62);
  Tensor axis32(DType::Int32, {});
  axis32.ptr<int32_t>()[0] = 1;
  Tensor yi = run_node(make_node("CumSum", 2, 1), {xi, axis32})[0];
  EXPECT_EQ(yi.ptr<int64_t>()[5], [&] {
    int64_t s = 0;
    for (int j = 0; j < 6; ++j) s += xi.ptr<int64_t>()[j];
    return s;
  }());
}

TEST(CumSumTest, ShapeInferenceNamesTheProblem) {
  Tensor x(DType::Float32, {2, 3});
  EXPECT_THROW(infer_node(make_node("CumSum", 2, 1), {x, Tensor::from_i64({2}, {})}, 14), ModelError);
  EXPECT_THROW(infer_node(make_node("CumSum", 2, 1), {x, Tensor::from_f32({1}, {})}, 14), ModelError);
  EXPECT_THROW(infer_node(make_node("CumSum", 2, 1), {Tensor(DType::Bool, {3}), Tensor::from_i64({0}, {})}, 14),
               ModelError);
  // The axis must be a constant.
  Node n = make_node("CumSum", 2, 1);
  InferContext ctx{n, {{DType::Float32, {2, 3}}, {DType::Int64, {}}}, {nullptr, nullptr}, 14};
  EXPECT_THROW(find_schema("", "CumSum")->infer(ctx), ModelError);
}

TEST(TriluTest, KeepsTheTriangleOfEachMatrix) {
  Tensor x = random_tensor(DType::Float64, {2, 4, 6}, 63);
  for (int64_t upper = 0; upper < 2; ++upper)
    for (int64_t k : {-5, -1, 0, 2, 7}) {
      Attributes a;
      a.set("upper", upper);
      Tensor y = run_node(make_node("Trilu", 2, 1, a), {x, Tensor::from_i64({k}, {})})[0];
      for (int64_t e = 0; e < x.numel(); ++e) {
        const int64_t r = e / 6 % 4, c = e % 6;
        const bool keep = upper ? c - r >= k : c - r <= k;
        EXPECT_EQ(y.at_f64(e), keep ? x.at_f64(e) : 0.0) << "upper " << upper << " k " << k << " at " << r << "," << c;
      }
      auto g = grad_check(make_node("Trilu", 2, 1, a), {x, Tensor::from_i64({k}, {})});
      EXPECT_TRUE(g.ok) << g.report;
    }
  // No k: the main diagonal; upper by default.
  Tensor y = run_node(make_node("Trilu", 1, 1), {x})[0];
  EXPECT_EQ(y.at_f64(6), 0.0);          // row 1, column 0
  EXPECT_EQ(y.at_f64(7), x.at_f64(7));  // row 1, column 1
  auto g = grad_check(make_node("Trilu", 1, 1), {x});
  EXPECT_TRUE(g.ok) << g.report;
  EXPECT_THROW(infer_node(make_node("Trilu", 1, 1), {Tensor(DType::Float32, {5})}, 14), ModelError);
  EXPECT_THROW(infer_node(make_node("Trilu", 2, 1), {x, Tensor::from_i64({1, 2}, {2})}, 14), ModelError);
}

}  // namespace
}  // namespace cbt::test
