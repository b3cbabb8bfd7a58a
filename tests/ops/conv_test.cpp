// Conv and ConvTranspose: values against naive loops, gradient checks, shape inference.
#include <gtest/gtest.h>

#include <vector>

#include "common/op_harness.h"

namespace cbt::test {
namespace {

using Ints = std::vector<int64_t>;

struct ConvCase {
  Ints strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};
  int64_t group = 1;
};

Attributes conv_attrs(const ConvCase& c) {
  Attributes a;
  a.set("strides", c.strides);
  a.set("dilations", c.dilations);
  a.set("pads", c.pads);
  a.set("group", c.group);
  return a;
}

// Naive 2-D convolution; pads_begin already resolved. x: (N, C, H, W), w: (M, C/G, KH, KW).
Tensor naive_conv(const Tensor& x, const Tensor& w, const Tensor* b, const Ints& s, const Ints& d, const Ints& pb,
                  int64_t G, const Shape& yshape) {
  Tensor y(DType::Float64, yshape);
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), M = w.dim(0);
  int64_t Cg = C / G, Mg = M / G, KH = w.dim(2), KW = w.dim(3), OH = yshape[2], OW = yshape[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b ? b->at_f64(m) : 0.0;
          int64_t g = m / Mg;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * s[0] - pb[0] + kh * d[0], iw = ow * s[1] - pb[1] + kw * d[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc +=
                    x.at_f64(((n * C + g * Cg + c) * H + ih) * W + iw) * w.at_f64(((m * Cg + c) * KH + kh) * KW + kw);
              }
          y.ptr<double>()[((n * M + m) * OH + oh) * OW + ow] = acc;
        }
  return y;
}

// Naive 2-D transposed convolution. x: (N, C, H, W), w: (C, M/G, KH, KW).
Tensor naive_conv_transpose(const Tensor& x, const Tensor& w, const Tensor* b, const Ints& s, const Ints& d,
                            const Ints& pb, int64_t G, const Shape& yshape) {
  Tensor y(DType::Float64, yshape);
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), Mg = w.dim(1), M = Mg * G;
  int64_t Cg = C / G, KH = w.dim(2), KW = w.dim(3), OH = yshape[2], OW = yshape[3];
  double* yp = y.ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t i = 0; i < OH * OW; ++i) yp[(n * M + m) * OH * OW + i] = b ? b->at_f64(m) : 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ih = 0; ih < H; ++ih)
        for (int64_t iw = 0; iw < W; ++iw)
          for (int64_t m = 0; m < Mg; ++m)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t oh = ih * s[0] - pb[0] + kh * d[0], ow = iw * s[1] - pb[1] + kw * d[1];
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                int64_t g = c / Cg;
                yp[((n * M + g * Mg + m) * OH + oh) * OW + ow] +=
                    x.at_f64(((n * C + c) * H + ih) * W + iw) * w.at_f64(((c * Mg + m) * KH + kh) * KW + kw);
              }
  return y;
}

Tensor f64(const Tensor& t) { return cast_float(t, DType::Float64); }

TEST(ConvTest, ForwardMatchesNaiveLoop) {
  struct Case {
    Shape x, w;
    ConvCase c;
  };
  std::vector<Case> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {}},
      {{3, 4, 9, 8}, {6, 2, 3, 2}, {{2, 1}, {1, 2}, {1, 0, 2, 1}, 2}},
      {{1, 4, 5, 5}, {4, 1, 3, 3}, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 4}},  // depthwise
      {{5, 2, 6, 7}, {3, 2, 1, 1}, {{2, 2}, {1, 1}, {0, 0, 0, 0}, 1}},  // 1x1, stride 2
  };
  for (const Case& k : cases) {
    Tensor x = random_tensor(DType::Float32, k.x, 1), w = random_tensor(DType::Float32, k.w, 2);
    Tensor b = random_tensor(DType::Float32, {k.w[0]}, 3);
    auto y = run_node(make_node("Conv", 3, 1, conv_attrs(k.c)), {x, w, b});
    Tensor xd = f64(x), wd = f64(w), bd = f64(b);
    Tensor ref =
        naive_conv(xd, wd, &bd, k.c.strides, k.c.dilations, {k.c.pads[0], k.c.pads[1]}, k.c.group, y[0].shape());
    EXPECT_EQ(compare_tensors(y[0], ref, 1e-4, 1e-4), "") << shape_str(k.x);
  }
}

