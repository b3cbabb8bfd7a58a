// load_model on the committed fixtures and on the example models: conversion to the IR.
#include <gtest/gtest.h>

#include <filesystem>

#include "onnx_import/model_io.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(CBT_SOURCE_DIR) + "/tests/onnx_import/data/" + name; }

const Node* find_node(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

TEST(OnnxLoad, EveryAttributeType) {
  ImportedModel m = load_model(fixture("attrs.onnx"));
  ASSERT_EQ(m.graph.nodes.size(), 1u);
  const Node& n = m.graph.nodes[0];
  EXPECT_EQ(n.name, "carrier");
  EXPECT_EQ(n.op_type, "Identity");
  EXPECT_EQ(n.domain, "");
  EXPECT_EQ(n.attrs.get_int("i", 0), 7);
  EXPECT_FLOAT_EQ(n.attrs.get_float("f", 0), 2.5f);
  EXPECT_EQ(n.attrs.get_string("s", ""), "hello");
  EXPECT_EQ(n.attrs.get_ints("ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(n.attrs.get_floats("floats"), (std::vector<float>{0.5f, -1.5f}));
  EXPECT_EQ(std::get<std::vector<std::string>>(n.attrs.all().at("strings")), (std::vector<std::string>{"a", "bc"}));
  const Tensor* t = n.attrs.get_tensor("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype(), DType::Int32);
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->ptr<int32_t>()[i], i + 1);

  EXPECT_EQ(m.producer_name, "make_fixtures");
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(m.graph.opset, 17);
  ASSERT_EQ(m.graph.inputs.size(), 1u);
  const ValueInfo& x = m.graph.inputs[0];
  EXPECT_EQ(x.name, "x");
  ASSERT_EQ(x.dims.size(), 2u);
  EXPECT_FALSE(x.dims[0].is_static());
  EXPECT_EQ(x.dims[0].symbol, "N");
  EXPECT_EQ(x.dims[1].value, 3);
}

TEST(OnnxLoad, ConstantNodesBecomeConstantInitializers) {
  ImportedModel m = load_model(fixture("constants.onnx"));
  const Graph& g = m.graph;
  EXPECT_EQ(g.opset, 13);  // imported as domain "ai.onnx"
  EXPECT_EQ(m.opsets.count("ai.onnx"), 0u);
  for (const auto& n : g.nodes) EXPECT_NE(n.op_type, "Constant");
  for (const char* c : {"c_tensor", "c_float", "c_floats", "c_int", "c_ints"}) {
    EXPECT_TRUE(g.is_initializer(c)) << c;
    EXPECT_TRUE(g.constant_initializers.count(c)) << c;
  }
  EXPECT_EQ(g.initializers.at("c_tensor").shape(), (Shape{2}));
  EXPECT_FLOAT_EQ(g.initializers.at("c_tensor").ptr<float>()[1], 2.0f);
  EXPECT_EQ(g.initializers.at("c_float").shape(), Shape{});
  EXPECT_FLOAT_EQ(g.initializers.at("c_float").ptr<float>()[0], 3.0f);
  EXPECT_FLOAT_EQ(g.initializers.at("c_floats").ptr<float>()[1], 5.0f);
  EXPECT_EQ(g.initializers.at("c_int").dtype(), DType::Int64);
  EXPECT_EQ(g.initializers.at("c_int").shape(), Shape{});
  EXPECT_EQ(g.initializers.at("c_int").at_i64(0), 6);
  EXPECT_EQ(g.initializers.at("c_ints").to_i64_vector(), (std::vector<int64_t>{7, 8}));

  // The file lists Reshape before the Sum it consumes; import sorts topologically.
  ASSERT_EQ(g.nodes.size(), 3u);
  auto pos = [&](const std::string& name) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].name == name) return i;
    return g.nodes.size();
  };
  EXPECT_LT(pos("sum"), pos("reshape"));

  // Unknown output dims are symbolic and distinct.
  ASSERT_EQ(g.outputs.size(), 2u);
  ASSERT_EQ(g.outputs[0].dims.size(), 2u);
  EXPECT_FALSE(g.outputs[0].dims[0].is_static());
  EXPECT_NE(g.outputs[0].dims[0].symbol, g.outputs[0].dims[1].symbol);
  EXPECT_TRUE(g.outputs[1].dims.empty());
}

TEST(OnnxLoad, LegacyInitializersListedAsInputs) {
  ImportedModel m = load_model(fixture("legacy_mlp.onnx"));
  const Graph& g = m.graph;
  EXPECT_EQ(m.ir_version, 3);
  EXPECT_EQ(g.opset, 9);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].name, "x");
  EXPECT_EQ(g.inputs[0].dims[0].symbol, "batch");

  const Tensor& w = g.initializers.at("w");
  EXPECT_EQ(w.dtype(), DType::Float32);
  EXPECT_EQ(w.shape(), (Shape{3, 2}));
  EXPECT_FLOAT_EQ(w.ptr<float>()[5], 1.5f);
  EXPECT_EQ(g.initializers.at("b").dtype(), DType::Float64);
  EXPECT_DOUBLE_EQ(g.initializers.at("b").ptr<double>()[1], -0.5);
  EXPECT_EQ(g.initializers.at("idx").to_i64_vector(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(g.initializers.at("i32").ptr<int32_t>()[0], -3);
  EXPECT_EQ(g.initializers.at("i8").ptr<int8_t>()[0], -128);
  EXPECT_EQ(g.initializers.at("i8").ptr<int8_t>()[1], 127);
  EXPECT_EQ(g.initializers.at("u8").ptr<uint8_t>()[1], 255);
  EXPECT_TRUE(g.initializers.at("flag").ptr<bool>()[0]);
  EXPECT_FALSE(g.initializers.at("flag").ptr<bool>()[1]);
  EXPECT_DOUBLE_EQ(g.initializers.at("f64raw").ptr<double>()[1], -2.5);

  // A rank-0 float is an expression constant; weights are not.
  EXPECT_TRUE(g.constant_initializers.count("eps"));
  EXPECT_FALSE(g.constant_initializers.count("w"));
  ASSERT_NE(find_node(g, "gemm"), nullptr);
  EXPECT_FLOAT_EQ(find_node(g, "gemm")->attrs.get_float("alpha", 0), 1.0f);
}

TEST(OnnxLoad, ExampleModelsLoad) {
  // models/ is filled by the export scripts; every model present must import.
  const fs::path root = fs::path(CBT_SOURCE_DIR) / "models";
  if (!fs::exists(root)) GTEST_SKIP() << "no models/ folder yet";
  int count = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().extension() != ".onnx") continue;
    ++count;
    SCOPED_TRACE(e.path().string());
    ImportedModel m;
    ASSERT_NO_THROW(m = load_model(e.path().string()));
    EXPECT_FALSE(m.graph.nodes.empty());
    EXPECT_FALSE(m.graph.inputs.empty());
    EXPECT_FALSE(m.graph.outputs.empty());
    EXPECT_GE(m.graph.opset, kMinOpset);
  }
  if (count == 0) GTEST_SKIP() << "no models/**/*.onnx yet";
}

}  // namespace
}  // namespace cbt
