// GatherND and ScatterND tests: against loops over the tuples (k from 1 to the rank, negative
// indices, batch_dims, repeated tuples combining by every reduction), tuples out of range, the
// gradients (mul, max and min also against a reference with ties and zeros), and shape
// inference's errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/op_harness.h"
#include "ops/eager.h"
#include "ops/scatter_reference.h"

namespace cbt::test {
namespace {

int64_t numel_of(const Shape& s, size_t from = 0) {
  int64_t n = 1;
  for (size_t d = from; d < s.size(); ++d) n *= s[d];
  return n;
}

// Where tuple m of `indices` (..., k) addresses `data` (after b batch dims), or -1.
int64_t tuple_offset(const Shape& data, const Tensor& indices, int64_t m, int64_t b) {
  const int64_t k = indices.shape().back(),
                tuples_per_batch = indices.numel() / k / numel_of(Shape(data.begin(), data.begin() + b));
  int64_t off = m / tuples_per_batch;
  for (int64_t j = 0; j < k; ++j) {
    int64_t t = indices.at_i64(m * k + j);
    const int64_t dim = data[static_cast<size_t>(b + j)];
    if (t < 0) t += dim;
    if (t < 0 || t >= dim) return -1;
    off = off * dim + t;
  }
  return off * numel_of(data, static_cast<size_t>(b + k));
}

Tensor gather_reference(const Tensor& data, const Tensor& indices, int64_t b, const Shape& out_shape) {
  Tensor y(DType::Float64, out_shape);
  const int64_t k = indices.shape().back(), slice = numel_of(data.shape(), static_cast<size_t>(b + k));
  for (int64_t m = 0; m < indices.numel() / k; ++m) {
    const int64_t off = tuple_offset(data.shape(), indices, m, b);
    for (int64_t s = 0; s < slice; ++s) y.ptr<double>()[m * slice + s] = off < 0 ? 0 : data.at_f64(off + s);
  }
  return y;
}

// Where each update element goes in data (a flat index), or -1 (its tuple out of range).
std::vector<int64_t> targets(const Shape& data, const Tensor& indices) {
  const int64_t k = indices.shape().back(), slice = numel_of(data, static_cast<size_t>(k));
  std::vector<int64_t> t;
  for (int64_t m = 0; m < indices.numel() / k; ++m) {
    const int64_t off = tuple_offset(data, indices, m, 0);
    for (int64_t s = 0; s < slice; ++s) t.push_back(off < 0 ? -1 : off + s);
  }
  return t;
}

Tensor nd_reference(const Tensor& data, const Tensor& indices, const Tensor& updates, const std::string& reduction) {
  return scatter_reference(data, targets(data.shape(), indices), updates, reduction);
}

Attributes with(const char* name, int64_t v) {
  Attributes a;
  a.set(name, v);
  return a;
}

Attributes reduction(const std::string& r) {
  Attributes a;
  a.set("reduction", r);
  return a;
}

TEST(GatherNDTest, MatchesALoopOverTheTuples) {
  const Tensor data = random_tensor(DType::Float64, {4, 5, 6}, 91);
  struct Case {
    Tensor indices;
    int64_t batch_dims;
    Shape out;
  };
  const std::vector<Case> cases = {
      {Tensor::from_i64({1, 2, -1, 0, 3, 4, 3, 4}, {4, 2}), 0, {4, 6}},       // slices of 6, a repeated tuple
      {Tensor::from_i64({2, -4, 0}, {3, 1}), 0, {3, 5, 6}},                   // k = 1
      {Tensor::from_i64({0, 0, 0, 3, 4, 5}, {2, 1, 3}), 0, {2, 1}},           // elements
      {Tensor::from_i64({0, 4, 1, 1, 2, 2, 3, 0}, {4, 2, 1}), 1, {4, 2, 6}},  // batch_dims 1
      {Tensor::from_i64({1, 7, -9, 0}, {2, 2}), 0, {2, 6}},                   // out of range: zeros
  };
  for (const Case& c : cases) {
    Tensor y = run_node(make_node("GatherND", 2, 1, with("batch_dims", c.batch_dims)), {data, c.indices},
                        EagerOptions{false, 0, 13})[0];
    ASSERT_EQ(y.shape(), c.out) << shape_str(c.indices.shape());
    EXPECT_TRUE(same_bytes(y, gather_reference(data, c.indices, c.batch_dims, c.out))) << shape_str(c.indices.shape());
    auto r = grad_check(make_node("GatherND", 2, 1, with("batch_dims", c.batch_dims)), {data, c.indices});
    EXPECT_TRUE(r.ok) << shape_str(c.indices.shape()) << "\n" << r.report;
  }
}

TEST(ScatterNDTest, MatchesALoopOverTheTuples) {
  const Tensor data = random_tensor(DType::Float64, {4, 5, 3}, 92);
  const Tensor distinct = Tensor::from_i64({1, 2, -1, 0, 3, -4, 2, 2}, {2, 2, 2});  // slices of 3
  const Tensor repeated = Tensor::from_i64({1, 2, 3, 4, 1, 2, 0, 9}, {4, 2});       // a repeat, one out of range
  const Tensor elements = Tensor::from_i64({0, 0, 0, 3, 4, 2, 2, 1, -1}, {3, 3});
  const Tensor upd_distinct = random_tensor(DType::Float64, {2, 2, 3}, 93);
  const Tensor upd_repeated = random_tensor(DType::Float64, {4, 3}, 94);
  const Tensor upd_elements = random_tensor(DType::Float64, {3}, 95);
  EagerOptions o{false, 0, 18};
  auto y = run_node(make_node("ScatterND", 3, 1), {data, distinct, upd_distinct}, o)[0];
  EXPECT_TRUE(same_bytes(y, nd_reference(data, distinct, upd_distinct, "none")));
  y = run_node(make_node("ScatterND", 3, 1), {data, elements, upd_elements}, o)[0];
  EXPECT_TRUE(same_bytes(y, nd_reference(data, elements, upd_elements, "none")));
  for (const std::string r : {"add", "mul", "max", "min"}) {
    y = run_node(make_node("ScatterND", 3, 1, reduction(r)), {data, repeated, upd_repeated}, o)[0];
    EXPECT_EQ(compare_tensors(y, nd_reference(data, repeated, upd_repeated, r), 0, 1e-15), "") << r;
  }

  GradCheckOptions g;
  g.opset = 18;
  auto r = grad_check(make_node("ScatterND", 3, 1), {data, distinct, upd_distinct}, g);
  EXPECT_TRUE(r.ok) << r.report;
  r = grad_check(make_node("ScatterND", 3, 1, reduction("add")), {data, repeated, upd_repeated}, g);
  EXPECT_TRUE(r.ok) << r.report;
}

// Mul, max and min on values of a few levels (ties among the updates and with data, zeros),
// repeated tuples of slices (k = 1) and of elements (k = 2), one out of range: the forward
// against the loop, the gradients against the reference (ties share dY; mul through one zero
// and through two), and finite differences where they apply (mul on these values; max and min
// on distinct ones).
TEST(ScatterNDTest, MulMaxMinGradientsWithTiesAndZeros) {
  struct Case {
    Tensor indices;
    Shape updates;
  };
  const std::vector<Case> cases = {
      {random_int_tensor({16, 1}, -4, 5, 141), {16, 3}},   // rows of 3 (index 4 out of range)
      {random_int_tensor({4, 6, 2}, -3, 3, 142), {4, 6}},  // elements
  };
  for (size_t ci = 0; ci < cases.size(); ++ci)
    for (const std::string r : {"mul", "max", "min"}) {
      SCOPED_TRACE("case " + std::to_string(ci) + " " + r);
      const Case& c = cases[ci];
      const uint64_t seed = 150 + 10 * ci + (r == "mul" ? 0 : r == "max" ? 3 : 6);
      const Tensor data = tie_prone({4, 3}, -2, 3, 0.5, seed), updates = tie_prone(c.updates, -2, 3, 0.5, seed + 1);
      const Tensor dy = random_tensor(DType::Float64, {4, 3}, seed + 2);
      const Node node = make_node("ScatterND", 3, 1, reduction(r));
      const auto to = targets(data.shape(), c.indices);
      const ScatterCoverage cover = scatter_coverage(data, to, updates, r);
      if (r == "mul")
        EXPECT_TRUE(cover.one_zero > 0 && cover.zeros > 0) << "one zero " << cover.one_zero << ", more " << cover.zeros;
      else
        EXPECT_GT(cover.ties, 0);

      const EagerOptions o{false, 0, 18};
      Tensor y = run_node(node, {data, c.indices, updates}, o)[0];
      EXPECT_TRUE(same_bytes(y, scatter_reference(data, to, updates, r)));
      const auto got = rule_gradients(node, {data, c.indices, updates}, dy, 18);
      const ScatterGrads want = scatter_reference_grads(data, to, updates, dy, r);
      EXPECT_EQ(compare_tensors(got[0], want.d_data, 1e-12, 1e-12), "") << "dData";
      EXPECT_EQ(compare_tensors(got[2], want.d_updates, 1e-12, 1e-12), "") << "dUpdates";
      EXPECT_FALSE(got[1].defined()) << "the indices get no gradient";

      GradCheckOptions g;
      g.opset = 18;
      const bool smooth = r == "mul";
      auto check = grad_check(node,
                              {smooth ? data : random_tensor(DType::Float64, {4, 3}, seed + 3), c.indices,
                               smooth ? updates : random_tensor(DType::Float64, c.updates, seed + 4)},
                              g);
      EXPECT_TRUE(check.ok) << check.report;
    }
}

TEST(GatherScatterNDTest, ShapeInferenceNamesTheProblem) {
  const Tensor data(DType::Float32, {3, 4});
  auto fails = [](const char* op, const Attributes& a, const std::vector<Tensor>& in, const char* what,
                  int64_t opset = 18) {
    const std::string err = infer_error(make_node(op, in.size(), 1, a), in, opset);
    EXPECT_NE(err.find(what), std::string::npos) << what << ": " << err;
  };
  Tensor idx32(DType::Int32, {2, 1});
  fails("GatherND", {}, {data, idx32}, "indices must be int64");
  fails("GatherND", {}, {data, Tensor::from_i64({0, 0, 0}, {1, 3})}, "indices' last dim 3 must be in [1, 2]");
  fails("GatherND", with("batch_dims", 1), {data, Tensor::from_i64({0, 0}, {2, 1})}, "differ in the batch dims");
  fails("GatherND", with("batch_dims", 2), {data, Tensor::from_i64({0, 0, 0}, {3, 1})}, "batch_dims 2 out of range");
  const Tensor rows = Tensor::from_i64({0, 1}, {2, 1});
  fails("ScatterND", {}, {data, rows, Tensor(DType::Float32, {2, 3})}, "must have shape (2, 4)");
  const Tensor upd(DType::Float32, {2, 4});
  fails("ScatterND", reduction("amax"), {data, rows, upd},
        "node ScatterND 'test_ScatterND': reduction 'amax' is not one of none, add, mul, max and min");
  fails("ScatterND", reduction("min"), {data, rows, upd}, "reduction 'min' exists from opset 18 on (the model's is 16)",
        16);
  fails("ScatterND", reduction("mul"), {data, rows, upd}, "reduction 'mul' exists from opset 16 on", 13);
  EXPECT_EQ(infer_error(make_node("ScatterND", 3, 1, reduction("max")), {data, rows, upd}, 18), "");
}

}  // namespace
}  // namespace cbt::test
