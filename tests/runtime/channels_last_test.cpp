// --precision bf16's region of the training step (graph/channels_last.h): which nodes run in
// bfloat16 channels-last, the conversions at its edges, and the CPU kernels of the conversions.
// The region's arithmetic runs on GPUs only (tests/cuda).
#include "graph/channels_last.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "common/op_harness.h"
#include "common/paths.h"
#include "graph/autodiff.h"
#include "onnx_import/model_io.h"
#include "ops/bfloat16.h"
#include "ops/kernel.h"
#include "runtime/inferencer.h"
#include "runtime/trainer.h"

namespace cbt {
namespace {

TrainingGraph step_of(const std::string& path, bool bf16) {
  ImportedModel m = load_model(test::source_path(path));
  BindOptions bo;
  bo.batch = 8;
  BoundGraph bound = bind_graph(m.graph, bo, cpu_evaluator(m.graph.opset));
  TrainingGraphOptions o;
  o.gpu_fusions = true;
  o.bf16_channels_last = bf16;
  return build_training_graph(bound, o);
}

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op;
  return n;
}

// The tensors the nodes of `op` take.
int count_inputs(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes)
    if (node.op_type == op) n += static_cast<int>(node.inputs.size());
  return n;
}

DType type_of(const TrainingGraph& tg, const std::string& v) { return tg.types.at(v).dtype; }

// Every value a node reads is the model's input, an initializer or an earlier node's output,
// and has a type.
void expect_well_formed(const TrainingGraph& tg) {
  std::set<std::string> known{tg.data_input, tg.labels_input};
  for (const auto& [name, t] : tg.graph.initializers) known.insert(name);
  for (const Node& n : tg.graph.nodes) {
    for (const auto& v : n.inputs)
      if (!v.empty()) {
        EXPECT_TRUE(known.count(v)) << n.describe() << " reads " << v << " before it is written";
        EXPECT_TRUE(tg.types.count(v) && tg.types.at(v).defined()) << v << " has no type";
      }
    for (const auto& v : n.outputs)
      if (!v.empty()) known.insert(v);
  }
}

TEST(ChannelsLast, ResNet20sConvolutionsNormsAndResidualsRunInBfloat16WithConversionsAtTheEdges) {
  const TrainingGraph plain = step_of("models/resnet20/resnet20.ts17.onnx", false);
  const TrainingGraph tg = step_of("models/resnet20/resnet20.ts17.onnx", true);
  expect_well_formed(tg);
  const Graph& g = tg.graph;
  // The plain step's nodes are all there, plus the conversions.
  EXPECT_EQ(g.nodes.size(), plain.graph.nodes.size() + count_op(g, "ToChannelsLast") + count_op(g, "FromChannelsLast"));
  std::map<std::string, int> marked;
  int elementwise = 0;
  for (const Node& n : g.nodes) {
    if (n.op_type == "Conv" || n.op_type == "ConvGrad") {
      // The stem, of one channel in, stays float32 (cuDNN's bfloat16 kernels take 8 at a time).
      const bool stem = tg.types.at(n.op_type == "Conv" ? n.inputs[1] : n.inputs[2]).shape.at(1) == 1;
      EXPECT_EQ(n.attrs.get_int(kChannelsLastAttr, 0), stem ? 0 : 1) << n.describe();
      if (stem) {
        EXPECT_EQ(type_of(tg, n.inputs[0]), DType::Float32) << n.describe();
        continue;
      }
    }
    if (n.op_type == "Conv" || n.op_type == "ConvGrad" || n.op_type == "BatchNormTraining" ||
        n.op_type == "BatchNormGrad") {
      EXPECT_EQ(n.attrs.get_int(kChannelsLastAttr, 0), 1) << n.describe();
      ++marked[n.op_type];
      EXPECT_EQ(type_of(tg, n.inputs[0]), DType::BFloat16) << n.describe();
      EXPECT_EQ(type_of(tg, n.outputs[0]), DType::BFloat16) << n.describe();
    }
    if (n.op_type == "Conv") EXPECT_EQ(type_of(tg, n.inputs[1]), DType::BFloat16) << n.describe();
    if (n.op_type == "ConvGrad") {
      EXPECT_EQ(type_of(tg, n.inputs[2]), DType::BFloat16) << n.describe();
      EXPECT_EQ(type_of(tg, n.outputs[1]), DType::BFloat16) << n.describe();
    }
    if (n.op_type == "BatchNormTraining" || n.op_type == "BatchNormGrad") {  // the scale and statistics stay float32
      EXPECT_EQ(type_of(tg, n.inputs[n.op_type == "BatchNormGrad" ? 2 : 1]), DType::Float32) << n.describe();
      EXPECT_EQ(type_of(tg, n.outputs[1]), DType::Float32) << n.describe();
    }
    if (n.op_type == "Add" || n.op_type == "ReluGrad") {
      if (tg.types.at(n.outputs[0]).shape.size() != 4) continue;
      ++elementwise;
      for (const auto& v : n.inputs) EXPECT_EQ(type_of(tg, v), DType::BFloat16) << n.describe() << " reads " << v;
    }
  }
  EXPECT_EQ(marked, (std::map<std::string, int>{
                        {"Conv", 20}, {"ConvGrad", 20}, {"BatchNormTraining", 21}, {"BatchNormGrad", 21}}));
  EXPECT_EQ(elementwise, count_op(plain.graph, "Add") + count_op(plain.graph, "ReluGrad"));
  // In: the stem's output, the 20 other filters (one node) and the pooling's gradient. Out: the
  // 20 filters' gradients (one node, the step's last), the pooling's input and the stem's output
  // gradient.
  EXPECT_EQ(count_inputs(g, "ToChannelsLast"), 1 + 20 + 1);
  EXPECT_EQ(count_inputs(g, "FromChannelsLast"), 20 + 1 + 1);
  EXPECT_EQ(count_op(g, "ToChannelsLast"), 3);
  EXPECT_EQ(count_op(g, "FromChannelsLast"), 3);
  EXPECT_EQ(g.nodes.back().op_type, "FromChannelsLast");
  EXPECT_EQ(g.nodes.back().inputs.size(), 20u);
  for (const Node& n : g.nodes)
    if (n.op_type == "ToChannelsLast" && n.inputs.size() > 1)
      for (const auto& v : n.inputs) EXPECT_TRUE(g.initializers.count(v)) << v << " converted with the filters";
  // The parameters' gradients keep their names and are float32, each written back by a
  // FromChannelsLast (the filters') or by its own node as before.
  ASSERT_EQ(tg.grads, plain.grads);
  for (const auto& [param, grad] : tg.grads) EXPECT_EQ(type_of(tg, grad), DType::Float32) << grad;
  for (const Node& n : g.nodes)
    if (n.op_type == "FromChannelsLast") {
      EXPECT_EQ(type_of(tg, n.inputs[0]), DType::BFloat16);
      EXPECT_EQ(type_of(tg, n.outputs[0]), DType::Float32);
    }
}

