// load_model on malformed and hostile models: every problem is a ModelError naming it.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "common/onnx_model.h"
#include "onnx_import/model_io.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

class OnnxValidate : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("cbt_onnx_validate_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(dir_ / "model");
    fs::create_directories(dir_ / "outside");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // x (N, 2) @ w (2, 2) -> y; w as raw_data.
  static onnx::ModelProto base_model() {
    onnx::ModelProto m = test::empty_model();
    auto* g = m.mutable_graph();
    auto add_value = [](onnx::ValueInfoProto* v, const std::string& name) {
      v->set_name(name);
      auto* tt = v->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(onnx::TensorProto::FLOAT);
      tt->mutable_shape()->add_dim()->set_dim_param("N");
      tt->mutable_shape()->add_dim()->set_dim_value(2);
    };
    add_value(g->add_input(), "x");
    add_value(g->add_output(), "y");
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(2);
    w->add_dims(2);
    const float vals[4] = {1, 2, 3, 4};
    w->set_raw_data(vals, sizeof(vals));
    auto* n = g->add_node();
    n->set_name("mm");
    n->set_op_type("MatMul");
    n->add_input("x");
    n->add_input("w");
    n->add_output("y");
    return m;
  }

  std::string write(const onnx::ModelProto& m, const std::string& name = "m.onnx") {
    fs::path p = dir_ / "model" / name;
    std::ofstream f(p, std::ios::binary);
    EXPECT_TRUE(m.SerializeToOstream(&f));
    return p.string();
  }

  std::string write_bytes(const std::string& bytes, const std::string& name = "m.onnx") {
    fs::path p = dir_ / "model" / name;
    std::ofstream f(p, std::ios::binary);
    f << bytes;
    return p.string();
  }

  // Loads and returns the ModelError's message (failing the test if none is thrown).
  static std::string load_error(const std::string& path, const ImportOptions& opts = {}) {
    try {
      load_model(path, opts);
    } catch (const ModelError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
      return msg;
    }
    ADD_FAILURE() << "no ModelError for " << path;
    return "";
  }

  std::string error_of(const onnx::ModelProto& m, const ImportOptions& opts = {}) { return load_error(write(m), opts); }

  // Makes initializer w external: location/offset/length as given.
  static void make_external(onnx::ModelProto& m, const std::string& location, int64_t offset = -1,
                            int64_t length = -1) {
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_raw_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    if (offset >= 0) add("offset", std::to_string(offset));
    if (length >= 0) add("length", std::to_string(length));
  }

  void write_weights(const fs::path& p, size_t pad_before = 0) {
    std::ofstream f(p, std::ios::binary);
    f << std::string(pad_before, 'x');
    const float vals[4] = {5, 6, 7, 8};
    f.write(reinterpret_cast<const char*>(vals), sizeof(vals));
  }

  fs::path dir_;
};

#define EXPECT_HAS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

TEST_F(OnnxValidate, BaseModelLoads) {
  ImportedModel m = load_model(write(base_model()));
  ASSERT_EQ(m.graph.nodes.size(), 1u);
  EXPECT_FLOAT_EQ(m.graph.initializers.at("w").ptr<float>()[3], 4.0f);
}

TEST_F(OnnxValidate, MissingFileIsUserError) {
  const std::string p = (dir_ / "nope.onnx").string();
  try {
    load_model(p);
    FAIL() << "no error";
  } catch (const ModelError&) {
    FAIL() << "a missing file is a UserError, not a ModelError";
  } catch (const UserError& e) {
    EXPECT_HAS(std::string(e.what()), p);
  }
}

TEST_F(OnnxValidate, TruncatedGarbageAndEmptyFiles) {
  onnx::ModelProto m = base_model();
  std::vector<float> big(1000, 1.5f);
  m.mutable_graph()->mutable_initializer(0)->set_raw_data(big.data(), big.size() * 4);
  std::string bytes = m.SerializeAsString();
  EXPECT_HAS(load_error(write_bytes(bytes.substr(0, bytes.size() / 2))), "protobuf parsing failed");
  EXPECT_HAS(load_error(write_bytes("this is not an ONNX model at all\n")), "not");
  EXPECT_HAS(load_error(write_bytes(std::string(64, '\xff'))), "protobuf parsing failed");
  EXPECT_HAS(load_error(write_bytes("")), "empty");
}

TEST_F(OnnxValidate, FileSizeLimit) {
  ImportOptions opts;
  opts.max_file_bytes = 16;
  EXPECT_HAS(error_of(base_model(), opts), "more than the limit of 16");
}

