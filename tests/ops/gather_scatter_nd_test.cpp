// GatherND and ScatterND tests: against loops over the tuples (k from 1 to the rank, negative
// indices, batch_dims, repeated tuples adding), tuples out of range, the gradients, and shape
// inference's errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/op_harness.h"
#include "ops/eager.h"

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

Tensor scatter_reference(const Tensor& data, const Tensor& indices, const Tensor& updates, bool add) {
  Tensor y = data.clone();
  const int64_t k = indices.shape().back(), slice = numel_of(data.shape(), static_cast<size_t>(k));
  for (int64_t m = 0; m < indices.numel() / k; ++m) {
    const int64_t off = tuple_offset(data.shape(), indices, m, 0);
    if (off < 0) continue;
    for (int64_t s = 0; s < slice; ++s) {
      double& d = y.ptr<double>()[off + s];
      d = add ? d + updates.at_f64(m * slice + s) : updates.at_f64(m * slice + s);
    }
  }
  return y;
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
  EXPECT_TRUE(same_bytes(y, scatter_reference(data, distinct, upd_distinct, false)));
  y = run_node(make_node("ScatterND", 3, 1), {data, elements, upd_elements}, o)[0];
  EXPECT_TRUE(same_bytes(y, scatter_reference(data, elements, upd_elements, false)));
  y = run_node(make_node("ScatterND", 3, 1, reduction("add")), {data, repeated, upd_repeated}, o)[0];
  EXPECT_EQ(compare_tensors(y, scatter_reference(data, repeated, upd_repeated, true), 0, 1e-15), "");

  GradCheckOptions g;
  g.opset = 18;
  auto r = grad_check(make_node("ScatterND", 3, 1), {data, distinct, upd_distinct}, g);
  EXPECT_TRUE(r.ok) << r.report;
  r = grad_check(make_node("ScatterND", 3, 1, reduction("add")), {data, repeated, upd_repeated}, g);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(GatherScatterNDTest, ShapeInferenceNamesTheProblem) {
  const Tensor data(DType::Float32, {3, 4});
  auto fails = [](const char* op, const Attributes& a, const std::vector<Tensor>& in, const char* what) {
    const std::string err = infer_error(make_node(op, in.size(), 1, a), in, 18);
    EXPECT_NE(err.find(what), std::string::npos) << what << ": " << err;
  };
  Tensor idx32(DType::Int32, {2, 1});
  fails("GatherND", {}, {data, idx32}, "indices must be int64");
  fails("GatherND", {}, {data, Tensor::from_i64({0, 0, 0}, {1, 3})}, "indices' last dim 3 must be in [1, 2]");
  fails("GatherND", with("batch_dims", 1), {data, Tensor::from_i64({0, 0}, {2, 1})}, "differ in the batch dims");
  fails("GatherND", with("batch_dims", 2), {data, Tensor::from_i64({0, 0, 0}, {3, 1})}, "batch_dims 2 out of range");
  fails("ScatterND", {}, {data, Tensor::from_i64({0, 1}, {2, 1}), Tensor(DType::Float32, {2, 3})},
        "must have shape (2, 4)");
  fails("ScatterND", reduction("max"), {data, Tensor::from_i64({0, 1}, {2, 1}), Tensor(DType::Float32, {2, 4})},
        "reduction 'max' is not supported");
}

}  // namespace
}  // namespace cbt::test
