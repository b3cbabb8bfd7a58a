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

// A fresh, empty folder under the temporary directory, unique to this process.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("cbt_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
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
inline std::filesystem::path make_tiny_dataset(const std::string& name, uint32_t train_n = 256,
                                               uint32_t test_n = 64) {
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
