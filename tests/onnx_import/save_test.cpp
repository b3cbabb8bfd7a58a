// save_model: trained initializers written back, everything else kept, atomic writes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "onnx_import/model_io.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(CBT_SOURCE_DIR) + "/tests/onnx_import/data/" + name; }

onnx::ModelProto read_proto(const fs::path& p) {
  onnx::ModelProto m;
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&f)) << p;
  return m;
}

class OnnxSave : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("cbt_onnx_save_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  size_t files_in_dir() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  fs::path dir_;
};

void expect_same(const Tensor& a, const Tensor& b, const std::string& name) {
  ASSERT_EQ(a.dtype(), b.dtype()) << name;
  ASSERT_EQ(a.shape(), b.shape()) << name;
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.at_f64(i), b.at_f64(i)) << name << "[" << i << "]";
}

TEST_F(OnnxSave, RoundTripReplacesOnlyTrainedInitializers) {
  ImportedModel m = load_model(fixture("legacy_mlp.onnx"));
  Tensor w = m.graph.initializers.at("w").clone();
  for (int64_t i = 0; i < w.numel(); ++i) w.ptr<float>()[i] = 0.1f * static_cast<float>(i) - 0.3f;
  Tensor b = Tensor(DType::Float64, {2});
  b.ptr<double>()[0] = 9.5;
  b.ptr<double>()[1] = -9.5;
  const std::string out = (dir_ / "trained.onnx").string();
  save_model(m, {{"w", w}, {"b", b}}, out);
  EXPECT_EQ(files_in_dir(), 1u);  // no temporary left over

  ImportedModel r = load_model(out);
  expect_same(r.graph.initializers.at("w"), w, "w");
  expect_same(r.graph.initializers.at("b"), b, "b");
  for (const auto& [name, t] : m.graph.initializers)
    if (name != "w" && name != "b") expect_same(r.graph.initializers.at(name), t, name);
  EXPECT_EQ(r.graph.nodes.size(), m.graph.nodes.size());
  EXPECT_EQ(r.opsets, m.opsets);
  EXPECT_EQ(r.ir_version, m.ir_version);
  EXPECT_EQ(r.producer_name, m.producer_name);

  // Graph and inputs are as in the original file (initializers still listed as inputs).
  onnx::ModelProto orig = read_proto(fixture("legacy_mlp.onnx"));
  onnx::ModelProto saved = read_proto(out);
  EXPECT_EQ(saved.graph().input_size(), orig.graph().input_size());
  EXPECT_EQ(saved.graph().node(0).SerializeAsString(), orig.graph().node(0).SerializeAsString());
  EXPECT_EQ(saved.graph().initializer_size(), orig.graph().initializer_size());

  // Saving over an existing file replaces it.
  w.ptr<float>()[0] = 42.0f;
  save_model(m, {{"w", w}}, out);
  EXPECT_FLOAT_EQ(load_model(out).graph.initializers.at("w").ptr<float>()[0], 42.0f);
  EXPECT_EQ(files_in_dir(), 1u);
}

TEST_F(OnnxSave, ConstantsAreSkippedAndMismatchesRejected) {
  ImportedModel m = load_model(fixture("constants.onnx"));
  const std::string out = (dir_ / "c.onnx").string();
  // Values from Constant nodes are not initializers of the file: skipped, file unchanged.
  save_model(m, {{"c_float", Tensor::scalar_f32(100.0f)}}, out);
  EXPECT_FLOAT_EQ(load_model(out).graph.initializers.at("c_float").ptr<float>()[0], 3.0f);

  ImportedModel l = load_model(fixture("legacy_mlp.onnx"));
  const std::string out2 = (dir_ / "l.onnx").string();
  EXPECT_THROW(save_model(l, {{"w", Tensor(DType::Float32, {2, 3})}}, out2), UserError);
  EXPECT_THROW(save_model(l, {{"w", Tensor(DType::Float64, {3, 2})}}, out2), UserError);
  try {
    save_model(l, {{"nope", Tensor(DType::Float32, {1})}}, out2);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no initializer 'nope'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out2));
}

