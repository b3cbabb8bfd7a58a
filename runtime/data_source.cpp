// load_data(): format detection, the readers of data_formats.h, normalisation and layout.
#include "runtime/data_source.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "graph/errors.h"
#include "runtime/data_formats.h"

namespace cbt {

namespace {

namespace fs = std::filesystem;

// Channels of a per-sample model input (C, H, W) or (H, W, C); 0 when it does not say.
int64_t model_channels(const Shape& s) {
  if (s.size() != 3) return 0;
  auto is_c = [](int64_t v) { return v == 1 || v == 3; };
  if (is_c(s[0])) return s[0];
  if (is_c(s[2])) return s[2];
  return 0;
}

bool matches(const Shape& model, const Shape& data) {
  if (model.size() != data.size()) return false;
  for (size_t i = 0; i < model.size(); ++i)
    if (model[i] >= 0 && model[i] != data[i]) return false;
  return true;
}

// Mean and standard deviation per channel of float samples (N, C, HW).
Normalization float_statistics(const float* x, int64_t n, int64_t channels, int64_t hw) {
  Normalization out{{}, {}};
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < hw; ++k) {
        const double v = x[(i * channels + c) * hw + k];
        sum += v;
        sq += v * v;
      }
    const double count = static_cast<double>(n * hw), mean = sum / count, var = sq / count - mean * mean;
    out.mean.push_back(static_cast<float>(mean));
    out.stddev.push_back(var > 1e-12 ? static_cast<float>(std::sqrt(var)) : 1.0f);
  }
  return out;
}

Dataset to_dataset(RawSplit& s, const Normalization* norm) {
  Dataset d;
  const int64_t n = static_cast<int64_t>(s.labels.size());
  const int64_t per = n ? s.values.numel() / n : 0;
  const int64_t channels = s.image.is_image() ? s.image.channels : 1, hw = per / channels;
  if (s.values.dtype() == DType::UInt8) {
    const Normalization none{{0.0f}, {1.0f}};
    d.images = normalize_pixels(s.values.ptr<uint8_t>(), s.values.shape(), channels, hw, norm ? *norm : none);
  } else {
    d.images = s.values;
    if (norm) normalize_values(d.images.ptr<float>(), n, channels, hw, *norm);
  }
  d.image = s.image;
  d.labels = Tensor(DType::Int64, {n});
  std::copy(s.labels.begin(), s.labels.end(), d.labels.ptr<int64_t>());
  for (int64_t v : s.labels) d.num_classes = std::max(d.num_classes, v + 1);
  s.values = Tensor();
  return d;
}

// (N, C, H, W) -> (N, H, W, C).
void make_nhwc(Dataset& d) {
  const int64_t n = d.size(), c = d.image.channels, h = d.image.height, w = d.image.width;
  Tensor out(DType::Float32, {n, h, w, c});
  const float* src = d.images.ptr<float>();
  float* dst = out.ptr<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) dst[((i * h + y) * w + x) * c + k] = src[((i * c + k) * h + y) * w + x];
  d.images = out;
  d.image.layout = Layout::NHWC;
}

// Lays image samples out as the model takes them; UserError when their size differs.
void fit_layout(Dataset& d, const Shape& model, const std::string& dir) {
  if (!d.image.is_image() || model.size() != 3) return;  // flat inputs: fit() compares sizes
  const ImageLayout& l = d.image;
  const Shape nchw{l.channels, l.height, l.width}, nhwc{l.height, l.width, l.channels};
  if (matches(model, nchw)) {
    d.images = d.images.reshaped({d.size(), l.channels, l.height, l.width});
    return;
  }
  if (matches(model, nhwc)) return make_nhwc(d);
  throw UserError("the model takes samples of " + shape_str(model) + " but the images in " + dir + " are " +
                  std::to_string(l.channels) + " channel(s) of " + std::to_string(l.height) + "x" +
                  std::to_string(l.width) + " (height x width); use images of the model's size");
}

}  // namespace

DataFormat parse_data_format(const std::string& s, const std::string& option) {
  if (s == "auto") return DataFormat::Auto;
  if (s == "idx") return DataFormat::Idx;
  if (s == "cifar") return DataFormat::Cifar;
  if (s == "npy") return DataFormat::Npy;
  if (s == "images") return DataFormat::Images;
  throw UserError(option + " must be auto, idx, cifar, npy or images, not '" + s + "'");
}

const char* data_format_name(DataFormat f) {
  switch (f) {
    case DataFormat::Idx:
      return "idx";
    case DataFormat::Cifar:
      return "cifar";
    case DataFormat::Npy:
      return "npy";
    case DataFormat::Images:
      return "images";
    default:
      return "auto";
  }
}

