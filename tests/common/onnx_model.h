// ModelProtos built in tests: an empty model of one opset to add a graph to.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>

namespace cbt::test {

// IR version 8, producer "test", the default domain at `opset`, an empty graph named "g".
inline onnx::ModelProto empty_model(int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("test");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

}  // namespace cbt::test
