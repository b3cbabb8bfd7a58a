// Labelled image data sets in memory, loaded from IDX files (MNIST / Fashion-MNIST format).
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph/tensor.h"

namespace cbt {

struct Dataset {
  Tensor images;  // (N, ...) float32, normalised
  Tensor labels;  // (N,) int64
  int64_t num_classes = 0;
  int64_t size() const { return labels.defined() ? labels.dim(0) : 0; }
  // Elements of one sample.
  int64_t sample_numel() const { return size() ? images.numel() / size() : 0; }
};

struct Normalization {
  float mean = 0.2860f;  // Fashion-MNIST pixel mean and standard deviation (of x/255)
  float stddev = 0.3530f;
};

// Reads an IDX image file (magic 0x803, uint8, plain or gzip) and its label file (0x801).
// Bad or truncated files throw UserError naming the file.
Dataset load_idx(const std::string& images_path, const std::string& labels_path,
                 const Normalization& norm);

struct TrainTestData {
  Dataset train, test;
};

// Loads train-images-idx3-ubyte[.gz] etc. from `dir`.
TrainTestData load_idx_folder(const std::string& dir, const Normalization& norm);

// Debian's dataset-fashion-mnist folder.
inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

// Shuffled order of sample indices for one epoch; the same (seed, epoch) gives the same order.
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch);

// Copies the samples `indices` of `d` into host tensors of the given shapes.
void gather_batch(const Dataset& d, const int64_t* indices, int64_t count, Tensor& x, Tensor& y);

}  // namespace cbt
