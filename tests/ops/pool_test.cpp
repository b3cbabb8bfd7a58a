// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: values against naive loops, gradients,
// inference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/op_harness.h"

namespace cbt::test {
namespace {

using Ints = std::vector<int64_t>;

Attributes pool_attrs(Ints k, Ints s, Ints p, int64_t ceil_mode = 0, Ints d = {1, 1}) {
  Attributes a;
  a.set("kernel_shape", k);
  a.set("strides", s);
  a.set("pads", p);
  a.set("ceil_mode", ceil_mode);
  a.set("dilations", d);
  return a;
}

enum class Kind { Max, AvgExcludePad, AvgIncludePad };

// Naive 2-D pooling with explicit pads (begin h, begin w, end h, end w) and dilations.
Tensor naive_pool(const Tensor& x, Kind kind, Ints k, Ints s, Ints p, Ints d, const Shape& yshape) {
  Tensor y(DType::Float64, yshape);
  int64_t NC = x.dim(0) * x.dim(1), H = x.dim(2), W = x.dim(3), OH = yshape[2], OW = yshape[3];
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t inside = 0, padded = 0;
        for (int64_t kh = 0; kh < k[0]; ++kh)
          for (int64_t kw = 0; kw < k[1]; ++kw) {
            int64_t ih = oh * s[0] - p[0] + kh * d[0], iw = ow * s[1] - p[1] + kw * d[1];
            if (ih >= -p[0] && ih < H + p[2] && iw >= -p[1] && iw < W + p[3]) ++padded;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            double v = x.at_f64((nc * H + ih) * W + iw);
            best = std::max(best, v);
            sum += v;
            ++inside;
          }
        double out = kind == Kind::Max ? best : sum / double(kind == Kind::AvgIncludePad ? padded : inside);
        y.ptr<double>()[(nc * OH + oh) * OW + ow] = out;
      }
  return y;
}

struct PoolCase {
  Shape x;
  Ints k, s, p;
  int64_t ceil_mode;
  Ints d;
  Shape y;
};

std::vector<PoolCase> pool_cases() {
  return {
      {{2, 3, 6, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, {1, 1}, {2, 3, 3, 3}},
      {{1, 2, 7, 5}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, {1, 1}, {1, 2, 4, 3}},
      {{2, 2, 7, 6}, {3, 2}, {2, 2}, {1, 0, 1, 0}, 1, {1, 1}, {2, 2, 4, 3}},  // ceil_mode
      {{1, 3, 8, 7}, {2, 3}, {1, 2}, {0, 1, 1, 1}, 0, {2, 1}, {1, 3, 7, 4}},  // dilation
  };
}

TEST(PoolTest, MaxPoolMatchesNaiveLoop) {
  for (const PoolCase& c : pool_cases()) {
    Tensor x = random_tensor(DType::Float64, c.x, 1);
    auto y = run_node(make_node("MaxPool", 1, 1, pool_attrs(c.k, c.s, c.p, c.ceil_mode, c.d)), {x});
    ASSERT_EQ(y[0].shape(), c.y) << shape_str(c.x);
    EXPECT_EQ(compare_tensors(y[0], naive_pool(x, Kind::Max, c.k, c.s, c.p, c.d, c.y), 1e-12, 1e-12), "");
  }
}

TEST(PoolTest, MaxPoolIndices) {
  Tensor x = random_tensor(DType::Float32, {2, 2, 4, 4}, 2);
  auto y = run_node(make_node("MaxPool", 1, 2, pool_attrs({2, 2}, {2, 2}, {0, 0, 0, 0})), {x});
  ASSERT_EQ(y[1].dtype(), DType::Int64);
  for (int64_t i = 0; i < y[0].numel(); ++i) EXPECT_EQ(x.at_f64(y[1].at_i64(i)), y[0].at_f64(i));
}

TEST(PoolTest, AveragePoolMatchesNaiveLoop) {
  for (int64_t include : {0, 1})
    for (const PoolCase& c : pool_cases()) {
      Tensor x = random_tensor(DType::Float64, c.x, 3);
      Attributes a = pool_attrs(c.k, c.s, c.p, c.ceil_mode, c.d);
      a.set("count_include_pad", include);
      auto y = run_node(make_node("AveragePool", 1, 1, a), {x});
      ASSERT_EQ(y[0].shape(), c.y);
      Kind kind = include ? Kind::AvgIncludePad : Kind::AvgExcludePad;
      EXPECT_EQ(compare_tensors(y[0], naive_pool(x, kind, c.k, c.s, c.p, c.d, c.y), 1e-12, 1e-12), "")
          << shape_str(c.x) << " include_pad " << include;
    }
}

TEST(PoolTest, AutoPadSameAndOneDimensional) {
  Tensor x = random_tensor(DType::Float64, {1, 2, 5, 5}, 4);
  Attributes a;
  a.set("kernel_shape", Ints{3, 3});
  a.set("strides", Ints{2, 2});
  a.set("auto_pad", std::string("SAME_UPPER"));
  auto y = run_node(make_node("MaxPool", 1, 1, a), {x});
  ASSERT_EQ(y[0].shape(), (Shape{1, 2, 3, 3}));  // total pad (3-1)*2 + 3 - 5 = 2: 1 each side
  EXPECT_EQ(
      compare_tensors(y[0], naive_pool(x, Kind::Max, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 2, 3, 3}), 1e-12, 1e-12),
      "");

  Tensor x1 = random_tensor(DType::Float64, {2, 3, 9}, 5);
  Attributes b;
  b.set("kernel_shape", Ints{3});
  b.set("strides", Ints{2});
  b.set("pads", Ints{1, 1});
  y = run_node(make_node("AveragePool", 1, 1, b), {x1});
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 5}));
  Tensor ref =
      naive_pool(x1.reshaped({2, 3, 1, 9}), Kind::AvgExcludePad, {1, 3}, {1, 2}, {0, 1, 0, 1}, {1, 1}, {2, 3, 1, 5});
  EXPECT_EQ(compare_tensors(y[0], ref.reshaped({2, 3, 5}), 1e-12, 1e-12), "");
}

