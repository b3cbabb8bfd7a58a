// The malformed-model corpus through the command line: every file exits with 2 and says why.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/paths.h"
#include "common/run_cli.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

const std::string kCorpus = test::source_path("tests/onnx_import/corpus");

// One line of expected.tsv: file, substring of the expected message, command (inspect or plan).
struct CorpusCase {
  std::string file;
  std::string expected;
  std::string command;
};

std::vector<CorpusCase> read_manifest() {
  std::vector<CorpusCase> cases;
  std::ifstream f(kCorpus + "/expected.tsv");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    CorpusCase c;
    std::getline(fields, c.file, '\t');
    std::getline(fields, c.expected, '\t');
    std::getline(fields, c.command, '\t');
    cases.push_back(c);
  }
  return cases;
}

using RunResult = test::CliResult;
constexpr auto run = &test::run_cli;

TEST(OnnxCorpus, ManifestCoversEveryFile) {
  std::vector<CorpusCase> cases = read_manifest();
  EXPECT_GE(cases.size(), 40u);
  std::set<std::string> listed;
  for (const auto& c : cases) {
    EXPECT_TRUE(listed.insert(c.file).second) << c.file << " is listed twice";
    EXPECT_FALSE(c.expected.empty()) << c.file;
    EXPECT_TRUE(c.command == "inspect" || c.command == "plan") << c.file << ": " << c.command;
  }
  for (const auto& e : fs::directory_iterator(kCorpus))
    if (e.path().extension() == ".onnx")
      EXPECT_TRUE(listed.count(e.path().filename().string())) << e.path() << " is not in expected.tsv";
}

class OnnxCorpusFile : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(OnnxCorpusFile, ExitsWith2NamingTheFileAndTheProblem) {
  const CorpusCase& c = GetParam();
  const std::string path = kCorpus + "/" + c.file;
  ASSERT_TRUE(fs::exists(path)) << path;
  RunResult r = run("inspect '" + path + "'" + (c.command == "plan" ? " --plan" : ""));
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << "\n" << r.output;
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in:\n" << r.output;
  EXPECT_NE(r.output.find(path), std::string::npos) << "the output does not name the file:\n" << r.output;
  for (const char* bad : {"internal error", "terminate called", "Sanitizer", "Segmentation fault"})
    EXPECT_EQ(r.output.find(bad), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Corpus, OnnxCorpusFile, ::testing::ValuesIn(read_manifest()),
                         [](const ::testing::TestParamInfo<CorpusCase>& info) {
                           std::string name = fs::path(info.param.file).stem().string();
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace cbt