TEST(ChannelsLast, ConvolutionsWithABiasOrAFusedReluStayFloat32) {
  // LeNet-5's convolutions have biases and fused Relus, and no BatchNorm: nothing changes.
  const TrainingGraph plain = step_of("models/lenet5/lenet5.ts17.onnx", false);
  const TrainingGraph tg = step_of("models/lenet5/lenet5.ts17.onnx", true);
  ASSERT_EQ(tg.graph.nodes.size(), plain.graph.nodes.size());
  for (size_t i = 0; i < tg.graph.nodes.size(); ++i) {
    EXPECT_EQ(tg.graph.nodes[i].op_type, plain.graph.nodes[i].op_type);
    EXPECT_EQ(tg.graph.nodes[i].inputs, plain.graph.nodes[i].inputs);
    EXPECT_FALSE(tg.graph.nodes[i].attrs.has(kChannelsLastAttr));
  }
  for (const auto& [name, t] : tg.types) EXPECT_NE(t.dtype, DType::BFloat16) << name;
}

// Convolutions cuDNN's bfloat16 NHWC path does not take as they are stay float32 and read the
// bfloat16 region's output written back: padded unevenly (pads or SAME_UPPER), 12 filters (not a
// multiple of 8), a bias. The one even 8-to-8 convolution and its BatchNorm run in bfloat16.
TEST(ChannelsLast, OnlyConvolutionsCudnnTakesInBfloat16AsTheyAreAreMarked) {
  Graph g;
  std::map<std::string, ValueType> types;
  auto value = [&](const std::string& name, Shape shape) { types[name] = ValueType{DType::Float32, std::move(shape)}; };
  auto param = [&](const std::string& name, Shape shape) {
    g.initializers[name] = test::random_tensor(DType::Float32, shape, g.initializers.size() + 1);
    value(name, std::move(shape));
  };
  auto conv = [&](const std::string& out, std::vector<std::string> in, Shape shape, std::vector<int64_t> pads,
                  const std::string& auto_pad = "NOTSET") {
    Node n;
    n.op_type = "Conv";
    n.name = out;
    n.inputs = std::move(in);
    n.outputs = {out};
    n.attrs.set("pads", std::move(pads));
    n.attrs.set("auto_pad", auto_pad);
    g.nodes.push_back(n);
    value(out, std::move(shape));
  };
  value("x", {2, 8, 6, 6});
  for (const char* w : {"w_even", "w_uneven", "w_same", "w_bias"}) param(w, {8, 8, 3, 3});
  param("w_twelve", {12, 8, 3, 3});
  for (const char* p : {"bias", "scale", "shift", "mean", "var"}) param(p, {8});
  conv("c", {"x", "w_even"}, {2, 8, 6, 6}, {1, 1, 1, 1});
  Node bn;
  bn.op_type = "BatchNormTraining";
  bn.domain = kCbtDomain;
  bn.inputs = {"c", "scale", "shift", "mean", "var"};
  bn.outputs = {"y", "saved_mean", "saved_invstd"};
  g.nodes.push_back(bn);
  value("y", {2, 8, 6, 6});
  value("saved_mean", {8});
  value("saved_invstd", {8});
  conv("uneven", {"y", "w_uneven"}, {2, 8, 5, 5}, {1, 1, 0, 0});
  conv("same", {"y", "w_same"}, {2, 8, 6, 6}, {0, 0, 0, 0}, "SAME_UPPER");
  conv("twelve", {"y", "w_twelve"}, {2, 12, 6, 6}, {1, 1, 1, 1});
  conv("biased", {"y", "w_bias", "bias"}, {2, 8, 6, 6}, {1, 1, 1, 1});
  const std::set<std::string> exposed{"uneven", "same", "twelve", "biased"};
  const ChannelsLastCounts counts = to_channels_last_bf16(g, types, exposed);
  EXPECT_EQ(counts.nodes, 2);
  std::set<std::string> marked;
  for (const Node& n : g.nodes) {
    if (n.attrs.get_int(kChannelsLastAttr, 0)) marked.insert(n.name.empty() ? n.op_type : n.name);
    if (n.op_type == "Conv" && n.name != "c") {
      EXPECT_EQ(n.inputs[0], "y") << n.name << " reads the float32 output";
      EXPECT_EQ(types.at(n.outputs[0]).dtype, DType::Float32) << n.name;
    }
  }
  EXPECT_EQ(marked, (std::set<std::string>{"c", "BatchNormTraining"}));
  EXPECT_EQ(types.at("y").dtype, DType::Float32);  // written back for the four float32 readers
  EXPECT_EQ(count_op(g, "FromChannelsLast"), 1);
  EXPECT_EQ(count_inputs(g, "ToChannelsLast"), 2);  // the input and the one bfloat16 filter
}

