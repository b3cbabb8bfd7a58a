// The processes that train one model together (started by mpirun): rank, size, and the few
// host collectives the runtime needs, each bounded by a deadline so that a dead or hung rank
// ends the run with a message naming it instead of a hang. One process alone is a group of
// size 1 whose collectives do nothing.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cbt {

// A rank died, hangs, or the ranks disagree: every rank stops (exit code 4).
class RankFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ProcessGroupOptions {
  double timeout_s = 60;  // --collective-timeout: longest wait for the other ranks
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // among the ranks of this machine
  virtual double timeout_s() const = 0;

  // In place, over all ranks. `what` names the collective in failure messages.
  virtual void all_reduce_sum(float* data, size_t n, const char* what) = 0;
  virtual void all_reduce_sum(double* data, size_t n, const char* what) = 0;
  // root's bytes to every rank (same `bytes` everywhere).
  virtual void broadcast(void* data, size_t bytes, int root, const char* what) = 0;
  // Rank 0 receives every rank's string in rank order; the others receive nothing.
  virtual std::vector<std::string> gather(const std::string& mine, const char* what) = 0;
  // Rank 0 passes one string per rank; every rank receives its own.
  virtual std::string scatter(const std::vector<std::string>& parts, const char* what) = 0;
  // Returns once every rank has called it.
  virtual void barrier(const char* what) = 0;
  // Ends the run on every rank with this exit code (a no-op for one process).
  virtual void abort(int code) = 0;

  bool is_root() const { return rank() == 0; }
};

// This process alone.
std::shared_ptr<ProcessGroup> single_process_group();

// The group of this launch: MPI when an MPI launcher (mpirun, srun) started this process,
// else this process alone. UserError when the launch asks for several processes this build
// cannot join (no MPI), or when torchrun-style RANK / WORLD_SIZE disagree with MPI's.
std::shared_ptr<ProcessGroup> init_process_group(const ProcessGroupOptions& opt);

// Ends MPI at exit: MPI_Finalize after success (rc == 0); MPI_Abort(rc) otherwise, so that
// every other rank stops too. Nothing without MPI.
void finish_process_group(int rc);

}  // namespace cbt
