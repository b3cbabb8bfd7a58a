// SplitToSequence read by SequenceAt (graph/split_to_sequence.h): folded at load, a Split when
// bound; the pieces against direct slices, what it leaves alone and what it refuses, naming the
// node. Against onnxruntime and in training: Cli.SequenceSplitsMatchOnnxruntimeAndTrain.
#include "graph/split_to_sequence.h"

#include <gtest/gtest.h>

#include "common/bound_run.h"
#include "common/op_harness.h"
#include "graph/errors.h"

namespace cbt {
namespace {

// x (batch 2, 7) split along axis 1 by `split` (undefined: pieces of one) and read at
// `positions`: the graph after fold_sequence_reads.
Graph split_graph(const Tensor& split, const std::vector<int64_t>& positions, int64_t keepdims = 1) {
  Graph g;
  g.opset = 20;
  g.inputs.push_back({"x", DType::Float32, {Dim{-1, "N"}, Dim{7, ""}}});
  Node s;
  s.op_type = "SplitToSequence";
  s.name = "s";
  s.inputs = {"x"};
  if (split.defined()) {
    s.inputs.push_back("split");
    g.initializers.emplace("split", split);
    g.constant_initializers.insert("split");
  }
  s.outputs = {"seq"};
  s.attrs.set("axis", int64_t{1});
  s.attrs.set("keepdims", keepdims);
  g.nodes.push_back(s);
  for (size_t i = 0; i < positions.size(); ++i) {
    const std::string p = "p" + std::to_string(i), y = "y" + std::to_string(i);
    g.initializers.emplace(p, Tensor::from_i64({positions[i]}, {}));
    g.constant_initializers.insert(p);
    Node at;
    at.op_type = "SequenceAt";
    at.inputs = {"seq", p};
    at.outputs = {y};
    g.nodes.push_back(at);
    g.outputs.push_back({y, DType::Float32, {}});
  }
  fold_sequence_reads(g);
  return g;
}

std::vector<Tensor> run(const Graph& g, const Tensor& x) {
  const test::BoundRun r = test::run_bound_graph(g, x);
  std::vector<Tensor> out;
  for (const auto& o : g.outputs) out.push_back(r.values.at(o.name));
  return out;
}

// Columns [from, from + width) of x (2, 7), as (2, width) or, squeezed, (2).
Tensor columns(const Tensor& x, int64_t from, int64_t width, bool squeeze = false) {
  Tensor t(DType::Float32, squeeze ? Shape{2} : Shape{2, width});
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < width; ++c) t.ptr<float>()[r * width + c] = x.ptr<float>()[r * 7 + from + c];
  return t;
}

TEST(SplitToSequenceTest, PiecesAgainstSlices) {
  const Tensor x = test::random_tensor(DType::Float32, {2, 7}, 801);
  {
    SCOPED_TRACE("chunks of 3: 3, 3, 1");
    Graph g = split_graph(Tensor::from_i64({3}, {}), {0, -1, 1});
    ASSERT_EQ(g.nodes.size(), 1u) << "the SequenceAt nodes are folded";
    auto y = run(g, x);
    EXPECT_TRUE(test::same_bytes(y[0], columns(x, 0, 3)));
    EXPECT_TRUE(test::same_bytes(y[1], columns(x, 6, 1)));
    EXPECT_TRUE(test::same_bytes(y[2], columns(x, 3, 3)));
  }
  {
    SCOPED_TRACE("sizes 2 and 5");
    auto y = run(split_graph(Tensor::from_i64({2, 5}, {2}), {1}), x);
    EXPECT_TRUE(test::same_bytes(y[0], columns(x, 2, 5)));
  }
  {
    SCOPED_TRACE("pieces of one, the axis dropped");
    auto y = run(split_graph(Tensor(), {4, -7}, 0), x);
    EXPECT_TRUE(test::same_bytes(y[0], columns(x, 4, 1, true)));
    EXPECT_TRUE(test::same_bytes(y[1], columns(x, 0, 1, true)));
  }
}

TEST(SplitToSequenceTest, LeavesOtherSequencesAndRefusesWhatDoesNotFit) {
  Graph other = split_graph(Tensor::from_i64({3}, {}), {0});
  Node concat;  // a second reader of the sequence that is no SequenceAt: nothing is folded
  Graph g;
  g.opset = 20;
  g.inputs.push_back({"x", DType::Float32, {Dim{-1, "N"}, Dim{7, ""}}});
  Node s;
  s.op_type = "SplitToSequence";
  s.inputs = {"x"};
  s.outputs = {"seq"};
  g.nodes.push_back(s);
  concat.op_type = "ConcatFromSequence";
  concat.inputs = {"seq"};
  concat.outputs = {"y"};
  g.nodes.push_back(concat);
  fold_sequence_reads(g);
  EXPECT_FALSE(is_folded_split_to_sequence(g.nodes[0]));
  EXPECT_TRUE(is_folded_split_to_sequence(other.nodes[0]));

  const Tensor x = test::random_tensor(DType::Float32, {2, 7}, 802);
  const struct {
    const char* what;
    Graph g;
    const char* message;
  } cases[] = {
      {"sizes", split_graph(Tensor::from_i64({2, 4}, {2}), {0}), "split sums to 6, the axis has 7"},
      {"position", split_graph(Tensor::from_i64({3}, {}), {3}), "reads position 3 of a sequence of 3"},
      {"chunk", split_graph(Tensor::from_i64({0}, {}), {0}), "split must be positive"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    try {
      run(c.g, x);
      ADD_FAILURE() << "accepted";
    } catch (const ModelError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("SplitToSequence 's'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace cbt
