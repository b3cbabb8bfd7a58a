// A training set held in device memory: uploaded once, each batch gathered on the device by
// shuffled indices. Backends without such support (the CPU) return none and the trainer
// copies host batches instead.
#pragma once
#include <memory>
#include <vector>

#include "runtime/backend.h"
#include "runtime/dataset.h"

namespace cbt {

class ResidentDataset {
 public:
  virtual ~ResidentDataset() = default;
  // The epoch's order of sample indices and, for an augmented set, its random choices (3 per
  // position, augment.h); uploaded once per epoch.
  virtual void set_order(const std::vector<int64_t>& order, const std::vector<int32_t>& augment) = 0;
  // x (count, ...) and y (count) on the backend's device receive the samples at positions
  // [start, start + count) of the order, cropped and flipped as the choices of those
  // positions say; queued on `on` (a backend of that device, e.g. the learner that reads x
  // and y), asynchronous. `on` must have waited for the last set_order, which is queued on
  // the backend the data set was made for.
  virtual void gather(int64_t start, int64_t count, const Tensor& x, const Tensor& y, Backend& on) = 0;
};

// The data set on `backend`'s device when it takes at most half of the free memory there;
// nullptr on the CPU or when it does not fit.
std::unique_ptr<ResidentDataset> make_resident_dataset(const Dataset& d, Backend& backend);

}  // namespace cbt
