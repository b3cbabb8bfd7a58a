// Forward values of the shape ops against hand-computed results, int64 data included.
#include <limits>

#include "graph/shape_utils.h"
#include "ops/shape_ops_test_util.h"

namespace cbt::test {
namespace {
using namespace shape;

Attributes attr(const std::string& name, AttrValue v) {
  Attributes a;
  a.set(name, std::move(v));
  return a;
}

TEST(ShapeOpsForward, FlattenAxes) {
  Tensor x = iota64({2, 3, 4});
  auto flat = [&](int64_t axis) { return run(make_node("Flatten", 1, 1, attr("axis", axis)), {x})[0].shape(); };
  EXPECT_EQ(flat(1), (Shape{2, 12}));
  EXPECT_EQ(flat(0), (Shape{1, 24}));
  EXPECT_EQ(flat(-1), (Shape{6, 4}));
  EXPECT_EQ(flat(3), (Shape{24, 1}));
  EXPECT_EQ(values(run(make_node("Flatten", 1, 1), {x})[0]), values(x));
}

TEST(ShapeOpsForward, ReshapeZeroMinusOneAndAllowZero) {
  Tensor x = i64({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_tensor(run(make_node("Reshape", 2, 1), {x, i64({3, -1})})[0], DType::Int64, {3, 2}, {1, 2, 3, 4, 5, 6});
  expect_tensor(run(make_node("Reshape", 2, 1), {x, i64({0, -1, 1})})[0], DType::Int64, {2, 3, 1}, {1, 2, 3, 4, 5, 6});
  // allowzero=1 (opset 14+): 0 is a real zero-sized dim.
  Tensor empty(DType::Float32, {0, 4});
  Node n = make_node("Reshape", 2, 1, attr("allowzero", int64_t{1}));
  EXPECT_EQ(run(n, {empty, i64({4, 0})}, 14)[0].shape(), (Shape{4, 0}));
  EXPECT_EQ(run(make_node("Reshape", 2, 1), {empty, i64({0, 2, 2})}, 14)[0].shape(), (Shape{0, 2, 2}));
}

TEST(ShapeOpsForward, TransposeAgainstLoop) {
  Tensor x = i64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, {2, 3, 4});
  Tensor y = run(make_node("Transpose", 1, 1, attr("perm", std::vector<int64_t>{2, 0, 1})), {x})[0];
  ASSERT_EQ(y.shape(), (Shape{4, 2, 3}));
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(y.ptr<int64_t>()[c * 6 + a * 3 + b], x.ptr<int64_t>()[a * 12 + b * 4 + c]);
  Tensor r = run(make_node("Transpose", 1, 1), {iota64({2, 3})})[0];
  expect_tensor(r, DType::Float64, {3, 2}, {0, 3, 1, 4, 2, 5});
}

TEST(ShapeOpsForward, ConcatInt64AndFloat) {
  Node n = make_node("Concat", 3, 1, attr("axis", int64_t{0}));
  expect_tensor(run(n, {i64({1}), i64({2, 3}), i64({}, {0})})[0], DType::Int64, {3}, {1, 2, 3});
  Node m = make_node("Concat", 2, 1, attr("axis", int64_t{-1}));
  expect_tensor(run(m, {iota64({2, 1}), iota64({2, 2})})[0], DType::Float64, {2, 3}, {0, 0, 1, 1, 2, 3});
}

TEST(ShapeOpsForward, SplitOpsetVariants) {
  Tensor x = iota64({2, 3});
  // opset 13: split as an input.
  auto a = run(make_node("Split", 2, 2, attr("axis", int64_t{1})), {x, i64({1, 2})}, 13);
  expect_tensor(a[0], DType::Float64, {2, 1}, {0, 3});
  expect_tensor(a[1], DType::Float64, {2, 2}, {1, 2, 4, 5});
  // opset 13 without split: even pieces.
  auto b = run(make_node("Split", 1, 3, attr("axis", int64_t{-1})), {x}, 13);
  expect_tensor(b[2], DType::Float64, {2, 1}, {2, 5});
  // opset 18: num_outputs, last piece smaller.
  auto c = run(make_node("Split", 1, 3, attr("num_outputs", int64_t{3})), {iota64({7})}, 18);
  expect_tensor(c[0], DType::Float64, {3}, {0, 1, 2});
  expect_tensor(c[1], DType::Float64, {3}, {3, 4, 5});
  expect_tensor(c[2], DType::Float64, {1}, {6});
  // opset 11: split as an attribute; int64 data.
  auto d = run(make_node("Split", 1, 2, attr("split", std::vector<int64_t>{2, 1})), {i64({7, 8, 9})}, 11);
  expect_tensor(d[0], DType::Int64, {2}, {7, 8});
  expect_tensor(d[1], DType::Int64, {1}, {9});
}

TEST(ShapeOpsForward, SliceStepsAndClamping) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  Tensor x = i64({0, 1, 2, 3, 4, 5});
  Node n = make_node("Slice", 5, 1);
  expect_tensor(run(n, {x, i64({-1}), i64({kMin}), i64({0}), i64({-1})})[0], DType::Int64, {6}, {5, 4, 3, 2, 1, 0});
  expect_tensor(run(make_node("Slice", 3, 1), {x, i64({2}), i64({kMax})})[0], DType::Int64, {4}, {2, 3, 4, 5});
  expect_tensor(run(n, {x, i64({4}), i64({0}), i64({0}), i64({-2})})[0], DType::Int64, {2}, {4, 2});
  expect_tensor(run(n, {x, i64({3}), i64({3}), i64({0}), i64({1})})[0], DType::Int64, {0}, {});
  // 2-D, negative axis, step 2.
  Tensor m = iota64({2, 5});
  expect_tensor(run(n, {m, i64({1}), i64({100}), i64({-1}), i64({2})})[0], DType::Float64, {2, 2}, {1, 3, 6, 8});
  // opset 9: starts/ends/axes as attributes.
  Attributes a;
  a.set("starts", std::vector<int64_t>{1});
  a.set("ends", std::vector<int64_t>{-1});
  a.set("axes", std::vector<int64_t>{0});
  expect_tensor(run(make_node("Slice", 1, 1, a), {x}, 9)[0], DType::Int64, {4}, {1, 2, 3, 4});
}

TEST(ShapeOpsForward, PadModes) {
  Tensor x = f64({1, 2, 3}, {3});
  auto pad = [&](const std::string& mode, std::vector<int64_t> pads, int64_t opset = 19) {
    Node n = make_node("Pad", 3, 1, attr("mode", mode));
    return values(run(n, {x, i64(pads), f64({9}, {})}, opset)[0]);
  };
  EXPECT_EQ(pad("constant", {2, 2}), (std::vector<double>{9, 9, 1, 2, 3, 9, 9}));
  EXPECT_EQ(pad("reflect", {2, 2}), (std::vector<double>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(pad("edge", {2, 2}), (std::vector<double>{1, 1, 1, 2, 3, 3, 3}));
  EXPECT_EQ(pad("wrap", {2, 2}), (std::vector<double>{2, 3, 1, 2, 3, 1, 2}));
  EXPECT_EQ(pad("constant", {-1, 1}), (std::vector<double>{2, 3, 9}));
  // opset 18: axes input; int64 data, default constant 0.
  Tensor m = i64({1, 2, 3, 4}, {2, 2});
  expect_tensor(run(make_node("Pad", 4, 1), {m, i64({1, 0}), Tensor(), i64({-1})}, 18)[0], DType::Int64, {2, 3},
                {0, 1, 2, 0, 3, 4});
  // opset 10: pads and value as attributes.
  Attributes a;
  a.set("pads", std::vector<int64_t>{0, 1});
  a.set("value", 5.0f);
  expect_tensor(run(make_node("Pad", 1, 1, a), {x}, 10)[0], DType::Float64, {4}, {1, 2, 3, 5});
}

TEST(ShapeOpsForward, ShapeStartEnd) {
  Tensor x(DType::Float32, {2, 3, 4});
  expect_tensor(run(make_node("Shape", 1, 1), {x})[0], DType::Int64, {3}, {2, 3, 4});
  expect_tensor(run(make_node("Shape", 1, 1, attr("start", int64_t{1})), {x}, 15)[0], DType::Int64, {2}, {3, 4});
  expect_tensor(run(make_node("Shape", 1, 1, attr("end", int64_t{-1})), {x}, 15)[0], DType::Int64, {2}, {2, 3});
  expect_tensor(run(make_node("Shape", 1, 1, attr("start", int64_t{-10})), {x}, 15)[0], DType::Int64, {3}, {2, 3, 4});
}

TEST(ShapeOpsForward, GatherIndicesAndAxes) {
  Node n = make_node("Gather", 2, 1);
  expect_tensor(run(n, {i64({10, 20, 30}), i64({-1, 0})})[0], DType::Int64, {2}, {30, 10});
  expect_tensor(run(n, {i64({10, 20, 30}), i32({1, 1})})[0], DType::Int64, {2}, {20, 20});
  expect_tensor(run(n, {i64({10, 20, 30}), i64({2}, {})})[0], DType::Int64, {}, {30});
  Node m = make_node("Gather", 2, 1, attr("axis", int64_t{1}));
  expect_tensor(run(m, {iota64({2, 3}), i64({2, 0, 2, 1}, {2, 2})})[0], DType::Float64, {2, 2, 2},
                {2, 0, 2, 1, 5, 3, 5, 4});
  EXPECT_THROW(run(n, {i64({10, 20, 30}), i64({3})}), ModelError);
}

TEST(ShapeOpsForward, SqueezeUnsqueezeOpsets) {
  Tensor x = iota64({3});
  Node u13 = make_node("Unsqueeze", 2, 1);
  EXPECT_EQ(run(u13, {x, i64({0, -1})}, 13)[0].shape(), (Shape{1, 3, 1}));
  Node u11 = make_node("Unsqueeze", 1, 1, attr("axes", std::vector<int64_t>{1}));
  EXPECT_EQ(run(u11, {x}, 11)[0].shape(), (Shape{3, 1}));
  Tensor y = iota64({1, 3, 1});
  Node s11 = make_node("Squeeze", 1, 1, attr("axes", std::vector<int64_t>{0}));
  expect_tensor(run(s11, {y}, 11)[0], DType::Float64, {3, 1}, {0, 1, 2});
  EXPECT_EQ(run(make_node("Squeeze", 2, 1), {y, i64({-1})}, 13)[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(run(make_node("Squeeze", 1, 1), {y}, 13)[0].shape(), (Shape{3}));
}

TEST(ShapeOpsForward, ConstantAttributes) {
  expect_tensor(run(make_node("Constant", 0, 1, attr("value_ints", std::vector<int64_t>{4, -1})), {})[0], DType::Int64,
                {2}, {4, -1});
  expect_tensor(run(make_node("Constant", 0, 1, attr("value_float", 2.5f)), {})[0], DType::Float32, {}, {2.5});
  expect_tensor(run(make_node("Constant", 0, 1, attr("value_int", int64_t{7})), {})[0], DType::Int64, {}, {7});
  expect_tensor(run(make_node("Constant", 0, 1, attr("value_floats", std::vector<float>{1, 2})), {})[0], DType::Float32,
                {2}, {1, 2});
  expect_tensor(run(make_node("Constant", 0, 1, attr("value", iota64({2, 2}))), {})[0], DType::Float64, {2, 2},
                {0, 1, 2, 3});
}

TEST(ShapeOpsForward, Tile) {
  // (2, 3) tiled (2, 2): rows of [x x] twice.
  expect_tensor(run(make_node("Tile", 2, 1), {iota64({2, 3}), i64({2, 2})})[0], DType::Float64, {4, 6},
                {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  expect_tensor(run(make_node("Tile", 2, 1), {i64({7, 8}, {2, 1}), i64({1, 3})})[0], DType::Int64, {2, 3},
                {7, 7, 7, 8, 8, 8});
  EXPECT_EQ(run(make_node("Tile", 2, 1), {iota64({2, 3}), i64({0, 1})})[0].shape(), (Shape{0, 3}));
}

TEST(ShapeOpsForward, ConstantOfShapeExpandRange) {
  expect_tensor(run(make_node("ConstantOfShape", 1, 1, attr("value", i64({7}, {1}))), {i64({2, 2})})[0], DType::Int64,
                {2, 2}, {7, 7, 7, 7});
  expect_tensor(run(make_node("ConstantOfShape", 1, 1), {i64({3})})[0], DType::Float32, {3}, {0, 0, 0});
  expect_tensor(run(make_node("Expand", 2, 1), {f64({1, 2}, {2, 1}), i64({2, 1, 3})})[0], DType::Float64, {2, 2, 3},
                {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  EXPECT_EQ(run(make_node("Expand", 2, 1), {iota64({3, 4}), i64({1, 1})})[0].shape(), (Shape{3, 4}));
  expect_tensor(run(make_node("Range", 3, 1), {i64({0}, {}), i64({10}, {}), i64({3}, {})})[0], DType::Int64, {4},
                {0, 3, 6, 9});
  expect_tensor(run(make_node("Range", 3, 1), {i64({5}, {}), i64({0}, {}), i64({-2}, {})})[0], DType::Int64, {3},
                {5, 3, 1});
  expect_tensor(run(make_node("Range", 3, 1), {f64({1}, {}), f64({0}, {}), f64({-0.25}, {})})[0], DType::Float64, {4},
                {1, 0.75, 0.5, 0.25});
}

TEST(ShapeOpsForward, EqualAndWhere) {
  expect_tensor(run(make_node("Equal", 2, 1), {i64({1, 2, 3, 4}, {2, 2}), i64({2, 2}, {2, 1})})[0], DType::Bool, {2, 2},
                {0, 1, 0, 0});
  expect_tensor(run(make_node("Equal", 2, 1), {i64({1, 2, 3, 3}, {2, 2}), i64({1, 3})})[0], DType::Bool, {2, 2},
                {1, 0, 0, 1});
  Tensor c = boolean({1, 0}, {2, 1});
  expect_tensor(run(make_node("Where", 3, 1), {c, iota64({2, 3}), f64({-1}, {})})[0], DType::Float64, {2, 3},
                {0, 1, 2, -1, -1, -1});
  expect_tensor(run(make_node("Where", 3, 1), {boolean({0, 1}, {2}), i64({5}), i64({6, 7})})[0], DType::Int64, {2},
                {6, 5});
}

// The exporter's shape sub-graph, folded by running the kernels on int64 host tensors.
TEST(ShapeOpsForward, ShapeGatherUnsqueezeConcatReshapeChain) {
  Tensor x = iota64({3, 2, 4});
  Tensor s = run(make_node("Shape", 1, 1), {x})[0];
  Tensor batch = run(make_node("Gather", 2, 1), {s, i64({0}, {})})[0];
  Tensor b1 = run(make_node("Unsqueeze", 2, 1), {batch, i64({0})}, 13)[0];
  Tensor target = run(make_node("Concat", 2, 1, attr("axis", int64_t{0})), {b1, i64({-1})})[0];
  expect_tensor(target, DType::Int64, {2}, {3, -1});
  Tensor y = run(make_node("Reshape", 2, 1), {x, target})[0];
  expect_tensor(y, DType::Float64, {3, 8}, values(x));
}

Attributes depth_space_attrs(int64_t b, const char* mode) {
  Attributes a;
  a.set("blocksize", b);
  a.set("mode", std::string(mode));
  return a;
}

// Roll (cbtrain's op for torch.roll): y[i] = x[(i + shift) mod n] along each axis, against a
// loop over random float data and int64 data, shifts negative and beyond the dim, the innermost
// dim rolled or not, one axis or two.
TEST(ShapeOpsForward, RollReadsEachRolledAxisShiftedAndWrapped) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes, shifts;
  };
  for (const Case& c : std::vector<Case>{{{2, 5, 3}, {1}, {2}},
                                         {{2, 5, 3}, {-1}, {-4}},
                                         {{4, 6, 6, 3}, {1, 2}, {2, -2}},
                                         {{3, 1, 7}, {2, 0}, {9, 1}},
                                         {{6}, {0}, {0}}}) {
    SCOPED_TRACE(shape_str(c.shape));
    Attributes a;
    a.set("axes", c.axes);
    a.set("shifts", c.shifts);
    for (DType t : {DType::Float32, DType::Int64}) {
      Tensor x = t == DType::Float32 ? random_tensor(t, c.shape, 40) : Tensor(t, c.shape);
      if (t == DType::Int64)
        for (int64_t i = 0; i < x.numel(); ++i) x.ptr<int64_t>()[i] = 1000 + 7 * i;
      Tensor y = run(make_node("Roll", 1, 1, a, kCbtDomain), {x})[0];
      ASSERT_EQ(y.shape(), c.shape);
      const auto st = strides_of(c.shape);
      for (int64_t i = 0; i < y.numel(); ++i) {
        int64_t from = 0;
        for (size_t d = 0; d < c.shape.size(); ++d) {
          int64_t k = (i / st[d]) % c.shape[d];
          for (size_t j = 0; j < c.axes.size(); ++j)
            if (normalize_axis(c.axes[j], c.shape.size()) == static_cast<int64_t>(d))
              k = (((k + c.shifts[j]) % c.shape[d]) + c.shape[d]) % c.shape[d];
          from += k * st[d];
        }
        if (t == DType::Float32)
          EXPECT_EQ(y.ptr<float>()[i], x.ptr<float>()[from]) << i;
        else
          EXPECT_EQ(y.ptr<int64_t>()[i], x.ptr<int64_t>()[from]) << i;
      }
    }
  }
  Attributes twice;
  twice.set("axes", std::vector<int64_t>{1, -2});
  twice.set("shifts", std::vector<int64_t>{1, 1});
  EXPECT_THROW(run(make_node("Roll", 1, 1, twice, kCbtDomain), {iota64({2, 3, 4})}), ModelError);
}

TEST(ShapeOpsForward, DepthToSpaceAndSpaceToDepthMoveBlocksAsOnnxSays) {
  const int64_t b = 2, N = 2, C = 8, H = 3, W = 4, Cp = C / (b * b);
  Tensor x = random_tensor(DType::Float32, {N, C, H, W}, 71);
  Tensor dcr = run_node(make_node("DepthToSpace", 1, 1, depth_space_attrs(b, "DCR")), {x})[0];
  Tensor crd = run_node(make_node("DepthToSpace", 1, 1, depth_space_attrs(b, "CRD")), {x})[0];
  ASSERT_EQ(dcr.shape(), (Shape{N, Cp, H * b, W * b}));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < Cp; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          for (int64_t i = 0; i < b; ++i)
            for (int64_t j = 0; j < b; ++j) {
              const int64_t at = ((n * Cp + c) * H * b + h * b + i) * W * b + w * b + j;
              auto xat = [&](int64_t ch) { return x.ptr<float>()[((n * C + ch) * H + h) * W + w]; };
              EXPECT_EQ(dcr.ptr<float>()[at], xat((i * b + j) * Cp + c));
              EXPECT_EQ(crd.ptr<float>()[at], xat(c * b * b + i * b + j));
            }
  // SpaceToDepth undoes DepthToSpace (DCR), and the CRD form undoes CRD.
  Tensor back = run_node(make_node("SpaceToDepth", 1, 1, depth_space_attrs(b, "DCR")), {dcr})[0];
  EXPECT_TRUE(same_bytes(back, x));
  back = run_node(make_node("SpaceToDepth", 1, 1, depth_space_attrs(b, "CRD")), {crd})[0];
  EXPECT_TRUE(same_bytes(back, x));
  for (const char* mode : {"DCR", "CRD"}) {
    auto r = grad_check(make_node("DepthToSpace", 1, 1, depth_space_attrs(b, mode)),
                        {random_tensor(DType::Float64, {1, 8, 2, 3}, 72)});
    EXPECT_TRUE(r.ok) << mode << "\n" << r.report;
    r = grad_check(make_node("SpaceToDepth", 1, 1, depth_space_attrs(b, mode)),
                   {random_tensor(DType::Float64, {2, 3, 4, 2}, 73)});
    EXPECT_TRUE(r.ok) << mode << "\n" << r.report;
  }
  EXPECT_THROW(infer_node(make_node("DepthToSpace", 1, 1, depth_space_attrs(3, "DCR")), {x}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("SpaceToDepth", 1, 1, depth_space_attrs(2, "DCR")), {x}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("DepthToSpace", 1, 1, depth_space_attrs(2, "XYZ")), {x}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("DepthToSpace", 1, 1), {x}, 13), ModelError);
}

}  // namespace
}  // namespace cbt::test
