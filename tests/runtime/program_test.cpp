// Program: a node whose kStateOfAttr names an output of an earlier node shares that node's
// kernel cache (a fused kernel's backward reads what its forward kept); other nodes have their own.
#include "runtime/program.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>

#include "common/op_harness.h"

namespace cbt {
namespace {

constexpr const char* kTestDomain = "cbtrain.program_test";

// Keep: Y = X, and its cache holds the sum of X.
void keep_kernel(KernelContext& ctx) {
  const float* x = ctx.in(0).ptr<float>();
  float* y = ctx.out(0).ptr<float>();
  std::copy(x, x + ctx.in(0).numel(), y);
  *ctx.state = std::make_shared<float>(std::accumulate(x, x + ctx.in(0).numel(), 0.0f));
}

// Read: Y = [the float in its cache, or -1 where the cache is empty].
void read_kernel(KernelContext& ctx) {
  ctx.out(0).ptr<float>()[0] = *ctx.state ? *std::static_pointer_cast<float>(*ctx.state) : -1.0f;
}

CBT_REGISTER_KERNEL(kTestDomain, "Keep", DeviceKind::CPU, keep_kernel);
CBT_REGISTER_KERNEL(kTestDomain, "Read", DeviceKind::CPU, read_kernel);

Node node(const char* op, std::vector<std::string> in, std::string out) {
  Node n;
  n.domain = kTestDomain;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = {std::move(out)};
  return n;
}

TEST(Program, StateOfSharesTheForwardsKernelCache) {
  const Tensor x = test::random_tensor(DType::Float32, {7}, 21);
  ProgramSpec spec;
  spec.nodes.push_back(node("Keep", {"x"}, "kept"));
  Node shared = node("Read", {"kept"}, "shared");
  shared.attrs.set(kStateOfAttr, std::string("kept"));
  spec.nodes.push_back(shared);
  spec.nodes.push_back(node("Read", {"kept"}, "own"));
  Node unknown = node("Read", {"kept"}, "unknown");  // names no output: a cache of its own
  unknown.attrs.set(kStateOfAttr, std::string("no_such_value"));
  spec.nodes.push_back(unknown);
  spec.types["x"] = spec.types["kept"] = ValueType{DType::Float32, {7}};
  for (const char* v : {"shared", "own", "unknown"}) spec.types[v] = ValueType{DType::Float32, {1}};
  spec.external["x"] = x;
  spec.keep_alive = {"shared", "own", "unknown"};
  CpuBackend cpu;
  Program prog(std::move(spec), cpu);
  prog.run(1);
  float sum = 0;
  for (int64_t i = 0; i < x.numel(); ++i) sum += static_cast<float>(x.at_f64(i));
  EXPECT_FLOAT_EQ(prog.value("shared").at_f64(0), sum);
  EXPECT_EQ(prog.value("own").at_f64(0), -1.0);
  EXPECT_EQ(prog.value("unknown").at_f64(0), -1.0);
}

}  // namespace
}  // namespace cbt
