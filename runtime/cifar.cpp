// CIFAR-10 / CIFAR-100 binary format: records of label byte(s) and 3 x 32 x 32 pixel bytes
// (all red, then green, then blue, rows top to bottom: already NCHW).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "graph/errors.h"
#include "runtime/data_formats.h"

namespace cbt {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kPixels = 3 * 32 * 32;

struct CifarKind {
  int64_t label_bytes;  // 1 (CIFAR-10) or 2 (CIFAR-100: coarse, fine)
  int64_t classes;      // of the label used
  const char* name;
};
constexpr CifarKind kCifar10{1, 10, "CIFAR-10"}, kCifar100{2, 100, "CIFAR-100"};

// Appends the records of `path` to `out`.
void read_cifar_file(const fs::path& path, const CifarKind& kind, std::vector<uint8_t>& pixels,
                     std::vector<int64_t>& labels) {
  const std::string p = path.string();
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const int64_t record = kind.label_bytes + kPixels;
  if (ec) throw UserError("cannot read data file " + p + ": " + ec.message());
  if (size == 0 || size % record != 0)
    throw UserError("data file " + p + " is not a " + kind.name + " binary file: its size (" + std::to_string(size) +
                    " bytes) is not a whole number of " + std::to_string(record) + "-byte records");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UserError("cannot open data file " + p);
  const int64_t n = static_cast<int64_t>(size) / record;
  std::vector<uint8_t> buf(static_cast<size_t>(size));
  if (!f.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(size)))
    throw UserError("data file " + p + " is truncated");
  const size_t base = pixels.size();
  pixels.resize(base + static_cast<size_t>(n * kPixels));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* r = buf.data() + i * record;
    // CIFAR-100: the coarse label (of 20 superclasses) first, then the fine one (of 100).
    if (kind.label_bytes == 2 && r[0] >= 20)
      throw UserError("data file " + p + " is not a CIFAR-100 file: coarse label " + std::to_string(r[0]) +
                      " of record " + std::to_string(i) + " is not below 20");
    const int64_t label = r[kind.label_bytes - 1];
    if (label >= kind.classes)
      throw UserError("data file " + p + " is not a " + kind.name + " file: label " + std::to_string(label) +
                      " of record " + std::to_string(i) + " is not below " + std::to_string(kind.classes));
    labels.push_back(label);
    std::copy(r + kind.label_bytes, r + record, pixels.begin() + static_cast<ptrdiff_t>(base + i * kPixels));
  }
}

RawSplit read_split(const std::vector<fs::path>& files, const CifarKind& kind) {
  std::vector<uint8_t> pixels;
  RawSplit s;
  for (const auto& f : files) read_cifar_file(f, kind, pixels, s.labels);
  const auto n = static_cast<int64_t>(s.labels.size());
  s.image = ImageLayout{3, 32, 32, Layout::NCHW};
  s.values = Tensor(DType::UInt8, {n, 3, 32, 32});
  std::copy(pixels.begin(), pixels.end(), s.values.ptr<uint8_t>());
  return s;
}

// N of a CIFAR-10 training file's name "data_batch_N.bin" (N of 1 to 4 digits); -1 for any
// other name.
int batch_number(const std::string& name) {
  constexpr std::string_view kPrefix = "data_batch_", kSuffix = ".bin";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return -1;
  const std::string_view digits =
      std::string_view(name).substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  int n = 0;
  for (char c : digits) n = n * 10 + (c - '0');
  return n;
}

}  // namespace

RawData read_cifar_folder(const std::string& dir_arg) {
  fs::path dir(dir_arg);
  if (!fs::is_directory(dir)) throw UserError("data folder not found: " + dir_arg);
  // The archives unpack into a sub-folder; accept the folder above it too.
  for (const char* sub : {"cifar-10-batches-bin", "cifar-100-binary"})
    if (fs::is_directory(dir / sub)) dir /= sub;
  RawData r;
  if (fs::exists(dir / "train.bin") || fs::exists(dir / "test.bin")) {
    for (const char* f : {"train.bin", "test.bin"})
      if (!fs::is_regular_file(dir / f)) throw UserError("CIFAR-100 folder " + dir.string() + " has no " + f);
    r.train = read_split({dir / "train.bin"}, kCifar100);
    r.test = read_split({dir / "test.bin"}, kCifar100);
    return r;
  }
  std::vector<std::pair<int, fs::path>> batches;
  for (const auto& e : fs::directory_iterator(dir))
    if (const int n = batch_number(e.path().filename().string()); n >= 0) batches.emplace_back(n, e.path());
  if (batches.empty())
    throw UserError("data folder " + dir.string() +
                    " holds neither CIFAR-10 (data_batch_1.bin ... "
                    "test_batch.bin) nor CIFAR-100 (train.bin, test.bin) files");
  if (!fs::is_regular_file(dir / "test_batch.bin"))
    throw UserError("CIFAR-10 folder " + dir.string() + " has no test_batch.bin");
  std::sort(batches.begin(), batches.end());
  std::vector<fs::path> train_files;
  for (auto& [k, p] : batches) train_files.push_back(p);
  r.train = read_split(train_files, kCifar10);
  r.test = read_split({dir / "test_batch.bin"}, kCifar10);
  return r;
}

}  // namespace cbt
