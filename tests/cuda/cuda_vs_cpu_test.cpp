// CUDA-vs-CPU harness: every registered case runs its forward node and the backward nodes of
// its gradient rule on the CPU (the specification) and on the GPU, comparing every output and
// every input an op updates in place. Also checks that every CUDA kernel is reached.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "common/gpu.h"
#include "common/op_harness.h"
#include "cuda/cuda_cases.h"
#include "ops/cuda/cudnn_engine.h"
#include "ops/cuda/depthwise_conv.h"
#include "ops/cuda/direct_conv.h"
#include "runtime/cuda/cuda_backend.h"

namespace cbt::test {
namespace {

constexpr uint64_t kSeed = 0x5EED2024;
using OpKey = std::pair<std::string, std::string>;  // (domain, op type)

std::string label(const std::string& domain, const std::string& op) { return domain.empty() ? op : domain + "." + op; }

// The GPU every case runs on (created once; lives until the process exits).
Backend& gpu() {
  static Backend* b = make_cuda_backend(0).release();
  return *b;
}

// Runs `node` with `b`'s kernel on b's tensors `in` (updated in place by in-place ops);
// `host_in`, the same values on the host, feed type inference. Waits for the device so that
// an asynchronous fault is reported at the node that caused it.
std::vector<Tensor> run_on(Backend& b, const Node& node, const std::vector<Tensor>& host_in, std::vector<Tensor>& in,
                           const EagerOptions& eo) {
  std::vector<ValueType> types = infer_node(node, host_in, eo.opset);
  KernelFn fn = find_kernel(node.domain, node.op_type, b.device().kind);
  if (!fn) throw std::runtime_error("no " + b.device().str() + " kernel for " + label(node.domain, node.op_type));
  std::vector<Tensor> out;
  for (size_t i = 0; i < types.size(); ++i) {
    bool wanted = i < node.outputs.size() && !node.outputs[i].empty();
    out.push_back(wanted && types[i].defined() ? b.empty(types[i].dtype, types[i].shape) : Tensor());
  }
  std::shared_ptr<void> state;
  KernelContext ctx{node, in, out, eo.training, eo.seed, b.kernel_context(), &state};
  fn(ctx);
  b.synchronize();
  return out;
}

// "" when `got` (downloaded from the GPU) matches `want` (CPU): floats within the case's
// tolerances (bit for bit when both are 0: data movement), everything else bit for bit
// (Dropout masks included: rng_hash is the same on both devices).
std::string compare(const Tensor& got, const Tensor& want, const CudaCase& c) {
  std::ostringstream os;
  if (got.dtype() != want.dtype()) {
    os << "dtype " << dtype_name(got.dtype()) << " != " << dtype_name(want.dtype());
    return os.str();
  }
  if (got.shape() != want.shape()) {
    os << "shape " << shape_str(got.shape()) << " != " << shape_str(want.shape());
    return os.str();
  }
  if (is_floating(want.dtype()) && (c.rtol > 0 || c.atol > 0)) return compare_tensors(got, want, c.rtol, c.atol);
  if (std::memcmp(got.data(), want.data(), want.nbytes()) == 0) return "";
  const size_t es = dtype_size(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::memcmp(static_cast<const std::byte*>(got.data()) + i * es,
                    static_cast<const std::byte*>(want.data()) + i * es, es) != 0) {
      os << "element " << i << ": got " << got.at_f64(i) << ", expected " << want.at_f64(i) << " (exact)";
      break;
    }
  return os.str();
}

struct Outcome {
  std::vector<std::string> failures;
  std::set<OpKey> reached;  // forward and backward ops the case ran
};

// Compares the outputs of one node run on both devices.
void compare_outputs(const Node& n, const std::vector<Tensor>& cpu, const std::vector<Tensor>& dev, Backend& b,
                     const CudaCase& c, const std::string& where, Outcome& r) {
  for (size_t k = 0; k < cpu.size(); ++k) {
    std::string what = where + " " + label(n.domain, n.op_type) + " output " + std::to_string(k);
    if (cpu[k].defined() != dev[k].defined()) {
      r.failures.push_back(what + ": defined on one device only");
      continue;
    }
    if (!cpu[k].defined()) continue;
    std::string err = compare(b.download(dev[k]), cpu[k], c);
    if (!err.empty()) r.failures.push_back(what + ": " + err);
  }
}

// Gradient emitter of the harness: each backward node runs at once on the CPU and, when a
// device is given, on it too (outputs compared); names and types come from the CPU run.
class TwinEmitter : public GradEmitter {
 public:
  TwinEmitter(const CudaCase& c, const EagerOptions& eo, Backend* dev, Outcome& r)
      : case_(c), eo_(eo), dev_(dev), r_(r) {}

