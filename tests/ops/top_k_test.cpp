// TopK tests: against a sort of each line (ties to the lower index, NaN largest) along every
// axis, largest and smallest, integers, opset 1's attribute k, the gradient (the values'
// gradient put back where they came from), and shape inference's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "common/op_harness.h"
#include "ops/eager.h"

namespace cbt::test {
namespace {

Attributes top_k_attrs(int64_t axis, int64_t largest) {
  Attributes a;
  a.set("axis", axis);
  a.set("largest", largest);
  return a;
}

// Values rounded to quarters: many ties.
Tensor tied(const Shape& shape, uint64_t seed) {
  Tensor x = random_tensor(DType::Float64, shape, seed);
  for (int64_t i = 0; i < x.numel(); ++i) x.ptr<double>()[i] = std::round(x.ptr<double>()[i] * 4) / 4;
  return x;
}

// The first k (value, index) of line `base + s * step` (s < len) in TopK's order.
std::vector<std::pair<double, int64_t>> reference(const Tensor& x, int64_t base, int64_t step, int64_t len, int64_t k,
                                                  bool largest) {
  std::vector<int64_t> idx(static_cast<size_t>(len));
  std::iota(idx.begin(), idx.end(), 0);
  auto v = [&](int64_t s) { return x.at_f64(base + s * step); };
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    const bool na = std::isnan(v(a)), nb = std::isnan(v(b));
    if (na || nb) return largest ? na && !nb : nb && !na;
    return largest ? v(a) > v(b) : v(a) < v(b);
  });
  std::vector<std::pair<double, int64_t>> out;
  for (int64_t j = 0; j < k; ++j) out.emplace_back(v(idx[j]), idx[j]);
  return out;
}

void expect_matches_reference(const Tensor& x, int64_t axis, int64_t k, int64_t largest) {
  auto y = run_node(make_node("TopK", 2, 2, top_k_attrs(axis, largest)), {x, Tensor::from_i64({k}, {1})});
  const int64_t rank = static_cast<int64_t>(x.rank()), a = axis < 0 ? axis + rank : axis;
  ASSERT_EQ(y[0].dim(static_cast<int>(a)), k);
  int64_t inner = 1;
  for (int64_t d = a + 1; d < rank; ++d) inner *= x.dim(static_cast<int>(d));
  const int64_t len = x.dim(static_cast<int>(a)), outer = x.numel() / (len * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const auto want = reference(x, o * len * inner + i, inner, len, k, largest != 0);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * inner + i;
        const double got = y[0].at_f64(at);
        EXPECT_TRUE(got == want[j].first || (std::isnan(got) && std::isnan(want[j].first)))
            << "axis " << axis << " largest " << largest << " line " << o << "," << i << " rank " << j;
        EXPECT_EQ(y[1].at_i64(at), want[j].second) << "axis " << axis << " largest " << largest;
      }
    }
}

TEST(TopKTest, MatchesASortOfEveryLineWithTiesToTheLowerIndex) {
  const Tensor x = tied({4, 7, 5}, 71);
  for (int64_t axis : {0, 1, -1})
    for (int64_t largest : {0, 1})
      for (int64_t k : {1, 3}) expect_matches_reference(x, axis, k, largest);
  expect_matches_reference(x, 1, 7, 1);  // the whole axis: a sort
}

TEST(TopKTest, NaNIsTheLargestValue) {
  Tensor x = random_tensor(DType::Float64, {3, 6}, 72);
  x.ptr<double>()[2] = x.ptr<double>()[4] = std::numeric_limits<double>::quiet_NaN();
  x.ptr<double>()[11] = std::numeric_limits<double>::quiet_NaN();
  for (int64_t largest : {0, 1}) expect_matches_reference(x, -1, 6, largest);
  auto y = run_node(make_node("TopK", 2, 2), {x, Tensor::from_i64({2}, {1})});
  EXPECT_EQ(y[1].at_i64(0), 2);  // the two NaNs of row 0, the lower index first
  EXPECT_EQ(y[1].at_i64(1), 4);
}

TEST(TopKTest, IntegersAndOpsetOnesAttribute) {
  const Tensor x = random_int_tensor({5, 9}, -4, 4, 73);
  auto y = run_node(make_node("TopK", 2, 2), {x, Tensor::from_i64({4}, {1})});
  ASSERT_EQ(y[0].dtype(), DType::Int64);
  for (int64_t r = 0; r < 5; ++r) {
    std::vector<int64_t> row(x.ptr<int64_t>() + r * 9, x.ptr<int64_t>() + r * 9 + 9);
    std::sort(row.rbegin(), row.rend());
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(y[0].at_i64(r * 4 + j), row[j]) << r;
  }
  Attributes a;
  a.set("k", int64_t{3});
  a.set("axis", int64_t{0});
  Node n = make_node("TopK", 1, 2, a);
  auto z = run_node(n, {tied({6, 2}, 74)}, EagerOptions{false, 0, 1});
  EXPECT_EQ(z[0].shape(), (Shape{3, 2}));
}

TEST(TopKTest, GradientGoesWhereTheValuesCameFrom) {
  const Tensor x = random_tensor(DType::Float64, {3, 6, 4}, 75);
  for (int64_t axis : {0, 1, 2})
    for (int64_t largest : {0, 1}) {
      auto r = grad_check(make_node("TopK", 2, 2, top_k_attrs(axis, largest)), {x, Tensor::from_i64({2}, {1})});
      EXPECT_TRUE(r.ok) << "axis " << axis << " largest " << largest << "\n" << r.report;
    }
}

TEST(TopKTest, ShapeInferenceNamesTheProblem) {
  const Tensor x(DType::Float32, {2, 5});
  auto fails = [](const Node& n, const std::vector<Tensor>& in, const char* what) {
    EXPECT_NE(infer_error(n, in).find(what), std::string::npos) << what << ": " << infer_error(n, in);
  };
  fails(make_node("TopK", 2, 2), {x, Tensor::from_i64({6}, {1})}, "k 6 must be in [1, 5]");
  fails(make_node("TopK", 2, 2), {x, Tensor::from_i64({0}, {1})}, "k 0 must be in [1, 5]");
  fails(make_node("TopK", 2, 2, top_k_attrs(2, 1)), {x, Tensor::from_i64({1}, {1})}, "axis 2 out of range");
  fails(make_node("TopK", 2, 2), {x, Tensor::from_f32({1}, {1})}, "K must be one int64 value");
  fails(make_node("TopK", 2, 2), {Tensor(DType::Bool, {3}), Tensor::from_i64({1}, {1})}, "unsupported type");
  // K must be a constant.
  Node n = make_node("TopK", 2, 2);
  InferContext ctx{n, {{DType::Float32, {2, 5}}, {DType::Int64, {1}}}, {nullptr, nullptr}, 17};
  EXPECT_THROW(find_schema("", "TopK")->infer(ctx), ModelError);
}

}  // namespace
}  // namespace cbt::test
