// Labelled data sets in memory: samples as float32 (normalised), labels as int64, the image
// geometry of a sample and the augmentation of training batches; the IDX (MNIST) loader.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph/tensor.h"

namespace cbt {

// Where a sample's channel axis lies: (C, H, W) as PyTorch exports take it, or (H, W, C) as
// Keras / tf2onnx models do.
enum class Layout { NCHW, NHWC };

// One sample seen as an image; channels == 0 for data that are not images (flat vectors).
struct ImageLayout {
  int64_t channels = 0, height = 0, width = 0;
  Layout layout = Layout::NCHW;
  bool is_image() const { return channels > 0; }
  int64_t numel() const { return channels * height * width; }
};

// Random crop of a zero-padded image (offsets in [-pad, pad]) and horizontal flip, applied
// to training batches only.
struct Augmentation {
  int pad = 0;
  bool flip = false;
  bool enabled() const { return pad > 0 || flip; }
};

struct Dataset {
  Tensor images;  // (N, ...) float32, normalised
  Tensor labels;  // (N,) int64
  int64_t num_classes = 0;
  ImageLayout image;     // the geometry of one sample when it is an image
  Augmentation augment;  // applied when training batches are gathered
  int64_t size() const { return labels.defined() ? labels.dim(0) : 0; }
  // Elements of one sample.
  int64_t sample_numel() const { return size() ? images.numel() / size() : 0; }
};

// Per-channel normalisation of 8-bit pixels: x = (p / 255 - mean[c]) / stddev[c]; one value
// serves every channel.
struct Normalization {
  std::vector<float> mean{0.2860f};  // Fashion-MNIST pixel mean and standard deviation (of x/255)
  std::vector<float> stddev{0.3530f};
};

// Reads an IDX image file (magic 0x803, uint8, plain or gzip) and its label file (0x801).
// Bad or truncated files throw UserError naming the file.
Dataset load_idx(const std::string& images_path, const std::string& labels_path, const Normalization& norm);

struct TrainTestData {
  Dataset train, test;
};

// Loads train-images-idx3-ubyte[.gz] etc. from `dir`.
TrainTestData load_idx_folder(const std::string& dir, const Normalization& norm);

// Debian's dataset-fashion-mnist folder.
inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

// Shuffled order of sample indices for one epoch; the same (seed, epoch) gives the same order.
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch);

// Copies the samples `indices` of `d` into host tensors of the given shapes. With `choices`
// (3 per sample, see augment.h) each sample is cropped and flipped as they say.
void gather_batch(const Dataset& d, const int64_t* indices, int64_t count, Tensor& x, Tensor& y,
                  const int32_t* choices = nullptr);

}  // namespace cbt
