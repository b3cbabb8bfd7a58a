// untie_layer_parameters (via load_model): layers that an exporter made share equal
// initializers get their own copies, train apart, and are written back apart.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "common/onnx_model.h"
#include "common/op_harness.h"
#include "common/paths.h"
#include "onnx_import/model_io.h"
#include "runtime/trainer.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

void add_tensor(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<float>& vals) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(vals.data(), vals.size() * sizeof(float));
}

void add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in, const std::string& out,
              const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  if (op == "Conv") {
    auto* a = n->add_attribute();
    a->set_name("pads");
    a->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) a->add_ints(1);
  }
}

void add_value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// x (N, 3, 4, 4) -> Conv(w) -> BN(s, b, m, v) -> Relu -> Conv(w) -> BN(s, b, m, v) ->
// GlobalAveragePool -> Flatten -> Gemm(fc, fcb) -> y (N, 3), as an exporter writes a freshly
// initialised network: both BatchNorms share one scale (ones), bias, mean (zeros) and
// variance (ones); both convolutions share the weight `w` on purpose (tied layers).
onnx::ModelProto shared_bn_model() {
  onnx::ModelProto m = test::empty_model();
  auto* g = m.mutable_graph();
  add_value(g->add_input(), "x", {3, 4, 4});
  add_value(g->add_output(), "y", {3});
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 0.3f);
  std::vector<float> w(81), fc(9), fcb(3);
  for (auto* v : {&w, &fc, &fcb})
    for (float& f : *v) f = nd(rng);
  add_tensor(g, "w", {3, 3, 3, 3}, w);
  add_tensor(g, "s", {3}, {1, 1, 1});
  add_tensor(g, "b", {3}, {0, 0, 0});
  add_tensor(g, "m", {3}, {0, 0, 0});
  add_tensor(g, "v", {3}, {1, 1, 1});
  add_tensor(g, "fc", {3, 3}, fc);
  add_tensor(g, "fcb", {3}, fcb);
  add_node(g, "Conv", {"x", "w"}, "c1", "conv1");
  add_node(g, "BatchNormalization", {"c1", "s", "b", "m", "v"}, "n1", "bn1");
  add_node(g, "Relu", {"n1"}, "r1", "relu1");
  add_node(g, "Conv", {"r1", "w"}, "c2", "conv2");
  add_node(g, "BatchNormalization", {"c2", "s", "b", "m", "v"}, "n2", "bn2");
  add_node(g, "GlobalAveragePool", {"n2"}, "p", "pool");
  add_node(g, "Flatten", {"p"}, "f", "flatten");
  add_node(g, "Gemm", {"f", "fc", "fcb"}, "y", "fc");
  return m;
}

// The same network in the exporter's other form of sharing: the first BatchNorm reads the
// scale `s` and bias `b` directly, and every other per-layer input is an Identity of them
// (`m1` = Identity(b), `v1` = Identity(s): zeros and ones as well). With `identities` false,
// each of those is an initializer of its own with the same value instead: what the model
// means.
onnx::ModelProto identity_bn_model(bool identities) {
  onnx::ModelProto m = shared_bn_model();
  auto* g = m.mutable_graph();
  const std::vector<std::pair<std::string, std::string>> copies = {{"m1", "b"}, {"v1", "s"}, {"s2", "s"},
                                                                   {"b2", "b"}, {"m2", "b"}, {"v2", "s"}};
  for (auto& n : *g->mutable_node()) {
    if (n.name() == "bn1") n.set_input(3, "m1"), n.set_input(4, "v1");
    if (n.name() == "bn2")
      for (int k = 1; k < 5; ++k) n.set_input(k, std::vector<std::string>{"", "s2", "b2", "m2", "v2"}[k]);
  }
  for (int i = g->initializer_size() - 1; i >= 0; --i)
    if (g->initializer(i).name() == "m" || g->initializer(i).name() == "v")
      g->mutable_initializer()->DeleteSubrange(i, 1);
  for (const auto& [name, from] : copies) {
    if (!identities) {
      add_tensor(g, name, {3}, from == "s" ? std::vector<float>{1, 1, 1} : std::vector<float>{0, 0, 0});
      continue;
    }
    // The exporter puts its Identity nodes first.
    onnx::NodeProto id;
    id.set_op_type("Identity");
    id.set_name("Identity_" + name);
    id.add_input(from);
    id.add_output(name);
    g->mutable_node()->Add(std::move(id));
    g->mutable_node()->SwapElements(0, g->node_size() - 1);
  }
  return m;
}

