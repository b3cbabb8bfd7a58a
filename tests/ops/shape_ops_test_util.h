// Small builders shared by the shape-op tests.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/op_harness.h"

namespace cbt::test::shape {

inline Tensor f64(const std::vector<double>& v, Shape s) {
  Tensor t(DType::Float64, std::move(s));
  EXPECT_EQ(static_cast<size_t>(t.numel()), v.size());
  std::memcpy(t.data(), v.data(), v.size() * sizeof(double));
  return t;
}

inline Tensor i64(const std::vector<int64_t>& v, Shape s) { return Tensor::from_i64(v, std::move(s)); }
inline Tensor i64(const std::vector<int64_t>& v) { return Tensor::from_i64(v, {static_cast<int64_t>(v.size())}); }

inline Tensor i32(const std::vector<int32_t>& v) {
  Tensor t(DType::Int32, {static_cast<int64_t>(v.size())});
  std::memcpy(t.data(), v.data(), v.size() * sizeof(int32_t));
  return t;
}

inline Tensor boolean(const std::vector<uint8_t>& v, Shape s) {
  Tensor t(DType::Bool, std::move(s));
  std::memcpy(t.data(), v.data(), v.size());
  return t;
}

// 0, 1, 2, ... as float64 of the given shape.
inline Tensor iota64(Shape s) {
  Tensor t(DType::Float64, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<double>()[i] = static_cast<double>(i);
  return t;
}

inline std::vector<Tensor> run(const Node& n, std::vector<Tensor> in, int64_t opset = 17) {
  EagerOptions o;
  o.opset = opset;
  return run_node(n, std::move(in), o);
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.at_f64(i));
  return v;
}

// Expects shape, dtype and exact values (data movement never rounds).
inline void expect_tensor(const Tensor& t, DType dtype, const Shape& shape, const std::vector<double>& v) {
  EXPECT_EQ(t.dtype(), dtype) << dtype_name(t.dtype());
  EXPECT_EQ(t.shape(), shape) << shape_str(t.shape());
  EXPECT_EQ(values(t), v);
}

inline void expect_grad(const Node& n, const std::vector<Tensor>& in, int64_t opset = 17) {
  GradCheckOptions o;
  o.opset = opset;
  auto res = grad_check(n, in, o);
  EXPECT_TRUE(res.ok) << n.op_type << ":\n" << res.report;
}

}  // namespace cbt::test::shape