TEST_F(OnnxValidate, VersionsAndDomains) {
  onnx::ModelProto m = base_model();
  m.mutable_opset_import(0)->set_version(26);
  EXPECT_HAS(error_of(m), "opset 26");
  m.mutable_opset_import(0)->set_version(6);
  EXPECT_HAS(error_of(m), "opset 6");
  m = base_model();
  m.set_ir_version(99);
  EXPECT_HAS(error_of(m), "IR version 99");
  m = base_model();
  m.clear_ir_version();
  EXPECT_HAS(error_of(m), "ir_version");
  m = base_model();
  m.mutable_opset_import(0)->set_domain("com.example");
  EXPECT_HAS(error_of(m), "default ONNX domain");

  m = base_model();
  m.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  std::string msg = error_of(m);
  EXPECT_HAS(msg, "unknown operator domain 'com.microsoft'");
  EXPECT_HAS(msg, "MatMul 'mm'");
  m.mutable_graph()->mutable_node(0)->set_domain("ai.onnx.ml");
  EXPECT_HAS(error_of(m), "ONNX-ML operators");
  m.mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  EXPECT_EQ(load_model(write(m)).graph.nodes[0].domain, "");
}

TEST_F(OnnxValidate, TensorDataChecks) {
  onnx::ModelProto m = base_model();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->set_raw_data(std::string(12, '\0'));
  std::string msg = error_of(m);
  EXPECT_HAS(msg, "initializer 'w'");
  EXPECT_HAS(msg, "raw_data has 12 bytes, expected 16");

  w->clear_raw_data();
  w->add_float_data(1.0f);
  EXPECT_HAS(error_of(m), "float_data has 1 values, expected 4");

  w->clear_float_data();
  w->set_dims(0, -2);
  EXPECT_HAS(error_of(m), "negative dimension -2");

  w->set_dims(0, int64_t{1} << 40);
  w->set_dims(1, int64_t{1} << 40);
  EXPECT_HAS(error_of(m), "overflow");

  // 4 TiB of floats: refused by the budget before the missing data is even looked at.
  w->set_dims(0, int64_t{1} << 20);
  w->set_dims(1, int64_t{1} << 20);
  EXPECT_HAS(error_of(m), "over the import budget");
  ImportOptions small;
  small.max_tensor_bytes = 8;
  EXPECT_HAS(error_of(base_model(), small), "over the import budget");

  m = base_model();
  m.mutable_graph()->mutable_initializer(0)->set_data_type(onnx::TensorProto::STRING);
  EXPECT_HAS(error_of(m), "string tensors are not supported");
  m.mutable_graph()->mutable_initializer(0)->set_data_type(onnx::TensorProto::BFLOAT16);
  EXPECT_HAS(error_of(m), "BFLOAT16");

  m = base_model();
  auto* dim =
      m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1);
  dim->set_dim_value(-3);
  EXPECT_HAS(error_of(m), "graph value 'x': negative dimension -3");
}

TEST_F(OnnxValidate, GraphStructureChecks) {
  onnx::ModelProto m = base_model();
  *m.mutable_graph()->add_initializer() = m.graph().initializer(0);
  EXPECT_HAS(error_of(m), "duplicate initializer 'w'");

  m = base_model();
  *m.mutable_graph()->add_node() = m.graph().node(0);
  EXPECT_HAS(error_of(m), "value 'y' is produced twice");

  m = base_model();
  m.mutable_graph()->mutable_node(0)->set_input(1, "ghost");
  std::string msg = error_of(m);
  EXPECT_HAS(msg, "MatMul 'mm'");
  EXPECT_HAS(msg, "input 'ghost' is not produced");

  m = base_model();
  m.mutable_graph()->mutable_output(0)->set_name("z");
  EXPECT_HAS(error_of(m), "graph output 'z' is never produced");

  m = base_model();
  *m.mutable_graph()->add_input() = m.graph().input(0);
  EXPECT_HAS(error_of(m), "graph input 'x' is listed twice");

  // Relu 'a' and Relu 'b' feed each other; the MatMul downstream is not on the cycle.
  m = base_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_input(0, "a_out");
  auto* a = g->add_node();
  a->set_name("a");
  a->set_op_type("Add");
  a->add_input("x");
  a->add_input("b_out");
  a->add_output("a_out");
  auto* b = g->add_node();
  b->set_name("b");
  b->set_op_type("Relu");
  b->add_input("a_out");
  b->add_output("b_out");
  msg = error_of(m);
  EXPECT_HAS(msg, "cycle");
  EXPECT_TRUE(msg.find("'a'") != std::string::npos || msg.find("'b'") != std::string::npos) << msg;
}