class Untie : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("cbt_untie_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(dir_);
    path_ = (dir_ / "shared.onnx").string();
    std::ofstream f(path_, std::ios::binary);
    ASSERT_TRUE(shared_bn_model().SerializeToOstream(&f));
  }
  void TearDown() override { fs::remove_all(dir_); }
  const Node& node(const Graph& g, const std::string& name) {
    for (const Node& n : g.nodes)
      if (n.name == name) return n;
    throw std::runtime_error("no node " + name);
  }
  fs::path dir_;
  std::string path_;
};

bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.at_f64(i) != b.at_f64(i)) return false;
  return true;
}

TEST_F(Untie, SharedBatchNormTensorsGetACopyPerLayerAndTiedWeightsStayTied) {
  ImportedModel m = load_model(path_);
  ASSERT_EQ(m.untied.size(), 4u);  // s, b, m, v of bn2
  const Node& bn1 = node(m.graph, "bn1");
  const Node& bn2 = node(m.graph, "bn2");
  EXPECT_EQ(bn1.inputs, (std::vector<std::string>{"c1", "s", "b", "m", "v"}));
  for (size_t k = 1; k < 5; ++k) {
    const std::string& copy = bn2.inputs[k];
    EXPECT_EQ(copy, bn1.inputs[k] + ".untied1");
    EXPECT_TRUE(same_values(m.graph.initializers.at(copy), m.graph.initializers.at(bn1.inputs[k]))) << copy;
  }
  // A weight shared on purpose (and Gemm's weight) is not copied.
  EXPECT_EQ(node(m.graph, "conv1").inputs[1], "w");
  EXPECT_EQ(node(m.graph, "conv2").inputs[1], "w");
  EXPECT_EQ(m.graph.initializers.count("w.untied1"), 0u);
}

void write(const onnx::ModelProto& m, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&f));
}

std::map<std::string, Tensor> train_five_steps(const Graph& g) {
  TrainerOptions to;
  to.batch_size = 8;
  to.optimizer.lr = 0.1f;
  Trainer trainer(g, to);
  std::mt19937_64 rng(11);
  for (int r = 0; r < 5; ++r) {
    Tensor x = test::random_tensor(DType::Float32, {8, 3, 4, 4}, rng());
    Tensor y(DType::Int64, {8});
    for (int64_t i = 0; i < 8; ++i) y.ptr<int64_t>()[i] = static_cast<int64_t>(rng() % 3);
    trainer.step(x, y);
  }
  return trainer.trained_initializers();
}

TEST_F(Untie, TheLayersTrainApartAndTheTrainedModelKeepsThemApart) {
  ImportedModel m = load_model(path_);
  std::map<std::string, Tensor> trained = train_five_steps(m.graph);
  for (const char* name : {"s", "b", "m", "v"}) {
    const std::string copy = std::string(name) + ".untied1";
    ASSERT_TRUE(trained.count(name) && trained.count(copy)) << name;
    EXPECT_FALSE(same_values(trained.at(name), trained.at(copy)))
        << name << ": the two BatchNorm layers still move together";
  }
  const std::string out = (dir_ / "trained.onnx").string();
  save_model(m, trained, out);
  ImportedModel r = load_model(out);
  EXPECT_TRUE(r.untied.empty()) << "the written model shares " << r.untied.front();
  EXPECT_EQ(node(r.graph, "bn2").inputs, node(m.graph, "bn2").inputs);
  for (const auto& [name, t] : trained) EXPECT_TRUE(same_values(r.graph.initializers.at(name), t)) << name;
}