TEST(PoolTest, GradCheck) {
  for (const PoolCase& c : pool_cases()) {
    for (const char* op : {"MaxPool", "AveragePool"}) {
      Attributes a = pool_attrs(c.k, c.s, c.p, c.ceil_mode, c.d);
      if (std::string(op) == "AveragePool") a.set("count_include_pad", int64_t{1});
      auto res = grad_check(make_node(op, 1, 1, a), {random_tensor(DType::Float64, c.x, 6)});
      EXPECT_TRUE(res.ok) << op << " " << shape_str(c.x) << "\n" << res.report;
    }
  }
  auto res = grad_check(make_node("AveragePool", 1, 1, pool_attrs({2, 2}, {1, 1}, {1, 1, 0, 0})),
                        {random_tensor(DType::Float64, {1, 1, 4, 3}, 7)});
  EXPECT_TRUE(res.ok) << res.report;
}

// Ties (values from {0, 1, 2}): the unrolled 2x2 stride-2 scan, the bounds-check-free one (3x3
// windows inside the plane) and the generic one (padding) all pick a window's first maximum
// in row-major order, for the value, the index and the gradient.
TEST(PoolTest, MaxPoolTiesGoToTheFirstMaximumOnEveryPath) {
  struct Path {
    Ints k, s, p;
  };
  for (const Path& path :
       {Path{{2, 2}, {2, 2}, {0, 0, 0, 0}}, Path{{3, 3}, {2, 2}, {0, 0, 0, 0}}, Path{{2, 2}, {2, 2}, {1, 1, 1, 1}}}) {
    Tensor x(DType::Float32, {2, 3, 7, 8});
    Tensor r = random_tensor(DType::Float64, x.shape(), 11);
    for (int64_t i = 0; i < x.numel(); ++i)
      x.ptr<float>()[i] = static_cast<float>(std::floor((r.at_f64(i) + 1.0) * 1.5));
    Attributes a = pool_attrs(path.k, path.s, path.p);
    auto y = run_node(make_node("MaxPool", 1, 2, a), {x});
    const int64_t H = 7, W = 8, OH = y[0].dim(2), OW = y[0].dim(3);
    Tensor dy = random_tensor(DType::Float32, y[0].shape(), 12);
    auto dx = run_node(make_node("MaxPoolGrad", 2, 1, a, kCbtDomain), {dy, x});
    std::vector<double> want(x.numel(), 0.0);
    for (int64_t nc = 0; nc < 6; ++nc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t first = -1;
          for (int64_t kh = 0; kh < path.k[0]; ++kh)
            for (int64_t kw = 0; kw < path.k[1]; ++kw) {
              int64_t ih = oh * 2 - path.p[0] + kh, iw = ow * 2 - path.p[1] + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              int64_t i = (nc * H + ih) * W + iw;
              if (first < 0 || x.at_f64(i) > x.at_f64(first)) first = i;
            }
          const int64_t o = (nc * OH + oh) * OW + ow;
          EXPECT_EQ(y[1].at_i64(o), first) << "window " << o;
          EXPECT_EQ(y[0].at_f64(o), x.at_f64(first));
          want[first] += dy.at_f64(o);
        }
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(dx[0].at_f64(i), want[i], 1e-6) << i;
  }
}

