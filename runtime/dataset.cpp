// IDX reading (through zlib, which reads plain and gzip files alike), shuffling, batching.
#include "runtime/dataset.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>

#include "graph/errors.h"
#include "runtime/augment.h"
#include "runtime/data_formats.h"
#include "runtime/normalize.h"

namespace cbt {

namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

GzFile open_or_throw(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw UserError("data file not found: " + path);
  GzFile f(gzopen(path.c_str(), "rb"));
  if (!f) throw UserError("cannot open data file " + path);
  return f;
}

void read_exact(gzFile f, void* dst, size_t n, const std::string& path) {
  auto* p = static_cast<unsigned char*>(dst);
  while (n > 0) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
    int got = gzread(f, p, chunk);
    if (got <= 0) throw UserError("data file " + path + " is truncated or not a valid IDX file");
    p += got;
    n -= static_cast<size_t>(got);
  }
}

uint32_t read_be32(gzFile f, const std::string& path) {
  unsigned char b[4];
  read_exact(f, b, 4, path);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

// Returns dims after checking the magic: 0x0000 08 NN (unsigned bytes, NN dims).
std::vector<int64_t> read_header(gzFile f, const std::string& path, uint32_t want_rank) {
  uint32_t magic = read_be32(f, path);
  if ((magic >> 8) != 0x08 || (magic & 0xff) != want_rank)
    throw UserError("data file " + path + " is not an IDX file of rank " + std::to_string(want_rank) +
                    " (bad magic number)");
  std::vector<int64_t> dims;
  for (uint32_t i = 0; i < want_rank; ++i) {
    uint32_t d = read_be32(f, path);
    if (d == 0 || d > (1u << 28)) throw UserError("data file " + path + " has an absurd size");
    dims.push_back(d);
  }
  return dims;
}

std::string find_file(const std::string& dir, const std::string& stem) {
  for (const char* ext : {"", ".gz"}) {
    auto p = std::filesystem::path(dir) / (stem + ext);
    if (std::filesystem::exists(p)) return p.string();
  }
  throw UserError("data folder " + dir + " has no " + stem + " (or " + stem +
                  ".gz); expected the MNIST/Fashion-MNIST IDX files");
}

}  // namespace

RawSplit read_idx(const std::string& images_path, const std::string& labels_path) {
  GzFile fi = open_or_throw(images_path);
  auto dims = read_header(fi.get(), images_path, 3);
  GzFile fl = open_or_throw(labels_path);
  auto ldims = read_header(fl.get(), labels_path, 1);
  if (ldims[0] != dims[0])
    throw UserError("data files disagree: " + images_path + " has " + std::to_string(dims[0]) + " images but " +
                    labels_path + " has " + std::to_string(ldims[0]) + " labels");
  const int64_t n = dims[0];
  if (dims[1] * dims[2] > (int64_t{1} << 24) || n * dims[1] * dims[2] > (int64_t{1} << 36))
    throw UserError("data file " + images_path + " claims an absurd size");
  RawSplit s;
  s.image = ImageLayout{1, dims[1], dims[2], Layout::NCHW};
  s.values = Tensor(DType::UInt8, {n, 1, dims[1], dims[2]});
  read_exact(fi.get(), s.values.ptr<uint8_t>(), s.values.nbytes(), images_path);
  std::vector<uint8_t> lab(static_cast<size_t>(n));
  read_exact(fl.get(), lab.data(), lab.size(), labels_path);
  s.labels.assign(lab.begin(), lab.end());
  return s;
}

RawData read_idx_folder(const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    throw UserError("data folder not found: " + dir + " (install Debian's dataset-fashion-mnist or pass --data DIR)");
  RawData r;
  r.train = read_idx(find_file(dir, "train-images-idx3-ubyte"), find_file(dir, "train-labels-idx1-ubyte"));
  r.test = read_idx(find_file(dir, "t10k-images-idx3-ubyte"), find_file(dir, "t10k-labels-idx1-ubyte"));
  return r;
}

Dataset load_idx(const std::string& images_path, const std::string& labels_path, const Normalization& norm) {
  RawSplit s = read_idx(images_path, labels_path);
  const int64_t n = s.values.dim(0), h = s.image.height, w = s.image.width;
  Dataset d;
  d.images = normalize_pixels(s.values.ptr<uint8_t>(), {n, h, w}, 1, h * w, norm);
  d.image = s.image;
  d.labels = Tensor(DType::Int64, {n});
  for (int64_t i = 0; i < n; ++i) {
    d.labels.ptr<int64_t>()[i] = s.labels[i];
    d.num_classes = std::max<int64_t>(d.num_classes, s.labels[i] + 1);
  }
  return d;
}

TrainTestData load_idx_folder(const std::string& dir, const Normalization& norm) {
  if (!std::filesystem::is_directory(dir))
    throw UserError("data folder not found: " + dir + " (install Debian's dataset-fashion-mnist or pass --data DIR)");
  TrainTestData t;
  t.train = load_idx(find_file(dir, "train-images-idx3-ubyte"), find_file(dir, "train-labels-idx1-ubyte"), norm);
  t.test = load_idx(find_file(dir, "t10k-images-idx3-ubyte"), find_file(dir, "t10k-labels-idx1-ubyte"), norm);
  int64_t classes = std::max(t.train.num_classes, t.test.num_classes);
  t.train.num_classes = t.test.num_classes = classes;
  return t;
}

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch));
  std::shuffle(idx.begin(), idx.end(), rng);
  return idx;
}

void gather_batch(const Dataset& d, const int64_t* indices, int64_t count, Tensor& x, Tensor& y,
                  const int32_t* choices) {
  const int64_t per = d.sample_numel();
  CBT_CHECK(x.numel() == count * per && y.numel() >= count, "gather_batch shapes");
  CBT_CHECK(!choices || d.image.numel() == per, "gather_batch: augmentation needs image samples");
  const float* src = d.images.ptr<float>();
  float* dst = x.ptr<float>();
  for (int64_t i = 0; i < count; ++i) {
    if (choices)
      augment_sample(src + indices[i] * per, dst + i * per, d.image, choices + 3 * i);
    else
      std::memcpy(dst + i * per, src + indices[i] * per, per * sizeof(float));
    y.ptr<int64_t>()[i] = d.labels.ptr<int64_t>()[indices[i]];
  }
}

}  // namespace cbt
