// Tests of element-wise arithmetic, Cast, Clip and ReduceSumTo: values, gradients, inference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/op_harness.h"
#include "graph/shape_utils.h"

namespace cbt::test {
namespace {

// Normal values pushed away from zero (divisors, kinks).
Tensor away_from_zero(const Shape& s, uint64_t seed) {
  Tensor t = random_tensor(DType::Float64, s, seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double& v = t.ptr<double>()[i];
    v += v >= 0 ? 0.5 : -0.5;
  }
  return t;
}

Tensor positive(const Shape& s, uint64_t seed) {
  Tensor t = random_tensor(DType::Float64, s, seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<double>()[i] = std::fabs(t.ptr<double>()[i]) + 0.5;
  return t;
}

// Naive broadcast reference: y[i] = f(a[ia], b[ib]) with indices from multi-indices.
template <class F>
Tensor naive_binary(const Tensor& a, const Tensor& b, F f) {
  Shape ys = broadcast_shapes(a.shape(), b.shape());
  Tensor y(DType::Float64, ys);
  auto sa = broadcast_strides(a.shape(), ys), sb = broadcast_strides(b.shape(), ys);
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t rem = i, ia = 0, ib = 0;
    for (size_t d = ys.size(); d-- > 0;) {
      int64_t k = rem % ys[d];
      rem /= ys[d];
      ia += k * sa[d];
      ib += k * sb[d];
    }
    y.ptr<double>()[i] = f(a.at_f64(ia), b.at_f64(ib));
  }
  return y;
}

const std::vector<std::pair<Shape, Shape>> kBroadcastCases = {
    {{2, 3, 5}, {2, 3, 5}}, {{2, 3, 4, 5}, {3, 1, 1}}, {{3, 4}, {}}, {{}, {3, 4}}, {{1, 4}, {3, 1}},
    {{1, 3}, {3}},          {{2, 1, 3}, {1, 4, 1}},    {{5}, {1}},
};

void check_binary_grads(const std::string& op, bool positive_inputs) {
  for (auto& [sa, sb] : kBroadcastCases) {
    Node n = make_node(op, 2, 1);
    // Pow needs a positive base for real exponents.
    Tensor a = positive_inputs ? positive(sa, 1) : away_from_zero(sa, 1);
    Tensor b = positive_inputs ? positive(sb, 2) : away_from_zero(sb, 2);
    auto r = grad_check(n, {a, b});
    EXPECT_TRUE(r.ok) << op << " " << shape_str(sa) << " " << shape_str(sb) << "\n" << r.report;
  }
}

TEST(ElementwiseTest, BinaryForwardMatchesNaiveBroadcast) {
  struct Case {
    const char* op;
    double (*f)(double, double);
  };
  const Case cases[] = {{"Add", [](double u, double v) { return u + v; }},
                        {"Sub", [](double u, double v) { return u - v; }},
                        {"Mul", [](double u, double v) { return u * v; }},
                        {"Div", [](double u, double v) { return u / v; }},
                        {"Max", [](double u, double v) { return std::max(u, v); }},
                        {"Min", [](double u, double v) { return std::min(u, v); }}};
  for (const Case& c : cases)
    for (auto& [sa, sb] : kBroadcastCases) {
      Tensor a = away_from_zero(sa, 3), b = away_from_zero(sb, 4);
      auto y = run_node(make_node(c.op, 2, 1), {a, b});
      EXPECT_EQ(compare_tensors(y[0], naive_binary(a, b, c.f), 1e-12, 1e-12), "")
          << c.op << " " << shape_str(sa) << " " << shape_str(sb);
    }
}

TEST(ElementwiseTest, LargeBroadcastUsesParallelPathsCorrectly) {
  // Above the OpenMP threshold, with rows split into chunks.
  const std::pair<Shape, Shape> cases[] = {{{2, 3, 100, 200}, {3, 1, 1}}, {{2, 40000}, {40000}}, {{300, 1}, {1, 300}}};
  for (auto& [sa, sb] : cases) {
    Tensor a = random_tensor(DType::Float32, sa, 5), b = random_tensor(DType::Float32, sb, 6);
    auto y = run_node(make_node("Mul", 2, 1), {a, b});
    EXPECT_EQ(compare_tensors(y[0], naive_binary(a, b, [](double u, double v) { return u * v; }), 1e-6, 1e-6), "");
  }
}

TEST(ElementwiseTest, Int64ArithmeticForShapes) {
  Tensor a = Tensor::from_i64({7, -7, 12}, {3});
  Tensor b = Tensor::from_i64({2}, {1});
  auto add = run_node(make_node("Add", 2, 1), {a, b})[0];
  auto sub = run_node(make_node("Sub", 2, 1), {a, b})[0];
  auto mul = run_node(make_node("Mul", 2, 1), {a, b})[0];
  auto div = run_node(make_node("Div", 2, 1), {a, b})[0];
  EXPECT_EQ(add.dtype(), DType::Int64);
  EXPECT_EQ(add.to_i64_vector(), (std::vector<int64_t>{9, -5, 14}));
  EXPECT_EQ(sub.to_i64_vector(), (std::vector<int64_t>{5, -9, 10}));
  EXPECT_EQ(mul.to_i64_vector(), (std::vector<int64_t>{14, -14, 24}));
  EXPECT_EQ(div.to_i64_vector(), (std::vector<int64_t>{3, -3, 6}));  // truncation
  auto neg = run_node(make_node("Neg", 1, 1), {a})[0];
  EXPECT_EQ(neg.to_i64_vector(), (std::vector<int64_t>{-7, 7, -12}));
  EXPECT_THROW(run_node(make_node("Div", 2, 1), {a, Tensor::from_i64({0}, {1})}), UserError);
}

TEST(ElementwiseTest, BinaryGradients) {
  check_binary_grads("Add", false);
  check_binary_grads("Sub", false);
  check_binary_grads("Mul", false);
  check_binary_grads("Div", false);
  check_binary_grads("Pow", true);
  check_binary_grads("Max", false);
  check_binary_grads("Min", false);
}

// A tie gives each operand half of dY (as torch.maximum); NaN wins the forward (as numpy).
TEST(ElementwiseTest, MaxAndMinTiesShareTheGradientAndNanWins) {
  for (const char* op : {"Max", "Min"}) {
    Tensor a = random_tensor(DType::Float64, {2, 5}, 11), b = random_tensor(DType::Float64, {2, 5}, 12);
    for (int64_t i = 0; i < 10; i += 3) b.ptr<double>()[i] = a.ptr<double>()[i];
    Tensor dy = random_tensor(DType::Float64, {2, 5}, 13);
    auto d = run_node(make_node(std::string(op) + "Grad", 3, 2, {}, kCbtDomain), {dy, a, b});
    const bool is_max = std::string(op) == "Max";
    for (int64_t i = 0; i < 10; ++i) {
      const double u = a.ptr<double>()[i], v = b.ptr<double>()[i], g = dy.ptr<double>()[i];
      const double want_a = u == v ? g / 2 : (is_max ? u > v : u < v) ? g : 0;
      EXPECT_DOUBLE_EQ(d[0].ptr<double>()[i], want_a) << op << " " << i;
      EXPECT_DOUBLE_EQ(d[1].ptr<double>()[i], g - want_a) << op << " " << i;
    }
    Tensor x = random_tensor(DType::Float32, {4}, 14), nan = random_tensor(DType::Float32, {4}, 15);
    nan.ptr<float>()[1] = std::nanf("");
    x.ptr<float>()[2] = std::nanf("");
    auto y = run_node(make_node(op, 2, 1), {x, nan})[0];
    EXPECT_TRUE(std::isnan(y.ptr<float>()[1])) << op;
    EXPECT_TRUE(std::isnan(y.ptr<float>()[2])) << op;
    EXPECT_FALSE(std::isnan(y.ptr<float>()[0])) << op;
  }
}

// PRelu: the slope broadcasts to X (one a channel, as exported) and gets its gradient summed.
TEST(ElementwiseTest, PReluForwardAndGradients) {
  for (auto [xs, ss] : {std::pair<Shape, Shape>{{2, 3, 4, 5}, {3, 1, 1}}, {{2, 3, 4, 5}, {1}}, {{4, 6}, {6}}}) {
    Tensor x = away_from_zero(xs, 21), slope = random_tensor(DType::Float64, ss, 22, 0.5);
    auto y = run_node(make_node("PRelu", 2, 1), {x, slope})[0];
    EXPECT_EQ(
        compare_tensors(y, naive_binary(x, slope, [](double u, double s) { return u < 0 ? s * u : u; }), 1e-15, 1e-15),
        "")
        << shape_str(xs) << " " << shape_str(ss);
    auto r = grad_check(make_node("PRelu", 2, 1), {x, slope});
    EXPECT_TRUE(r.ok) << shape_str(xs) << " " << shape_str(ss) << "\n" << r.report;
  }
  // A slope that does not broadcast to X (it would grow X) is refused.
  EXPECT_THROW(infer_node(make_node("PRelu", 2, 1),
                          {random_tensor(DType::Float32, {3}, 1), random_tensor(DType::Float32, {2, 3}, 2)}, 17),
               ModelError);
}

// relu=1 (graph/fusion.h, fuse_relu): max(a + b, 0) bit for bit as Add then Relu, and its
// gradient (a ReluGrad on the output) against finite differences.
TEST(ElementwiseTest, AddWithReluIsTheAddThenTheRelu) {
  Attributes relu;
  relu.set("relu", int64_t{1});
  for (const Shape& s : {Shape{7}, Shape{100, 400}}) {  // serial and parallel paths
    Tensor a = random_tensor(DType::Float32, s, 31), b = random_tensor(DType::Float32, s, 32);
    Tensor fused = run_node(make_node("Add", 2, 1, relu), {a, b})[0];
    Tensor plain = run_node(make_node("Relu", 1, 1), {run_node(make_node("Add", 2, 1), {a, b})[0]})[0];
    int64_t positive = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      ASSERT_EQ(fused.ptr<float>()[i], plain.ptr<float>()[i]) << i;
      positive += fused.ptr<float>()[i] > 0;
    }
    EXPECT_GT(positive, 0);
    EXPECT_LT(positive, a.numel());
  }
  auto r = grad_check(make_node("Add", 2, 1, relu),
                      {random_tensor(DType::Float64, {3, 5}, 33), random_tensor(DType::Float64, {3, 5}, 34)});
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(ElementwiseTest, PowForwardAndIntegerExponent) {
  Tensor a = Tensor::from_f32({1.5f, -2.0f, 3.0f}, {3});
  auto sq = run_node(make_node("Pow", 2, 1), {a, Tensor::scalar_f32(2.0f)})[0];
  auto cube = run_node(make_node("Pow", 2, 1), {a, Tensor::from_i64({3}, {})})[0];
  for (int i = 0; i < 3; ++i) {
    EXPECT_FLOAT_EQ(sq.ptr<float>()[i], a.ptr<float>()[i] * a.ptr<float>()[i]);
    EXPECT_FLOAT_EQ(cube.ptr<float>()[i], std::pow(a.ptr<float>()[i], 3.0f));
  }
  // An integer exponent gets no gradient, the base does.
  GradCheckOptions o;
  o.check_inputs = {0};
  auto r = grad_check(make_node("Pow", 2, 1), {positive({2, 3}, 9), Tensor::from_i64({3}, {})}, o);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(ElementwiseTest, UnaryGradients) {
  for (Shape s : {Shape{7}, Shape{1, 3}, Shape{2, 3, 4, 5}, Shape{}}) {
    EXPECT_TRUE(grad_check(make_node("Neg", 1, 1), {away_from_zero(s, 1)}).ok);
    auto sq = grad_check(make_node("Sqrt", 1, 1), {positive(s, 2)});
    EXPECT_TRUE(sq.ok) << sq.report;
    auto erf = grad_check(make_node("Erf", 1, 1), {random_tensor(DType::Float64, s, 3)});
    EXPECT_TRUE(erf.ok) << erf.report;
    auto id = grad_check(make_node("Identity", 1, 1), {random_tensor(DType::Float64, s, 4)});
    EXPECT_TRUE(id.ok) << id.report;
    for (auto [op, x] : {std::pair<const char*, Tensor>{"Exp", random_tensor(DType::Float64, s, 5, 2.0)},
                         {"Log", positive(s, 6)},
                         {"Abs", away_from_zero(s, 7)},
                         {"Reciprocal", away_from_zero(s, 8)},
                         {"Sin", random_tensor(DType::Float64, s, 9, 3.0)},
                         {"Cos", random_tensor(DType::Float64, s, 10, 3.0)}}) {
      auto r = grad_check(make_node(op, 1, 1), {x});
      EXPECT_TRUE(r.ok) << op << " " << shape_str(s) << "\n" << r.report;
    }
  }
}

// Mod: integers with the divisor's sign (fmod 0, Python's %) or the dividend's (fmod 1, C's %),
// a divisor of 0 giving 0; floats as std::fmod, with broadcasting; the float gradient (dA = dY,
// dB = -dY trunc(A / B)); floats without fmod refused.
TEST(ElementwiseTest, ModBothConventionsAndItsGradient) {
  const Tensor a = random_int_tensor({3, 5}, -20, 20, 31), b = random_int_tensor({5}, -6, 7, 32);
  for (int64_t fmod : {0, 1}) {
    Attributes at;
    at.set("fmod", fmod);
    const Tensor y = run_node(make_node("Mod", 2, 1, at), {a, b})[0];
    for (int64_t i = 0; i < 15; ++i) {
      const int64_t u = a.at_i64(i), v = b.at_i64(i % 5);
      int64_t want = v == 0 ? 0 : u % v;
      if (!fmod && v != 0 && want != 0 && (want < 0) != (v < 0)) want += v;
      EXPECT_EQ(y.at_i64(i), want) << u << " mod " << v << " fmod " << fmod;
    }
  }
  Attributes f;
  f.set("fmod", int64_t{1});
  const Tensor x = random_tensor(DType::Float64, {4, 3}, 33, 5.0), d = away_from_zero({3}, 34);
  const Tensor y = run_node(make_node("Mod", 2, 1, f), {x, d})[0];
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(y.at_f64(i), std::fmod(x.at_f64(i), d.at_f64(i % 3)));
  auto r = grad_check(make_node("Mod", 2, 1, f), {x, d});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_NE(infer_error(make_node("Mod", 2, 1), {x, d}).find("float inputs need fmod = 1"), std::string::npos);
}

// Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh over their domains: the C library's
// values, and gradients against finite differences.
TEST(ElementwiseTest, TrigonometricAndHyperbolic) {
  auto within = [](uint64_t seed, double lo, double hi) {  // uniform in (lo, hi)
    Tensor t = random_tensor(DType::Float64, {3, 5}, seed);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.ptr<double>()[i] = lo + (hi - lo) * (0.5 + 0.45 * std::tanh(t.ptr<double>()[i]));
    return t;
  };
  const struct {
    const char* op;
    double (*f)(double);
    Tensor x;
  } cases[] = {{"Tan", [](double v) { return std::tan(v); }, within(41, -1.4, 1.4)},
               {"Asin", [](double v) { return std::asin(v); }, within(42, -0.95, 0.95)},
               {"Acos", [](double v) { return std::acos(v); }, within(43, -0.95, 0.95)},
               {"Atan", [](double v) { return std::atan(v); }, within(44, -6, 6)},
               {"Sinh", [](double v) { return std::sinh(v); }, within(45, -3, 3)},
               {"Cosh", [](double v) { return std::cosh(v); }, within(46, -3, 3)},
               {"Asinh", [](double v) { return std::asinh(v); }, within(47, -6, 6)},
               {"Acosh", [](double v) { return std::acosh(v); }, within(48, 1.1, 6)},
               {"Atanh", [](double v) { return std::atanh(v); }, within(49, -0.95, 0.95)}};
  for (const auto& c : cases) {
    const Tensor y = run_node(make_node(c.op, 1, 1), {c.x})[0];
    for (int64_t i = 0; i < c.x.numel(); ++i) EXPECT_EQ(y.at_f64(i), c.f(c.x.at_f64(i))) << c.op;
    auto r = grad_check(make_node(c.op, 1, 1), {c.x});
    EXPECT_TRUE(r.ok) << c.op << "\n" << r.report;
  }
}

TEST(ElementwiseTest, UnaryForward) {
  Tensor x = positive({11}, 5);
  auto s = run_node(make_node("Sqrt", 1, 1), {x})[0];
  auto e = run_node(make_node("Erf", 1, 1), {x})[0];
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_DOUBLE_EQ(s.at_f64(i), std::sqrt(x.at_f64(i)));
    EXPECT_DOUBLE_EQ(e.at_f64(i), std::erf(x.at_f64(i)));
  }
  // Exp, Log, Abs and Reciprocal in float32 and float64, over both signs where they apply.
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor any = random_tensor(t, {3, 7}, 9, 3.0), pos = random_tensor(t, {3, 7}, 10, 3.0);
    for (int64_t i = 0; i < pos.numel(); ++i) {  // Log's domain
      if (t == DType::Float32)
        pos.ptr<float>()[i] = std::fabs(pos.ptr<float>()[i]) + 0.1f;
      else
        pos.ptr<double>()[i] = std::fabs(pos.ptr<double>()[i]) + 0.1;
    }
    const double tol = t == DType::Float32 ? 1e-6 : 1e-15;
    auto ex = run_node(make_node("Exp", 1, 1), {any})[0], ab = run_node(make_node("Abs", 1, 1), {any})[0];
    auto lg = run_node(make_node("Log", 1, 1), {pos})[0], rc = run_node(make_node("Reciprocal", 1, 1), {pos})[0];
    int negatives = 0;
    for (int64_t i = 0; i < any.numel(); ++i) {
      const double a = any.at_f64(i), p = pos.at_f64(i);
      negatives += a < 0;
      EXPECT_NEAR(ex.at_f64(i), std::exp(a), tol * std::exp(a));
      EXPECT_EQ(ab.at_f64(i), std::fabs(a));
      EXPECT_NEAR(lg.at_f64(i), std::log(p), tol * std::max(1.0, std::fabs(std::log(p))));
      EXPECT_NEAR(rc.at_f64(i), 1 / p, tol / p);
    }
    EXPECT_GT(negatives, 0);
  }
}

Attributes cast_to(int64_t code) {
  Attributes a;
  a.set("to", code);
  return a;
}

TEST(ElementwiseTest, CastBetweenTypes) {
  Tensor f = Tensor::from_f32({1.7f, -2.5f, 0.0f, 3.0f}, {2, 2});
  auto i64 = run_node(make_node("Cast", 1, 1, cast_to(7)), {f})[0];
  EXPECT_EQ(i64.dtype(), DType::Int64);
  EXPECT_EQ(i64.to_i64_vector(), (std::vector<int64_t>{1, -2, 0, 3}));
  auto i32 = run_node(make_node("Cast", 1, 1, cast_to(6)), {i64})[0];
  EXPECT_EQ(i32.dtype(), DType::Int32);
  EXPECT_EQ(i32.to_i64_vector(), (std::vector<int64_t>{1, -2, 0, 3}));
  auto b = run_node(make_node("Cast", 1, 1, cast_to(9)), {f})[0];
  EXPECT_EQ(b.to_i64_vector(), (std::vector<int64_t>{1, 1, 0, 1}));
  auto d = run_node(make_node("Cast", 1, 1, cast_to(11)), {b})[0];
  EXPECT_EQ(d.dtype(), DType::Float64);
  EXPECT_EQ(d.at_f64(1), 1.0);
  auto back =
      run_node(make_node("Cast", 1, 1, cast_to(1)), {run_node(make_node("Cast", 1, 1, cast_to(11)), {f})[0]})[0];
  EXPECT_EQ(compare_tensors(back, f, 0, 1e-12), "");
  // float -> float carries a gradient.
  auto r = grad_check(make_node("Cast", 1, 1, cast_to(11)), {random_tensor(DType::Float32, {3, 4}, 1)});
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(ElementwiseTest, ClipAttributesAndInputs) {
  Tensor x = Tensor::from_f32({-3, -0.5f, 0.25f, 2, 5}, {5});
  Attributes at;
  at.set("min", -1.0f);
  at.set("max", 1.0f);
  EagerOptions old;
  old.opset = 10;
  auto y10 = run_node(make_node("Clip", 1, 1, at), {x}, old)[0];
  auto y13 = run_node(make_node("Clip", 3, 1), {x, Tensor::scalar_f32(-1), Tensor::scalar_f32(1)})[0];
  Tensor want = Tensor::from_f32({-1, -0.5f, 0.25f, 1, 1}, {5});
  EXPECT_EQ(compare_tensors(y10, want, 0, 1e-12), "");
  EXPECT_EQ(compare_tensors(y13, want, 0, 1e-12), "");
  Node only_max = make_node("Clip", 3, 1);
  only_max.inputs[1] = "";
  auto ym = run_node(only_max, {x, Tensor(), Tensor::scalar_f32(1)})[0];
  EXPECT_EQ(ym.ptr<float>()[0], -3.0f);
  EXPECT_EQ(ym.ptr<float>()[4], 1.0f);
  auto yi = run_node(make_node("Clip", 3, 1),
                     {Tensor::from_i64({-5, 2, 9}, {3}), Tensor::from_i64({0}, {}), Tensor::from_i64({4}, {})})[0];
  EXPECT_EQ(yi.to_i64_vector(), (std::vector<int64_t>{0, 2, 4}));
}

TEST(ElementwiseTest, ClipGradients) {
  Tensor x = random_tensor(DType::Float64, {3, 4, 5}, 11);
  auto r = grad_check(make_node("Clip", 3, 1), {x, Tensor::scalar_f32(-0.7f), Tensor::scalar_f32(0.9f)});
  EXPECT_TRUE(r.ok) << r.report;
  Attributes at;
  at.set("min", -0.5f);
  GradCheckOptions o;
  o.opset = 10;
  auto r10 = grad_check(make_node("Clip", 1, 1, at), {x}, o);
  EXPECT_TRUE(r10.ok) << r10.report;
}

TEST(ElementwiseTest, ReduceSumToMatchesNaive) {
  const std::pair<Shape, Shape> cases[] = {{{2, 3, 4}, {3, 1}}, {{64, 3000}, {3000}},   {{64, 3000}, {64, 1}},
                                           {{2, 3, 4, 5}, {}},  {{4, 1, 6}, {1, 1, 6}}, {{5, 7}, {5, 7}}};
  for (auto& [from, to] : cases) {
    Tensor x = random_tensor(DType::Float64, from, 3);
    Attributes a;
    a.set("shape", to);
    auto y = run_node(make_node("ReduceSumTo", 1, 1, a, kCbtDomain), {x})[0];
    Tensor want(DType::Float64, to);
    auto st = broadcast_strides(to, from);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t rem = i, o = 0;
      for (size_t d = from.size(); d-- > 0;) {
        o += (rem % from[d]) * st[d];
        rem /= from[d];
      }
      want.ptr<double>()[o] += x.at_f64(i);
    }
    EXPECT_EQ(compare_tensors(y, want, 1e-10, 1e-10), "") << shape_str(from) << " -> " << shape_str(to);
  }
}

TEST(ElementwiseTest, SinCosRoundingAndSign) {
  const std::vector<double> v{-2.5, -1.5, -0.5, -0.25, 0.0, 0.25, 0.5, 1.5, 2.5, 3.7, -3.7};
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor x = cast_float(Tensor::from_f32(std::vector<float>(v.begin(), v.end()), {11}), t);
    auto y = [&](const char* op) { return run_node(make_node(op, 1, 1), {x})[0]; };
    Tensor fl = y("Floor"), ce = y("Ceil"), ro = y("Round"), sg = y("Sign"), si = y("Sin"), co = y("Cos");
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double a = v[i];
      EXPECT_EQ(fl.at_f64(i), std::floor(a)) << a;
      EXPECT_EQ(ce.at_f64(i), std::ceil(a)) << a;
      EXPECT_EQ(sg.at_f64(i), a > 0 ? 1.0 : a < 0 ? -1.0 : 0.0) << a;
      EXPECT_NEAR(si.at_f64(i), std::sin(a), 1e-6) << a;
      EXPECT_NEAR(co.at_f64(i), std::cos(a), 1e-6) << a;
    }
    // Halves go to the even neighbour (ONNX Round), not away from zero.
    const double rounded[] = {-2, -2, -0.0, -0.0, 0, 0, 0, 2, 2, 4, -4};
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(ro.at_f64(i), rounded[i]) << v[i];
  }
  // No gradient flows back through the piecewise-constant ones.
  for (const char* op : {"Floor", "Ceil", "Round", "Sign"}) {
    Node n = make_node(op, 1, 1);
    struct NoEmit : GradEmitter {
      std::vector<std::string> emit(const std::string&, const std::string&, std::vector<std::string>, size_t,
                                    Attributes, const std::string&) override {
        ADD_FAILURE() << "emitted a node";
        return {};
      }
      const ValueType& type(const std::string&) const override {
        static ValueType t;
        return t;
      }
      std::string fresh(const std::string& h) override { return h; }
    } em;
    GradContext c{n, {"dY"}, {true}, em};
    auto d = find_schema("", op)->grad(c);
    ASSERT_EQ(d.size(), 1u) << op;
    EXPECT_TRUE(d[0].empty()) << op;
  }
}