TEST(PoolTest, GlobalAveragePool) {
  Tensor x = random_tensor(DType::Float64, {2, 3, 4, 5}, 8);
  auto y = run_node(make_node("GlobalAveragePool", 1, 1), {x});
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 1, 1}));
  for (int64_t i = 0; i < 6; ++i) {
    double sum = 0;
    for (int64_t p = 0; p < 20; ++p) sum += x.at_f64(i * 20 + p);
    EXPECT_NEAR(y[0].at_f64(i), sum / 20, 1e-12);
  }
  for (Shape s : {Shape{2, 3, 4, 5}, Shape{1, 2, 7}}) {
    auto res = grad_check(make_node("GlobalAveragePool", 1, 1), {random_tensor(DType::Float64, s, 9)});
    EXPECT_TRUE(res.ok) << shape_str(s) << "\n" << res.report;
  }
}

TEST(PoolTest, GlobalMaxPool) {
  Tensor x = random_tensor(DType::Float64, {2, 3, 4, 5}, 10);
  auto y = run_node(make_node("GlobalMaxPool", 1, 1), {x});
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 1, 1}));
  for (int64_t i = 0; i < 6; ++i) {
    double m = x.at_f64(i * 20);
    for (int64_t p = 1; p < 20; ++p) m = std::max(m, x.at_f64(i * 20 + p));
    EXPECT_EQ(y[0].at_f64(i), m);
  }
  for (Shape s : {Shape{2, 3, 4, 5}, Shape{1, 2, 7}}) {
    auto res = grad_check(make_node("GlobalMaxPool", 1, 1), {random_tensor(DType::Float64, s, 11)});
    EXPECT_TRUE(res.ok) << shape_str(s) << "\n" << res.report;
  }
  // Two equal maxima in a channel share its gradient.
  Tensor t = Tensor::from_f32({1, 4, 4, 2}, {1, 1, 2, 2});
  auto dx = run_node(make_node("GlobalMaxPoolGrad", 2, 1, {}, kCbtDomain), {Tensor::from_f32({1.0f}, {1, 1, 1, 1}), t});
  const float want[] = {0, 0.5f, 0.5f, 0};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(dx[0].ptr<float>()[i], want[i]) << i;
}

TEST(PoolTest, ShapeInference) {
  auto t = infer_node(make_node("MaxPool", 1, 1, pool_attrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 1)),
                      {Tensor(DType::Float32, {4, 8, 10, 10})}, 17);
  EXPECT_EQ(t[0].shape, (Shape{4, 8, 5, 5}));  // ceil((10 - 3) / 2) + 1
  t = infer_node(make_node("GlobalAveragePool", 1, 1), {Tensor(DType::Float32, {4, 8, 3, 3})}, 17);
  EXPECT_EQ(t[0].shape, (Shape{4, 8, 1, 1}));
  Attributes none;  // kernel_shape missing
  EXPECT_THROW(infer_node(make_node("MaxPool", 1, 1, none), {Tensor(DType::Float32, {1, 1, 4, 4})}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("AveragePool", 1, 1, pool_attrs({5, 5}, {1, 1}, {0, 0, 0, 0})),
                          {Tensor(DType::Float32, {1, 1, 4, 4})}, 17),
               ModelError);
  EXPECT_THROW(infer_node(make_node("GlobalAveragePool", 1, 1), {Tensor(DType::Float32, {4, 8})}, 17), ModelError);
}

}  // namespace
}  // namespace cbt::test
