// Gemm and MatMul: values against naive loops, gradient checks, shape inference.
#include <gtest/gtest.h>

#include <vector>

#include "common/op_harness.h"

namespace cbt::test {
namespace {

// Naive batched matmul with numpy broadcasting of batch dims; a, b already at least 2-D.
Tensor naive_matmul(const Tensor& a, const Tensor& b, const Shape& out) {
  Tensor y(DType::Float64, out);
  size_t r = out.size();
  int64_t M = a.dim(-2), K = a.dim(-1), N = b.dim(-1);
  int64_t batches = y.numel() / (M * N);
  auto offset = [&](const Tensor& t, int64_t bi) {
    // Unravel bi over out's batch dims; dims of size 1 in t broadcast.
    int64_t off = 0, stride = t.dim(-2) * t.dim(-1);
    for (size_t k = r - 2; k-- > 0;) {
      int64_t c = bi % out[k];
      bi /= out[k];
      int64_t tk = static_cast<int64_t>(k) - static_cast<int64_t>(r - t.rank());
      if (tk >= 0) {
        if (t.shape()[tk] != 1) off += c * stride;
        stride *= t.shape()[tk];
      }
    }
    return off;
  };
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t ao = offset(a, bi), bo = offset(b, bi);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += a.at_f64(ao + i * K + k) * b.at_f64(bo + k * N + j);
        y.ptr<double>()[bi * M * N + i * N + j] = acc;
      }
  }
  return y;
}

TEST(MatMulTest, ForwardMatchesNaiveLoop) {
  struct Case {
    Shape a, b, y;
  };
  std::vector<Case> cases = {
      {{3, 4}, {4, 5}, {3, 5}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},
      {{2, 1, 3, 4}, {3, 4, 2}, {2, 3, 3, 2}},
      {{4, 3}, {2, 3, 5}, {2, 4, 5}},
  };
  for (const Case& k : cases) {
    Tensor a = random_tensor(DType::Float64, k.a, 1), b = random_tensor(DType::Float64, k.b, 2);
    auto y = run_node(make_node("MatMul", 2, 1), {a, b});
    ASSERT_EQ(y[0].shape(), k.y);
    EXPECT_EQ(compare_tensors(y[0], naive_matmul(a, b, k.y), 1e-10, 1e-10), "") << shape_str(k.a);
  }
  // 1-D operands: vector @ matrix and matrix @ vector.
  Tensor v = random_tensor(DType::Float64, {4}, 3), m = random_tensor(DType::Float64, {4, 3}, 4);
  auto y = run_node(make_node("MatMul", 2, 1), {v, m});
  ASSERT_EQ(y[0].shape(), (Shape{3}));
  EXPECT_EQ(compare_tensors(y[0], naive_matmul(v.reshaped({1, 4}), m, {1, 3}).reshaped({3}), 1e-10, 1e-10), "");
  Tensor m2 = random_tensor(DType::Float64, {2, 5, 4}, 5);
  y = run_node(make_node("MatMul", 2, 1), {m2, v});
  ASSERT_EQ(y[0].shape(), (Shape{2, 5}));
  EXPECT_EQ(compare_tensors(y[0], naive_matmul(m2, v.reshaped({4, 1}), {2, 5, 1}).reshaped({2, 5}), 1e-10, 1e-10), "");
}

TEST(MatMulTest, GradCheck) {
  std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {4, 5}}, {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}, {{4, 3}, {2, 3, 5}}, {{4}, {4, 3}},
      {{2, 5, 4}, {4}}, {{4}, {4}},          {{1, 3, 2}, {3, 2, 2}},
  };
  for (auto& [sa, sb] : cases) {
    std::vector<Tensor> in{random_tensor(DType::Float64, sa, 6), random_tensor(DType::Float64, sb, 7)};
    auto res = grad_check(make_node("MatMul", 2, 1), in);
    EXPECT_TRUE(res.ok) << shape_str(sa) << " @ " << shape_str(sb) << "\n" << res.report;
  }
}

TEST(MatMulTest, ShapeInference) {
  auto t = infer_node(make_node("MatMul", 2, 1),
                      {Tensor(DType::Float32, {7, 1, 3, 4}), Tensor(DType::Float32, {5, 4, 2})}, 17);
  EXPECT_EQ(t[0].shape, (Shape{7, 5, 3, 2}));
  t = infer_node(make_node("MatMul", 2, 1), {Tensor(DType::Float32, {4}), Tensor(DType::Float32, {4})}, 17);
  EXPECT_EQ(t[0].shape, Shape{});
  EXPECT_THROW(
      infer_node(make_node("MatMul", 2, 1), {Tensor(DType::Float32, {3, 4}), Tensor(DType::Float32, {5, 2})}, 17),
      ModelError);
  EXPECT_THROW(
      infer_node(make_node("MatMul", 2, 1), {Tensor(DType::Float32, {2, 3, 4}), Tensor(DType::Float32, {3, 4, 2})}, 17),
      ModelError);
}

