// Kernel registry keyed by (domain, op type, device); kernels see pre-allocated outputs.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt {

struct KernelContext {
  const Node& node;                        // attributes; inputs/outputs by position
  std::span<Tensor> inputs;                // undefined Tensor for an omitted optional input
  std::span<Tensor> outputs;               // allocated by the caller with the inferred types
  bool training = false;                   // Dropout/BatchNorm behaviour
  uint64_t seed = 0;                       // per node and step; random ops derive their stream from it
  void* device_ctx = nullptr;              // backend state (CUDA: stream, handles, workspace)
  std::shared_ptr<void>* state = nullptr;  // per-node cache owned by the program (may be null;
                                           // a backward node's is its forward's: kStateOfAttr)

  const Tensor& in(size_t i) const { return inputs[i]; }
  bool has_in(size_t i) const { return i < inputs.size() && inputs[i].defined(); }
  Tensor& out(size_t i) const { return outputs[i]; }
  bool has_out(size_t i) const { return i < outputs.size() && outputs[i].defined(); }
};

// Input i's data as T, or null where i < 0 (the op has no such input) or the input is omitted;
// likewise output i's. For kernels whose inputs and outputs are optional by position.
template <class T>
const T* optional_in(const KernelContext& ctx, int i) {
  return i >= 0 && ctx.has_in(static_cast<size_t>(i)) ? ctx.in(static_cast<size_t>(i)).ptr<T>() : nullptr;
}
template <class T>
T* optional_out(const KernelContext& ctx, int i) {
  return i >= 0 && ctx.has_out(static_cast<size_t>(i)) ? ctx.out(static_cast<size_t>(i)).ptr<T>() : nullptr;
}

using KernelFn = void (*)(KernelContext&);

// How GPU convolutions choose their library algorithm (--cudnn-algos): time the engines of
// cuDNN's backend API (measure, the default), time the legacy algorithms with cuDNN's Find
// (find), or take the legacy heuristic ranking without timing (heuristic).
enum class ConvAlgos : uint8_t { Engines, Find, Heuristic };

bool register_kernel(const std::string& domain, const std::string& op_type, DeviceKind device, KernelFn fn);
KernelFn find_kernel(const std::string& domain, const std::string& op_type, DeviceKind device);
// (domain, op type) pairs that have a kernel on `device`.
std::vector<std::pair<std::string, std::string>> kernels_for(DeviceKind device);

// Counter-based random numbers (SplitMix64 of seed and index): identical on every device,
// so CPU and GPU dropout masks agree.
inline uint64_t rng_hash(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// Uniform in [0, 1) from the top 24 bits.
inline float rng_uniform(uint64_t seed, uint64_t index) {
  return static_cast<float>(rng_hash(seed, index) >> 40) * (1.0f / 16777216.0f);
}

}  // namespace cbt

#define CBT_KERNEL_CAT2(a, b) a##b
#define CBT_KERNEL_CAT(a, b) CBT_KERNEL_CAT2(a, b)
// Registers a kernel at static-initialisation time (ops are an OBJECT library).
#define CBT_REGISTER_KERNEL(domain, op_type, device, fn) \
  static const bool CBT_KERNEL_CAT(cbt_kernel_reg_, __COUNTER__) = ::cbt::register_kernel(domain, op_type, device, fn)
