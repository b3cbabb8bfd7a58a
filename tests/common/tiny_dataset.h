// Small random IDX data sets (28x28 images, 10 classes) written by tests, so that training
// runs through the command line stay short.
#pragma once
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace cbt::test {

// The folders temp_dir made; removed when the test process exits normally (a test may have
// made one read-only: its permissions are restored first).
class TempDirs {
 public:
  void add(const std::filesystem::path& d) { dirs_.push_back(d); }
  ~TempDirs() {
    namespace fs = std::filesystem;
    for (const auto& d : dirs_) {
      std::error_code ec;
      fs::permissions(d, fs::perms::owner_all, fs::perm_options::add, ec);
      for (auto it = fs::recursive_directory_iterator(d, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec))
        if (it->is_directory(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
      fs::remove_all(d, ec);
    }
  }

 private:
  std::vector<std::filesystem::path> dirs_;
};

// A fresh, empty folder under the temporary directory, unique to this process and name.
inline std::filesystem::path temp_dir(const std::string& name) {
  static TempDirs made;
  auto d = std::filesystem::temp_directory_path() / ("cbt_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  made.add(d);
  return d;
}

// Writes a gzip IDX file (unsigned bytes) with the given dims.
inline bool write_idx_gz(const std::filesystem::path& path, const std::vector<uint32_t>& dims,
                         const std::vector<uint8_t>& data) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (!f) return false;
  auto be32 = [&](uint32_t v) {
    unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                          static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
    gzwrite(f, b, 4);
  };
  be32(0x0800u | static_cast<uint32_t>(dims.size()));
  for (auto d : dims) be32(d);
  gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  return gzclose(f) == Z_OK;
}

// train-/t10k- image and label files with random pixels and labels (seeded).
inline std::filesystem::path make_tiny_dataset(const std::string& name, uint32_t train_n = 256, uint32_t test_n = 64) {
  auto d = temp_dir(name);
  std::mt19937 rng(1);
  for (auto [stem, n] : {std::pair{std::string("train"), train_n}, std::pair{std::string("t10k"), test_n}}) {
    std::vector<uint8_t> img(static_cast<size_t>(n) * 784), lab(n);
    for (auto& v : img) v = static_cast<uint8_t>(rng() & 0xff);
    for (auto& v : lab) v = static_cast<uint8_t>(rng() % 10);
    write_idx_gz(d / (stem + "-images-idx3-ubyte.gz"), {n, 28, 28}, img);
    write_idx_gz(d / (stem + "-labels-idx1-ubyte.gz"), {n}, lab);
  }
  return d;
}

}  // namespace cbt::test
