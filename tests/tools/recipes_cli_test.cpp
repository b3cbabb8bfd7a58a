// Training recipes from the command line: --freeze keeps parameters bit for bit in the
// exported model, --loss bce / mse train, and bad recipe flags are user errors.
#include <gtest/gtest.h>

#include <cstring>

#include "common/run_cli.h"
#include "common/tiny_dataset.h"
#include "onnx_import/model_io.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

const std::string kLenet = test::source_path("models/lenet5/lenet5.ts17.onnx");

TEST(RecipesCli, FrozenParametersAreExportedUnchanged) {
  fs::path data = test::make_tiny_dataset("freeze", 256, 64);
  fs::path d = test::temp_dir("freeze_out");
  test::CliResult r =
      test::run_cli(kLenet + " --data " + data.string() + " --epochs 1 --batch-size 8 -k 3 " +
                    "--freeze '^conv' --freeze 'fc3\\.bias' --clip-grad-norm 5 -o " + (d / "out.onnx").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("frozen: 5 tensor(s)"), std::string::npos) << r.output;
  ImportedModel before = load_model(kLenet), after = load_model((d / "out.onnx").string());
  for (const auto& [name, t] : before.graph.initializers) {
    const Tensor& u = after.graph.initializers.at(name);
    const bool same = std::memcmp(t.data(), u.data(), t.nbytes()) == 0;
    const bool frozen = name.rfind("conv", 0) == 0 || name == "fc3.bias";
    EXPECT_EQ(same, frozen) << name;
  }
}

TEST(RecipesCli, BinaryCrossEntropyWithLogitsAndMseTrain) {
  fs::path data = test::make_tiny_dataset("losses", 256, 64);
  for (const char* loss : {"bce", "mse"}) {
    test::CliResult r = test::run_cli(kLenet + " --data " + data.string() + " --epochs 2 --batch-size 8 --loss " +
                                      loss + " --log-every 0");
    EXPECT_EQ(r.code, 0) << loss << "\n" << r.output;
  }
  // The model output chosen by name (LeNet-5's only output is "output").
  test::CliResult named =
      test::run_cli(kLenet + " --data " + data.string() + " --max-steps 3 --batch-size 8 --output-name output");
  EXPECT_EQ(named.code, 0) << named.output;
  test::CliResult help = test::run_cli("--help");
  EXPECT_NE(help.output.find("WITH LOGITS"), std::string::npos) << help.output;
}

TEST(RecipesCli, BadRecipeFlagsAreUserErrors) {
  fs::path data = test::make_tiny_dataset("recipes_bad", 64, 16);
  const std::string base = kLenet + " --data " + data.string() + " --max-steps 1 ";
  struct Case {
    std::string flags, says;
  };
  for (const Case& c : {Case{"--freeze 'nothing_like_this'", "matches no parameter"},
                        Case{"--freeze '(['", "not a valid regular expression"},
                        Case{"--label-smoothing 0.1 --loss mse", "cross-entropy only"},
                        Case{"--label-smoothing 1.5", "label-smoothing"}, Case{"--clip-grad-norm -1", "clip-grad-norm"},
                        Case{"--freeze '.'", "no trainable parameter"},
                        Case{"--output-name no_such_output", "'no_such_output' does not exist"}}) {
    test::CliResult r = test::run_cli(base + c.flags);
    EXPECT_EQ(r.code, 2) << c.flags << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.flags << "\n" << r.output;
  }
}

}  // namespace
}  // namespace cbt
