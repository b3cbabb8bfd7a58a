// An in-memory data set of random 1x28x28 images and labels of 10 classes, for fit() tests.
#pragma once
#include <cstdint>
#include <random>

#include "runtime/dataset.h"

namespace cbt::test {

inline Dataset random_dataset(int64_t n, uint32_t seed = 5) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  Dataset d;
  d.images = Tensor(DType::Float32, {n, 1, 28, 28});
  d.labels = Tensor(DType::Int64, {n});
  d.num_classes = 10;
  for (int64_t i = 0; i < d.images.numel(); ++i) d.images.ptr<float>()[i] = nd(rng);
  for (int64_t i = 0; i < n; ++i) d.labels.ptr<int64_t>()[i] = static_cast<int64_t>(rng() % 10);
  return d;
}

}  // namespace cbt::test
