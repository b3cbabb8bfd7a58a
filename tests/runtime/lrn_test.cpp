// LRN expanded at load (graph/composite_ops.h) against ONNX's formula, odd and even windows
// (onnxruntime takes odd ones only), images and sequences, both forms of Unsqueeze's axes. Its
// agreement with onnxruntime and its gradients: Cli.LrnAndShrinkModelsMatchOnnxruntimeAndTrain,
// ModelGradCheck.CompositeOpsExpanded.
#include <gtest/gtest.h>

#include <cmath>

#include "common/bound_run.h"
#include "common/op_harness.h"
#include "graph/composite_ops.h"
#include "graph/errors.h"

namespace cbt {
namespace {

// LRN of x with `size` (and alpha, beta, bias) as expanded at load and run on the CPU.
Tensor lrn(const Tensor& x, int64_t size, float alpha, float beta, float bias, int64_t opset) {
  Node n;
  n.op_type = "LRN";
  n.outputs = {"y"};
  n.attrs.set("size", size);
  n.attrs.set("alpha", alpha);
  n.attrs.set("beta", beta);
  n.attrs.set("bias", bias);
  Graph g = test::one_node_graph(n, {x}, opset);
  expand_composite_ops(g);
  EXPECT_TRUE(std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node& m) { return m.op_type == "LRN"; }));
  return test::run_bound_graph(g, x).values.at("y");
}

// ONNX's LRN at element (n, c, rest) of x viewed as (N, C, R).
double reference(const Tensor& x, int64_t n, int64_t c, int64_t r, int64_t size, double alpha, double beta,
                 double bias) {
  const int64_t C = x.dim(1), R = x.numel() / (x.dim(0) * C);
  double sum = 0;
  for (int64_t i = std::max<int64_t>(0, c - (size - 1) / 2); i <= std::min(C - 1, c + size / 2); ++i) {
    const double v = x.at_f64((n * C + i) * R + r);
    sum += v * v;
  }
  return x.at_f64((n * C + c) * R + r) / std::pow(bias + alpha / size * sum, beta);
}

TEST(LrnTest, OddAndEvenWindowsMatchTheFormula) {
  struct Case {
    Shape x;
    int64_t size;
    float alpha, beta, bias;
    int64_t opset;
  };
  for (const Case& c : std::vector<Case>{{{2, 7, 3, 4}, 3, 1e-4f, 0.75f, 1.0f, 13},
                                         {{2, 7, 3, 4}, 4, 0.5f, 0.5f, 2.0f, 11},
                                         {{3, 5, 6}, 2, 0.3f, 0.9f, 1.5f, 13},
                                         {{1, 6, 2, 2}, 9, 1.0f, 0.75f, 0.5f, 11}}) {
    SCOPED_TRACE(shape_str(c.x) + " size " + std::to_string(c.size) + " opset " + std::to_string(c.opset));
    const Tensor x = test::random_tensor(DType::Float32, c.x, 131 + c.size, 2.0);
    const Tensor y = lrn(x, c.size, c.alpha, c.beta, c.bias, c.opset);
    ASSERT_EQ(y.shape(), c.x);
    const int64_t C = c.x[1], R = x.numel() / (c.x[0] * C);
    for (int64_t n = 0; n < c.x[0]; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t r = 0; r < R; ++r) {
          const double want = reference(x, n, ch, r, c.size, c.alpha, c.beta, c.bias);
          EXPECT_NEAR(y.at_f64((n * C + ch) * R + r), want, 1e-5 * (1 + std::fabs(want)));
        }
  }
}

TEST(LrnTest, ASizeBelowOneIsRefusedNamingTheNode) {
  Node n;
  n.op_type = "LRN";
  n.name = "norm1";
  n.outputs = {"y"};
  n.attrs.set("size", int64_t{0});
  Graph g = test::one_node_graph(n, {test::random_tensor(DType::Float32, {1, 3, 2, 2}, 7)}, 13);
  try {
    expand_composite_ops(g);
    FAIL() << "size 0 was taken";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("norm1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("positive size"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cbt