TEST_F(Untie, IdentityCopiesOfAnInitializerBecomeEachLayersOwnInitializer) {
  const std::string path = (dir_ / "identities.onnx").string();
  write(identity_bn_model(true), path);
  ImportedModel m = load_model(path);
  EXPECT_EQ(m.untied.size(), 6u);
  for (const Node& n : m.graph.nodes) EXPECT_NE(n.op_type, "Identity") << n.name;
  EXPECT_EQ(node(m.graph, "bn1").inputs, (std::vector<std::string>{"c1", "s", "b", "m1", "v1"}));
  EXPECT_EQ(node(m.graph, "bn2").inputs, (std::vector<std::string>{"c2", "s2", "b2", "m2", "v2"}));
  for (const char* name : {"m1", "v1", "s2", "b2", "m2", "v2"}) {
    ASSERT_TRUE(m.graph.initializers.count(name)) << name;
    const std::string from = (name[0] == 'v' || name[0] == 's') ? "s" : "b";
    EXPECT_TRUE(same_values(m.graph.initializers.at(name), m.graph.initializers.at(from))) << name;
  }
}

// Before Identity copies were resolved, a layer's running statistics were Identity outputs:
// training never updated them, and evaluation used the scale and bias in their place.
TEST_F(Untie, AModelWithIdentityCopiesTrainsAsTheModelWithSeparateInitializers) {
  const std::string a = (dir_ / "identities.onnx").string(), b = (dir_ / "separate.onnx").string();
  write(identity_bn_model(true), a);
  write(identity_bn_model(false), b);
  std::map<std::string, Tensor> got = train_five_steps(load_model(a).graph);
  std::map<std::string, Tensor> want = train_five_steps(load_model(b).graph);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, t] : want) {
    ASSERT_TRUE(got.count(name)) << name;
    EXPECT_TRUE(same_values(got.at(name), t)) << name;
  }
  // The statistics moved, each layer's its own way.
  EXPECT_FALSE(same_values(got.at("m1"), got.at("b")));
  EXPECT_FALSE(same_values(got.at("v1"), got.at("s")));
  EXPECT_FALSE(same_values(got.at("v1"), got.at("v2")));
  // And the written model has the per-layer initializers, no Identity left.
  const std::string out = (dir_ / "trained.onnx").string();
  ImportedModel m = load_model(a);
  save_model(m, got, out);
  ImportedModel r = load_model(out);
  EXPECT_TRUE(r.untied.empty());
  for (const char* name : {"m1", "v1", "s2", "b2", "m2", "v2"})
    EXPECT_TRUE(same_values(r.graph.initializers.at(name), got.at(name))) << name;
}

// A real export in the Identity form: `python3 bench/models.py --out DIR --models resnet20`
// (seed 1234, PyTorch 2.11's TorchScript exporter, on the GPU machine, 2026-11-25): 21
// BatchNorms whose scale, bias and running statistics are Identity nodes of six shared
// tensors. The exporter does not write this form every time (see tests/onnx_import/data/).
TEST(UntieExport, TheExportersIdentityFormGetsPerLayerStatisticsThatTrainingMoves) {
  ImportedModel m = load_model(test::source_path("tests/onnx_import/data/resnet20_identity_form.onnx"));
  EXPECT_EQ(m.untied.size(), 78u);
  size_t bns = 0;
  std::set<std::string> stats;
  for (const Node& n : m.graph.nodes) {
    EXPECT_NE(n.op_type, "Identity") << n.name;
    if (n.op_type != "BatchNormalization") continue;
    ++bns;
    for (size_t k = 1; k < 5; ++k) {
      EXPECT_TRUE(m.graph.initializers.count(n.inputs[k])) << n.name << " input " << k << ": " << n.inputs[k];
      EXPECT_TRUE(stats.insert(n.inputs[k]).second) << n.inputs[k] << " is shared";
    }
  }
  EXPECT_EQ(bns, 21u);
  // One training step at batch 4 moves every layer's running mean away from its start.
  TrainerOptions to;
  to.batch_size = 4;
  Trainer trainer(m.graph, to);
  trainer.step(test::random_tensor(DType::Float32, {4, 1, 28, 28}, 3), [] {
    Tensor y(DType::Int64, {4});
    for (int64_t i = 0; i < 4; ++i) y.ptr<int64_t>()[i] = i % 10;
    return y;
  }());
  std::map<std::string, Tensor> trained = trainer.trained_initializers();
  for (const Node& n : m.graph.nodes)
    if (n.op_type == "BatchNormalization")
      EXPECT_FALSE(same_values(trained.at(n.inputs[3]), m.graph.initializers.at(n.inputs[3])))
          << n.name << ": its running mean did not move";
}

