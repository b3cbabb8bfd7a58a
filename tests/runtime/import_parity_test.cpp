// Import parity: every model in models/ gives the framework's reference output.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "common/paths.h"
#include "onnx_import/model_io.h"
#include "runtime/inferencer.h"
#include "runtime/npy.h"

namespace cbt {
namespace {

std::vector<std::string> model_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(test::source_path("models")))
    if (e.path().extension() == ".onnx") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ImportParity, EveryBundledModelMatchesItsReferenceOutput) {
  auto files = model_files();
  ASSERT_GE(files.size(), 10u) << "models/ should hold the exported example models";
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    std::string stem = f.substr(0, f.size() - 5);
    ASSERT_TRUE(std::filesystem::exists(stem + ".input.npy"));
    ImportedModel m = load_model(f);
    Tensor x = load_npy(stem + ".input.npy");
    Tensor want = load_npy(stem + ".output.npy");
    CpuBackend cpu;
    Inferencer inf(m.graph, cpu);
    Tensor got = inf.run(x).at(0);
    ASSERT_EQ(got.numel(), want.numel());
    double max_ref = 0;
    for (int64_t i = 0; i < want.numel(); ++i) max_ref = std::max(max_ref, std::fabs(want.at_f64(i)));
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_NEAR(got.at_f64(i), want.at_f64(i), 1e-4 * std::max(std::fabs(want.at_f64(i)), 1e-2 * max_ref) + 1e-6)
          << "element " << i;
  }
}

}  // namespace
}  // namespace cbt
