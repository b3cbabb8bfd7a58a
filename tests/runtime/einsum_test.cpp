// Einsum rewritten when the graph is bound (graph/einsum.h): single-operand forms against
// direct sums, and what it refuses, naming the node. Its two-operand and three-operand forms
// against onnxruntime and its gradients: Cli.EinsumModelsMatchOnnxruntimeAndTrain,
// ModelGradCheck.EinsumRewritten.
#include "graph/einsum.h"

#include <gtest/gtest.h>

#include "common/bound_run.h"
#include "common/op_harness.h"
#include "graph/errors.h"

namespace cbt {
namespace {

// Einsum of `equation` over inputs of the given shapes (the first input's dim 0 is the batch,
// bound to `shapes[0][0]`), run on the CPU; its output.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& in, int64_t opset = 17) {
  Node n;
  n.op_type = "Einsum";
  n.name = "e";
  n.attrs.set("equation", equation);
  n.outputs = {"y"};
  const test::BoundRun r = test::run_bound_graph(test::one_node_graph(n, in, opset), in[0]);
  EXPECT_FALSE(std::any_of(r.bound.graph.nodes.begin(), r.bound.graph.nodes.end(), is_einsum));
  return r.values.at("y");
}

TEST(EinsumTest, OneOperandSumsAndPermutes) {
  const Tensor x = test::random_tensor(DType::Float64, {2, 3, 4}, 91);
  auto at = [&](int64_t i, int64_t j, int64_t k) { return x.at_f64((i * 3 + j) * 4 + k); };
  for (int64_t opset : {12, 17}) {
    SCOPED_TRACE(opset);
    const Tensor t = einsum("bij->bji", {x}, opset), s = einsum("bij->bi", {x}, opset),
                 all = einsum("bij->b", {x}, opset), same = einsum("bij", {x}, opset);
    ASSERT_EQ(t.shape(), (Shape{2, 4, 3}));
    ASSERT_EQ(s.shape(), (Shape{2, 3}));
    ASSERT_EQ(all.shape(), (Shape{2}));
    ASSERT_EQ(same.shape(), (Shape{2, 3, 4}));
    for (int64_t i = 0; i < 2; ++i) {
      double total = 0;
      for (int64_t j = 0; j < 3; ++j) {
        double row = 0;
        for (int64_t k = 0; k < 4; ++k) {
          EXPECT_EQ(t.at_f64((i * 4 + k) * 3 + j), at(i, j, k));
          EXPECT_EQ(same.at_f64((i * 3 + j) * 4 + k), at(i, j, k));
          row += at(i, j, k);
        }
        EXPECT_NEAR(s.at_f64(i * 3 + j), row, 1e-12);
        total += row;
      }
      EXPECT_NEAR(all.at_f64(i), total, 1e-12);
    }
  }
}

// A label repeated within an operand takes its diagonal (numpy's einsum): diagonals, traces
// (explicit and implicit), a diagonal of three dims, and a diagonal inside a product.
TEST(EinsumTest, DiagonalsAndTraces) {
  const Tensor x = test::random_tensor(DType::Float64, {2, 3, 3}, 94),
               c = test::random_tensor(DType::Float64, {2, 3, 3, 3}, 95),
               w = test::random_tensor(DType::Float64, {3, 4}, 96);
  auto at = [&](int64_t b, int64_t i, int64_t j) { return x.at_f64((b * 3 + i) * 3 + j); };
  const Tensor diag = einsum("bii->bi", {x}), trace = einsum("bii->b", {x}), implicit = einsum("bii", {x}),
               cube = einsum("biii->bi", {c}), product = einsum("bii,ij->bj", {x, w});
  ASSERT_EQ(diag.shape(), (Shape{2, 3}));
  ASSERT_EQ(trace.shape(), (Shape{2}));
  ASSERT_EQ(implicit.shape(), (Shape{2}));
  ASSERT_EQ(cube.shape(), (Shape{2, 3}));
  ASSERT_EQ(product.shape(), (Shape{2, 4}));
  for (int64_t b = 0; b < 2; ++b) {
    double tr = 0;
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(diag.at_f64(b * 3 + i), at(b, i, i), 1e-12);
      EXPECT_NEAR(cube.at_f64(b * 3 + i), c.at_f64(((b * 3 + i) * 3 + i) * 3 + i), 1e-12);
      tr += at(b, i, i);
    }
    EXPECT_NEAR(trace.at_f64(b), tr, 1e-12);
    EXPECT_NEAR(implicit.at_f64(b), tr, 1e-12);
    for (int64_t j = 0; j < 4; ++j) {
      double want = 0;
      for (int64_t i = 0; i < 3; ++i) want += at(b, i, i) * w.at_f64(i * 4 + j);
      EXPECT_NEAR(product.at_f64(b * 4 + j), want, 1e-12);
    }
  }
}

TEST(EinsumTest, RefusesWhatItCannotRewriteNamingTheNode) {
  const Tensor x = test::random_tensor(DType::Float32, {2, 3, 3}, 92),
               w = test::random_tensor(DType::Float32, {4, 5}, 93);
  const struct {
    std::string equation;
    std::vector<Tensor> in;
    const char* message;
  } cases[] = {
      {"bij,jk->bik", {x, w}, "label 'j' has sizes 3 and 4"},
      {"bij,kk->bi", {x, w}, "label 'k' has sizes 4 and 5"},  // a diagonal of a non-square pair
      {"bij,jk", {x}, "has 2 operands, the node 1 inputs"},
      {"bi->b", {x}, "does not fit an operand of rank 3"},
      {"b$j->b", {x}, "has the character '$'"},
      {"bij->bik", {x}, "output label 'k' is in no operand"},
      {"bij->bii", {x}, "output label 'i' repeats"},
      {"b...i...->b", {x}, "two ellipses"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.equation);
    try {
      einsum(c.equation, c.in);
      ADD_FAILURE() << "accepted";
    } catch (const ModelError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("Einsum 'e'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace cbt
