// Resize tests: the sampling of each mode against hand computations, gradients by finite
// differences (through ResizeGrad's gather), and the errors of shape inference. Agreement with
// onnxruntime over every coordinate mode is Cli.ResizeModesMatchOnnxruntime.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/op_harness.h"
#include "graph/legacy_ops.h"

namespace cbt::test {
namespace {

Attributes resize_attrs(const char* mode, const char* coord, const char* nearest = "round_prefer_floor") {
  Attributes a;
  a.set("mode", std::string(mode));
  a.set("coordinate_transformation_mode", std::string(coord));
  a.set("nearest_mode", std::string(nearest));
  return a;
}

Tensor scales(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_f32(std::move(v), {n});
}

Tensor sizes(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_i64(std::move(v), {n});
}

TEST(ResizeTest, NearestAsymmetricFloorRepeatsEachElement) {
  Tensor x = random_tensor(DType::Float32, {2, 3, 3, 4}, 1);
  auto y = run_node(make_node("Resize", 3, 1, resize_attrs("nearest", "asymmetric", "floor")),
                    {x, Tensor(), scales({1, 1, 2, 2})}, {false, 0, 13})[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3, 6, 8}));
  for (int64_t p = 0; p < 6; ++p)
    for (int64_t h = 0; h < 6; ++h)
      for (int64_t w = 0; w < 8; ++w)
        EXPECT_EQ(y.ptr<float>()[(p * 6 + h) * 8 + w], x.ptr<float>()[(p * 3 + h / 2) * 4 + w / 2]);
}

TEST(ResizeTest, LinearAlignCornersInterpolatesBetweenTheCorners) {
  Tensor x = Tensor::from_f32({1, 3, 5, 11}, {1, 1, 2, 2});
  auto y = run_node(make_node("Resize", 4, 1, resize_attrs("linear", "align_corners")),
                    {x, Tensor(), Tensor(), sizes({1, 1, 3, 3})}, {false, 0, 13})[0];
  const float want[] = {1, 2, 3, 3, 5, 7, 5, 8, 11};
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(y.ptr<float>()[i], want[i]) << i;
}

TEST(ResizeTest, LinearHalfPixelClampsAtTheEdges) {
  // Length 2 -> 4, scale 2: sources -0.25, 0.25, 0.75, 1.25, clamped to [0, 1].
  Tensor x = Tensor::from_f32({2, 6}, {1, 2});
  auto y = run_node(make_node("Resize", 3, 1, resize_attrs("linear", "half_pixel")), {x, Tensor(), scales({1, 2})},
                    {false, 0, 13})[0];
  const float want[] = {2, 3, 5, 6};
  ASSERT_EQ(y.shape(), (Shape{1, 4}));
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y.ptr<float>()[i], want[i]) << i;
}

TEST(ResizeTest, NearestModesRoundTiesAsAsked) {
  // Length 2 -> 4 asymmetric: sources 0, 0.5, 1, 1.5.
  Tensor x = Tensor::from_f32({10, 20}, {1, 2});
  for (auto [mode, w] :
       std::vector<std::pair<const char*, std::vector<float>>>{{"round_prefer_floor", {10, 10, 20, 20}},
                                                               {"round_prefer_ceil", {10, 20, 20, 20}},
                                                               {"floor", {10, 10, 20, 20}},
                                                               {"ceil", {10, 20, 20, 20}}}) {
    auto y = run_node(make_node("Resize", 3, 1, resize_attrs("nearest", "asymmetric", mode)),
                      {x, Tensor(), scales({1, 2})}, {false, 0, 13})[0];
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y.ptr<float>()[i], w[i]) << mode << " " << i;
  }
}

TEST(ResizeTest, GradCheck) {
  struct Case {
    const char* mode;
    const char* coord;
    Shape x;
    std::vector<int64_t> out;
  };
  for (const Case& c : std::vector<Case>{{"linear", "half_pixel", {1, 2, 3, 4}, {1, 2, 6, 8}},
                                         {"linear", "pytorch_half_pixel", {2, 1, 4, 3}, {2, 1, 5, 7}},
                                         {"linear", "align_corners", {1, 1, 5, 4}, {1, 1, 3, 2}},
                                         {"linear", "asymmetric", {1, 2, 3}, {1, 2, 7}},
                                         {"linear", "half_pixel_symmetric", {1, 1, 3, 5}, {1, 1, 4, 2}},
                                         {"nearest", "asymmetric", {1, 2, 3, 3}, {1, 2, 6, 9}},
                                         {"nearest", "half_pixel", {2, 1, 5, 6}, {2, 1, 3, 4}},
                                         {"nearest", "tf_half_pixel_for_nn", {1, 1, 3, 4}, {1, 1, 5, 5}},
                                         {"linear", "half_pixel", {1, 1, 2, 3, 2}, {1, 1, 4, 3, 5}}}) {
    std::vector<Tensor> in{random_tensor(DType::Float64, c.x, 3), Tensor(), Tensor(), sizes(c.out)};
    GradCheckOptions opt;
    opt.opset = 19;
    auto res = grad_check(make_node("Resize", 4, 1, resize_attrs(c.mode, c.coord)), in, opt);
    EXPECT_TRUE(res.ok) << c.mode << " " << c.coord << " " << shape_str(c.x) << "\n" << res.report;
  }
}

