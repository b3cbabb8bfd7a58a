// Loading a training and a test set in any supported format (IDX, CIFAR binary, NumPy
// pairs, image folders): normalisation per channel, the layout the model's input takes
// (NCHW or NHWC), and the augmentation of training batches.
#pragma once
#include <string>

#include "graph/ir.h"
#include "runtime/dataset.h"
#include "runtime/normalize.h"

namespace cbt {

enum class DataFormat { Auto, Idx, Cifar, Npy, Images };

struct DataOptions {
  std::string dir = kDefaultDataDir;
  DataFormat format = DataFormat::Auto;
  NormalizeSpec normalize;  // Default: Fashion-MNIST's constants for IDX, none for float .npy
                            // inputs, the training set's own statistics otherwise
  Augmentation augment;
  double test_split = 0;  // image folders without train/ and test/
  uint64_t seed = 42;     // which images --test-split holds out
  // The model's input per sample (batch axis dropped; -1 where unknown); empty: no model,
  // the samples stay NCHW.
  Shape sample_shape;
};

// "auto", "idx", "cifar", "npy", "images"; otherwise a UserError that names `option`.
DataFormat parse_data_format(const std::string& s, const std::string& option = "--data-format");
const char* data_format_name(DataFormat f);

// The format of the files in `dir`; UserError when none is recognised.
DataFormat detect_data_format(const std::string& dir);

// The model's data input (its first input) per sample, -1 for symbolic dimensions.
Shape model_sample_shape(const Graph& model);

// Reads, normalises and lays out both splits. Image samples are laid out NHWC when the
// model's input is (H, W, C) with C the data's channels, NCHW otherwise; images of another
// size than the model's are a UserError.
TrainTestData load_data(const DataOptions& opt);

}  // namespace cbt
