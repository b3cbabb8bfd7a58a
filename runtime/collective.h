// Collectives across the devices of one process and across processes: the sum of one buffer
// per device, in place on every device of every process (NCCL on GPUs, MPI between CPU
// processes). Used to reduce SMA corrections, gradients and BatchNorm statistics after each
// device has reduced its own learners.
#pragma once
#include <memory>
#include <vector>

#include "runtime/backend.h"
#include "runtime/process_group.h"

namespace cbt {

class AllReduce {
 public:
  virtual ~AllReduce() = default;
  // bufs[i] lives on backends[i] (of make_all_reduce); queued on each backend, in place.
  // `what` names the sum in failure messages. RankFailure when another process is gone.
  virtual void sum(const std::vector<Tensor>& bufs, const char* what) = 0;
};

// nullptr for a single backend of a single process; NCCL for CUDA backends of distinct GPUs
// (one communicator over every GPU of every process); MPI for the CPU backend of several
// processes; UserError otherwise.
std::unique_ptr<AllReduce> make_all_reduce(const std::vector<Backend*>& backends,
                                           const std::shared_ptr<ProcessGroup>& processes);

// Devices of a kind this process sees (CPU: 1).
int device_count(DeviceKind kind);

// Whether this cbtrain was built with its CUDA backend (without it device_count(CUDA) is 0).
bool built_with_cuda();

}  // namespace cbt
