// Shape inference of the shape ops: inferred types and the bad inputs that must be rejected
// with a ModelError naming the node.
#include "graph/op_schema.h"
#include "ops/shape_ops_test_util.h"

namespace cbt::test {
namespace {
using namespace shape;

Attributes attr(const std::string& name, AttrValue v) {
  Attributes a;
  a.set(name, std::move(v));
  return a;
}

std::vector<ValueType> infer(const Node& n, const std::vector<Tensor>& in, int64_t opset = 17) {
  return infer_node(n, in, opset);
}

// Expects a ModelError whose message names the node.
void expect_model_error(const Node& n, const std::vector<Tensor>& in, int64_t opset = 17) {
  try {
    infer(n, in, opset);
    ADD_FAILURE() << n.op_type << ": no ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(n.name), std::string::npos) << e.what();
  }
}

TEST(ShapeOpsInfer, TypesOfShapeCarryingOps) {
  Tensor x(DType::Float32, {2, 3, 4});
  EXPECT_EQ(infer(make_node("Shape", 1, 1), {x})[0], (ValueType{DType::Int64, {3}}));
  EXPECT_EQ(infer(make_node("Reshape", 2, 1), {x, i64({-1, 4})})[0], (ValueType{DType::Float32, {6, 4}}));
  EXPECT_EQ(infer(make_node("Gather", 2, 1, attr("axis", int64_t{-2})), {x, i64({0, 1, 2, 0})})[0],
            (ValueType{DType::Float32, {2, 4, 4}}));
  auto split = infer(make_node("Split", 2, 2, attr("axis", int64_t{2})), {x, i64({3, 1})}, 13);
  EXPECT_EQ(split[1], (ValueType{DType::Float32, {2, 3, 1}}));
  EXPECT_EQ(infer(make_node("Equal", 2, 1), {i64({1}), i64({1, 2, 3}, {3, 1})})[0], (ValueType{DType::Bool, {3, 1}}));
}

// Shape-carrying inputs computed at run time cannot be inferred: a ModelError, not a crash.
TEST(ShapeOpsInfer, NonConstantShapeInputFails) {
  Node n = make_node("Reshape", 2, 1);
  InferContext ctx{n, {{DType::Float32, {2, 3}}, {DType::Int64, {1}}}, {nullptr, nullptr}, 17};
  EXPECT_THROW(find_schema("", "Reshape")->infer(ctx), ModelError);
}

TEST(ShapeOpsInfer, BadInputsThrowModelError) {
  Tensor x = iota64({2, 3});
  expect_model_error(make_node("Transpose", 1, 1, attr("perm", std::vector<int64_t>{0, 0})), {x});
  expect_model_error(make_node("Transpose", 1, 1, attr("perm", std::vector<int64_t>{1, 0, 2})), {x});
  expect_model_error(make_node("Reshape", 2, 1), {x, i64({-1, -1})});
  expect_model_error(make_node("Reshape", 2, 1), {x, i64({4, -1})});
  expect_model_error(make_node("Reshape", 2, 1), {x, i64({0, 0, 0})});
  expect_model_error(make_node("Reshape", 2, 1, attr("allowzero", int64_t{1})), {x, i64({0, -1})}, 14);
  expect_model_error(make_node("Flatten", 1, 1, attr("axis", int64_t{3})), {x});
  expect_model_error(make_node("Concat", 2, 1, attr("axis", int64_t{1})), {x, iota64({3, 3})});
  expect_model_error(make_node("Concat", 2, 1, attr("axis", int64_t{0})), {x, i64({1, 2, 3})});
  expect_model_error(make_node("Concat", 2, 1), {x, x});
  expect_model_error(make_node("Split", 2, 2, attr("axis", int64_t{1})), {x, i64({1, 1})}, 13);
  expect_model_error(make_node("Split", 1, 2, attr("axis", int64_t{1})), {x}, 13);  // uneven
  expect_model_error(make_node("Split", 1, 2, attr("axis", int64_t{1})), {x}, 18);  // no count
  expect_model_error(make_node("Split", 1, 3, attr("num_outputs", int64_t{2})), {x}, 18);
  expect_model_error(make_node("Slice", 5, 1), {x, i64({0}), i64({1}), i64({0}), i64({0})});
  expect_model_error(make_node("Slice", 4, 1), {x, i64({0, 0}), i64({1, 1}), i64({1, -1})});
  expect_model_error(make_node("Slice", 3, 1), {x, i64({0}), i64({1, 2})});
  expect_model_error(make_node("Pad", 2, 1, attr("mode", std::string("reflect"))), {x, i64({0, 3, 0, 0})});
  expect_model_error(make_node("Pad", 2, 1, attr("mode", std::string("wrap"))), {x, i64({0, 1, 0, 0})}, 18);
  expect_model_error(make_node("Pad", 2, 1), {x, i64({1, 1})});
  expect_model_error(make_node("Pad", 2, 1), {x, i64({0, -4, 0, 0})});
  expect_model_error(make_node("Pad", 2, 1, attr("mode", std::string("mirror"))), {x, i64({0, 1, 0, 0})});
  expect_model_error(make_node("Gather", 2, 1), {x, i64({2})});
  expect_model_error(make_node("Gather", 2, 1), {x, iota64({1})});
  expect_model_error(make_node("Squeeze", 2, 1), {x, i64({0})}, 13);
  expect_model_error(make_node("Unsqueeze", 1, 1), {x}, 13);
  expect_model_error(make_node("Unsqueeze", 2, 1), {x, i64({0, 0})}, 13);
  expect_model_error(make_node("Shape", 1, 1, attr("start", int64_t{1})), {x}, 14);
  Attributes two;
  two.set("value_int", int64_t{1});
  two.set("value_float", 1.0f);
  expect_model_error(make_node("Constant", 0, 1, two), {});
  expect_model_error(make_node("Constant", 0, 1, attr("value_string", std::string("a"))), {});
  expect_model_error(make_node("ConstantOfShape", 1, 1), {i64({-2})});
  expect_model_error(make_node("Expand", 2, 1), {x, i64({4, 3})});
  expect_model_error(make_node("Tile", 2, 1), {x, i64({2})});                    // one count per axis
  expect_model_error(make_node("Tile", 2, 1), {x, i64({2, -1})});                // counts are 0 or more
  expect_model_error(make_node("Tile", 2, 1), {x, f64({2, 1}, {2})});            // int64
  expect_model_error(make_node("Tile", 2, 1), {x, i64({int64_t{1} << 62, 1})});  // 2 x 2^62 overflows
  expect_model_error(make_node("Range", 3, 1), {i64({0}, {}), i64({5}, {}), i64({0}, {})});
  expect_model_error(make_node("Range", 3, 1), {i64({0}, {}), f64({5}, {}), i64({1}, {})});
  expect_model_error(make_node("Equal", 2, 1), {x, i64({1})});
  expect_model_error(make_node("Where", 3, 1), {x, x, x});
  expect_model_error(make_node("Where", 3, 1), {boolean({1}, {1}), x, i64({1})});
}

}  // namespace
}  // namespace cbt::test
