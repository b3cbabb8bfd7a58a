// CUDA-vs-CPU cases of the shape ops: views, Transpose, Concat/Split, Expand, Slice, Pad,
// Gather, Shape, Constant(OfShape), Range, Equal, Where, and through their gradient rules
// ReshapeTo, ConcatGrad, SplitGrad, ExpandGrad, SliceGrad, PadGrad, GatherGrad, WhereGrad.
// Data movement is compared exactly; backward ops that sum (ExpandGrad, GatherGrad, PadGrad
// outside constant mode, WhereGrad) within float rounding.
#include <cmath>
#include <cstring>
#include <limits>

#include "common/op_harness.h"
#include "cuda/cuda_cases.h"

namespace cbt::test {
namespace {

using Ints = std::vector<int64_t>;

Attributes attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attributes a;
  for (const auto& [k, v] : kv) a.set(k, v);
  return a;
}

Tensor f32(const Shape& s, uint64_t seed) { return random_tensor(DType::Float32, s, seed); }
Tensor i64(const Ints& v) { return Tensor::from_i64(v, {static_cast<int64_t>(v.size())}); }
Tensor i64_scalar(int64_t v) { return Tensor::from_i64({v}, {}); }

// Halves in [-1.5, 1.5] (ties and zeros certain: scatter reductions).
Tensor f32_halves(const Shape& s, uint64_t seed) {
  Tensor levels = random_int_tensor(s, -3, 4, seed), t(DType::Float32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = static_cast<float>(levels.ptr<int64_t>()[i]) * 0.5f;
  return t;
}

// Integer data (not parameters): int64 values far from 0 so that a moved element is visible.
Tensor i64_data(const Shape& s, uint64_t seed) { return random_int_tensor(s, -1000000, 1000000, seed); }

Tensor i32(const std::vector<int32_t>& v, Shape s) {
  Tensor t(DType::Int32, std::move(s));
  CBT_CHECK(t.numel() == static_cast<int64_t>(v.size()), "i32: shape and values differ");
  std::memcpy(t.data(), v.data(), v.size() * sizeof(int32_t));
  return t;
}

Tensor i32(const std::vector<int32_t>& v) { return i32(v, {static_cast<int64_t>(v.size())}); }

Tensor f32_values(const std::vector<float>& v, Shape s) { return Tensor::from_f32(v, std::move(s)); }

// Random 0/1 as a bool tensor, both values present for any shape of 2+ elements.
Tensor bools(const Shape& s, uint64_t seed) {
  Tensor r = random_int_tensor(s, 0, 2, seed);
  Tensor t(DType::Bool, s);
  auto* p = static_cast<uint8_t*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<uint8_t>(r.ptr<int64_t>()[i]);
  if (t.numel() >= 2) {
    p[0] = 1;
    p[1] = 0;
  }
  return t;
}

CudaCase exact(std::string name, Node node, std::vector<Tensor> inputs, int64_t opset = 17) {
  CudaCase c;
  c.name = std::move(name);
  c.node = std::move(node);
  c.inputs = std::move(inputs);
  c.rtol = 0;
  c.atol = 0;
  c.opset = opset;
  return c;
}

// Integer or bool data: forward only (no float gradient flows).
CudaCase exact_fwd(std::string name, Node node, std::vector<Tensor> inputs, int64_t opset = 17) {
  CudaCase c = exact(std::move(name), std::move(node), std::move(inputs), opset);
  c.check_backward = false;
  return c;
}

// The backward sums floats in another order than the CPU (atomics or a tree).
CudaCase summing(std::string name, Node node, std::vector<Tensor> inputs, int64_t opset = 17) {
  CudaCase c = exact(std::move(name), std::move(node), std::move(inputs), opset);
  c.rtol = 1e-5;
  c.atol = 1e-5;
  return c;
}

// Marks input i omitted (an undefined tensor and an empty name).
CudaCase omit(CudaCase c, size_t i) {
  c.node.inputs[i] = "";
  c.inputs[i] = Tensor();
  return c;
}

std::vector<CudaCase> view_cases() {
  std::vector<CudaCase> v;
  v.push_back(exact("Flatten/axis1", make_node("Flatten", 1, 1), {f32({2, 3, 5}, 1)}));
  v.push_back(
      exact("Flatten/axis0_batch1", make_node("Flatten", 1, 1, attrs({{"axis", int64_t{0}}})), {f32({1, 3, 5}, 2)}));
  v.push_back(exact_fwd("Flatten/int64_axis-1", make_node("Flatten", 1, 1, attrs({{"axis", int64_t{-1}}})),
                        {i64_data({2, 3, 5}, 3)}));
  v.push_back(exact("Reshape/infer", make_node("Reshape", 2, 1), {f32({3, 5, 2}, 4), i64({-1, 3})}));
  v.push_back(exact_fwd("Reshape/int64_copy0", make_node("Reshape", 2, 1), {i64_data({1, 7}, 5), i64({0, 7, 1})}));
  v.push_back(exact("Squeeze/axes_input", make_node("Squeeze", 2, 1), {f32({1, 3, 1}, 6), i64({-1})}, 13));
  v.push_back(exact("Squeeze/all", make_node("Squeeze", 1, 1), {f32({1, 3, 1, 5}, 7)}, 13));
  v.push_back(exact("Unsqueeze/axes_input", make_node("Unsqueeze", 2, 1), {f32({3, 5}, 8), i64({0, -1})}, 13));
  v.push_back(
      exact("Unsqueeze/axes_attr", make_node("Unsqueeze", 1, 1, attrs({{"axes", Ints{1}}})), {f32({3}, 9)}, 11));
  v.push_back(exact("ReshapeTo/direct", make_node("ReshapeTo", 1, 1, attrs({{"shape", Ints{5, 1, 3}}}), kCbtDomain),
                    {f32({3, 5}, 10)}));
  return v;
}

std::vector<CudaCase> transpose_cases() {
  std::vector<CudaCase> v;
  v.push_back(exact("Transpose/default_reverse", make_node("Transpose", 1, 1), {f32({3, 5}, 11)}));
  v.push_back(exact("Transpose/perm2031_batch1", make_node("Transpose", 1, 1, attrs({{"perm", Ints{2, 0, 3, 1}}})),
                    {f32({1, 3, 5, 2}, 12)}));
  // Attention-style (B, S, H, D) -> (B, H, S, D): contiguous rows of D move as wider words.
  v.push_back(exact("Transpose/heads", make_node("Transpose", 1, 1, attrs({{"perm", Ints{0, 2, 1, 3}}})),
                    {f32({2, 7, 4, 8}, 13)}));
  // Swin's window partition (rows of 12 floats: three 16-byte words each) and heads of 6 floats
  // (8-byte words: 16 do not divide a row).
  v.push_back(exact("Transpose/windows_16_byte_words",
                    make_node("Transpose", 1, 1, attrs({{"perm", Ints{0, 1, 3, 2, 4, 5}}})),
                    {f32({2, 3, 4, 3, 4, 12}, 19)}));
  v.push_back(exact("Transpose/heads_8_byte_words", make_node("Transpose", 1, 1, attrs({{"perm", Ints{0, 2, 1, 3}}})),
                    {f32({2, 5, 3, 6}, 20)}));
  v.push_back(exact("Transpose/rank5_odd", make_node("Transpose", 1, 1, attrs({{"perm", Ints{4, 1, 3, 0, 2}}})),
                    {f32({3, 2, 5, 1, 7}, 14)}));
  v.push_back(exact_fwd("Transpose/int64", make_node("Transpose", 1, 1, attrs({{"perm", Ints{1, 2, 0}}})),
                        {i64_data({3, 1, 7}, 15)}));
  // Channels first to last and back (ConvNeXt's LayerNorm): batched transposes through
  // shared-memory tiles, ragged at the tiles' edges; 8-byte words too.
  v.push_back(exact("Transpose/to_channels_last", make_node("Transpose", 1, 1, attrs({{"perm", Ints{0, 2, 3, 1}}})),
                    {f32({3, 24, 13, 11}, 16)}));
  v.push_back(exact("Transpose/to_channels_first", make_node("Transpose", 1, 1, attrs({{"perm", Ints{0, 3, 1, 2}}})),
                    {f32({3, 9, 14, 40}, 17)}));
  // Roll (torch.roll as fuse_roll makes it): Swin's two axes of tokens with channels moved as
  // 16-byte words, the innermost dim rolled element by element, and int64 data.
  v.push_back(exact("Roll/swin_two_axes",
                    make_node("Roll", 1, 1, attrs({{"axes", Ints{1, 2}}, {"shifts", Ints{2, -2}}}), kCbtDomain),
                    {f32({4, 12, 12, 12}, 21)}));
  v.push_back(exact("Roll/innermost_rolled",
                    make_node("Roll", 1, 1, attrs({{"axes", Ints{2}}, {"shifts", Ints{3}}}), kCbtDomain),
                    {f32({3, 7, 5}, 22)}));
  v.push_back(exact_fwd("Roll/int64",
                        make_node("Roll", 1, 1, attrs({{"axes", Ints{0}}, {"shifts", Ints{-1}}}), kCbtDomain),
                        {i64_data({5, 6}, 23)}));
  v.push_back(exact_fwd("Transpose/matrix_int64", make_node("Transpose", 1, 1, attrs({{"perm", Ints{1, 0}}})),
                        {i64_data({70, 33}, 18)}));
  return v;
}

std::vector<CudaCase> concat_split_cases() {
  std::vector<CudaCase> v;
  v.push_back(exact("Concat/axis1_three", make_node("Concat", 3, 1, attrs({{"axis", int64_t{1}}})),
                    {f32({2, 3}, 20), f32({2, 1}, 21), f32({2, 5}, 22)}));
  v.push_back(exact("Concat/axis-3_batch", make_node("Concat", 2, 1, attrs({{"axis", int64_t{-3}}})),
                    {f32({1, 3, 5}, 23), f32({2, 3, 5}, 24)}));
  v.push_back(exact("Concat/axis2_narrow", make_node("Concat", 3, 1, attrs({{"axis", int64_t{2}}})),
                    {f32({2, 3, 3}, 25), f32({2, 3, 1}, 26), f32({2, 3, 2}, 27)}));
  v.push_back(exact_fwd("Concat/int64", make_node("Concat", 2, 1, attrs({{"axis", int64_t{0}}})),
                        {i64_data({3}, 28), i64_data({4}, 29)}));
  v.push_back(exact("Split/input_sizes", make_node("Split", 2, 2, attrs({{"axis", int64_t{1}}})),
                    {f32({3, 5}, 30), i64({2, 3})}, 13));
  v.push_back(
      exact("Split/even_axis-1", make_node("Split", 1, 3, attrs({{"axis", int64_t{-1}}})), {f32({1, 3, 9}, 31)}, 13));
  v.push_back(exact("Split/num_outputs_uneven", make_node("Split", 1, 3, attrs({{"num_outputs", int64_t{3}}})),
                    {f32({7, 3}, 32)}, 18));
  v.push_back(exact("Split/attr_sizes", make_node("Split", 1, 2, attrs({{"split", Ints{4, 1}}})), {f32({5}, 33)}, 11));
  v.push_back(exact_fwd("Split/int64_axis2", make_node("Split", 2, 3, attrs({{"axis", int64_t{2}}})),
                        {i64_data({2, 3, 6}, 34), i64({2, 1, 3})}, 13));
  return v;
}

std::vector<CudaCase> expand_cases() {
  std::vector<CudaCase> v;
  v.push_back(summing("Expand/column_to_3d", make_node("Expand", 2, 1), {f32({3, 1}, 40), i64({2, 3, 4})}));
  v.push_back(summing("Expand/one_to_5x1x7", make_node("Expand", 2, 1), {f32({1}, 41), i64({5, 1, 7})}));
  // 300 summed elements per dX element: the block-per-output reduction.
  v.push_back(summing("Expand/long_sum", make_node("Expand", 2, 1), {f32({1, 3, 1}, 42), i64({50, 3, 6})}));
  v.push_back(summing("Tile/2d", make_node("Tile", 2, 1), {f32({3, 5}, 43), i64({2, 3})}));
  v.push_back(summing("Tile/nchw_spatial", make_node("Tile", 2, 1), {f32({2, 3, 1, 4}, 44), i64({1, 1, 6, 2})}));
  v.push_back(exact_fwd("Tile/int64", make_node("Tile", 2, 1), {random_int_tensor({2, 3}, -9, 9, 45), i64({3, 1})}));
  v.push_back(summing("Expand/shape_smaller_rank", make_node("Expand", 2, 1), {f32({2, 3, 4}, 43), i64({3, 1})}));
  v.push_back(exact_fwd("Expand/int64", make_node("Expand", 2, 1), {i64_data({4, 1}, 44), i64({4, 5})}));
  return v;
}

std::vector<CudaCase> slice_cases() {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<CudaCase> v;
  v.push_back(
      exact("Slice/reverse", make_node("Slice", 5, 1), {f32({7}, 50), i64({-1}), i64({kMin}), i64({0}), i64({-1})}));
  v.push_back(exact("Slice/neg_step_neg_axes", make_node("Slice", 5, 1),
                    {f32({3, 7}, 51), i64({5, 0}), i64({0, kMax}), i64({-1, 0}), i64({-2, 1})}));
  v.push_back(exact("Slice/step2_batch1", make_node("Slice", 5, 1),
                    {f32({1, 5, 3}, 52), i64({1}), i64({4}), i64({1}), i64({2})}));
  v.push_back(exact("Slice/clamped_ends", make_node("Slice", 3, 1), {f32({4, 3}, 53), i64({1, 1}), i64({3, 100})}));
  // Whole rows of a middle axis: moved as 8-byte words.
  v.push_back(exact("Slice/rows", make_node("Slice", 4, 1), {f32({4, 16, 10}, 54), i64({2}), i64({14}), i64({1})}));
  v.push_back(exact_fwd("Slice/int64_data_int32_params", make_node("Slice", 5, 1),
                        {i64_data({6, 8}, 55), i32({1, -2}), i32({5, 0}), i32({0, 1}), i32({1, -3})}));
  v.push_back(
      exact("Slice/opset9_attrs",
            make_node("Slice", 1, 1, attrs({{"starts", Ints{0, 1}}, {"ends", Ints{2, -1}}, {"axes", Ints{0, 2}}})),
            {f32({3, 2, 6}, 56)}, 9));
  return v;
}

std::vector<CudaCase> pad_cases() {
  std::vector<CudaCase> v;
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    const std::string m = mode;
    auto make = m == "constant" ? exact : summing;  // only constant mode never sums
    Node n = make_node("Pad", 2, 1, attrs({{"mode", m}}));
    v.push_back(make("Pad/" + m + "_2d", n, {f32({3, 5}, 60), i64({1, 2, 2, 1})}, 19));
    v.push_back(make("Pad/" + m + "_batch1", n, {f32({1, 4}, 61), i64({0, 3, 0, 0})}, 19));
    v.push_back(make("Pad/" + m + "_nchw", n, {f32({2, 3, 5, 4}, 62), i64({0, 0, 2, 1, 0, 0, 1, 2})}, 19));
  }
  v.push_back(summing("Pad/wrap_wider_than_axis", make_node("Pad", 2, 1, attrs({{"mode", std::string("wrap")}})),
                      {f32({2, 3}, 63), i64({0, 4, 0, 5})}, 19));
  v.push_back(exact("Pad/crop_and_value", make_node("Pad", 3, 1),
                    {f32({3, 5}, 64), i64({-1, 1, 2, 0}), f32_values({0.5f}, {})}));
  v.push_back(omit(
      exact("Pad/axes_input", make_node("Pad", 4, 1), {f32({2, 3, 3}, 65), i64({1, 2}), Tensor(), i64({-2})}, 18), 2));
  v.push_back(
      exact_fwd("Pad/int64_value", make_node("Pad", 3, 1), {i64_data({2, 3}, 66), i64({1, 0, 0, 2}), i64_scalar(-7)}));
  v.push_back(exact("Pad/opset10_value_attr",
                    make_node("Pad", 1, 1, attrs({{"pads", Ints{0, 1, 2, 0}}, {"value", 1.5f}})), {f32({3, 4}, 67)},
                    10));
  return v;
}

std::vector<CudaCase> gather_cases() {
  std::vector<CudaCase> v;
  v.push_back(
      summing("Gather/repeated_negative", make_node("Gather", 2, 1), {f32({5, 3}, 70), i64({0, -1, 0, 2, 4, 0})}));
  v.push_back(summing("Gather/axis1_int32_2d", make_node("Gather", 2, 1, attrs({{"axis", int64_t{1}}})),
                      {f32({2, 5, 3}, 71), i32({4, -5, 1, 1}, {2, 2})}));
  v.push_back(summing("Gather/scalar_index_axis-1", make_node("Gather", 2, 1, attrs({{"axis", int64_t{-1}}})),
                      {f32({4, 6}, 72), i64_scalar(2)}));
  // Embedding lookup: negative ids count from the end.
  v.push_back(summing("Gather/embedding", make_node("Gather", 2, 1),
                      {f32({50, 16}, 73), random_int_tensor({8, 7}, -50, 50, 74)}));
  // Many collisions on few rows: the scatter-add's atomics.
  v.push_back(
      summing("Gather/collisions", make_node("Gather", 2, 1), {f32({3, 4}, 75), random_int_tensor({200}, -3, 3, 76)}));
  v.push_back(exact_fwd("Gather/int64_data", make_node("Gather", 2, 1, attrs({{"axis", int64_t{1}}})),
                        {i64_data({3, 9}, 77), i64({8, -9, 3})}));
  return v;
}

std::vector<CudaCase> generator_cases() {
  std::vector<CudaCase> v;
  v.push_back(exact_fwd("Shape/full", make_node("Shape", 1, 1), {f32({2, 3, 5}, 80)}));
  v.push_back(exact_fwd("Shape/start_end",
                        make_node("Shape", 1, 1, attrs({{"start", int64_t{1}}, {"end", int64_t{-1}}})),
                        {i64_data({2, 3, 5, 7}, 81)}, 15));
  v.push_back(exact_fwd("Constant/tensor", make_node("Constant", 0, 1, attrs({{"value", f32({2, 3}, 82)}})), {}));
  v.push_back(
      exact_fwd("Constant/value_ints", make_node("Constant", 0, 1, attrs({{"value_ints", Ints{4, -2, 9}}})), {}));
  v.push_back(exact_fwd("Constant/value_float", make_node("Constant", 0, 1, attrs({{"value_float", 2.5f}})), {}));
  v.push_back(exact_fwd("Constant/value_floats",
                        make_node("Constant", 0, 1, attrs({{"value_floats", std::vector<float>{1.5f, -3.25f}}})), {}));
  v.push_back(exact_fwd("ConstantOfShape/float",
                        make_node("ConstantOfShape", 1, 1, attrs({{"value", f32_values({1.5f}, {1})}})),
                        {i64({2, 3, 4})}));
  v.push_back(exact_fwd("ConstantOfShape/int64",
                        make_node("ConstantOfShape", 1, 1, attrs({{"value", Tensor::from_i64({-5}, {1})}})),
                        {i64({7, 1})}));
  v.push_back(exact_fwd("ConstantOfShape/default_zeros", make_node("ConstantOfShape", 1, 1), {i64({3, 5})}));
  v.push_back(exact_fwd("Range/int64", make_node("Range", 3, 1), {i64_scalar(3), i64_scalar(20), i64_scalar(4)}));
  v.push_back(exact_fwd("Range/float_negative_delta", make_node("Range", 3, 1),
                        {f32_values({0.5f}, {}), f32_values({-3.2f}, {}), f32_values({-0.3f}, {})}));
  v.push_back(exact_fwd("Range/int32", make_node("Range", 3, 1), {i32({-4}, {}), i32({9}, {}), i32({3}, {})}));
  return v;
}

std::vector<CudaCase> select_cases() {
  std::vector<CudaCase> v;
  // Small value ranges so that equal pairs occur.
  v.push_back(exact_fwd("Equal/int64_broadcast", make_node("Equal", 2, 1),
                        {random_int_tensor({3, 1}, 0, 3, 90), random_int_tensor({1, 4}, 0, 3, 91)}));
  Tensor a = f32({4, 5}, 92), b = a.clone();
  for (int64_t i = 0; i < b.numel(); i += 3) b.ptr<float>()[i] += 1.0f;
  v.push_back(exact_fwd("Equal/float_same_shape", make_node("Equal", 2, 1), {a, b}));
  v.push_back(exact_fwd("Equal/bool_scalar", make_node("Equal", 2, 1), {bools({2, 3}, 93), bools({}, 94)}));
  // The ordered comparisons (ops/cuda/compare.cu): small ranges for ties, int8 below zero.
  v.push_back(exact_fwd("Greater/int64_broadcast", make_node("Greater", 2, 1),
                        {random_int_tensor({3, 1}, -2, 2, 150), random_int_tensor({1, 4}, -2, 2, 151)}));
  v.push_back(exact_fwd("Less/float_same_shape", make_node("Less", 2, 1), {a, b}));
  Tensor threshold = Tensor::from_f32({a.ptr<float>()[7]}, {});  // equal to one element of a
  v.push_back(exact_fwd("GreaterOrEqual/float_scalar", make_node("GreaterOrEqual", 2, 1), {a, threshold}));
  Tensor s8 = Tensor(DType::Int8, {2, 5}), t8 = Tensor(DType::Int8, {5});
  for (int64_t i = 0; i < 10; ++i) s8.ptr<int8_t>()[i] = static_cast<int8_t>(i * 37 % 11 - 5);
  for (int64_t i = 0; i < 5; ++i) t8.ptr<int8_t>()[i] = static_cast<int8_t>(2 - i);
  v.push_back(exact_fwd("LessOrEqual/int8_signed", make_node("LessOrEqual", 2, 1), {s8, t8}));
  v.push_back(exact_fwd("Not/bool", make_node("Not", 1, 1), {bools({3, 5}, 152)}));
  // ArgMax/ArgMin (ops/arg_extreme.h): ties from small integer ranges, a NaN, the last index.
  v.push_back(
      exact_fwd("ArgMax/float_axis1", make_node("ArgMax", 1, 1, attrs({{"axis", int64_t{1}}})), {f32({3, 7, 5}, 159)}));
  v.push_back(
      exact_fwd("ArgMin/int64_ties_last_no_keepdims",
                make_node("ArgMin", 1, 1,
                          attrs({{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}, {"select_last_index", int64_t{1}}})),
                {random_int_tensor({4, 9}, 0, 3, 160)}));
  Tensor with_nan = f32({2, 6}, 161);
  with_nan.ptr<float>()[3] = std::nanf("");
  v.push_back(exact_fwd("ArgMax/nan_wins_axis0", make_node("ArgMax", 1, 1), {with_nan}));
  v.push_back(exact_fwd("And/broadcast", make_node("And", 2, 1), {bools({2, 3, 4}, 153), bools({3, 1}, 154)}));
  v.push_back(exact_fwd("Or/same_shape", make_node("Or", 2, 1), {bools({4, 6}, 155), bools({4, 6}, 156)}));
  v.push_back(exact_fwd("Xor/scalar", make_node("Xor", 2, 1), {bools({7}, 157), bools({}, 158)}));
  Tensor specials = f32({3, 7}, 162);
  const float special[] = {std::nanf(""), INFINITY, -INFINITY, std::numeric_limits<float>::max(), -0.0f};
  for (int k = 0; k < 5; ++k) specials.ptr<float>()[k * 4] = special[k];
  v.push_back(exact_fwd("IsNaN/specials", make_node("IsNaN", 1, 1), {specials}));
  v.push_back(exact_fwd("IsInf/specials", make_node("IsInf", 1, 1), {specials}));
  v.push_back(
      exact_fwd("IsInf/negative_only", make_node("IsInf", 1, 1, attrs({{"detect_positive", int64_t{0}}})), {specials}));
  v.push_back(summing("Where/broadcast_all", make_node("Where", 3, 1),
                      {bools({3, 1, 5}, 95), f32({4, 5}, 96), f32({3, 4, 1}, 97)}));
  v.push_back(
      exact("Where/same_shape", make_node("Where", 3, 1), {bools({2, 3}, 98), f32({2, 3}, 99), f32({2, 3}, 100)}));
  // dX sums 64 rows (block reduction), dY a scalar sums all 512 elements.
  v.push_back(
      summing("Where/long_sums", make_node("Where", 3, 1), {bools({64, 1}, 101), f32({1, 8}, 102), f32({}, 103)}));
  v.push_back(exact_fwd("Where/int64", make_node("Where", 3, 1),
                        {bools({2, 1}, 104), i64_data({2, 4}, 105), i64_data({4}, 106)}));
  return v;
}

// Resize (ops/cuda/resize.cu): every mode family, scales (uploaded: the kernel reads them back
// once) and sizes (scales omitted), 3-D, 4-D and 5-D; the backward gathers (ResizeGrad).
std::vector<CudaCase> resize_cases() {
  auto node = [](const char* mode, const char* coord, const char* nearest) {
    return make_node("Resize", 4, 1,
                     attrs({{"mode", std::string(mode)},
                            {"coordinate_transformation_mode", std::string(coord)},
                            {"nearest_mode", std::string(nearest)}}));
  };
  auto scaled = [&](std::string name, const char* mode, const char* coord, const char* nearest, const Shape& x,
                    std::vector<float> scales, uint64_t seed) {
    const auto n = static_cast<int64_t>(scales.size());
    CudaCase c = summing("Resize/" + name, node(mode, coord, nearest),
                         {f32(x, seed), Tensor(), f32_values(scales, {n}), Tensor()}, 19);
    c.node.inputs[1] = c.node.inputs[3] = "";
    return c;
  };
  auto sized = [&](std::string name, const char* mode, const char* coord, const char* nearest, const Shape& x,
                   std::vector<int64_t> sizes, uint64_t seed) {
    CudaCase c =
        summing("Resize/" + name, node(mode, coord, nearest), {f32(x, seed), Tensor(), Tensor(), i64(sizes)}, 19);
    c.node.inputs[1] = c.node.inputs[2] = "";
    return c;
  };
  std::vector<CudaCase> v;
  v.push_back(scaled("nearest_asymmetric_floor_x2", "nearest", "asymmetric", "floor", {2, 3, 5, 6}, {1, 1, 2, 2}, 170));
  v.push_back(scaled("linear_half_pixel_1.5x0.8", "linear", "half_pixel", "round_prefer_floor", {2, 3, 5, 6},
                     {1, 1, 1.5f, 0.8f}, 171));
  v.push_back(sized("linear_align_corners_sizes", "linear", "align_corners", "round_prefer_floor", {1, 2, 4, 7},
                    {1, 2, 9, 3}, 172));
  v.push_back(sized("nearest_tf_half_pixel_ceil", "nearest", "tf_half_pixel_for_nn", "round_prefer_ceil", {1, 1, 3, 4},
                    {1, 1, 7, 11}, 173));
  v.push_back(scaled("trilinear_pytorch_half_pixel", "linear", "pytorch_half_pixel", "round_prefer_floor",
                     {1, 2, 3, 4, 5}, {1, 1, 2, 2, 2}, 174));
  v.push_back(scaled("linear_rank3_symmetric", "linear", "half_pixel_symmetric", "round_prefer_floor", {2, 3, 9},
                     {1, 1, 0.5f}, 175));
  v.push_back(
      scaled("linear_x2_8x16x16x16", "linear", "half_pixel", "round_prefer_floor", {8, 16, 16, 16}, {1, 1, 2, 2}, 176));
  return v;
}

// DepthToSpace and SpaceToDepth (each the other's gradient), CumSum (one thread a line) and
// Trilu (ops/cuda/cumsum_trilu.cu; their gradients are themselves).
std::vector<CudaCase> cumsum_trilu_cases() {
  std::vector<CudaCase> v;
  // DepthToSpace/SpaceToDepth (strided copies through graph/shape_utils.h's view).
  v.push_back(exact("DepthToSpace/dcr_b2", make_node("DepthToSpace", 1, 1, attrs({{"blocksize", int64_t{2}}})),
                    {f32({2, 12, 3, 5}, 190)}, 13));
  v.push_back(exact("DepthToSpace/crd_b3",
                    make_node("DepthToSpace", 1, 1, attrs({{"blocksize", int64_t{3}}, {"mode", std::string("CRD")}})),
                    {f32({1, 18, 2, 4}, 191)}, 13));
  v.push_back(exact("SpaceToDepth/b2", make_node("SpaceToDepth", 1, 1, attrs({{"blocksize", int64_t{2}}})),
                    {f32({2, 3, 6, 4}, 192)}, 13));
  for (int64_t exclusive = 0; exclusive < 2; ++exclusive)
    for (int64_t reverse = 0; reverse < 2; ++reverse)
      v.push_back(summing("CumSum/axis1_excl" + std::to_string(exclusive) + "_rev" + std::to_string(reverse),
                          make_node("CumSum", 2, 1, attrs({{"exclusive", exclusive}, {"reverse", reverse}})),
                          {f32({3, 37, 5}, 180 + exclusive * 2 + reverse), i64_scalar(1)}, 14));
  v.push_back(
      exact_fwd("CumSum/int64_last_axis", make_node("CumSum", 2, 1), {i64_data({4, 9}, 185), i64_scalar(-1)}, 14));
  v.push_back(exact("Trilu/upper_k1", make_node("Trilu", 2, 1), {f32({2, 5, 7}, 186), i64_scalar(1)}, 14));
  v.push_back(exact("Trilu/lower_k-2", make_node("Trilu", 2, 1, attrs({{"upper", int64_t{0}}})),
                    {f32({3, 6, 4}, 187), i64_scalar(-2)}, 14));
  v.push_back(omit(exact("Trilu/upper_no_k", make_node("Trilu", 2, 1), {f32({8, 8}, 188), i64_scalar(0)}, 14), 1));
  return v;
}

// TopK (one thread a line, ops/top_k.h's rule) and TopKGrad along each axis; ties (values in
// quarters) and integers select the same indices as on the CPU.
std::vector<CudaCase> top_k_cases() {
  std::vector<CudaCase> v;
  auto attrs_of = [](int64_t axis, int64_t largest) { return attrs({{"axis", axis}, {"largest", largest}}); };
  for (int64_t axis : {0, 1, -1})
    for (int64_t largest : {0, 1})
      v.push_back(exact("TopK/axis" + std::to_string(axis) + "_largest" + std::to_string(largest),
                        make_node("TopK", 2, 2, attrs_of(axis, largest)), {f32({6, 33, 5}, 200 + axis), i64({4})}));
  Tensor quarters = f32({64, 40}, 206);
  for (int64_t i = 0; i < quarters.numel(); ++i)
    quarters.ptr<float>()[i] = std::round(quarters.ptr<float>()[i] * 4) / 4;
  v.push_back(exact("TopK/ties_k40_sort", make_node("TopK", 2, 2), {quarters, i64({40})}));
  v.push_back(exact_fwd("TopK/int64", make_node("TopK", 2, 2), {i64_data({7, 19}, 207), i64({5})}));
  return v;
}

// ScatterElements (a copy, then one thread a line in order: repeated indices combine, or keep
// the last update, as on the CPU), ScatterElementsTally and ScatterElementsGrad. Mul, max and
// min on halves: ties (the gradient shared) and zeros, exactly as on the CPU.
std::vector<CudaCase> scatter_elements_cases() {
  std::vector<CudaCase> v;
  auto attrs_of = [](int64_t axis, const char* reduction) {
    return attrs({{"axis", axis}, {"reduction", std::string(reduction)}});
  };
  Tensor distinct(DType::Int64, {5, 3, 7});  // along axis 0 of (6, 3, 7): a shifted permutation per line
  for (int64_t e = 0; e < distinct.numel(); ++e) distinct.ptr<int64_t>()[e] = (e / 21 + e % 21) % 6 - (e % 2 ? 6 : 0);
  v.push_back(exact("ScatterElements/axis0_none", make_node("ScatterElements", 3, 1, attrs_of(0, "none")),
                    {f32({6, 3, 7}, 210), distinct, f32({5, 3, 7}, 211)}, 18));
  v.push_back(exact("ScatterElements/axis-1_add_repeated", make_node("ScatterElements", 3, 1, attrs_of(-1, "add")),
                    {f32({4, 9}, 212), random_int_tensor({3, 20}, -9, 9, 213), f32({3, 20}, 214)}, 18));
  v.push_back(exact_fwd("ScatterElements/int32_none_repeated", make_node("ScatterElements", 3, 1, attrs_of(1, "none")),
                        {f32({4, 9}, 215), i32({0, 8, 0, -1, 3, 3, 2, 2}, {2, 4}), f32({2, 4}, 216)}, 18));
  v.push_back(exact("Scatter/opset10", make_node("Scatter", 3, 1, attrs({{"axis", int64_t{1}}})),
                    {f32({3, 8}, 217), random_int_tensor({3, 5}, -8, 8, 218), f32({3, 5}, 219)}, 10));
  v.push_back(exact("ScatterElements/axis0_max_ties", make_node("ScatterElements", 3, 1, attrs_of(0, "max")),
                    {f32_halves({6, 3, 7}, 240), random_int_tensor({9, 3, 7}, -6, 6, 241), f32_halves({9, 3, 7}, 242)},
                    18));
  v.push_back(exact(
      "ScatterElements/axis-1_min_ties_int32", make_node("ScatterElements", 3, 1, attrs_of(-1, "min")),
      {f32_halves({5, 6}, 243), i32({0, 5, 5, -1, 2, 2, 0, 3, 1, 1, -6, 4}, {2, 6}), f32_halves({2, 6}, 244)}, 18));
  v.push_back(exact("ScatterElements/axis1_mul_zeros", make_node("ScatterElements", 3, 1, attrs_of(1, "mul")),
                    {f32_halves({4, 5}, 245), random_int_tensor({4, 12}, -5, 5, 246), f32_halves({4, 12}, 247)}, 16));
  v.push_back(exact_fwd("ScatterElements/int64_max", make_node("ScatterElements", 3, 1, attrs_of(0, "max")),
                        {i64_data({4, 6}, 248), random_int_tensor({7, 6}, -4, 4, 249), i64_data({7, 6}, 250)}, 18));
  return v;
}

// GatherND and ScatterND (ops/scatter_nd.h): gathers and writes one thread an element; reductions
// (GatherND's backward, reduction add, mul, max, min) and ScatterNDTally one thread an element
// of a slice, the tuples in order, so repeated tuples combine as on the CPU.
std::vector<CudaCase> gather_scatter_nd_cases() {
  std::vector<CudaCase> v;
  v.push_back(exact("GatherND/k2_repeated", make_node("GatherND", 2, 1),
                    {f32({6, 7, 5}, 220), random_int_tensor({12, 2}, -5, 5, 221)}, 13));
  v.push_back(exact("GatherND/batch_dims1_elements", make_node("GatherND", 2, 1, attrs({{"batch_dims", int64_t{1}}})),
                    {f32({4, 6, 3}, 222), random_int_tensor({4, 5, 2}, -3, 3, 223)}, 13));
  Tensor distinct(DType::Int64, {3, 4, 1});  // 12 of the 16 rows, each once
  for (int64_t m = 0; m < 12; ++m) distinct.ptr<int64_t>()[m] = (m * 5) % 16 - (m % 3 ? 0 : 16);
  v.push_back(exact("ScatterND/rows_none", make_node("ScatterND", 3, 1),
                    {f32({16, 9}, 224), distinct, f32({3, 4, 9}, 225)}, 18));
  v.push_back(exact("ScatterND/elements_add_repeated",
                    make_node("ScatterND", 3, 1, attrs({{"reduction", std::string("add")}})),
                    {f32({5, 6}, 226), random_int_tensor({40, 2}, -5, 5, 227), f32({40}, 228)}, 18));
  auto reduce = [](const char* r) { return make_node("ScatterND", 3, 1, attrs({{"reduction", std::string(r)}})); };
  v.push_back(exact("ScatterND/rows_max_ties", reduce("max"),
                    {f32_halves({8, 5}, 251), random_int_tensor({3, 6, 1}, -8, 9, 252), f32_halves({3, 6, 5}, 253)},
                    18));
  v.push_back(exact("ScatterND/elements_min_ties", reduce("min"),
                    {f32_halves({5, 6}, 254), random_int_tensor({40, 2}, -5, 5, 255), f32_halves({40}, 256)}, 18));
  v.push_back(exact("ScatterND/rows_mul_zeros", reduce("mul"),
                    {f32_halves({6, 4}, 257), random_int_tensor({15, 1}, -6, 6, 258), f32_halves({15, 4}, 259)}, 16));
  v.push_back(exact_fwd("ScatterND/int64_mul", reduce("mul"),
                        {random_int_tensor({5, 3}, -4, 4, 260), random_int_tensor({9, 1}, -5, 5, 261),
                         random_int_tensor({9, 3}, -4, 4, 262)},
                        18));
  return v;
}

CBT_CUDA_CASES(view_cases);
CBT_CUDA_CASES(transpose_cases);
CBT_CUDA_CASES(concat_split_cases);
CBT_CUDA_CASES(expand_cases);
CBT_CUDA_CASES(slice_cases);
CBT_CUDA_CASES(pad_cases);
CBT_CUDA_CASES(gather_cases);
CBT_CUDA_CASES(generator_cases);
CBT_CUDA_CASES(select_cases);
CBT_CUDA_CASES(resize_cases);
CBT_CUDA_CASES(cumsum_trilu_cases);
CBT_CUDA_CASES(top_k_cases);
CBT_CUDA_CASES(scatter_elements_cases);
CBT_CUDA_CASES(gather_scatter_nd_cases);

}  // namespace
}  // namespace cbt::test