// Models of IR < 4 list their initializers among the graph inputs: the copies are listed
// too, and the written model still has one input per initializer plus its data input.
TEST_F(Untie, InitializersListedAsInputsGetTheirCopiesListed) {
  onnx::ModelProto legacy = shared_bn_model();
  legacy.set_ir_version(3);
  auto* g = legacy.mutable_graph();
  for (const auto& t : std::vector<onnx::TensorProto>(g->initializer().begin(), g->initializer().end())) {
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    auto* v = g->add_input();
    v->set_name(t.name());
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  const std::string in = (dir_ / "legacy.onnx").string(), out = (dir_ / "legacy_trained.onnx").string();
  {
    std::ofstream f(in, std::ios::binary);
    ASSERT_TRUE(legacy.SerializeToOstream(&f));
  }
  ImportedModel m = load_model(in);
  ASSERT_EQ(m.untied.size(), 4u);
  ASSERT_EQ(m.graph.inputs.size(), 1u);  // x only: the listed initializers are not inputs
  save_model(m, {}, out);
  onnx::ModelProto saved;
  std::ifstream f(out, std::ios::binary);
  ASSERT_TRUE(saved.ParseFromIstream(&f));
  std::set<std::string> listed;
  for (const auto& v : saved.graph().input()) listed.insert(v.name());
  for (const char* name : {"s", "b", "m", "v"}) {
    EXPECT_TRUE(listed.count(name)) << name;
    EXPECT_TRUE(listed.count(std::string(name) + ".untied1")) << name;
  }
  EXPECT_EQ(saved.graph().input_size(), 1 + saved.graph().initializer_size());
}

// What PyTorch 2.11's exporters write for one nn.Parameter used by two Linear layers (a tie)
// beside two Linear layers of equal but separate parameters (tests/onnx_import/export_tied.py):
// the TorchScript exporter reads the tie twice and copies the equal ones by Identity nodes, the
// dynamo exporter's optimiser merges the equal ones too (the nodes' metadata names each one's
// own). Each export loads to PyTorch's parameters: 7 tensors, 224 values, the tie one tensor.
TEST(UntieExport, ATiedParameterStaysOneAndEqualOnesTrainApart) {
  for (const char* f : {"tied.ts.onnx", "tied.dynamo.onnx", "tied.dynamo_noopt.onnx"}) {
    SCOPED_TRACE(f);
    const ImportedModel m = load_model(test::source_path(std::string("tests/onnx_import/data/") + f));
    int64_t tensors = 0, values = 0;
    for (const auto& [name, t] : m.graph.initializers)
      if (is_floating(t.dtype()) && !m.graph.constant_initializers.count(name)) ++tensors, values += t.numel();
    EXPECT_EQ(tensors, 7);
    EXPECT_EQ(values, 224);
    std::vector<std::string> weights;  // of the four Gemms, in order
    for (const Node& n : m.graph.nodes)
      if (n.op_type == "Gemm") weights.push_back(n.inputs[1]);
    ASSERT_EQ(weights.size(), 4u);
    EXPECT_EQ(weights[0], weights[1]) << "the tie";
    EXPECT_NE(weights[2], weights[3]) << "equal values, two parameters";
  }
}

}  // namespace
}  // namespace cbt