  std::map<std::string, Tensor> cpu, dev;  // value name -> tensor on that device

  std::vector<std::string> emit(const std::string& op_type, const std::string& domain, std::vector<std::string> inputs,
                                size_t num_outputs, Attributes attrs, const std::string& hint) override {
    Node n = new_node(op_type, domain, std::move(inputs), num_outputs, std::move(attrs), hint);
    r_.reached.insert({domain, op_type});

    std::vector<Tensor> cpu_in, dev_in;
    for (const auto& name : n.inputs) {
      cpu_in.push_back(lookup(cpu, name, n));
      if (dev_) dev_in.push_back(lookup(dev, name, n));
    }
    std::vector<Tensor> cpu_out = run_node(n, cpu_in, eo_);
    std::vector<Tensor> dev_out;
    if (dev_) {
      dev_out = run_on(*dev_, n, cpu_in, dev_in, eo_);
      compare_outputs(n, cpu_out, dev_out, *dev_, case_, "backward", r_);
    }
    for (size_t i = 0; i < num_outputs && i < cpu_out.size(); ++i) {
      cpu[n.outputs[i]] = cpu_out[i];
      if (dev_) dev[n.outputs[i]] = dev_out[i];
    }
    return n.outputs;
  }

  const ValueType& type(const std::string& v) const override {
    auto it = types_.find(v);
    if (it != types_.end()) return it->second;
    auto t = cpu.find(v);
    CBT_CHECK(t != cpu.end(), "the gradient rule asked for the type of unknown value ", v);
    return types_[v] = t->second.defined() ? ValueType{t->second.dtype(), t->second.shape()} : ValueType{};
  }

  std::string fresh(const std::string& hint) override { return hint + "#" + std::to_string(counter_++); }

 private:
  static Tensor lookup(const std::map<std::string, Tensor>& m, const std::string& name, const Node& n) {
    if (name.empty()) return Tensor();
    auto it = m.find(name);
    CBT_CHECK(it != m.end(), "backward node ", n.op_type, " reads unknown value ", name);
    return it->second;
  }

