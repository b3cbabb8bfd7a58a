// CUDA-vs-CPU cases of the element-wise family: arithmetic, Cast, Clip, activations, Dropout,
// reductions, softmax and losses (backward ops are reached through check_backward).
//
// Tolerances (float32, |gpu - cpu| <= atol + rtol |cpu|):
//   element-wise, same shapes:                 rtol 1e-5, atol 1e-6
//   transcendental ops, and every case whose
//   forward or backward sums (broadcast operands,
//   reductions, softmax):                      rtol 1e-4, atol 1e-4 (sum order differs)
//   losses (accumulated in double on both):    rtol 1e-6, atol 1e-7
#include <cmath>
#include <functional>
#include <string>
#include <tuple>

#include "common/op_harness.h"
#include "cuda/cuda_cases.h"
#include "graph/composite_ops.h"

namespace cbt::test {
namespace {

struct Tol {
  double rtol, atol;
};
constexpr Tol kElem{1e-5, 1e-6};
constexpr Tol kSum{1e-4, 1e-4};
constexpr Tol kLoss{1e-6, 1e-7};

CudaCase make_case(std::string name, Node node, std::vector<Tensor> inputs, Tol tol, int64_t opset = 17) {
  CudaCase c;
  c.name = std::move(name);
  c.node = std::move(node);
  c.inputs = std::move(inputs);
  c.rtol = tol.rtol;
  c.atol = tol.atol;
  c.opset = opset;
  return c;
}

// Forward-only case (integer data, or ops without a gradient).
CudaCase forward_case(std::string name, Node node, std::vector<Tensor> inputs, Tol tol, int64_t opset = 17) {
  CudaCase c = make_case(std::move(name), std::move(node), std::move(inputs), tol, opset);
  c.check_backward = false;
  return c;
}

Tensor rnd(const Shape& s, uint64_t seed, double scale = 1.0) { return random_tensor(DType::Float32, s, seed, scale); }

Tensor map_f32(Tensor t, const std::function<float(float)>& f) {
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = f(t.ptr<float>()[i]);
  return t;
}

// Positive values (bases of Pow whose exponent gets a gradient: log(a); Sqrt).
Tensor positive(const Shape& s, uint64_t seed) {
  return map_f32(rnd(s, seed), [](float v) { return std::fabs(v) + 0.25f; });
}

// Values at least 0.5 away from zero (divisors).
Tensor away_from_zero(const Shape& s, uint64_t seed) {
  return map_f32(rnd(s, seed), [](float v) { return v >= 0 ? v + 0.5f : v - 0.5f; });
}

// Probabilities in (0, 1) (binary cross-entropy targets).
Tensor probabilities(const Shape& s, uint64_t seed) {
  return map_f32(rnd(s, seed, 2.0), [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
}

Tensor to_dtype_int(const Tensor& t, DType to) {
  Tensor r(to, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t v = t.at_i64(i);
    switch (to) {
      case DType::Int32:
        r.ptr<int32_t>()[i] = static_cast<int32_t>(v);
        break;
      case DType::Int8:
        r.ptr<int8_t>()[i] = static_cast<int8_t>(v);
        break;
      case DType::UInt8:
        r.ptr<uint8_t>()[i] = static_cast<uint8_t>(v);
        break;
      case DType::Bool:
        r.ptr<bool>()[i] = v != 0;
        break;
      default:
        CBT_CHECK(false, "to_dtype_int ", dtype_name(to));
    }
  }
  return r;
}

Tensor ints(const Shape& s, int64_t lo, int64_t hi, uint64_t seed, DType dtype = DType::Int64) {
  Tensor t = random_int_tensor(s, lo, hi, seed);
  return dtype == DType::Int64 ? t : to_dtype_int(t, dtype);
}

Tensor axes(std::vector<int64_t> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_i64(v, {n});
}

Tensor bool_scalar(bool v) {
  Tensor t(DType::Bool, {});
  t.ptr<bool>()[0] = v;
  return t;
}

Attributes attr_i(const char* k, int64_t v) {
  Attributes a;
  a.set(k, v);
  return a;
}
Attributes attr_f(const char* k, float v) {
  Attributes a;
  a.set(k, v);
  return a;
}
Attributes attr_s(const char* k, std::string v) {
  Attributes a;
  a.set(k, std::move(v));
  return a;
}

std::vector<CudaCase> arithmetic_cases() {
  std::vector<CudaCase> v;
  Node add = make_node("Add", 2, 1), sub = make_node("Sub", 2, 1), mul = make_node("Mul", 2, 1),
       div = make_node("Div", 2, 1), pow = make_node("Pow", 2, 1);
  v.push_back(make_case("Add/same_shape_odd", add, {rnd({3, 5, 7}, 1), rnd({3, 5, 7}, 2)}, kElem));
  v.push_back(make_case("Add/nchw_plus_c11", add, {rnd({2, 3, 4, 5}, 3), rnd({3, 1, 1}, 4)}, kSum));
  v.push_back(make_case("Add/scalar", add, {rnd({4, 7}, 5), rnd({}, 6)}, kSum));
  v.push_back(make_case("Add/batch1_row_bias", add, {rnd({1, 9}, 7), rnd({9}, 8)}, kElem));
  v.push_back(make_case("Add/both_broadcast", add, {rnd({4, 1, 6}, 9), rnd({1, 5, 1}, 10)}, kSum));
  // Bias gradients over many rows and many pixels: chunked two-pass sums in ReduceSumTo.
  v.push_back(make_case("Add/bias_4096_rows", add, {rnd({4096, 10}, 11), rnd({10}, 12)}, kSum));
  // The bias gradient's partial sums: 128 chunks of 10 outputs (a warp an output) above,
  // 16 chunks of 1,000 here (a thread an output).
  v.push_back(make_case("Add/bias_1000_wide_few_chunks", add, {rnd({512, 1000}, 17), rnd({1000}, 18)}, kSum));
  v.push_back(make_case("Add/nchw_64x3x32x32_c11", add, {rnd({64, 3, 32, 32}, 13), rnd({3, 1, 1}, 14)}, kSum));
  v.push_back(forward_case("Add/int64_broadcast", add, {ints({3, 4}, -50, 50, 15), ints({4}, -50, 50, 16)}, kElem));
  v.push_back(forward_case("Add/int32", add,
                           {ints({5, 3}, -50, 50, 17, DType::Int32), ints({5, 3}, -50, 50, 18, DType::Int32)}, kElem));
  // Operands of one shape whose size is a multiple of 4: the float4 kernel.
  v.push_back(make_case("Add/same_shape_vec4", add, {rnd({2, 16, 8, 8}, 21), rnd({2, 16, 8, 8}, 22)}, kElem));
  // Broadcasts whose innermost dim divides by 4, each operand running along it or broadcast
  // along it: map2_rows_vec4_kernel (a bias first, a mask over scores, a scale over planes).
  v.push_back(make_case("Add/rows_vec4_bias_first", add, {rnd({96}, 27), rnd({6, 96}, 28)}, kSum));
  v.push_back(make_case("Sub/rows_vec4_mask", sub, {rnd({3, 1, 4, 8}, 29), rnd({1, 5, 1, 8}, 30)}, kSum));
  v.push_back(make_case("Mul/rows_vec4_plane_scale", mul, {rnd({2, 8, 4, 4}, 31), rnd({2, 8, 1, 1}, 32)}, kSum));
  // A bias gradient over 37 rows: one chunk, summed eight loads at a time and five after.
  v.push_back(make_case("Add/bias_37_rows", add, {rnd({37, 12}, 33), rnd({12}, 34)}, kSum));
  // relu=1 (graph/fusion.h): max(a + b, 0); its gradient counts dY where the output > 0.
  Node add_relu = make_node("Add", 2, 1, attr_i("relu", 1));
  v.push_back(make_case("Add/relu_vec4", add_relu, {rnd({2, 16, 8, 8}, 23), rnd({2, 16, 8, 8}, 24)}, kElem));
  v.push_back(make_case("Add/relu_odd", add_relu, {rnd({3, 5, 7}, 25), rnd({3, 5, 7}, 26)}, kElem));
  v.push_back(make_case("Sub/same_shape", sub, {rnd({6, 11}, 19), rnd({6, 11}, 20)}, kElem));
  v.push_back(make_case("Sub/broadcast_rank_differs", sub, {rnd({5, 1, 3}, 21), rnd({4, 3}, 22)}, kSum));
  v.push_back(make_case("Sub/scalar_first", sub, {rnd({1}, 23), rnd({3, 8}, 24)}, kSum));
  v.push_back(forward_case("Sub/int64", sub, {ints({7}, -9, 9, 25), ints({}, 1, 9, 26)}, kElem));
  v.push_back(make_case("Mul/same_shape", mul, {rnd({2, 3, 5}, 27), rnd({2, 3, 5}, 28)}, kElem));
  v.push_back(make_case("Mul/nchw_times_c11", mul, {rnd({2, 3, 4, 5}, 29), rnd({3, 1, 1}, 30)}, kSum));
  v.push_back(make_case("Mul/scalar_first", mul, {rnd({}, 31), rnd({3, 4}, 32)}, kSum));
  v.push_back(forward_case("Mul/int64", mul, {ints({2, 3}, -9, 9, 33), ints({2, 3}, -9, 9, 34)}, kElem));
  v.push_back(make_case("Div/same_shape", div, {rnd({4, 9}, 35), away_from_zero({4, 9}, 36)}, kElem));
  v.push_back(make_case("Div/nchw_by_c11", div, {rnd({2, 3, 4, 5}, 37), away_from_zero({3, 1, 1}, 38)}, kSum));
  v.push_back(make_case("Div/scalar_divisor", div, {rnd({1, 13}, 39), away_from_zero({}, 40)}, kSum));
  v.push_back(make_case("Div/broadcast_dividend", div, {rnd({5}, 41), away_from_zero({3, 5}, 42)}, kSum));
  // Truncating integer division, negative dividends included.
  v.push_back(forward_case("Div/int64", div, {ints({4, 6}, -40, 40, 43), ints({6}, 1, 7, 44)}, kElem));
  v.push_back(
      forward_case("Div/int32", div, {ints({9}, -40, 40, 45, DType::Int32), ints({9}, 1, 7, 46, DType::Int32)}, kElem));
  v.push_back(make_case("Pow/square_scalar", pow, {positive({3, 7}, 47), Tensor::from_f32({2.0f}, {})}, kSum));
  v.push_back(make_case("Pow/broadcast_exponent", pow, {positive({3, 4}, 48), rnd({4}, 49)}, kSum));
  v.push_back(make_case("Pow/same_shape", pow, {positive({2, 5, 3}, 50), rnd({2, 5, 3}, 51, 0.5)}, kSum));
  // An integer exponent: negative bases are fine and only the base gets a gradient.
  v.push_back(make_case("Pow/int64_exponent", pow, {rnd({4, 5}, 52), Tensor::from_i64({3}, {})}, kSum));
  Node max = make_node("Max", 2, 1), min = make_node("Min", 2, 1), prelu = make_node("PRelu", 2, 1);
  v.push_back(make_case("Max/same_shape", max, {rnd({4, 9}, 53), rnd({4, 9}, 54)}, kElem));
  v.push_back(make_case("Max/nchw_and_c11", max, {rnd({2, 3, 4, 5}, 55), rnd({3, 1, 1}, 56)}, kSum));
  v.push_back(forward_case("Max/int64", max, {ints({4, 6}, -40, 40, 57), ints({6}, -40, 40, 58)}, kElem));
  v.push_back(make_case("Min/broadcast_rank_differs", min, {rnd({5, 1, 3}, 59), rnd({4, 3}, 60)}, kSum));
  // A tie on every element: each operand gets half of dY.
  Tensor same = rnd({3, 7}, 61);
  v.push_back(make_case("Min/ties", min, {same, same}, kElem));
  v.push_back(make_case("PRelu/per_channel", prelu, {rnd({2, 3, 4, 5}, 62), rnd({3, 1, 1}, 63, 0.5)}, kSum));
  v.push_back(make_case("PRelu/one_slope", prelu, {rnd({4, 10}, 64), rnd({1}, 65, 0.5)}, kSum));
  return v;
}

std::vector<CudaCase> unary_cases() {
  std::vector<CudaCase> v;
  v.push_back(make_case("Neg/float", make_node("Neg", 1, 1), {rnd({3, 17}, 60)}, kElem));
  v.push_back(forward_case("Neg/int64", make_node("Neg", 1, 1), {ints({11}, -99, 99, 61)}, kElem));
  v.push_back(forward_case("Neg/int32", make_node("Neg", 1, 1), {ints({2, 3}, -99, 99, 62, DType::Int32)}, kElem));
  v.push_back(make_case("Sqrt/odd", make_node("Sqrt", 1, 1), {positive({5, 9}, 63)}, kSum));
  v.push_back(make_case("Sqrt/batch1", make_node("Sqrt", 1, 1), {positive({1, 1, 7}, 64)}, kSum));
  {  // ReduceL2's Sqrt (composite_ops.h): its gradient is 0 where a value is 0, on both devices
    Attributes a;
    a.set(kZeroGradAtZero, int64_t{1});
    Tensor x = positive({4, 6}, 67);
    for (int64_t i = 0; i < x.numel(); i += 5) x.ptr<float>()[i] = 0.0f;
    v.push_back(make_case("Sqrt/norm_with_zeros", make_node("Sqrt", 1, 1, a), {x}, kSum));
  }
  v.push_back(make_case("Erf/odd", make_node("Erf", 1, 1), {rnd({7, 13}, 65, 1.5)}, kSum));
  v.push_back(make_case("Erf/batch1", make_node("Erf", 1, 1), {rnd({1, 5}, 66)}, kSum));
  v.push_back(make_case("Exp/odd", make_node("Exp", 1, 1), {rnd({5, 7}, 70, 2.0)}, kSum));
  v.push_back(make_case("Log/positive", make_node("Log", 1, 1), {positive({3, 11}, 71)}, kSum));
  v.push_back(make_case("Abs/both_signs", make_node("Abs", 1, 1), {away_from_zero({4, 9}, 72)}, kElem));
  v.push_back(make_case("Reciprocal/both_signs", make_node("Reciprocal", 1, 1), {away_from_zero({2, 13}, 73)}, kSum));
  v.push_back(make_case("Sum/three_broadcast", make_node("Sum", 3, 1),
                        {rnd({2, 3, 4}, 77), rnd({3, 1}, 78), rnd({4}, 79)}, kSum));
  v.push_back(make_case("Mean/three_broadcast_first", make_node("Mean", 3, 1),
                        {rnd({4}, 80), rnd({2, 3, 4}, 81), rnd({3, 1}, 82)}, kSum));
  v.push_back(make_case("Sum/one_input", make_node("Sum", 1, 1), {rnd({5, 6}, 83)}, kElem));
  v.push_back(make_case("Sin/wide", make_node("Sin", 1, 1), {rnd({5, 13}, 74, 4.0)}, kSum));
  // The trigonometric and hyperbolic functions on their domains (values squeezed into them).
  auto squeezed = [&](uint64_t seed, float lo, float hi) {
    Tensor t = rnd({4, 11}, seed);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.ptr<float>()[i] = lo + (hi - lo) * (0.5f + 0.45f * std::tanh(t.ptr<float>()[i]));
    return t;
  };
  const std::tuple<const char*, float, float> trig[] = {
      {"Tan", -1.4f, 1.4f},   {"Asin", -0.9f, 0.9f}, {"Acos", -0.9f, 0.9f},
      {"Atan", -6.0f, 6.0f},  {"Sinh", -3.0f, 3.0f}, {"Cosh", -3.0f, 3.0f},
      {"Asinh", -6.0f, 6.0f}, {"Acosh", 1.1f, 6.0f}, {"Atanh", -0.9f, 0.9f}};
  uint64_t seed = 88;
  for (const auto& [op, lo, hi] : trig)
    v.push_back(make_case(std::string(op) + "/domain", make_node(op, 1, 1), {squeezed(seed++, lo, hi)}, kSum));
  v.push_back(make_case("Mod/float_fmod_broadcast", make_node("Mod", 2, 1, attr_i("fmod", 1)),
                        {rnd({4, 9}, 84, 5.0), away_from_zero({9}, 85)}, kSum));
  for (int64_t fmod : {0, 1})
    v.push_back(forward_case("Mod/int64_fmod" + std::to_string(fmod), make_node("Mod", 2, 1, attr_i("fmod", fmod)),
                             {random_int_tensor({6, 7}, -30, 30, 86), random_int_tensor({7}, -5, 6, 87)}, kElem));
  v.push_back(make_case("Cos/wide", make_node("Cos", 1, 1), {rnd({3, 17}, 75, 4.0)}, kSum));
  // Piecewise constant (no gradient): halves, both signs and zeros among the inputs.
  Tensor halves = rnd({4, 16}, 76, 3.0);
  for (int64_t i = 0; i < halves.numel(); i += 3) halves.ptr<float>()[i] = std::round(halves.ptr<float>()[i]) + 0.5f;
  for (int64_t i = 1; i < halves.numel(); i += 7) halves.ptr<float>()[i] = 0.0f;
  for (const char* op : {"Floor", "Ceil", "Round", "Sign"})
    v.push_back(forward_case(std::string(op) + "/halves_and_zeros", make_node(op, 1, 1), {halves}, kElem));
  v.push_back(make_case("Identity/float", make_node("Identity", 1, 1), {rnd({2, 3, 5}, 67)}, kElem));
  v.push_back(forward_case("Identity/int64", make_node("Identity", 1, 1), {ints({4}, -9, 9, 68)}, kElem));

  Node cast_f32 = make_node("Cast", 1, 1, attr_i("to", 1));
  v.push_back(make_case("Cast/f32_to_f32", cast_f32, {rnd({3, 4}, 69)}, kElem));
  v.push_back(
      forward_case("Cast/f32_to_i64", make_node("Cast", 1, 1, attr_i("to", 7)), {rnd({5, 6}, 70, 20.0)}, kElem));
  v.push_back(forward_case("Cast/f32_to_i32", make_node("Cast", 1, 1, attr_i("to", 6)), {rnd({17}, 71, 20.0)}, kElem));
  v.push_back(forward_case("Cast/f32_to_u8", make_node("Cast", 1, 1, attr_i("to", 2)),
                           {map_f32(rnd({9}, 72), [](float x) { return std::fabs(x) * 50; })}, kElem));
  v.push_back(forward_case("Cast/f32_to_i8", make_node("Cast", 1, 1, attr_i("to", 3)), {rnd({9}, 73, 20.0)}, kElem));
  v.push_back(forward_case("Cast/f32_to_bool", make_node("Cast", 1, 1, attr_i("to", 9)),
                           {map_f32(rnd({12}, 74), [](float x) { return x > 0.3f ? x : 0.0f; })}, kElem));
  v.push_back(forward_case("Cast/i64_to_f32", cast_f32, {ints({3, 5}, -1000, 1000, 75)}, kElem));
  v.push_back(forward_case("Cast/i32_to_i64", make_node("Cast", 1, 1, attr_i("to", 7)),
                           {ints({6}, -1000, 1000, 76, DType::Int32)}, kElem));
  v.push_back(forward_case("Cast/bool_to_f32", cast_f32, {ints({10}, 0, 2, 77, DType::Bool)}, kElem));
  v.push_back(forward_case("Cast/u8_to_i32", make_node("Cast", 1, 1, attr_i("to", 6)),
                           {ints({10}, 1, 255, 78, DType::UInt8)}, kElem));
  v.push_back(forward_case("CastLike/f32_like_i64", make_node("CastLike", 2, 1),
                           {rnd({4, 4}, 79, 10.0), ints({1}, 1, 5, 80)}, kElem));
  v.push_back(make_case("CastLike/f32_like_f32", make_node("CastLike", 2, 1), {rnd({2, 7}, 81), rnd({1}, 82)}, kElem));
  return v;
}

std::vector<CudaCase> clip_cases() {
  std::vector<CudaCase> v;
  v.push_back(make_case("Clip/min_max_inputs", make_node("Clip", 3, 1),
                        {rnd({4, 9}, 90), Tensor::from_f32({-0.5f}, {}), Tensor::from_f32({0.7f}, {})}, kElem));
  v.push_back(make_case("Clip/min_input_only", make_node("Clip", 2, 1),
                        {rnd({3, 5, 2}, 91), Tensor::from_f32({0.1f}, {})}, kElem));
  v.push_back(make_case("Clip/unbounded", make_node("Clip", 1, 1), {rnd({7}, 92)}, kElem));
  Attributes mm;
  mm.set("min", -0.3f);
  mm.set("max", 0.4f);
  v.push_back(make_case("Clip/opset6_attributes", make_node("Clip", 1, 1, mm), {rnd({1, 15}, 93)}, kElem, 6));
  v.push_back(forward_case("Clip/int64", make_node("Clip", 3, 1),
                           {ints({20}, -50, 50, 94), Tensor::from_i64({-10}, {}), Tensor::from_i64({25}, {})}, kElem));
  return v;
}

std::vector<CudaCase> activation_cases() {
  std::vector<CudaCase> v;
  v.push_back(make_case("Relu/nchw_odd", make_node("Relu", 1, 1), {rnd({2, 3, 5, 7}, 100)}, kElem));
  v.push_back(make_case("Relu/batch1", make_node("Relu", 1, 1), {rnd({1, 13}, 101)}, kElem));
  // ReluGrad with a second dY (graph/fusion.h, fuse_gradient_sum_relu): (dY + dY2) where Y > 0;
  // float4 and scalar kernels.
  Node relu_grad_sum = make_node("ReluGrad", 3, 1, {}, kCbtDomain);
  v.push_back(forward_case("ReluGrad/second_dy_vec4", relu_grad_sum,
                           {rnd({2, 16, 8, 8}, 109), rnd({2, 16, 8, 8}, 110), rnd({2, 16, 8, 8}, 111)}, kElem));
  v.push_back(forward_case("ReluGrad/second_dy_odd", relu_grad_sum,
                           {rnd({3, 5, 7}, 112), rnd({3, 5, 7}, 113), rnd({3, 5, 7}, 114)}, kElem));
  v.push_back(make_case("LeakyRelu/alpha_0.2", make_node("LeakyRelu", 1, 1, attr_f("alpha", 0.2f)), {rnd({3, 11}, 102)},
                        kElem));
  v.push_back(make_case("LeakyRelu/default_alpha", make_node("LeakyRelu", 1, 1), {rnd({1, 2, 9}, 103)}, kElem));
  // Scale 8 reaches both branches of the stable sigmoid and saturated tanh.
  v.push_back(make_case("Sigmoid/wide_range", make_node("Sigmoid", 1, 1), {rnd({5, 13}, 104, 8.0)}, kSum));
  v.push_back(make_case("Sigmoid/batch1", make_node("Sigmoid", 1, 1), {rnd({1, 4}, 105)}, kSum));
  v.push_back(make_case("Tanh/wide_range", make_node("Tanh", 1, 1), {rnd({4, 17}, 106, 3.0)}, kSum));
  v.push_back(make_case("Tanh/batch1", make_node("Tanh", 1, 1), {rnd({1, 3, 3}, 107)}, kSum));
  v.push_back(make_case("Gelu/erf", make_node("Gelu", 1, 1), {rnd({6, 19}, 108, 2.0)}, kSum, 20));
  // Fused X * Sigmoid(X) (graph/fusion.h): both branches of the sigmoid.
  v.push_back(make_case("Silu/wide_range", make_node("Silu", 1, 1, {}, kCbtDomain), {rnd({7, 33}, 111, 8.0)}, kSum));
  v.push_back(make_case("Gelu/tanh", make_node("Gelu", 1, 1, attr_s("approximate", "tanh")), {rnd({1, 23}, 109, 2.0)},
                        kSum, 20));
  // Scale 4 reaches both sides of every kink and clamp (HardSwish's at +-3, HardSigmoid's at
  // +-2.5 by default, +-4 with alpha 0.125).
  v.push_back(make_case("Elu/default", make_node("Elu", 1, 1), {rnd({4, 19}, 115, 4.0)}, kSum));
  v.push_back(
      make_case("Elu/alpha_0.3", make_node("Elu", 1, 1, attr_f("alpha", 0.3f)), {rnd({2, 3, 7}, 116, 2.0)}, kSum));
  v.push_back(make_case("Selu/default", make_node("Selu", 1, 1), {rnd({5, 11}, 117, 4.0)}, kSum));
  v.push_back(make_case("Softplus/wide_range", make_node("Softplus", 1, 1), {rnd({6, 13}, 118, 8.0)}, kSum));
  v.push_back(make_case("Softsign/odd", make_node("Softsign", 1, 1), {rnd({3, 29}, 119, 4.0)}, kSum));
  v.push_back(make_case("HardSigmoid/default", make_node("HardSigmoid", 1, 1), {rnd({7, 17}, 120, 4.0)}, kSum));
  Attributes hs;
  hs.set("alpha", 0.125f);
  hs.set("beta", 0.5f);
  v.push_back(make_case("HardSigmoid/alpha_beta", make_node("HardSigmoid", 1, 1, hs), {rnd({1, 41}, 121, 6.0)}, kSum));
  v.push_back(make_case("HardSwish/odd", make_node("HardSwish", 1, 1), {rnd({2, 8, 5}, 122, 4.0)}, kSum));
  v.push_back(make_case("Mish/wide_range", make_node("Mish", 1, 1), {rnd({6, 11}, 123, 6.0)}, kSum));
  v.push_back(make_case("Celu/default", make_node("Celu", 1, 1), {rnd({4, 9}, 124, 3.0)}, kSum));
  v.push_back(
      make_case("Celu/alpha_0.4", make_node("Celu", 1, 1, attr_f("alpha", 0.4f)), {rnd({2, 3, 7}, 125, 2.0)}, kSum));
  v.push_back(
      make_case("ThresholdedRelu/default", make_node("ThresholdedRelu", 1, 1), {rnd({5, 13}, 126, 3.0)}, kElem));
  v.push_back(make_case("ThresholdedRelu/alpha_-0.5", make_node("ThresholdedRelu", 1, 1, attr_f("alpha", -0.5f)),
                        {rnd({3, 19}, 127, 2.0)}, kElem));
  return v;
}

// Dropout masks must match the CPU's exactly (same seed, same counter-based generator).
std::vector<CudaCase> dropout_cases() {
  std::vector<CudaCase> v;
  v.push_back(make_case("Dropout/train_ratio0.3_mask", make_node("Dropout", 2, 2),
                        {rnd({4, 3, 5, 7}, 110), Tensor::from_f32({0.3f}, {})}, kElem));
  v.push_back(make_case("Dropout/train_ratio0.5_odd_batch1", make_node("Dropout", 2, 1),
                        {rnd({1, 1001}, 111), Tensor::from_f32({0.5f}, {})}, kElem));
  v.push_back(make_case("Dropout/train_opset10_attribute", make_node("Dropout", 1, 2, attr_f("ratio", 0.25f)),
                        {rnd({33, 3}, 112)}, kElem, 10));
  CudaCase eval = make_case("Dropout/eval_identity", make_node("Dropout", 2, 2),
                            {rnd({3, 8}, 113), Tensor::from_f32({0.3f}, {})}, kElem);
  eval.training = false;
  v.push_back(eval);
  // training_mode is a device bool read by the kernel.
  CudaCase mode = make_case("Dropout/training_mode_input", make_node("Dropout", 3, 2),
                            {rnd({5, 21}, 114), Tensor::from_f32({0.3f}, {}), bool_scalar(true)}, kElem);
  mode.training = false;
  v.push_back(mode);
  return v;
}

Attributes keep(int64_t k) { return attr_i("keepdims", k); }

std::vector<CudaCase> reduce_cases() {
  std::vector<CudaCase> v;
  Node sum_in = make_node("ReduceSum", 2, 1, keep(1)), sum_in0 = make_node("ReduceSum", 2, 1, keep(0));
  v.push_back(make_case("ReduceSum/axis1_keepdims", sum_in, {rnd({3, 4, 5}, 120), axes({1})}, kSum));
  v.push_back(make_case("ReduceSum/axes0_2_no_keepdims", sum_in0, {rnd({3, 4, 5}, 121), axes({0, 2})}, kSum));
  // (4, 4) reduced to (4): the shapes do not tell the axis, so the kernel reads it.
  v.push_back(make_case("ReduceSum/ambiguous_last_axis", sum_in0, {rnd({4, 4}, 122), axes({-1})}, kSum));
  v.push_back(make_case("ReduceSum/all_no_axes", make_node("ReduceSum", 1, 1, keep(0)), {rnd({300, 500}, 123)}, kSum));
  Attributes noop = keep(1);
  noop.set("noop_with_empty_axes", int64_t{1});
  v.push_back(make_case("ReduceSum/noop_empty_axes", make_node("ReduceSum", 1, 1, noop), {rnd({2, 9}, 124)}, kElem));
  v.push_back(make_case("ReduceSum/rows_axis0", sum_in, {rnd({2048, 33}, 125), axes({0})}, kSum));
  v.push_back(make_case("ReduceSum/last_axis_rows", sum_in0, {rnd({37, 100}, 126), axes({1})}, kSum));
  Attributes old = keep(0);
  old.set("axes", std::vector<int64_t>{1, 2});
  v.push_back(make_case("ReduceSum/opset11_axes_attribute", make_node("ReduceSum", 1, 1, old), {rnd({2, 3, 4}, 127)},
                        kSum, 11));
  v.push_back(forward_case("ReduceSum/int64", sum_in, {ints({5, 6}, -20, 20, 128), axes({1})}, kElem));
  v.push_back(forward_case("ReduceSum/int32_all", make_node("ReduceSum", 1, 1, keep(0)),
                           {ints({7, 3}, -20, 20, 129, DType::Int32)}, kElem));

  Attributes gap = keep(1);
  gap.set("axes", std::vector<int64_t>{2, 3});
  v.push_back(
      make_case("ReduceMean/global_pool_attr", make_node("ReduceMean", 1, 1, gap), {rnd({2, 3, 5, 7}, 130)}, kSum));
  v.push_back(make_case("ReduceMean/opset18_axis1_no_keepdims", make_node("ReduceMean", 2, 1, keep(0)),
                        {rnd({6, 37, 3}, 131), axes({1})}, kSum, 18));
  v.push_back(make_case("ReduceMean/all_batch1", make_node("ReduceMean", 1, 1, keep(1)), {rnd({1, 1000}, 132)}, kSum));
  // ReduceMax/ReduceMin (one thread a group): axes as input (opset 18) and attribute, ties
  // (ReLU's zeros: dY shared among them), integers.
  v.push_back(make_case("ReduceMax/opset18_axes1_3", make_node("ReduceMax", 2, 1, keep(1)),
                        {rnd({2, 5, 3, 4}, 133), axes({1, 3})}, kElem, 18));
  Attributes global = keep(0);
  global.set("axes", std::vector<int64_t>{2, 3});
  v.push_back(
      make_case("ReduceMax/global_pool_attr", make_node("ReduceMax", 1, 1, global), {rnd({3, 4, 6, 5}, 134)}, kElem));
  v.push_back(make_case("ReduceMin/all", make_node("ReduceMin", 1, 1, keep(1)), {rnd({17, 9}, 135)}, kElem));
  v.push_back(make_case("ReduceMax/relu_ties", make_node("ReduceMax", 1, 1, global),
                        {map_f32(rnd({2, 3, 2, 2}, 136), [](float x) { return x > 1.0f ? x : 0.0f; })}, kSum));
  v.push_back(forward_case("ReduceMin/int64", make_node("ReduceMin", 2, 1, keep(0)),
                           {ints({5, 6}, -20, 20, 137), axes({0})}, kElem, 18));
  // ReduceProd: axes as input and attribute, groups with a zero (the gradient's exact rule), int64.
  v.push_back(make_case("ReduceProd/opset18_axes1_3", make_node("ReduceProd", 2, 1, keep(1)),
                        {map_f32(rnd({2, 5, 3, 4}, 141), [](float x) { return 0.7f + 0.3f * x; }), axes({1, 3})}, kSum,
                        18));
  v.push_back(make_case("ReduceProd/zeros_attr", make_node("ReduceProd", 1, 1, global),
                        {map_f32(rnd({2, 3, 2, 2}, 142), [](float x) { return x > 0.8f ? 0.0f : x; })}, kSum));
  v.push_back(forward_case("ReduceProd/int64", make_node("ReduceProd", 2, 1, keep(0)),
                           {ints({4, 5}, -3, 4, 143), axes({0})}, kElem, 18));
  Attributes last = keep(0);
  last.set("axes", std::vector<int64_t>{-1});
  v.push_back(
      make_case("ReduceMean/last_axis_long_rows", make_node("ReduceMean", 1, 1, last), {rnd({5, 3000}, 133)}, kSum));

  Attributes to;
  to.set("shape", Shape{3, 1});
  v.push_back(forward_case("ReduceSumTo/int64", make_node("ReduceSumTo", 1, 1, to, kCbtDomain),
                           {ints({2, 3, 4}, -9, 9, 134)}, kElem));
  return v;
}

std::vector<CudaCase> softmax_cases() {
  std::vector<CudaCase> v;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    std::string p = std::string(op) + "/";
    Node last = make_node(op, 1, 1);
    v.push_back(make_case(p + "last_axis_warp_rows", last, {rnd({4, 10}, 140, 3.0)}, kSum));
    v.push_back(make_case(p + "last_axis_block_rows", last, {rnd({3, 1000}, 141)}, kSum));
    v.push_back(make_case(p + "batch1", last, {rnd({1, 10}, 142)}, kSum));
    v.push_back(make_case(p + "axis1_of_4d", make_node(op, 1, 1, attr_i("axis", 1)), {rnd({2, 5, 3, 4}, 143)}, kSum));
    v.push_back(make_case(p + "axis0", make_node(op, 1, 1, attr_i("axis", 0)), {rnd({7, 3}, 144)}, kSum));
    v.push_back(make_case(p + "opset11_default_axis", last, {rnd({6, 9}, 145)}, kSum, 11));
  }
  return v;
}

std::vector<CudaCase> loss_cases() {
  std::vector<CudaCase> v;
  Node sce = make_node("SoftmaxCrossEntropy", 2, 1, {}, kCbtDomain);
  Node sce_lp = make_node("SoftmaxCrossEntropy", 2, 2, {}, kCbtDomain);
  Node smooth = make_node("SoftmaxCrossEntropy", 2, 1, attr_f("label_smoothing", 0.1f), kCbtDomain);
  v.push_back(make_case("SoftmaxCrossEntropy/8x10", sce, {rnd({8, 10}, 150, 2.0), ints({8}, 0, 10, 151)}, kLoss));
  v.push_back(
      make_case("SoftmaxCrossEntropy/log_probs_output", sce_lp, {rnd({13, 7}, 152), ints({13}, 0, 7, 153)}, kLoss));
  v.push_back(
      make_case("SoftmaxCrossEntropy/label_smoothing", smooth, {rnd({16, 10}, 154), ints({16}, 0, 10, 155)}, kLoss));
  v.push_back(make_case("SoftmaxCrossEntropy/batch1", sce, {rnd({1, 7}, 156), ints({1}, 0, 7, 157)}, kLoss));
  v.push_back(make_case("SoftmaxCrossEntropy/1000_classes", smooth, {rnd({5, 1000}, 158, 3.0), ints({5}, 0, 1000, 159)},
                        kLoss));
  // The gradient fused in (graph/fusion.h): dLoss in, dLogits out (and, the second time, their
  // column sums: a Gemm's bias gradient), no log_probs.
  for (float eps : {0.0f, 0.1f}) {
    Node fused = make_node("SoftmaxCrossEntropy", 3, eps > 0 ? 4 : 3, attr_f("label_smoothing", eps), kCbtDomain);
    fused.outputs[1].clear();
    v.push_back(make_case(eps > 0 ? "SoftmaxCrossEntropy/with_gradient_smoothed" : "SoftmaxCrossEntropy/with_gradient",
                          fused, {rnd({32, 10}, 162, 2.0), ints({32}, 0, 10, 163), Tensor::from_f32({0.8f}, {})},
                          kLoss));
  }
  v.push_back(make_case("SoftmaxCrossEntropy/int32_labels_300_rows", sce,
                        {rnd({300, 10}, 160), ints({300}, 0, 10, 161, DType::Int32)}, kLoss));
  Node mse = make_node("MeanSquaredError", 2, 1, {}, kCbtDomain);
  v.push_back(make_case("MeanSquaredError/4x3", mse, {rnd({4, 3}, 170), rnd({4, 3}, 171)}, kLoss));
  v.push_back(make_case("MeanSquaredError/batch1", mse, {rnd({1, 1}, 172), rnd({1, 1}, 173)}, kLoss));
  v.push_back(make_case("MeanSquaredError/large", mse, {rnd({64, 3, 33, 33}, 174), rnd({64, 3, 33, 33}, 175)}, kLoss));
  Node bce = make_node("BinaryCrossEntropyWithLogits", 2, 1, {}, kCbtDomain);
  v.push_back(
      make_case("BinaryCrossEntropyWithLogits/8x1", bce, {rnd({8, 1}, 180, 4.0), probabilities({8, 1}, 181)}, kLoss));
  v.push_back(
      make_case("BinaryCrossEntropyWithLogits/odd", bce, {rnd({3, 17}, 182, 4.0), probabilities({3, 17}, 183)}, kLoss));
  return v;
}

}  // namespace

CBT_CUDA_CASES(arithmetic_cases);
CBT_CUDA_CASES(unary_cases);
CBT_CUDA_CASES(clip_cases);
CBT_CUDA_CASES(activation_cases);
CBT_CUDA_CASES(dropout_cases);
CBT_CUDA_CASES(reduce_cases);
CBT_CUDA_CASES(softmax_cases);
CBT_CUDA_CASES(loss_cases);

}  // namespace cbt::test