TEST_F(OnnxValidate, UnsupportedAttributesAndConstants) {
  onnx::ModelProto m = base_model();
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("sub");
  EXPECT_HAS(error_of(m), "sub-graph attributes");

  m = base_model();
  auto* c = m.mutable_graph()->add_node();
  c->set_op_type("Constant");
  c->add_output("k");
  auto* s = c->add_attribute();
  s->set_name("value_string");
  s->set_type(onnx::AttributeProto::STRING);
  s->set_s("hi");
  EXPECT_HAS(error_of(m), "Constant attribute 'value_string' is not supported");

  // A Constant writing an initializer's name is a second producer.
  s->set_name("value_float");
  s->set_type(onnx::AttributeProto::FLOAT);
  c->set_output(0, "w");
  EXPECT_HAS(error_of(m), "two producers");
}

TEST_F(OnnxValidate, Float16InitializerKeepsItsBits) {
  onnx::ModelProto m = base_model();
  auto* h = m.mutable_graph()->add_initializer();
  h->set_name("h");
  h->set_data_type(onnx::TensorProto::FLOAT16);
  h->add_dims(2);
  h->add_int32_data(0x3c00);  // 1.0
  h->add_int32_data(0xc000);  // -2.0
  ImportedModel im = load_model(write(m));
  const Tensor& t = im.graph.initializers.at("h");
  EXPECT_EQ(t.dtype(), DType::Float16);
  EXPECT_EQ(static_cast<const uint16_t*>(t.data())[1], 0xc000);
}

TEST_F(OnnxValidate, ExternalDataBelowTheModelFolder) {
  fs::create_directories(dir_ / "model" / "sub");
  write_weights(dir_ / "model" / "sub" / "w.bin", 8);
  onnx::ModelProto m = base_model();
  make_external(m, "sub/w.bin", 8, 16);
  ImportedModel im = load_model(write(m));
  EXPECT_FLOAT_EQ(im.graph.initializers.at("w").ptr<float>()[0], 5.0f);
  EXPECT_FLOAT_EQ(im.graph.initializers.at("w").ptr<float>()[3], 8.0f);

  // Without a length the rest of the file is the tensor.
  m = base_model();
  make_external(m, "sub/w.bin", 8);
  EXPECT_FLOAT_EQ(load_model(write(m)).graph.initializers.at("w").ptr<float>()[2], 7.0f);
}

TEST_F(OnnxValidate, ExternalDataEscapesAreRejected) {
  write_weights(dir_ / "outside" / "w.bin");
  write_weights(dir_ / "model" / "w.bin");
  onnx::ModelProto m = base_model();
  make_external(m, "../outside/w.bin");
  EXPECT_HAS(error_of(m), "contains '..'");

  m = base_model();
  make_external(m, (dir_ / "outside" / "w.bin").string());
  EXPECT_HAS(error_of(m), "absolute path");

  fs::create_symlink(dir_ / "outside" / "w.bin", dir_ / "model" / "link.bin");
  m = base_model();
  make_external(m, "link.bin");
  EXPECT_HAS(error_of(m), "outside the model's folder");

  fs::create_directory_symlink(dir_ / "outside", dir_ / "model" / "linkdir");
  m = base_model();
  make_external(m, "linkdir/w.bin");
  EXPECT_HAS(error_of(m), "outside the model's folder");

  fs::create_hard_link(dir_ / "outside" / "w.bin", dir_ / "model" / "hard.bin");
  m = base_model();
  make_external(m, "hard.bin");
  EXPECT_HAS(error_of(m), "hard links");

  m = base_model();
  make_external(m, "w.bin", 8, 16);
  EXPECT_HAS(error_of(m), "exceeds");
  m = base_model();
  make_external(m, "w.bin", 0, 12);
  EXPECT_HAS(error_of(m), "does not match the tensor's size of 16");
  m = base_model();
  make_external(m, "w.bin", 100);
  EXPECT_HAS(error_of(m), "beyond the end");
  m = base_model();
  make_external(m, "missing.bin");
  EXPECT_HAS(error_of(m), "cannot open external data 'missing.bin'");
  m = base_model();
  make_external(m, "w.bin", -1, -1);
  m.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_key("where");
  EXPECT_HAS(error_of(m), "no location");
}

}  // namespace
}  // namespace cbt