  const CudaCase& case_;
  EagerOptions eo_;
  Backend* dev_;
  Outcome& r_;
  mutable std::map<std::string, ValueType> types_;
  int counter_ = 0;
};

// Runs one case on the CPU and, when `dev` is given, on it too. Without `dev` it only
// collects the ops the case reaches.
Outcome run_case(const CudaCase& c, Backend* dev) {
  Outcome r;
  const OpSchema* schema = find_schema(c.node.domain, c.node.op_type);
  if (!schema) {
    r.failures.push_back("no schema for " + label(c.node.domain, c.node.op_type));
    return r;
  }
  const EagerOptions eo{c.training, kSeed, c.opset};
  TwinEmitter em(c, eo, dev, r);
  Node node = c.node;
  if (c.training && schema->training_rewrite) schema->training_rewrite(node, em);
  r.reached.insert({node.domain, node.op_type});

  // Each device starts from its own copy: some ops update inputs in place.
  std::vector<Tensor> cpu_in, dev_in;
  for (const Tensor& t : c.inputs) {
    cpu_in.push_back(t.defined() ? t.clone() : Tensor());
    if (dev) dev_in.push_back(t.defined() ? dev->upload(t) : Tensor());
  }
  std::vector<Tensor> cpu_out = run_node(node, cpu_in, eo);
  std::vector<Tensor> dev_out;
  if (dev) {
    dev_out = run_on(*dev, node, c.inputs, dev_in, eo);
    compare_outputs(node, cpu_out, dev_out, *dev, c, "forward", r);
    for (size_t i = 0; i < cpu_in.size(); ++i) {
      if (!cpu_in[i].defined() || !is_floating(cpu_in[i].dtype())) continue;
      std::string err = compare(dev->download(dev_in[i]), cpu_in[i], c);
      if (!err.empty()) r.failures.push_back("forward input " + std::to_string(i) + " after the update: " + err);
    }
  }

  for (size_t i = 0; i < cpu_in.size() && i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    em.cpu[node.inputs[i]] = cpu_in[i];
    if (dev) em.dev[node.inputs[i]] = dev_in[i];
  }
  for (size_t k = 0; k < cpu_out.size() && k < node.outputs.size(); ++k) {
    if (node.outputs[k].empty()) continue;
    em.cpu[node.outputs[k]] = cpu_out[k];
    if (dev) em.dev[node.outputs[k]] = dev_out[k];
  }

  if (!c.check_backward || !schema->grad || cpu_out.empty() || !cpu_out[0].defined() ||
      !is_floating(cpu_out[0].dtype()))
    return r;
  GradContext gc{node, std::vector<std::string>(cpu_out.size()), std::vector<bool>(node.inputs.size(), false), em};
  bool any = false;
  for (int i : schema->diff_inputs)
    if (i < static_cast<int>(cpu_in.size()) && cpu_in[i].defined() && is_floating(cpu_in[i].dtype()))
      gc.wants[i] = any = true;
  if (!any) return r;
  // Only output 0 carries the loss (the others are masks or saved statistics).
  Tensor dY = random_tensor(cpu_out[0].dtype(), cpu_out[0].shape(), kSeed + 1);
  em.cpu["dY"] = dY;
  if (dev) em.dev["dY"] = dev->upload(dY);
  gc.dY[0] = "dY";
  std::vector<std::string> grads = schema->grad(gc);
  for (size_t i = 0; i < gc.wants.size(); ++i)
    if (gc.wants[i] && (i >= grads.size() || grads[i].empty()))
      r.failures.push_back("the gradient rule returned no gradient for input " + std::to_string(i));
  return r;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// gtest names: the case names with every other character replaced by '_', made unique.
const std::vector<std::string>& test_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (size_t i = 0; i < cuda_cases().size(); ++i) {
      std::string n = cuda_cases()[i].name;
      for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      if (n.empty() || seen.count(n)) n += "_" + std::to_string(i);
      seen.insert(n);
      out.push_back(n);
    }
    return out;
  }();
  return names;
}

class CudaVsCpu : public ::testing::TestWithParam<size_t> {};

TEST_P(CudaVsCpu, ForwardAndBackwardMatch) {
  CBT_SKIP_WITHOUT_GPU();
  const CudaCase& c = cuda_cases().at(GetParam());
  Outcome r = run_case(c, &gpu());
  EXPECT_TRUE(r.failures.empty()) << c.name << ":\n" << join(r.failures);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaVsCpu, ::testing::Range<size_t>(0, cuda_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return test_names().at(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaVsCpu);

bool is_convolution_case(const CudaCase& c) { return c.name.rfind("Conv", 0) == 0; }

// --deterministic swaps the atomic GatherGrad for an ordered one and restricts cuDNN to
// deterministic algorithms: the summing cases must still match the CPU on such a backend.
TEST(CudaDeterministic, SummingAndConvolutionCasesMatchTheCpu) {
  CBT_SKIP_WITHOUT_GPU();
  static Backend* det = [] {
    Backend* b = make_cuda_backend(0).release();
    b->set_deterministic(true);
    return b;
  }();
  int ran = 0;
  for (const CudaCase& c : cuda_cases()) {
    const bool wanted = c.name.rfind("Gather/", 0) == 0 || is_convolution_case(c);
    if (!wanted) continue;
    ++ran;
    Outcome r = run_case(c, det);
    EXPECT_TRUE(r.failures.empty()) << c.name << ":\n" << join(r.failures);
  }
  EXPECT_GE(ran, 10);
}

// The default backend runs its convolutions on engines of cuDNN's backend API (the Conv
// cases above compare their results with the CPU): check that they really take that path
// when cbtrain's direct kernels are off.
TEST(CudaConvAlgos, TheConvolutionCasesRunOnCudnnEngines) {
  CBT_SKIP_WITHOUT_GPU();
  struct Env {  // cbtrain's direct kernels would take some of them where they are faster
    Env() { setenv("CBT_CONV_DIRECT", "off", 1); }
    ~Env() { unsetenv("CBT_CONV_DIRECT"); }
  } env;
  const uint64_t before = cuda::engine_runs();
  int ran = 0;
  for (const CudaCase& c : cuda_cases()) {
    if (!is_convolution_case(c)) continue;
    ++ran;
    Outcome r = run_case(c, &gpu());
    EXPECT_TRUE(r.failures.empty()) << c.name << ":\n" << join(r.failures);
  }
  EXPECT_GE(ran, 10);
  // Each case runs at least a forward and a backward convolution.
  EXPECT_GE(cuda::engine_runs() - before, static_cast<uint64_t>(2 * ran));
}

// --cudnn-algos find and heuristic choose among cuDNN's legacy algorithms and run them
// through the legacy calls: the same cases must match the CPU there, without an engine.
TEST(CudaConvAlgos, LegacyFindAndHeuristicChoicesMatchTheCpu) {
  CBT_SKIP_WITHOUT_GPU();
  for (ConvAlgos how : {ConvAlgos::Find, ConvAlgos::Heuristic}) {
    std::unique_ptr<Backend> b = make_cuda_backend(0);
    b->set_conv_algos(how);
    const uint64_t before = cuda::engine_runs();
    for (const CudaCase& c : cuda_cases()) {
      if (!is_convolution_case(c)) continue;
      Outcome r = run_case(c, b.get());
      EXPECT_TRUE(r.failures.empty()) << c.name << " (" << static_cast<int>(how) << "):\n" << join(r.failures);
    }
    EXPECT_EQ(cuda::engine_runs(), before) << "legacy mode " << static_cast<int>(how) << " ran an engine";
  }
}

// With CBT_CONV_DIRECT=always cbtrain's direct and depthwise kernels run every convolution they
// can (direct_conv.h, depthwise_conv.h), wherever they would lose to cuDNN: those cases must
// match the CPU too.
TEST(CudaConvAlgos, DirectKernelsMatchTheCpuWhereverTheyApply) {
  CBT_SKIP_WITHOUT_GPU();
  struct Env {
    Env() { setenv("CBT_CONV_DIRECT", "always", 1); }
    ~Env() { unsetenv("CBT_CONV_DIRECT"); }
  } env;
  std::unique_ptr<Backend> b = make_cuda_backend(0);
  const uint64_t before = cuda::direct_runs(), depthwise_before = cuda::depthwise_runs();
  for (const CudaCase& c : cuda_cases()) {
    if (!is_convolution_case(c)) continue;
    Outcome r = run_case(c, b.get());
    EXPECT_TRUE(r.failures.empty()) << c.name << ":\n" << join(r.failures);
  }
  // At least the forward and backward-filter convolutions of the four Conv cases that fit the
  // kernels (3x3_pad1_bias, lenet_5x5_batch32, relu_lenet_5x5_batch32, relu_lenet2_5x5_6to16),
  // the three convolutions of ConvTranspose stride1_pad1_bias, and the stride-2 backward data
  // (as phases) of Conv relu_nobias_stride2 and of ConvTranspose stride2_outpad_bias's forward.
  EXPECT_GE(cuda::direct_runs() - before, 13u);
  // The three convolutions of each depthwise case: Conv depthwise_stride2, depthwise_3x3_bias,
  // depthwise_5x5_relu, depthwise_7x7_bias, depthwise_stride2_pads_after and ConvTranspose
  // depthwise_stride1.
  EXPECT_GE(cuda::depthwise_runs() - depthwise_before, 18u);
}

// The two checks below read only the registries and run the CPU side, so they also guard
// machines without a GPU (CI) against cases going missing.
TEST_F(CudaVsCpu, CaseNamesAreUnique) {
  std::map<std::string, int> count;
  for (const CudaCase& c : cuda_cases()) ++count[c.name];
  std::vector<std::string> dup;
  for (const auto& [name, n] : count)
    if (n > 1 || name.empty()) dup.push_back("'" + name + "' x" + std::to_string(n));
  EXPECT_TRUE(dup.empty()) << "duplicate or empty case names:\n" << join(dup);
}

TEST_F(CudaVsCpu, EveryCudaKernelIsReachedByACase) {
  std::set<OpKey> reached;
  std::vector<std::string> broken;
  for (const CudaCase& c : cuda_cases()) {
    try {
      Outcome r = run_case(c, nullptr);
      reached.insert(r.reached.begin(), r.reached.end());
      for (const auto& f : r.failures) broken.push_back(c.name + ": " + f);
    } catch (const std::exception& e) {
      broken.push_back(c.name + ": " + e.what());
    }
  }
  std::vector<std::string> missing;
  for (const auto& [domain, op] : kernels_for(DeviceKind::CUDA))
    if (!reached.count({domain, op})) missing.push_back(label(domain, op));
  EXPECT_TRUE(missing.empty()) << missing.size()
                               << " CUDA kernel(s) are not reached by any case (forward or "
                                  "backward):\n"
                               << join(missing);
  EXPECT_TRUE(broken.empty()) << "cases that fail on the CPU alone:\n" << join(broken);
}

}  // namespace
}  // namespace cbt::test
