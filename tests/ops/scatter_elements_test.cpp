// ScatterElements tests: against a loop over the updates in order (negative, repeated and
// int32 indices; every reduction; updates smaller than data), an index out of range skipped,
// Scatter (its name before opset 11), the gradients of data and updates (mul, max and min also
// against a reference with ties and zeros), and shape inference's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/op_harness.h"
#include "ops/eager.h"
#include "ops/scatter_reference.h"

namespace cbt::test {
namespace {

Attributes scatter_attrs(int64_t axis, const std::string& reduction) {
  Attributes a;
  a.set("axis", axis);
  a.set("reduction", reduction);
  return a;
}

// The index of `at` (a flat index into shape `s`) as a multi-index.
std::vector<int64_t> unflatten(int64_t at, const Shape& s) {
  std::vector<int64_t> c(s.size());
  for (int64_t r = static_cast<int64_t>(s.size()) - 1; r >= 0; --r) c[r] = at % s[r], at /= s[r];
  return c;
}

int64_t flatten(const std::vector<int64_t>& c, const Shape& s) {
  int64_t at = 0;
  for (size_t r = 0; r < s.size(); ++r) at = at * s[r] + c[r];
  return at;
}

// Where each update goes in data (a flat index), or -1 (an index out of range).
std::vector<int64_t> targets(const Tensor& data, const Tensor& indices, int64_t axis) {
  const auto rank = static_cast<int64_t>(data.rank());
  const int64_t a = axis < 0 ? axis + rank : axis;
  std::vector<int64_t> t(static_cast<size_t>(indices.numel()), -1);
  for (int64_t u = 0; u < indices.numel(); ++u) {
    auto c = unflatten(u, indices.shape());
    int64_t i = indices.at_i64(u);
    if (i < 0) i += data.dim(static_cast<int>(a));
    if (i < 0 || i >= data.dim(static_cast<int>(a))) continue;
    c[a] = i;
    t[u] = flatten(c, data.shape());
  }
  return t;
}

// data with the updates written (or combined) in row-major order of the updates.
Tensor reference(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis,
                 const std::string& reduction) {
  return scatter_reference(data, targets(data, indices, axis), updates, reduction);
}

TEST(ScatterElementsTest, MatchesALoopOverTheUpdates) {
  const Tensor data = random_tensor(DType::Float64, {4, 5, 6}, 81);
  for (int64_t axis : {0, 1, -1})
    for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
      Shape us{3, 4, 5};
      const int64_t a = axis < 0 ? axis + 3 : axis, len = data.dim(static_cast<int>(a));
      us[a] = 7;  // longer than the axis: repeated indices
      const Tensor updates = random_tensor(DType::Float64, us, 82 + a);
      const Tensor indices = random_int_tensor(us, -len, len, 85 + a);
      Tensor y = run_node(make_node("ScatterElements", 3, 1, scatter_attrs(axis, reduction)), {data, indices, updates},
                          EagerOptions{false, 0, 18})[0];
      EXPECT_EQ(compare_tensors(y, reference(data, indices, updates, axis, reduction), 0, 1e-12), "")
          << "axis " << axis << " " << reduction;
    }
}

TEST(ScatterElementsTest, Int32IndicesOutOfRangeSkippedAndScatter) {
  const Tensor data = random_tensor(DType::Float64, {3, 4}, 86);
  const Tensor updates = random_tensor(DType::Float64, {3, 2}, 87);
  Tensor idx(DType::Int32, {3, 2});
  const int32_t v[] = {1, -1, 9, 0, 2, -5};  // 9 and -5 are out of range
  std::copy(v, v + 6, idx.ptr<int32_t>());
  Tensor idx64 = Tensor::from_i64({1, -1, 9, 0, 2, -5}, {3, 2});
  Tensor y = run_node(make_node("ScatterElements", 3, 1, scatter_attrs(1, "none")), {data, idx, updates})[0];
  EXPECT_TRUE(same_bytes(y, reference(data, idx64, updates, 1, "none")));
  EXPECT_EQ(y.at_f64(4 + 0), updates.at_f64(3));  // row 1: only index 0 in range
  EXPECT_EQ(y.at_f64(4 + 1), data.at_f64(5));
  Attributes a;
  a.set("axis", int64_t{1});
  Tensor z = run_node(make_node("Scatter", 3, 1, a), {data, idx64, updates}, EagerOptions{false, 0, 9})[0];
  EXPECT_TRUE(same_bytes(z, y));
}

TEST(ScatterElementsTest, GradientsOfDataAndUpdates) {
  const Tensor data = random_tensor(DType::Float64, {4, 6}, 88);
  const Tensor updates = random_tensor(DType::Float64, {3, 6}, 89);
  // Reduction none: distinct indices in each line (an overwritten update has no gradient in
  // the function, where the rule gives it dY's element as PyTorch does).
  Tensor perm(DType::Int64, {3, 6});
  std::mt19937_64 rng(90);
  for (int64_t c = 0; c < 6; ++c) {
    std::vector<int64_t> p(4);
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
    for (int64_t r = 0; r < 3; ++r) perm.ptr<int64_t>()[r * 6 + c] = p[r] - (c % 2 ? 4 : 0);  // some negative
  }
  auto r = grad_check(make_node("ScatterElements", 3, 1, scatter_attrs(0, "none")), {data, perm, updates});
  EXPECT_TRUE(r.ok) << r.report;
  GradCheckOptions o;
  o.opset = 18;
  const Tensor repeated = random_int_tensor({3, 6}, 0, 2, 91);
  r = grad_check(make_node("ScatterElements", 3, 1, scatter_attrs(0, "add")), {data, repeated, updates}, o);
  EXPECT_TRUE(r.ok) << r.report;
}

// Mul, max and min on values of a few levels (ties among the updates and with data, zeros),
// repeated and negative indices: the forward against the loop, the gradients against the
// reference (ties share dY; mul through one zero and through two), and finite differences where
// they apply (mul on these values; max and min on distinct ones).
TEST(ScatterElementsTest, MulMaxMinGradientsWithTiesAndZeros) {
  for (int64_t axis : {0, -1})
    for (const std::string reduction : {"mul", "max", "min"}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + " " + reduction);
      const int64_t a = axis < 0 ? axis + 2 : axis, len = a == 0 ? 4 : 6;
      Shape us{4, 6};
      us[a] = 9;  // more updates than positions along the axis
      const uint64_t seed = 120 + 10 * a + (reduction == "mul" ? 0 : reduction == "max" ? 3 : 6);
      const Tensor data = tie_prone({4, 6}, -2, 3, 0.5, seed), updates = tie_prone(us, -2, 3, 0.5, seed + 1);
      const Tensor indices = random_int_tensor(us, -len, len, seed + 2), dy = random_tensor(DType::Float64, {4, 6}, 3);
      const Node node = make_node("ScatterElements", 3, 1, scatter_attrs(axis, reduction));
      const auto to = targets(data, indices, axis);
      const ScatterCoverage cover = scatter_coverage(data, to, updates, reduction);
      if (reduction == "mul")
        EXPECT_TRUE(cover.one_zero > 0 && cover.zeros > 0) << "one zero " << cover.one_zero << ", more " << cover.zeros;
      else
        EXPECT_GT(cover.ties, 0);

      Tensor y = run_node(node, {data, indices, updates}, EagerOptions{false, 0, 18})[0];
      EXPECT_TRUE(same_bytes(y, scatter_reference(data, to, updates, reduction)));
      const auto got = rule_gradients(node, {data, indices, updates}, dy, 18);
      const ScatterGrads want = scatter_reference_grads(data, to, updates, dy, reduction);
      EXPECT_EQ(compare_tensors(got[0], want.d_data, 1e-12, 1e-12), "") << "dData";
      EXPECT_EQ(compare_tensors(got[2], want.d_updates, 1e-12, 1e-12), "") << "dUpdates";
      EXPECT_FALSE(got[1].defined()) << "the indices get no gradient";

      GradCheckOptions o;
      o.opset = 18;
      const bool smooth = reduction == "mul";
      auto r = grad_check(node,
                          {smooth ? data : random_tensor(DType::Float64, {4, 6}, seed + 3), indices,
                           smooth ? updates : random_tensor(DType::Float64, us, seed + 4)},
                          o);
      EXPECT_TRUE(r.ok) << r.report;
    }
}

