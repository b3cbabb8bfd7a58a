// The data flags of `cbtrain MODEL.onnx` (format, normalisation, augmentation, split) and
// their translation into the runtime's DataOptions.
#pragma once
#include <string>

#include "runtime/data_source.h"

namespace CLI {
class App;
}

namespace cbt::cli {

struct DataArgs {
  std::string format = "auto";  // auto, idx, cifar, npy, images
  std::string normalize;        // "", none, dataset, MEANS:STDS
  std::string augment;          // "", none, crop:PAD, flip, crop:PAD,flip
  double test_split = 0;        // image folders without train/ and test/
};

void add_data_flags(CLI::App& app, DataArgs& d);

// Parses the flags (UserError on bad values) for the data in `dir` and the model's input.
DataOptions data_options(const std::string& dir, const DataArgs& d, const Graph& model, uint64_t seed);

}  // namespace cbt::cli