TEST(ChannelsLast, TheTrainerRefusesBfloat16OnTheCpu) {
  ImportedModel m = load_model(test::source_path("models/resnet20/resnet20.ts17.onnx"));
  TrainerOptions to;
  to.graph.bf16_channels_last = true;
  try {
    Trainer t(m.graph, to);
    FAIL() << "a CPU trainer took --precision bf16";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--precision bf16 needs CUDA"), std::string::npos) << e.what();
  }
}

// The CPU conversion kernels: element (n, c, h, w) lands at ((n H + h) W + w) C + c rounded to
// nearest even, and comes back as that rounded value.
TEST(ChannelsLast, TheConversionsMoveChannelsLastAndRoundToNearestEven) {
  const Shape shape{3, 5, 4, 7};
  const Tensor x = test::random_tensor(DType::Float32, shape, 11, 3.0);
  Tensor y(DType::BFloat16, shape), back(DType::Float32, shape);
  // A second tensor in the same nodes (one node converts a network's filters): its own layout.
  const Tensor x2 = test::random_tensor(DType::Float32, {2, 3, 1, 5}, 12);
  Tensor y2(DType::BFloat16, x2.shape()), back2(DType::Float32, x2.shape());
  Node to, from;
  to.op_type = "ToChannelsLast";
  from.op_type = "FromChannelsLast";
  to.domain = from.domain = kCbtDomain;
  std::vector<Tensor> to_in{x, x2}, to_out{y, y2}, from_in{y, y2}, from_out{back, back2};
  KernelContext c1{to, to_in, to_out}, c2{from, from_in, from_out};
  find_kernel(kCbtDomain, "ToChannelsLast", DeviceKind::CPU)(c1);
  find_kernel(kCbtDomain, "FromChannelsLast", DeviceKind::CPU)(c2);
  const auto* bits = static_cast<const uint16_t*>(y.data());
  const float* xs = x.ptr<float>();
  const float* bs = back.ptr<float>();
  int inexact = 0;
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t c = 0; c < 5; ++c)
      for (int64_t p = 0; p < 28; ++p) {
        const float v = xs[(n * 5 + c) * 28 + p];
        EXPECT_EQ(bits[(n * 28 + p) * 5 + c], bf16_from_float(v));
        EXPECT_EQ(bs[(n * 5 + c) * 28 + p], round_to_bf16(v));
        EXPECT_LE(std::abs(round_to_bf16(v) - v), std::abs(v) * (1.0f / 256));
        inexact += round_to_bf16(v) != v;
      }
  EXPECT_GT(inexact, 400);  // random floats rarely fit in 8 bits of mantissa
  const auto* bits2 = static_cast<const uint16_t*>(y2.data());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t p = 0; p < 5; ++p) {
        const float v = x2.ptr<float>()[(n * 3 + c) * 5 + p];
        EXPECT_EQ(bits2[(n * 5 + p) * 3 + c], bf16_from_float(v));
        EXPECT_EQ(back2.ptr<float>()[(n * 3 + c) * 5 + p], round_to_bf16(v));
      }
}

}  // namespace
}  // namespace cbt