TEST_F(OnnxSave, UnwritableDestinationsLeaveNoFile) {
  ImportedModel m = load_model(fixture("legacy_mlp.onnx"));
  for (const std::string& bad : {std::string("/proc/cbt_trained.onnx"), (dir_ / "no_such_dir" / "t.onnx").string()}) {
    try {
      save_model(m, {}, bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(bad));
  }
  EXPECT_EQ(files_in_dir(), 0u);

  // A read-only folder (root ignores permissions, so only checked as another user).
  if (::geteuid() != 0) {
    fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
    const std::string p = (dir_ / "t.onnx").string();
    EXPECT_THROW(save_model(m, {}, p), UserError);
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    EXPECT_EQ(files_in_dir(), 0u);
  }
}

TEST_F(OnnxSave, ExternalDataIsInlinedOrWrittenNextToTheModel) {
  // A source model in its own folder whose "w" lives in an external file.
  fs::create_directories(dir_ / "src");
  onnx::ModelProto p = read_proto(fixture("legacy_mlp.onnx"));
  for (auto& t : *p.mutable_graph()->mutable_initializer()) {
    if (t.name() != "w") continue;
    std::string data(t.float_data_size() * 4, '\0');
    for (int i = 0; i < t.float_data_size(); ++i) {
      float v = t.float_data(i);
      std::memcpy(data.data() + 4 * i, &v, 4);
    }
    std::ofstream(dir_ / "src" / "w.bin", std::ios::binary) << data;
    t.clear_float_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t.add_external_data();
    e->set_key("location");
    e->set_value("w.bin");
  }
  // Large enough (over 1 KiB) to be written externally below.
  auto* big = p.mutable_graph()->add_initializer();
  big->set_name("big");
  big->set_data_type(onnx::TensorProto::FLOAT);
  big->add_dims(300);
  for (int i = 0; i < 300; ++i) big->add_float_data(0.25f * static_cast<float>(i));
  {
    std::ofstream f(dir_ / "src" / "m.onnx", std::ios::binary);
    ASSERT_TRUE(p.SerializeToOstream(&f));
  }
  ImportedModel m = load_model((dir_ / "src" / "m.onnx").string());
  const Tensor w = m.graph.initializers.at("w");

  // Saved elsewhere, the untouched external tensor is inlined so the file stands alone.
  const fs::path inl = dir_ / "inline.onnx";
  save_model(m, {}, inl.string());
  onnx::ModelProto saved = read_proto(inl);
  for (const auto& t : saved.graph().initializer()) EXPECT_FALSE(t.has_data_location()) << t.name();
  expect_same(load_model(inl.string()).graph.initializers.at("w"), w, "w");

  // Over the inline limit, weights go to "<path>.data" next to the model.
  SaveOptions opts;
  opts.inline_limit_bytes = 16;
  const fs::path ext = dir_ / "ext.onnx";
  Tensor b = m.graph.initializers.at("b").clone();
  b.ptr<double>()[0] = 3.25;
  save_model(m, {{"b", b}}, ext.string(), opts);
  EXPECT_EQ(fs::file_size(dir_ / "ext.onnx.data"), 300u * 4);
  onnx::ModelProto saved_ext = read_proto(ext);
  for (const auto& t : saved_ext.graph().initializer())
    EXPECT_EQ(t.data_location() == onnx::TensorProto::EXTERNAL, t.name() == "big") << t.name();
  ImportedModel r = load_model(ext.string());
  expect_same(r.graph.initializers.at("w"), w, "w");
  expect_same(r.graph.initializers.at("b"), b, "b");
  for (const auto& [name, t] : m.graph.initializers)
    if (name != "b") expect_same(r.graph.initializers.at(name), t, name);
}

}  // namespace
}  // namespace cbt
