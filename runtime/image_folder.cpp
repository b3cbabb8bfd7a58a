// A folder of PNG / JPEG images with one sub-folder per class, split into train/ and test/
// or held out per class by a seeded draw.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "graph/errors.h"
#include "runtime/data_formats.h"
#include "runtime/image_decode.h"

namespace cbt {

namespace {

namespace fs = std::filesystem;

struct Sample {
  std::string path;
  int64_t label;
};

bool is_image_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

std::vector<std::string> sorted_subfolders(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The image files of one class folder, sorted by name.
std::vector<std::string> class_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && is_image_name(e.path())) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  if (out.empty()) throw UserError("class folder " + dir.string() + " holds no .png, .jpg or .jpeg images");
  return out;
}

RawSplit decode_split(const std::vector<Sample>& samples, int64_t channels, int64_t& height, int64_t& width,
                      std::string& size_source) {
  RawSplit s;
  const auto n = static_cast<int64_t>(samples.size());
  std::vector<DecodedImage> images(static_cast<size_t>(n));
  // Decoding dominates; errors are kept and the first (in file order) is reported.
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::atomic<bool> failed{false};
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t i = 0; i < n; ++i) {
    if (failed) continue;
    try {
      images[i] = decode_image(samples[i].path, channels);
    } catch (const std::exception& e) {
      errors[i] = e.what();
      failed = true;
    }
  }
  for (const auto& e : errors)
    if (!e.empty()) throw UserError(e);
  for (int64_t i = 0; i < n; ++i) {
    const DecodedImage& im = images[i];
    if (height == 0) {
      height = im.height;
      width = im.width;
      size_source = samples[i].path;
    }
    if (im.height != height || im.width != width)
      throw UserError("image file " + samples[i].path + " is " + std::to_string(im.width) + "x" +
                      std::to_string(im.height) + " (width x height) but " + size_source + " is " +
                      std::to_string(width) + "x" + std::to_string(height) +
                      "; all images must have the same size (the model's)");
  }
  s.image = ImageLayout{channels, height, width, Layout::NCHW};
  s.values = Tensor(DType::UInt8, {n, channels, height, width});
  uint8_t* dst = s.values.ptr<uint8_t>();
  const int64_t hw = height * width;
  for (int64_t i = 0; i < n; ++i) {
    // (H, W, C) as decoded -> (C, H, W).
    const uint8_t* src = images[i].pixels.data();
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t k = 0; k < hw; ++k) dst[(i * channels + c) * hw + k] = src[k * channels + c];
    s.labels.push_back(samples[i].label);
  }
  return s;
}

}  // namespace

RawData read_image_folder(const std::string& dir_arg, const ImageFolderOptions& opt) {
  const fs::path dir(dir_arg);
  if (!fs::is_directory(dir)) throw UserError("data folder not found: " + dir_arg);
  std::vector<Sample> train, test;
  std::vector<std::string> classes;
  if (fs::is_directory(dir / "train")) {
    if (!fs::is_directory(dir / "test"))
      throw UserError("image folder " + dir_arg + " has train/ but no test/ sub-folder");
    classes = sorted_subfolders(dir / "train");
    if (classes.empty()) throw UserError("image folder " + (dir / "train").string() + " has no class sub-folders");
    std::map<std::string, int64_t> index;
    for (size_t c = 0; c < classes.size(); ++c) index[classes[c]] = static_cast<int64_t>(c);
    for (size_t c = 0; c < classes.size(); ++c)
      for (auto& f : class_files(dir / "train" / classes[c])) train.push_back({f, static_cast<int64_t>(c)});
    for (const auto& name : sorted_subfolders(dir / "test")) {
      auto it = index.find(name);
      if (it == index.end())
        throw UserError("image folder " + (dir / "test" / name).string() + " is a class that train/ does not have");
      for (auto& f : class_files(dir / "test" / name)) test.push_back({f, it->second});
    }
    if (test.empty()) throw UserError("image folder " + (dir / "test").string() + " has no class sub-folders");
  } else {
    if (!(opt.test_split > 0 && opt.test_split < 1))
      throw UserError("image folder " + dir_arg +
                      " has no train/ and test/ sub-folders; put the classes "
                      "there, or pass --test-split F (0 < F < 1) to hold out a fraction of each class");
    classes = sorted_subfolders(dir);
    if (classes.size() < 2)
      throw UserError("image folder " + dir_arg + " needs one sub-folder per class (at least 2), found " +
                      std::to_string(classes.size()));
    std::mt19937_64 rng(opt.seed * 0x9E3779B97F4A7C15ull + 0x1234567ull);
    for (size_t c = 0; c < classes.size(); ++c) {
      auto files = class_files(dir / classes[c]);
      std::shuffle(files.begin(), files.end(), rng);
      const auto held = static_cast<size_t>(std::llround(opt.test_split * static_cast<double>(files.size())));
      for (size_t i = 0; i < files.size(); ++i)
        (i < held ? test : train).push_back({files[i], static_cast<int64_t>(c)});
    }
    if (train.empty() || test.empty())
      throw UserError("--test-split " + std::to_string(opt.test_split) + " leaves " +
                      (train.empty() ? "no training" : "no test") + " images in " + dir_arg);
  }
  int64_t channels = opt.channels;
  if (channels == 0) {
    // Grey when every image is grey; one colour image makes the set RGB.
    channels = 1;
    for (const auto* split : {&train, &test})
      for (const auto& s : *split)
        if (channels == 1 && image_channels(s.path) == 3) channels = 3;
  }
  if (channels != 1 && channels != 3)
    throw UserError("images can be read as 1 (grey) or 3 (RGB) channels, not " + std::to_string(channels));
  RawData r;
  int64_t h = 0, w = 0;
  std::string size_source;
  r.train = decode_split(train, channels, h, w, size_source);
  r.test = decode_split(test, channels, h, w, size_source);
  return r;
}

}  // namespace cbt