// Integer data: max and mul combine in order, exactly.
TEST(ScatterElementsTest, IntegerMaxAndMul) {
  const Tensor data = random_int_tensor({3, 5}, -9, 9, 130), updates = random_int_tensor({3, 8}, -9, 9, 131);
  const Tensor indices = random_int_tensor({3, 8}, -5, 5, 132);
  for (const std::string reduction : {"max", "mul"}) {
    Tensor y = run_node(make_node("ScatterElements", 3, 1, scatter_attrs(1, reduction)), {data, indices, updates},
                        EagerOptions{false, 0, 18})[0];
    const Tensor want = reference(as_f64(data), indices, updates, 1, reduction);
    ASSERT_EQ(y.dtype(), DType::Int64);
    for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.at_i64(i), static_cast<int64_t>(want.at_f64(i))) << i;
  }
}

TEST(ScatterElementsTest, ShapeInferenceNamesTheProblem) {
  const Tensor data(DType::Float32, {3, 4}), upd(DType::Float32, {2, 4});
  const Tensor idx = Tensor::from_i64(std::vector<int64_t>(8, 0), {2, 4});
  auto fails = [&](const Node& n, const std::vector<Tensor>& in, const char* what, int64_t opset = 18) {
    const std::string err = infer_error(n, in, opset);
    EXPECT_NE(err.find(what), std::string::npos) << what << ": " << err;
    EXPECT_NE(err.find(n.name), std::string::npos) << "names the node: " << err;
  };
  fails(make_node("ScatterElements", 3, 1, scatter_attrs(0, "mean")), {data, idx, upd},
        "reduction 'mean' is not one of none, add, mul, max and min");
  fails(make_node("ScatterElements", 3, 1, scatter_attrs(0, "max")), {data, idx, upd},
        "reduction 'max' exists from opset 18 on (the model's is 17)", 17);
  fails(make_node("ScatterElements", 3, 1, scatter_attrs(0, "mul")), {data, idx, upd},
        "reduction 'mul' exists from opset 16 on (the model's is 15)", 15);
  fails(make_node("ScatterElements", 3, 1, scatter_attrs(0, "add")), {data, idx, upd},
        "reduction 'add' exists from opset 16 on", 13);
  EXPECT_EQ(infer_error(make_node("ScatterElements", 3, 1, scatter_attrs(0, "mul")), {data, idx, upd}, 16), "");
  EXPECT_EQ(infer_error(make_node("ScatterElements", 3, 1, scatter_attrs(0, "min")), {data, idx, upd}, 18), "");
  fails(make_node("ScatterElements", 3, 1), {data, Tensor(DType::Float32, {2, 4}), upd}, "indices must be int64");
  fails(make_node("ScatterElements", 3, 1), {data, idx, Tensor(DType::Float32, {2, 3})}, "must have one shape");
  fails(make_node("ScatterElements", 3, 1),
        {data, Tensor::from_i64(std::vector<int64_t>(10, 0), {2, 5}), Tensor(DType::Float32, {2, 5})}, "exceed data");
  fails(make_node("ScatterElements", 3, 1, scatter_attrs(2, "none")), {data, idx, upd}, "axis 2 out of range");
  fails(make_node("ScatterElements", 3, 1), {data, idx, Tensor(DType::Float64, {2, 4})},
        "updates must have data's type");
}

}  // namespace
}  // namespace cbt::test
