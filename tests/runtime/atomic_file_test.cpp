// write_file_atomically (graph/atomic_file.h), the writer of every file cbtrain leaves behind:
// a file replaced whole or not at all, and no temporary file left either way.
#include "graph/atomic_file.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "common/tiny_dataset.h"
#include "graph/errors.h"

namespace cbt {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Random bytes, zeros and newlines included.
std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, ReplacesAFileWholeAndLeavesNothingElse) {
  const fs::path dir = test::temp_dir("atomic_replace");
  const fs::path file = dir / "model.bin";
  const std::string first = random_bytes(3 << 20, 1), second = random_bytes(1000, 2);
  write_file_atomically(file.string(), first);
  EXPECT_EQ(read(file), first);
  write_file_atomically(file.string(), second);  // shorter: nothing of the first may remain
  EXPECT_EQ(read(file), second);
  EXPECT_EQ(entries(dir), 1u);
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
}

TEST(AtomicFile, AStreamingWriterIsCalledWithTheFileAndItsPiecesArriveInOrder) {
  const fs::path dir = test::temp_dir("atomic_stream");
  const fs::path file = dir / "data.bin";
  const std::string a = random_bytes(70001, 3), b = random_bytes(12345, 4);
  write_file_atomically(file.string(), [&](int fd) {
    if (int e = write_all(fd, a.data(), a.size())) return e;
    return write_all(fd, b.data(), b.size());
  });
  EXPECT_EQ(read(file), a + b);
  EXPECT_EQ(entries(dir), 1u);
}

TEST(AtomicFile, AFailingWriterLeavesTheOldFileAndNoTemporaryFile) {
  const fs::path dir = test::temp_dir("atomic_fail");
  const fs::path file = dir / "checkpoint.bin";
  const std::string old = random_bytes(4096, 5);
  write_file_atomically(file.string(), old);
  try {
    write_file_atomically(file.string(), [&](int fd) {
      const std::string half = random_bytes(2048, 6);
      write_all(fd, half.data(), half.size());
      return ENOSPC;  // as a full disk would stop it half-way
    });
    FAIL() << "no error";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot write " + file.string() + " (write)"), std::string::npos) << what;
    EXPECT_NE(what.find(std::strerror(ENOSPC)), std::string::npos) << what;
  }
  EXPECT_EQ(read(file), old);
  EXPECT_EQ(entries(dir), 1u);
}

TEST(AtomicFile, AMissingFolderIsAUserErrorThatNamesThePath) {
  const fs::path file = test::temp_dir("atomic_missing") / "no" / "such" / "folder" / "out.onnx";
  try {
    write_file_atomically(file.string(), std::string("x"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + file.string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(file.parent_path()));
}

}  // namespace
}  // namespace cbt
