// f64 finite-difference gradient checks of the differentiable shape ops.
#include <limits>

#include "ops/shape_ops_test_util.h"

namespace cbt::test {
namespace {
using namespace shape;

Attributes attr(const std::string& name, AttrValue v) {
  Attributes a;
  a.set(name, std::move(v));
  return a;
}

Tensor rnd(Shape s, uint64_t seed = 1) { return random_tensor(DType::Float64, s, seed); }

TEST(ShapeOpsGrad, FlattenReshapeSqueezeUnsqueeze) {
  for (int64_t axis : {0, 1, -1, 3}) expect_grad(make_node("Flatten", 1, 1, attr("axis", axis)), {rnd({1, 3, 5})});
  expect_grad(make_node("Reshape", 2, 1), {rnd({3, 5, 2}), i64({-1, 3})});
  expect_grad(make_node("Reshape", 2, 1), {rnd({1, 7}), i64({0, 7, 1})});
  expect_grad(make_node("Squeeze", 2, 1), {rnd({1, 3, 1}), i64({-1})}, 13);
  expect_grad(make_node("Squeeze", 1, 1, attr("axes", std::vector<int64_t>{0})), {rnd({1, 5})}, 11);
  expect_grad(make_node("Unsqueeze", 2, 1), {rnd({3, 5}), i64({0, -1})}, 13);
  expect_grad(make_node("Unsqueeze", 1, 1, attr("axes", std::vector<int64_t>{1})), {rnd({3})}, 11);
}

TEST(ShapeOpsGrad, Transpose) {
  expect_grad(make_node("Transpose", 1, 1), {rnd({3, 5})});
  expect_grad(make_node("Transpose", 1, 1, attr("perm", std::vector<int64_t>{2, 0, 3, 1})), {rnd({1, 3, 5, 2})});
  expect_grad(make_node("Transpose", 1, 1, attr("perm", std::vector<int64_t>{1, 2, 0})), {rnd({3, 1, 7})});
}

TEST(ShapeOpsGrad, Concat) {
  expect_grad(make_node("Concat", 3, 1, attr("axis", int64_t{1})), {rnd({2, 3}, 1), rnd({2, 1}, 2), rnd({2, 5}, 3)});
  expect_grad(make_node("Concat", 2, 1, attr("axis", int64_t{-3})), {rnd({1, 3, 5}, 1), rnd({2, 3, 5}, 2)});
  // Only the second input wants a gradient.
  GradCheckOptions o;
  o.check_inputs = {1};
  auto res = grad_check(make_node("Concat", 2, 1, attr("axis", int64_t{0})), {rnd({3}, 1), rnd({4}, 2)}, o);
  EXPECT_TRUE(res.ok) << res.report;
}

TEST(ShapeOpsGrad, Split) {
  expect_grad(make_node("Split", 2, 2, attr("axis", int64_t{1})), {rnd({3, 5}), i64({2, 3})}, 13);
  expect_grad(make_node("Split", 1, 3, attr("axis", int64_t{-1})), {rnd({1, 3, 9})}, 13);
  expect_grad(make_node("Split", 1, 3, attr("num_outputs", int64_t{3})), {rnd({7, 3})}, 18);
  expect_grad(make_node("Split", 1, 2, attr("split", std::vector<int64_t>{4, 1})), {rnd({5})}, 11);
}

// Roll's gradient is dY rolled back.
TEST(ShapeOpsGrad, RollRollsBack) {
  Attributes a;
  a.set("axes", std::vector<int64_t>{2, 0});
  a.set("shifts", std::vector<int64_t>{-3, 1});
  expect_grad(make_node("Roll", 1, 1, a, kCbtDomain), {rnd({2, 3, 5})});
}

TEST(ShapeOpsGrad, Slice) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  Node n = make_node("Slice", 5, 1);
  expect_grad(n, {rnd({7}), i64({-1}), i64({kMin}), i64({0}), i64({-1})});
  expect_grad(n, {rnd({3, 7}), i64({5, 0}), i64({0, kMax}), i64({-1, 0}), i64({-2, 1})});
  expect_grad(n, {rnd({1, 5, 3}), i64({1}), i64({4}), i64({1}), i64({2})});
  expect_grad(make_node("Slice", 3, 1), {rnd({4, 3}), i64({1, 1}), i64({3, 100})});
}

TEST(ShapeOpsGrad, PadModes) {
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    Node n = make_node("Pad", 2, 1, attr("mode", std::string(mode)));
    expect_grad(n, {rnd({3, 5}), i64({1, 2, 2, 1})}, 19);
    expect_grad(n, {rnd({1, 4}), i64({0, 3, 0, 0})}, 19);
  }
  expect_grad(make_node("Pad", 3, 1), {rnd({3, 5}), i64({-1, 1, 2, 0}), f64({0.5}, {})});
  expect_grad(make_node("Pad", 4, 1), {rnd({2, 3, 3}), i64({1, 2}), Tensor(), i64({-2})}, 18);
}

TEST(ShapeOpsGrad, GatherScatterAdd) {
  Node n = make_node("Gather", 2, 1);
  expect_grad(n, {rnd({5, 3}), i64({0, -1, 0, 2, 4, 0})});  // repeated and negative
  expect_grad(make_node("Gather", 2, 1, attr("axis", int64_t{1})), {rnd({2, 3, 5}), i64({2, 2, 0, -3}, {2, 2})});
  expect_grad(make_node("Gather", 2, 1, attr("axis", int64_t{-1})), {rnd({1, 7}), i32({6, 1, 6})});
  expect_grad(n, {rnd({4}), i64({1}, {})});
}

TEST(ShapeOpsGrad, TileSumsTheCopies) {
  expect_grad(make_node("Tile", 2, 1), {rnd({2, 3}), i64({3, 2})});
  expect_grad(make_node("Tile", 2, 1), {rnd({1, 4, 1}), i64({2, 1, 5})});
  expect_grad(make_node("Tile", 2, 1), {rnd({5}), i64({1})});
}

TEST(ShapeOpsGrad, ExpandReducesBack) {
  expect_grad(make_node("Expand", 2, 1), {rnd({3, 1}), i64({2, 3, 5})});
  expect_grad(make_node("Expand", 2, 1), {rnd({1, 5}), i64({7, 1})});
  expect_grad(make_node("Expand", 2, 1), {rnd({2, 3}), i64({1, 1})});
  expect_grad(make_node("Expand", 2, 1), {rnd({}), i64({3, 2})});
}

TEST(ShapeOpsGrad, WhereBroadcasting) {
  Node n = make_node("Where", 3, 1);
  expect_grad(n, {boolean({1, 0, 0, 1, 1, 0}, {2, 3}), rnd({2, 3}, 1), rnd({2, 3}, 2)});
  expect_grad(n, {boolean({1, 0, 1}, {3, 1}), rnd({1, 4}, 1), rnd({}, 2)});
  expect_grad(n, {boolean({0, 1}, {2}), rnd({3, 1}, 1), rnd({1, 2}, 2)});
}

}  // namespace
}  // namespace cbt::test
