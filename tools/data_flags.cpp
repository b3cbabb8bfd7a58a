// --data-format, --normalize, --augment, --test-split.
#include "tools/data_flags.h"

#include <CLI/CLI.hpp>

#include "runtime/augment.h"
#include "tools/number_checks.h"

namespace cbt::cli {

void add_data_flags(CLI::App& app, DataArgs& d) {
  app.add_option("--data-format", d.format,
                 "format of --data: idx, cifar (CIFAR-10/100 binary), npy (pairs of .npy files), images "
                 "(class folders of PNG/JPEG), or auto (told by the files)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "idx", "cifar", "npy", "images"}));
  app.add_option("--normalize", d.normalize,
                 "per-channel normalisation of pixels/255: MEANS:STDS (e.g. 0.49,0.48,0.45:0.25,0.24,0.26), "
                 "'dataset' (the training set's statistics) or 'none'; default: Fashion-MNIST's for IDX, "
                 "'dataset' for other pixels, 'none' for float .npy");
  app.add_option("--augment", d.augment,
                 "training-batch augmentation: crop:PAD (random crop of the zero-padded image), flip "
                 "(random horizontal flip), or both as crop:4,flip");
  app.add_option("--test-split", d.test_split,
                 "image folders without train/ and test/: the fraction of each class held out for testing")
      ->check(finite_number<double>())
      ->check(CLI::Range(0.0, 1.0));
}

DataOptions data_options(const std::string& dir, const DataArgs& d, const Graph& model, uint64_t seed) {
  DataOptions o;
  o.dir = dir;
  o.format = parse_data_format(d.format);
  o.normalize = parse_normalization(d.normalize);
  o.augment = parse_augmentation(d.augment);
  o.test_split = d.test_split;
  o.seed = seed;
  o.sample_shape = model_sample_shape(model);
  return o;
}

}  // namespace cbt::cli
