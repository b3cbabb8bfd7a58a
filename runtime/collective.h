// Collectives across the devices of one process: the sum of one buffer per device, in place
// on every device (NCCL on GPUs). Used to reduce SMA corrections, gradients and BatchNorm
// statistics across GPUs after each GPU has reduced its own learners.
#pragma once
#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace cbt {

class AllReduce {
 public:
  virtual ~AllReduce() = default;
  // bufs[i] lives on backends[i] (of make_all_reduce); queued on each backend, in place.
  virtual void sum(const std::vector<Tensor>& bufs) = 0;
};

// nullptr for a single backend; NCCL for several CUDA backends of distinct GPUs; UserError
// otherwise.
std::unique_ptr<AllReduce> make_all_reduce(const std::vector<Backend*>& backends);

// Devices of a kind this process sees (CPU: 1).
int device_count(DeviceKind kind);

}  // namespace cbt