TEST(ConvTest, LargeBatchUsesChunksCorrectly) {
  // Big enough that im2col splits the batch into several chunks.
  Tensor x = random_tensor(DType::Float32, {70, 8, 30, 30}, 4);
  Tensor w = random_tensor(DType::Float32, {5, 8, 3, 3}, 5);
  ConvCase c{{1, 1}, {1, 1}, {1, 1, 1, 1}, 1};
  auto y = run_node(make_node("Conv", 2, 1, conv_attrs(c)), {x, w});
  Tensor ref = naive_conv(f64(x), f64(w), nullptr, c.strides, c.dilations, {1, 1}, 1, y[0].shape());
  EXPECT_EQ(compare_tensors(y[0], ref, 1e-4, 1e-4), "");
}

TEST(ConvTest, AutoPadSameAndValid) {
  Tensor x = random_tensor(DType::Float64, {2, 2, 7, 8}, 6);
  Tensor w = random_tensor(DType::Float64, {3, 2, 4, 3}, 7);
  // SAME with stride 2: out = ceil(in / 2); total pad = (out-1)*2 + k - in.
  // H: out 4, total 6+4-7 = 3; W: out 4, total 6+3-8 = 1.
  struct Case {
    std::string mode;
    Ints pb;
    Shape y;
  };
  for (const Case& k : std::vector<Case>{{"SAME_UPPER", {1, 0}, {2, 3, 4, 4}},
                                         {"SAME_LOWER", {2, 1}, {2, 3, 4, 4}},
                                         {"VALID", {0, 0}, {2, 3, 2, 3}}}) {
    Attributes a;
    a.set("auto_pad", k.mode);
    a.set("strides", Ints{2, 2});
    auto y = run_node(make_node("Conv", 2, 1, a), {x, w});
    ASSERT_EQ(y[0].shape(), k.y) << k.mode;
    Tensor ref = naive_conv(x, w, nullptr, {2, 2}, {1, 1}, k.pb, 1, k.y);
    EXPECT_EQ(compare_tensors(y[0], ref, 1e-10, 1e-10), "") << k.mode;
  }
}

TEST(ConvTest, OneDimensional) {
  Tensor x = random_tensor(DType::Float64, {2, 3, 11}, 8);
  Tensor w = random_tensor(DType::Float64, {4, 3, 3}, 9);
  Attributes a;
  a.set("strides", Ints{2});
  a.set("pads", Ints{1, 2});
  a.set("dilations", Ints{2});
  auto y = run_node(make_node("Conv", 2, 1, a), {x, w});
  ASSERT_EQ(y[0].shape(), (Shape{2, 4, 5}));  // (11 + 3 - 5) / 2 + 1
  Tensor ref =
      naive_conv(x.reshaped({2, 3, 1, 11}), w.reshaped({4, 3, 1, 3}), nullptr, {1, 2}, {1, 2}, {0, 1}, 1, {2, 4, 1, 5});
  EXPECT_EQ(compare_tensors(y[0], ref.reshaped({2, 4, 5}), 1e-10, 1e-10), "");
}

TEST(ConvTest, GradCheck) {
  struct Case {
    Shape x, w;
    ConvCase c;
    bool bias;
  };
  std::vector<Case> cases = {
      {{2, 3, 5, 6}, {4, 3, 3, 3}, {}, true},
      {{1, 2, 7, 7}, {3, 2, 3, 3}, {{2, 2}, {1, 1}, {1, 1, 1, 1}, 1}, true},
      {{3, 4, 6, 5}, {2, 2, 2, 3}, {{1, 2}, {2, 1}, {0, 1, 1, 0}, 2}, false},
      {{2, 3, 4, 4}, {3, 1, 3, 3}, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 3}, true},
  };
  for (const Case& k : cases) {
    std::vector<Tensor> in{random_tensor(DType::Float64, k.x, 11), random_tensor(DType::Float64, k.w, 12)};
    if (k.bias) in.push_back(random_tensor(DType::Float64, {k.w[0]}, 13));
    auto res = grad_check(make_node("Conv", in.size(), 1, conv_attrs(k.c)), in);
    EXPECT_TRUE(res.ok) << shape_str(k.x) << "\n" << res.report;
  }
}

