// The readers of the data formats on disk (IDX, CIFAR binary, NumPy pairs, image folders):
// each returns the splits as read, before normalisation and the model's layout
// (data_source.h puts them together). Bad files throw UserError naming the file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/dataset.h"

namespace cbt {

struct RawSplit {
  Tensor values;                // UInt8 (N, C, H, W) pixels, or Float32 (N, ...) from .npy
  std::vector<int64_t> labels;  // (N), each >= 0
  ImageLayout image;            // NCHW; channels == 0 when the samples are not images
};

struct RawData {
  RawSplit train, test;
};

// IDX image (0x803) and label (0x801) files, plain or gzip.
RawSplit read_idx(const std::string& images_path, const std::string& labels_path);
// train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], t10k-... in `dir`.
RawData read_idx_folder(const std::string& dir);

// CIFAR-10 (data_batch_*.bin + test_batch.bin: 1 label byte + 3072 pixel bytes a record) or
// CIFAR-100 (train.bin + test.bin: coarse and fine label bytes, the fine label is used).
RawData read_cifar_folder(const std::string& dir);

// Pairs of .npy files: train_images.npy / train_labels.npy (also train_x / train_y and
// x_train / y_train), the same for test. Inputs (N, C, H, W), (N, H, W, C) (last axis 1 or 3,
// turned into NCHW), (N, H, W) or (N, D); uint8 or float; labels integer (N).
RawData read_npy_folder(const std::string& dir);

struct ImageFolderOptions {
  int64_t channels = 0;   // 1 or 3 to convert every image to; 0: 1 when all are grey, else 3
  double test_split = 0;  // without train/ and test/: the fraction of each class held out
  uint64_t seed = 42;     // which files are held out
};
// PNG and JPEG files in DIR/train/<class>/ and DIR/test/<class>/ (or DIR/<class>/ with
// test_split); classes are the sorted folder names. All images must have the same size.
RawData read_image_folder(const std::string& dir, const ImageFolderOptions& opt);

}  // namespace cbt
