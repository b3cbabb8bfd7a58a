// Kernel registry.
#include "ops/kernel.h"

#include <map>
#include <tuple>

namespace cbt {

namespace {
using Key = std::tuple<std::string, std::string, DeviceKind>;
std::map<Key, KernelFn>& registry() {
  static std::map<Key, KernelFn> r;
  return r;
}
}  // namespace

bool register_kernel(const std::string& domain, const std::string& op_type, DeviceKind device, KernelFn fn) {
  Key k{domain, op_type, device};
  CBT_CHECK(!registry().count(k), "kernel registered twice: ", op_type);
  registry()[k] = fn;
  return true;
}

KernelFn find_kernel(const std::string& domain, const std::string& op_type, DeviceKind device) {
  std::string d = (domain == "ai.onnx") ? "" : domain;
  auto it = registry().find(Key{d, op_type, device});
  return it == registry().end() ? nullptr : it->second;
}

std::vector<std::pair<std::string, std::string>> kernels_for(DeviceKind device) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [k, fn] : registry())
    if (std::get<2>(k) == device) out.emplace_back(std::get<0>(k), std::get<1>(k));
  return out;
}

}  // namespace cbt