Attributes gemm_attrs(float alpha, float beta, int64_t ta, int64_t tb) {
  Attributes a;
  a.set("alpha", alpha);
  a.set("beta", beta);
  a.set("transA", ta);
  a.set("transB", tb);
  return a;
}

TEST(GemmTest, ForwardMatchesNaiveLoop) {
  int64_t M = 3, K = 4, N = 5;
  for (int64_t ta = 0; ta < 2; ++ta)
    for (int64_t tb = 0; tb < 2; ++tb)
      for (Shape cs : {Shape{M, N}, Shape{N}, Shape{M, 1}, Shape{1}, Shape{}}) {
        Tensor a = random_tensor(DType::Float64, ta ? Shape{K, M} : Shape{M, K}, 1);
        Tensor b = random_tensor(DType::Float64, tb ? Shape{N, K} : Shape{K, N}, 2);
        Tensor c = random_tensor(DType::Float64, cs, 3);
        auto y = run_node(make_node("Gemm", 3, 1, gemm_attrs(0.5f, 2.0f, ta, tb)), {a, b, c});
        Tensor ref(DType::Float64, {M, N});
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k)
              acc += a.at_f64(ta ? k * M + i : i * K + k) * b.at_f64(tb ? j * K + k : k * N + j);
            int64_t ci = cs.size() == 2                   ? (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)
                         : (cs.size() == 1 && cs[0] != 1) ? j
                                                          : 0;
            ref.ptr<double>()[i * N + j] = 0.5 * acc + 2.0 * c.at_f64(ci);
          }
        EXPECT_EQ(compare_tensors(y[0], ref, 1e-10, 1e-10), "")
            << "transA " << ta << " transB " << tb << " C " << shape_str(cs);
      }
}

TEST(GemmTest, GradCheck) {
  int64_t M = 3, K = 4, N = 2;
  for (int64_t ta = 0; ta < 2; ++ta)
    for (int64_t tb = 0; tb < 2; ++tb)
      for (Shape cs : {Shape{M, N}, Shape{N}, Shape{M, 1}, Shape{1, N}, Shape{}}) {
        std::vector<Tensor> in{random_tensor(DType::Float64, ta ? Shape{K, M} : Shape{M, K}, 8),
                               random_tensor(DType::Float64, tb ? Shape{N, K} : Shape{K, N}, 9),
                               random_tensor(DType::Float64, cs, 10)};
        auto res = grad_check(make_node("Gemm", 3, 1, gemm_attrs(1.5f, 0.7f, ta, tb)), in);
        EXPECT_TRUE(res.ok) << "transA " << ta << " transB " << tb << " C " << shape_str(cs) << "\n" << res.report;
      }
  // Without C, batch 1.
  std::vector<Tensor> in{random_tensor(DType::Float64, {1, 5}, 11), random_tensor(DType::Float64, {3, 5}, 12)};
  auto res = grad_check(make_node("Gemm", 2, 1, gemm_attrs(1.0f, 1.0f, 0, 1)), in);
  EXPECT_TRUE(res.ok) << res.report;
}

TEST(GemmTest, ShapeInference) {
  auto t =
      infer_node(make_node("Gemm", 3, 1, gemm_attrs(1, 1, 0, 1)),
                 {Tensor(DType::Float32, {8, 20}), Tensor(DType::Float32, {10, 20}), Tensor(DType::Float32, {10})}, 13);
  EXPECT_EQ(t[0].shape, (Shape{8, 10}));
  EXPECT_THROW(
      infer_node(make_node("Gemm", 2, 1), {Tensor(DType::Float32, {8, 20}), Tensor(DType::Float32, {10, 20})}, 13),
      ModelError);
  EXPECT_THROW(
      infer_node(make_node("Gemm", 3, 1, gemm_attrs(1, 1, 0, 1)),
                 {Tensor(DType::Float32, {8, 20}), Tensor(DType::Float32, {10, 20}), Tensor(DType::Float32, {8})}, 13),
      ModelError);
  EXPECT_THROW(
      infer_node(make_node("Gemm", 2, 1), {Tensor(DType::Float32, {2, 8, 20}), Tensor(DType::Float32, {20, 3})}, 13),
      ModelError);
}

}  // namespace
}  // namespace cbt::test