TEST(ElementwiseTest, SumAndMeanOfManyInputsBroadcast) {
  Tensor a = random_tensor(DType::Float64, {2, 3, 4}, 51), b = random_tensor(DType::Float64, {3, 1}, 52),
         c = random_tensor(DType::Float64, {4}, 53);
  Tensor s = run_node(make_node("Sum", 3, 1), {a, b, c})[0], m = run_node(make_node("Mean", 3, 1), {a, b, c})[0];
  ASSERT_EQ(s.shape(), (Shape{2, 3, 4}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        const int64_t o = (i * 3 + j) * 4 + k;
        const double want = a.at_f64(o) + b.at_f64(j) + c.at_f64(k);
        EXPECT_DOUBLE_EQ(s.at_f64(o), want);
        EXPECT_DOUBLE_EQ(m.at_f64(o), want / 3);
      }
  // One input: a copy (Sum) and itself (Mean); a broadcast first input grows to the output.
  Tensor one = run_node(make_node("Mean", 1, 1), {b})[0];
  EXPECT_TRUE(same_bytes(one, b));
  Tensor grown = run_node(make_node("Sum", 2, 1), {c, a})[0];
  EXPECT_DOUBLE_EQ(grown.at_f64(23), a.at_f64(23) + c.at_f64(3));
  for (const char* op : {"Sum", "Mean"}) {
    auto r = grad_check(make_node(op, 3, 1), {a, b, c});
    EXPECT_TRUE(r.ok) << op << "\n" << r.report;
    r = grad_check(make_node(op, 1, 1), {b});
    EXPECT_TRUE(r.ok) << op << " of one input\n" << r.report;
  }
  EXPECT_THROW(infer_node(make_node("Sum", 2, 1), {a, Tensor(DType::Float32, {4})}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Mean", 1, 1), {Tensor::from_i64({1}, {1})}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Sum", 0, 1), {}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Sum", 257, 1), std::vector<Tensor>(257, c), 17), ModelError);
}

TEST(ElementwiseTest, ShapeInferenceFailures) {
  Tensor f23 = random_tensor(DType::Float32, {2, 3}, 1);
  EXPECT_THROW(infer_node(make_node("Add", 2, 1), {f23, random_tensor(DType::Float32, {4}, 1)}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Mul", 2, 1), {f23, Tensor::from_i64({1}, {1})}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Pow", 2, 1), {Tensor::from_i64({2}, {1}), f23}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Sqrt", 1, 1), {Tensor::from_i64({2}, {1})}, 17), ModelError);
  for (const char* op : {"Exp", "Log", "Abs", "Reciprocal", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign"})
    EXPECT_THROW(infer_node(make_node(op, 1, 1), {Tensor::from_i64({2}, {1})}, 17), ModelError) << op;
  EXPECT_THROW(infer_node(make_node("Cast", 1, 1), {f23}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Cast", 1, 1, cast_to(8)), {f23}, 17), ModelError);
  Attributes at;
  at.set("min", 0.0f);
  EXPECT_THROW(infer_node(make_node("Clip", 1, 1, at), {f23}, 13), ModelError);
  EXPECT_THROW(infer_node(make_node("Clip", 2, 1), {f23, Tensor::from_f32({0, 1}, {2})}, 13), ModelError);
  Attributes bad;
  bad.set("shape", std::vector<int64_t>{4});
  EXPECT_THROW(infer_node(make_node("ReduceSumTo", 1, 1, bad, kCbtDomain), {f23}, 17), ModelError);
  auto ok = infer_node(make_node("Add", 2, 1),
                       {random_tensor(DType::Float32, {2, 1, 5}, 1), random_tensor(DType::Float32, {4, 1}, 2)}, 17);
  EXPECT_EQ(ok[0].shape, (Shape{2, 4, 5}));
}

}  // namespace
}  // namespace cbt::test