DataFormat detect_data_format(const std::string& dir_arg) {
  const fs::path dir(dir_arg);
  if (!fs::is_directory(dir))
    throw UserError("data folder not found: " + dir_arg +
                    " (install Debian's dataset-fashion-mnist or pass --data DIR)");
  auto has = [&](const char* name) { return fs::exists(dir / name); };
  if (has("train-images-idx3-ubyte") || has("train-images-idx3-ubyte.gz")) return DataFormat::Idx;
  if (has("test_batch.bin") || has("data_batch_1.bin") || has("train.bin") || has("cifar-10-batches-bin") ||
      has("cifar-100-binary"))
    return DataFormat::Cifar;
  bool sub_with_images = false;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".npy") return DataFormat::Npy;
    if (e.is_directory() && !sub_with_images)
      for (const auto& f : fs::recursive_directory_iterator(e.path())) {
        const std::string ext = f.path().extension().string();
        if (f.is_regular_file() &&
            (ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".PNG" || ext == ".JPG" || ext == ".JPEG")) {
          sub_with_images = true;
          break;
        }
      }
  }
  if (sub_with_images) return DataFormat::Images;
  throw UserError("cannot tell the format of the data in " + dir_arg +
                  ": expected IDX files (train-images-idx3-ubyte[.gz] ...), CIFAR binaries (data_batch_1.bin, "
                  "test_batch.bin, or train.bin, test.bin), .npy pairs (train_images.npy, train_labels.npy, "
                  "...) "
                  "or class sub-folders of PNG/JPEG images; --data-format says it explicitly");
}

Shape model_sample_shape(const Graph& model) {
  Shape s;
  if (model.inputs.empty()) return s;
  const auto& dims = model.inputs[0].dims;
  for (size_t i = 1; i < dims.size(); ++i) s.push_back(dims[i].is_static() ? dims[i].value : -1);
  return s;
}

TrainTestData load_data(const DataOptions& opt) {
  const DataFormat format = opt.format == DataFormat::Auto ? detect_data_format(opt.dir) : opt.format;
  if (opt.test_split > 0 && format != DataFormat::Images)
    throw UserError("--test-split applies to image folders only; the " + std::string(data_format_name(format)) +
                    " data in " + opt.dir + " have their own test set");
  RawData raw;
  switch (format) {
    case DataFormat::Idx:
      raw = read_idx_folder(opt.dir);
      break;
    case DataFormat::Cifar:
      raw = read_cifar_folder(opt.dir);
      break;
    case DataFormat::Npy:
      raw = read_npy_folder(opt.dir);
      break;
    default: {
      ImageFolderOptions io;
      io.channels = model_channels(opt.sample_shape);
      io.test_split = opt.test_split;
      io.seed = opt.seed;
      raw = read_image_folder(opt.dir, io);
    }
  }
  const bool pixels = raw.train.values.dtype() == DType::UInt8;
  const int64_t n = static_cast<int64_t>(raw.train.labels.size());
  const int64_t channels = raw.train.image.is_image() ? raw.train.image.channels : 1;
  const int64_t hw = n ? raw.train.values.numel() / n / channels : 0;
  NormalizeSpec::Mode mode = opt.normalize.mode;
  if (mode == NormalizeSpec::Mode::Default)
    mode = format == DataFormat::Idx ? NormalizeSpec::Mode::Given
           : pixels                  ? NormalizeSpec::Mode::Dataset
                                     : NormalizeSpec::Mode::None;
  Normalization norm;  // Fashion-MNIST's by default
  if (opt.normalize.mode == NormalizeSpec::Mode::Given) norm = opt.normalize.given;
  if (mode == NormalizeSpec::Mode::Dataset)
    norm = pixels ? channel_statistics(raw.train.values.ptr<uint8_t>(), n, channels, hw)
                  : float_statistics(raw.train.values.ptr<float>(), n, channels, hw);
  if (mode != NormalizeSpec::Mode::None) check_normalization(norm, channels);
  const Normalization* use = mode == NormalizeSpec::Mode::None ? nullptr : &norm;

  TrainTestData t;
  t.train = to_dataset(raw.train, use);
  t.test = to_dataset(raw.test, use);
  t.train.num_classes = t.test.num_classes = std::max(t.train.num_classes, t.test.num_classes);
  for (Dataset* d : {&t.train, &t.test}) fit_layout(*d, opt.sample_shape, opt.dir);
  if (opt.augment.enabled()) {
    if (!t.train.image.is_image())
      throw UserError("--augment needs image samples, but the data in " + opt.dir + " are flat vectors");
    t.train.augment = opt.augment;
  }
  return t;
}

}  // namespace cbt
