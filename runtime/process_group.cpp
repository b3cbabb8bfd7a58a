// The group of one process, the choice between it and MPI at start-up, and the check of
// torchrun-style environment variables.
#include "runtime/process_group.h"

#include <cstdlib>
#include <cstring>

#include "graph/errors.h"

namespace cbt {

#ifdef CBT_WITH_MPI
std::shared_ptr<ProcessGroup> init_mpi_process_group(const ProcessGroupOptions& opt);  // runtime/mpi/
void finish_mpi_process_group(int rc);
#endif

namespace {

class SingleProcessGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  double timeout_s() const override { return 0; }
  void all_reduce_sum(float*, size_t, const char*) override {}
  void all_reduce_sum(double*, size_t, const char*) override {}
  void broadcast(void*, size_t, int, const char*) override {}
  std::vector<std::string> gather(const std::string& mine, const char*) override { return {mine}; }
  std::string scatter(const std::vector<std::string>& parts, const char*) override {
    CBT_CHECK(parts.size() == 1, "scatter of ", parts.size(), " parts over one process");
    return parts[0];
  }
  void barrier(const char*) override {}
  void abort(int) override {}
};

// An environment variable as a number; -1 when unset or not a number.
long env_number(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return *end == '\0' && n >= 0 ? n : -1;
}

// The process count an MPI launcher announced (Open MPI, MPICH/Hydra and Slurm's PMI,
// PMIx); 0 when no MPI launcher started this process.
long mpi_launch_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    long n = env_number(name);
    if (n > 0) return n;
  }
  return std::getenv("PMIX_RANK") ? 1 : 0;
}

// torchrun-style RANK / WORLD_SIZE, where set, must describe the same launch as MPI.
void check_torchrun_variables(int rank, int size) {
  const long world = env_number("WORLD_SIZE"), r = env_number("RANK");
  if (world > 0 && world != size)
    throw UserError("WORLD_SIZE=" + std::to_string(world) + " but " + std::to_string(size) +
                    " process(es) were started" +
                    (size == 1 ? "; cbtrain starts several processes with mpirun (mpirun -np " + std::to_string(world) +
                                     " cbtrain ...), not with torchrun"
                               : std::string()));
  if (world > 0 && r >= 0 && r != rank)
    throw UserError("RANK=" + std::to_string(r) + " but MPI gave this process rank " + std::to_string(rank));
}

}  // namespace

std::shared_ptr<ProcessGroup> single_process_group() { return std::make_shared<SingleProcessGroup>(); }

std::shared_ptr<ProcessGroup> init_process_group(const ProcessGroupOptions& opt) {
  if (!(opt.timeout_s > 0)) throw UserError("--collective-timeout must be a positive number of seconds");
  const long launched = mpi_launch_size();
  std::shared_ptr<ProcessGroup> g;
  if (launched > 0) {
#ifdef CBT_WITH_MPI
    g = init_mpi_process_group(opt);
#else
    if (launched > 1)
      throw UserError("started as one of " + std::to_string(launched) +
                      " MPI processes, but this cbtrain was built without MPI (install "
                      "libopenmpi-dev and rebuild)");
#endif
  }
  if (!g) g = single_process_group();
  check_torchrun_variables(g->rank(), g->size());
  return g;
}

void finish_process_group(int rc) {
#ifdef CBT_WITH_MPI
  finish_mpi_process_group(rc);
#endif
}

}  // namespace cbt