std::string infer_error(const Node& n, const std::vector<Tensor>& in, int64_t opset) {
  try {
    infer_node(n, in, opset);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResizeTest, ShapeInferenceTakesScalesSizesAndAxesAndNamesWhatItRefuses) {
  Tensor x(DType::Float32, {2, 3, 7, 5});
  auto t = infer_node(make_node("Resize", 3, 1), {x, Tensor(), scales({1, 1, 1.5f, 0.5f})}, 13);
  EXPECT_EQ(t[0].shape, (Shape{2, 3, 10, 2}));
  t = infer_node(make_node("Resize", 4, 1), {x, Tensor(), scales({}), sizes({2, 3, 4, 9})}, 11);
  EXPECT_EQ(t[0].shape, (Shape{2, 3, 4, 9}));
  Attributes axes;
  axes.set("axes", std::vector<int64_t>{-2, -1});
  t = infer_node(make_node("Resize", 3, 1, axes), {x, Tensor(), scales({2, 3})}, 18);
  EXPECT_EQ(t[0].shape, (Shape{2, 3, 14, 15}));

  auto has = [](const std::string& msg, const char* part) { return msg.find(part) != std::string::npos; };
  Attributes cubic;
  cubic.set("mode", std::string("cubic"));
  EXPECT_TRUE(has(infer_error(make_node("Resize", 3, 1, cubic), {x, Tensor(), scales({1, 1, 2, 2})}, 13),
                  "mode 'cubic' is not supported"));
  Attributes crop;
  crop.set("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  EXPECT_TRUE(
      has(infer_error(make_node("Resize", 3, 1, crop), {x, Tensor(), scales({1, 1, 2, 2})}, 13), "tf_crop_and_resize"));
  EXPECT_TRUE(has(infer_error(make_node("Resize", 4, 1), {x, Tensor(), scales({1, 1, 2, 2}), sizes({2, 3, 4, 4})}, 13),
                  "exactly one of scales and sizes"));
  EXPECT_TRUE(has(infer_error(make_node("Resize", 3, 1), {x, Tensor(), scales({2, 2})}, 13), "2 values for 4 axes"));
  EXPECT_TRUE(
      has(infer_error(make_node("Resize", 3, 1), {x, Tensor(), scales({1, 1, -2, 2})}, 13), "not a positive number"));
  EXPECT_TRUE(
      has(infer_error(make_node("Resize", 3, 1), {x, Tensor(), scales({2, 1, 1, 1})}, 13), "only the last three axes"));
  EXPECT_TRUE(has(infer_error(make_node("Resize", 3, 1), {x, Tensor(), scales({1, 1, 1e30f, 1})}, 13), "makes 7"));
}

// Upsample (opsets 7 to 9) and opset-10 Resize become Resize's current form at load: asymmetric
// coordinates, nearest rounding down when enlarging and up when shrinking (ONNX's own example:
// [1 2 3 4; 5 6 7 8] at 0.6 gives [1 3]).
TEST(ResizeTest, LegacyUpsampleAndOpset10ResizeAreUpgraded) {
  Graph g;
  g.opset = 7;
  Node up = make_node("Upsample", 1, 1);
  up.name = "up";
  up.attrs.set("scales", std::vector<float>{1, 1, 0.6f, 0.6f});
  g.nodes.push_back(up);
  upgrade_legacy_ops(g);
  const Node& n = g.nodes[0];
  ASSERT_EQ(n.op_type, "Resize");
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_TRUE(n.inputs[1].empty());
  EXPECT_TRUE(g.constant_initializers.count(n.inputs[2]));
  EXPECT_FALSE(n.attrs.has("scales"));
  Tensor x = Tensor::from_f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  Tensor y = run_node(n, {x, Tensor(), g.initializers.at(n.inputs[2])}, {false, 0, 7})[0];
  ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(y.ptr<float>()[0], 1.0f);
  EXPECT_EQ(y.ptr<float>()[1], 3.0f);

  Graph r;
  r.opset = 10;
  Node resize = make_node("Resize", 2, 1);
  resize.attrs.set("mode", std::string("linear"));
  r.nodes.push_back(resize);
  upgrade_legacy_ops(r);
  EXPECT_EQ(r.nodes[0].inputs, (std::vector<std::string>{resize.inputs[0], "", resize.inputs[1]}));
  EXPECT_EQ(r.nodes[0].attrs.get_string("coordinate_transformation_mode", ""), "asymmetric");
  // Opset 11 and later are left alone; a mode those opsets lack is named.
  r.opset = 11;
  Node modern = make_node("Resize", 3, 1);
  r.nodes = {modern};
  upgrade_legacy_ops(r);
  EXPECT_FALSE(r.nodes[0].attrs.has("nearest_mode"));
  Graph bad;
  bad.opset = 9;
  Node cubic = make_node("Upsample", 2, 1);
  cubic.name = "cubic_up";
  cubic.attrs.set("mode", std::string("cubic"));
  bad.nodes.push_back(cubic);
  try {
    upgrade_legacy_ops(bad);
    ADD_FAILURE() << "a cubic Upsample was taken";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("Upsample 'cubic_up'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mode 'cubic' is not supported"), std::string::npos) << e.what();
  }
  bad.nodes[0] = make_node("Upsample", 0, 1);  // no X
  EXPECT_THROW(upgrade_legacy_ops(bad), ModelError);
  bad.nodes[0] = make_node("Upsample", 1, 1);  // opset 9 takes scales as input 1
  EXPECT_THROW(upgrade_legacy_ops(bad), ModelError);
  bad.opset = 8;  // before 9: the attribute, of floats
  bad.nodes[0].attrs.set("scales", std::vector<int64_t>{1, 2});
  EXPECT_THROW(upgrade_legacy_ops(bad), ModelError);
}

}  // namespace
}  // namespace cbt::test
