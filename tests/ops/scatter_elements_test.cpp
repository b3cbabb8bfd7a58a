// ScatterElements tests: against a loop over the updates in order (negative, repeated and
// int32 indices; reduction none and add; updates smaller than data), an index out of range
// skipped, Scatter (its name before opset 11), the gradients of data and updates, and shape
// inference's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/op_harness.h"
#include "ops/eager.h"

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

// data with the updates written (or added) in row-major order of the updates.
Tensor reference(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis, bool add) {
  Tensor y = data.clone();
  const auto rank = static_cast<int64_t>(data.rank());
  const int64_t a = axis < 0 ? axis + rank : axis;
  for (int64_t u = 0; u < updates.numel(); ++u) {
    auto c = unflatten(u, updates.shape());
    int64_t t = indices.at_i64(u);
    if (t < 0) t += data.dim(static_cast<int>(a));
    if (t < 0 || t >= data.dim(static_cast<int>(a))) continue;
    c[a] = t;
    double& dst = y.ptr<double>()[flatten(c, data.shape())];
    dst = add ? dst + updates.at_f64(u) : updates.at_f64(u);
  }
  return y;
}

TEST(ScatterElementsTest, MatchesALoopOverTheUpdates) {
  const Tensor data = random_tensor(DType::Float64, {4, 5, 6}, 81);
  for (int64_t axis : {0, 1, -1})
    for (const std::string reduction : {"none", "add"}) {
      Shape us{3, 4, 5};
      const int64_t a = axis < 0 ? axis + 3 : axis, len = data.dim(static_cast<int>(a));
      us[a] = 7;  // longer than the axis: repeated indices
      const Tensor updates = random_tensor(DType::Float64, us, 82 + a);
      const Tensor indices = random_int_tensor(us, -len, len, 85 + a);
      Tensor y = run_node(make_node("ScatterElements", 3, 1, scatter_attrs(axis, reduction)), {data, indices, updates},
                          EagerOptions{false, 0, 18})[0];
      EXPECT_EQ(compare_tensors(y, reference(data, indices, updates, axis, reduction == "add"), 0, 1e-12), "")
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
  EXPECT_TRUE(same_bytes(y, reference(data, idx64, updates, 1, false)));
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

TEST(ScatterElementsTest, ShapeInferenceNamesTheProblem) {
  const Tensor data(DType::Float32, {3, 4}), upd(DType::Float32, {2, 4});
  const Tensor idx = Tensor::from_i64(std::vector<int64_t>(8, 0), {2, 4});
  auto fails = [](const Node& n, const std::vector<Tensor>& in, const char* what) {
    EXPECT_NE(infer_error(n, in, 18).find(what), std::string::npos) << what << ": " << infer_error(n, in, 18);
  };
  fails(make_node("ScatterElements", 3, 1, scatter_attrs(0, "mul")), {data, idx, upd},
        "reduction 'mul' is not supported");
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