TEST(ConvTest, GradCheckAutoPadAndOneDimensional) {
  Attributes a;
  a.set("auto_pad", std::string("SAME_LOWER"));
  a.set("strides", Ints{2, 1});
  std::vector<Tensor> in{random_tensor(DType::Float64, {2, 2, 5, 4}, 14),
                         random_tensor(DType::Float64, {3, 2, 2, 3}, 15), random_tensor(DType::Float64, {3}, 16)};
  auto res = grad_check(make_node("Conv", 3, 1, a), in);
  EXPECT_TRUE(res.ok) << res.report;

  Attributes b;
  b.set("strides", Ints{2});
  b.set("pads", Ints{2, 1});
  std::vector<Tensor> in1{random_tensor(DType::Float64, {3, 2, 9}, 17), random_tensor(DType::Float64, {4, 2, 3}, 18)};
  res = grad_check(make_node("Conv", 2, 1, b), in1);
  EXPECT_TRUE(res.ok) << res.report;
}

TEST(ConvTest, ShapeInference) {
  Attributes a;
  a.set("strides", Ints{2, 2});
  a.set("pads", Ints{1, 1, 1, 1});
  auto t = infer_node(make_node("Conv", 2, 1, a),
                      {Tensor(DType::Float32, {8, 3, 32, 32}), Tensor(DType::Float32, {16, 3, 3, 3})}, 17);
  EXPECT_EQ(t[0].shape, (Shape{8, 16, 16, 16}));
  // Channel mismatch, 3-D convolution, bad bias, kernel larger than input.
  EXPECT_THROW(infer_node(make_node("Conv", 2, 1),
                          {Tensor(DType::Float32, {1, 4, 8, 8}), Tensor(DType::Float32, {2, 3, 3, 3})}, 17),
               ModelError);
  EXPECT_THROW(infer_node(make_node("Conv", 2, 1),
                          {Tensor(DType::Float32, {1, 3, 4, 4, 4}), Tensor(DType::Float32, {2, 3, 3, 3, 3})}, 17),
               ModelError);
  EXPECT_THROW(infer_node(make_node("Conv", 3, 1),
                          {Tensor(DType::Float32, {1, 3, 8, 8}), Tensor(DType::Float32, {2, 3, 3, 3}),
                           Tensor(DType::Float32, {3})},
                          17),
               ModelError);
  EXPECT_THROW(infer_node(make_node("Conv", 2, 1),
                          {Tensor(DType::Float32, {1, 3, 2, 2}), Tensor(DType::Float32, {2, 3, 3, 3})}, 17),
               ModelError);
}

TEST(ConvTransposeTest, ForwardMatchesNaiveLoop) {
  struct Case {
    Shape x, w;
    ConvCase c;
    Ints out_pad;
  };
  std::vector<Case> cases = {
      {{2, 3, 4, 5}, {3, 2, 3, 3}, {}, {0, 0}},
      {{1, 4, 5, 4}, {4, 3, 3, 2}, {{2, 2}, {1, 1}, {1, 0, 1, 1}, 2}, {1, 0}},
      {{2, 2, 3, 3}, {2, 2, 2, 2}, {{2, 1}, {2, 1}, {0, 0, 0, 0}, 1}, {1, 0}},
  };
  for (const Case& k : cases) {
    Tensor x = random_tensor(DType::Float64, k.x, 21), w = random_tensor(DType::Float64, k.w, 22);
    Tensor b = random_tensor(DType::Float64, {k.w[1] * k.c.group}, 23);
    Attributes a = conv_attrs(k.c);
    a.set("output_padding", k.out_pad);
    auto y = run_node(make_node("ConvTranspose", 3, 1, a), {x, w, b});
    Shape expect{k.x[0], k.w[1] * k.c.group};
    for (int i = 0; i < 2; ++i)
      expect.push_back(k.c.strides[i] * (k.x[2 + i] - 1) + k.out_pad[i] + (k.w[2 + i] - 1) * k.c.dilations[i] + 1 -
                       k.c.pads[i] - k.c.pads[2 + i]);
    ASSERT_EQ(y[0].shape(), expect);
    Tensor ref =
        naive_conv_transpose(x, w, &b, k.c.strides, k.c.dilations, {k.c.pads[0], k.c.pads[1]}, k.c.group, expect);
    EXPECT_EQ(compare_tensors(y[0], ref, 1e-10, 1e-10), "") << shape_str(k.x);
  }
}

