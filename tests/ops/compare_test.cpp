// Greater, Less, GreaterOrEqual, LessOrEqual, Not, And, Or, Xor: against a naive broadcast over
// random values (small ranges, so that ties occur), signed int8, and inference failures; IsNaN
// and IsInf over the special values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "common/op_harness.h"
#include "graph/shape_utils.h"

namespace cbt::test {
namespace {

// The bytes of a bool or uint8 tensor.
uint8_t* bytes(Tensor& t) { return static_cast<uint8_t*>(t.data()); }
const uint8_t* bytes(const Tensor& t) { return static_cast<const uint8_t*>(t.data()); }

// Random values of `dtype` in [lo, hi], integers (ties likely).
Tensor small_values(DType dtype, const Shape& s, int lo, int hi, uint64_t seed) {
  Tensor t(dtype, s);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_int_distribution<int> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int v = d(rng);
    switch (dtype) {
      case DType::Float32:
        t.ptr<float>()[i] = static_cast<float>(v) * 0.5f;
        break;
      case DType::Float64:
        t.ptr<double>()[i] = v * 0.5;
        break;
      case DType::Int64:
        t.ptr<int64_t>()[i] = v;
        break;
      case DType::Int32:
        t.ptr<int32_t>()[i] = v;
        break;
      case DType::Int8:
        t.ptr<int8_t>()[i] = static_cast<int8_t>(v);
        break;
      default:  // UInt8, Bool
        bytes(t)[i] = static_cast<uint8_t>(v);
    }
  }
  return t;
}

// y[i] = f(a at i, b at i) over the broadcast shape, as bools.
Tensor naive(const Tensor& a, const Tensor& b, const std::function<bool(double, double)>& f) {
  const Shape out = broadcast_shapes(a.shape(), b.shape());
  Tensor y(DType::Bool, out);
  const auto sa = broadcast_strides(a.shape(), out), sb = broadcast_strides(b.shape(), out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t rest = i, oa = 0, ob = 0;
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      const int64_t k = rest % out[d];
      rest /= out[d];
      oa += k * sa[d];
      ob += k * sb[d];
    }
    bytes(y)[i] = f(a.at_f64(oa), b.at_f64(ob)) ? 1 : 0;
  }
  return y;
}

TEST(Compare, OrderedComparisonsMatchANaiveBroadcastInEveryNumberType) {
  const std::pair<const char*, std::function<bool(double, double)>> ops[] = {{"Greater", std::greater<>()},
                                                                             {"Less", std::less<>()},
                                                                             {"GreaterOrEqual", std::greater_equal<>()},
                                                                             {"LessOrEqual", std::less_equal<>()}};
  const std::pair<Shape, Shape> shapes[] = {{{3, 4}, {3, 4}}, {{2, 1, 5}, {3, 1}}, {{4}, {}}};
  for (DType t : {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::Int8, DType::UInt8}) {
    const int lo = t == DType::UInt8 ? 0 : -3;  // int8 below zero: compared signed
    for (const auto& [op, f] : ops)
      for (const auto& [sa, sb] : shapes) {
        Tensor a = small_values(t, sa, lo, 3, 1), b = small_values(t, sb, lo, 3, 2);
        Tensor y = run_node(make_node(op, 2, 1), {a, b})[0];
        Tensor want = naive(a, b, f);
        ASSERT_EQ(y.dtype(), DType::Bool);
        ASSERT_EQ(y.shape(), want.shape());
        int ones = 0;
        for (int64_t i = 0; i < y.numel(); ++i) {
          EXPECT_EQ(bytes(y)[i], bytes(want)[i]) << op << " " << dtype_name(t) << " " << i;
          ones += bytes(y)[i];
        }
        if (y.numel() > 4) {
          EXPECT_GT(ones, 0) << op;
          EXPECT_LT(ones, y.numel()) << op;
        }
      }
  }
}

TEST(Compare, LogicalOpsOnBools) {
  Tensor a = small_values(DType::Bool, {2, 3, 4}, 0, 1, 3), b = small_values(DType::Bool, {3, 1}, 0, 1, 4);
  const std::pair<const char*, std::function<bool(double, double)>> ops[] = {
      {"And", [](double u, double v) { return u != 0 && v != 0; }},
      {"Or", [](double u, double v) { return u != 0 || v != 0; }},
      {"Xor", [](double u, double v) { return (u != 0) != (v != 0); }}};
  for (const auto& [op, f] : ops) {
    Tensor y = run_node(make_node(op, 2, 1), {a, b})[0], want = naive(a, b, f);
    ASSERT_EQ(y.shape(), want.shape());
    EXPECT_EQ(std::memcmp(y.data(), want.data(), y.nbytes()), 0) << op;
  }
  Tensor n = run_node(make_node("Not", 1, 1), {a})[0];
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(bytes(n)[i], bytes(a)[i] ? 0 : 1);
}

// IsNaN and IsInf over NaN, both infinities, the largest finite values and random ones, in
// float32 and float64; IsInf's detect_negative and detect_positive.
TEST(Compare, FloatClasses) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = random_tensor(dt, {3, 4}, 8);
    const double specials[] = {std::nan(""), INFINITY, -INFINITY, std::numeric_limits<double>::max(), -0.0};
    for (int k = 0; k < 5; ++k) {
      const double v = k == 3 && dt == DType::Float32 ? std::numeric_limits<float>::max() : specials[k];
      if (dt == DType::Float64)
        x.ptr<double>()[k * 2] = v;
      else
        x.ptr<float>()[k * 2] = static_cast<float>(v);
    }
    const Tensor nan = run_node(make_node("IsNaN", 1, 1), {x})[0];
    ASSERT_EQ(nan.dtype(), DType::Bool);
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(bytes(nan)[i] != 0, std::isnan(x.at_f64(i))) << i;
    for (int64_t neg : {0, 1})
      for (int64_t pos : {0, 1}) {
        Attributes a;
        a.set("detect_negative", neg);
        a.set("detect_positive", pos);
        const Tensor inf = run_node(make_node("IsInf", 1, 1, a), {x})[0];
        for (int64_t i = 0; i < x.numel(); ++i) {
          const double v = x.at_f64(i);
          EXPECT_EQ(bytes(inf)[i] != 0, std::isinf(v) && (v > 0 ? pos : neg)) << i << " " << neg << pos;
        }
      }
  }
  EXPECT_THROW(infer_node(make_node("IsNaN", 1, 1), {Tensor::from_i64({1}, {1})}, 17), ModelError);
}

TEST(Compare, InferenceFailures) {
  Tensor f = random_tensor(DType::Float32, {2}, 1), i = Tensor::from_i64({1, 2}, {2});
  Tensor b = small_values(DType::Bool, {2}, 0, 1, 5);
  EXPECT_THROW(infer_node(make_node("Greater", 2, 1), {f, i}, 17), ModelError);  // types differ
  EXPECT_THROW(infer_node(make_node("Less", 2, 1), {b, b}, 17), ModelError);     // bools have no order
  EXPECT_THROW(infer_node(make_node("And", 2, 1), {f, f}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Not", 1, 1), {i}, 17), ModelError);
  EXPECT_THROW(infer_node(make_node("Or", 2, 1), {b, small_values(DType::Bool, {3}, 0, 1, 6)}, 17), ModelError);
  EXPECT_EQ(infer_node(make_node("Xor", 2, 1), {b, small_values(DType::Bool, {3, 1}, 0, 1, 7)}, 17).at(0).shape,
            (Shape{3, 2}));
}

}  // namespace
}  // namespace cbt::test