TEST(ConvTransposeTest, OutputShapeAttribute) {
  Tensor x = random_tensor(DType::Float64, {1, 2, 3, 3}, 24), w = random_tensor(DType::Float64, {2, 3, 3, 3}, 25);
  Attributes a;
  a.set("strides", Ints{2, 2});
  a.set("output_shape", Ints{6, 6});
  auto y = run_node(make_node("ConvTranspose", 2, 1, a), {x, w});
  ASSERT_EQ(y[0].shape(), (Shape{1, 3, 6, 6}));
  // Full size 2*2 + 3 = 7, total padding 1 placed at the end (begin = 1 - 1/2 = 1 for NOTSET).
  Tensor ref = naive_conv_transpose(x, w, nullptr, {2, 2}, {1, 1}, {1, 1}, 1, {1, 3, 6, 6});
  EXPECT_EQ(compare_tensors(y[0], ref, 1e-10, 1e-10), "");
}

TEST(ConvTransposeTest, GradCheck) {
  struct Case {
    Shape x, w;
    ConvCase c;
    Ints out_pad;
  };
  std::vector<Case> cases = {
      {{2, 3, 3, 4}, {3, 2, 3, 3}, {}, {0, 0}},
      {{1, 4, 3, 3}, {4, 1, 3, 2}, {{2, 2}, {1, 1}, {1, 0, 1, 1}, 2}, {1, 1}},
      {{3, 2, 4, 2}, {2, 3, 2, 2}, {{1, 2}, {2, 1}, {0, 1, 0, 0}, 1}, {0, 1}},
  };
  for (const Case& k : cases) {
    Attributes a = conv_attrs(k.c);
    a.set("output_padding", k.out_pad);
    std::vector<Tensor> in{random_tensor(DType::Float64, k.x, 26), random_tensor(DType::Float64, k.w, 27),
                           random_tensor(DType::Float64, {k.w[1] * k.c.group}, 28)};
    auto res = grad_check(make_node("ConvTranspose", 3, 1, a), in);
    EXPECT_TRUE(res.ok) << shape_str(k.x) << "\n" << res.report;
  }
}

TEST(ConvTransposeTest, ShapeInference) {
  Attributes a;
  a.set("strides", Ints{2, 2});
  a.set("auto_pad", std::string("SAME_UPPER"));
  auto t = infer_node(make_node("ConvTranspose", 2, 1, a),
                      {Tensor(DType::Float32, {2, 4, 5, 5}), Tensor(DType::Float32, {4, 3, 3, 3})}, 17);
  EXPECT_EQ(t[0].shape, (Shape{2, 3, 10, 10}));
  EXPECT_THROW(infer_node(make_node("ConvTranspose", 2, 1),
                          {Tensor(DType::Float32, {1, 3, 4, 4}), Tensor(DType::Float32, {4, 2, 3, 3})}, 17),
               ModelError);
  Attributes bad;
  bad.set("output_padding", Ints{1, 1});  // must be below stride 1
  EXPECT_THROW(infer_node(make_node("ConvTranspose", 2, 1, bad),
                          {Tensor(DType::Float32, {1, 4, 4, 4}), Tensor(DType::Float32, {4, 2, 3, 3})}, 17),
               ModelError);
}

}  // namespace
}  // namespace cbt::test
