// Checkpoints of a run over several processes: rank 0 writes and reads the files, holding
// every rank's learners under their global numbers (rank r's learner j is learner r*k+j), so
// that the file looks like the checkpoint of one process with all the learners.
#pragma once
#include <optional>
#include <string>

#include "runtime/checkpoint.h"
#include "runtime/process_group.h"

namespace cbt {

// Every rank's state to rank 0 (`local_learners` learners per rank). Rank 0 receives the
// whole state (its own central model), the other ranks an empty one.
TrainerState gather_trainer_state(ProcessGroup& pg, const TrainerState& mine, int local_learners);

// Rank 0 reads the newest intact checkpoint of `dir` and sends every rank the meta data, the
// central model and its own learners, renumbered from 0; nullopt on every rank when there is
// none. `skipped` and `path` are filled on every rank.
std::optional<LoadedCheckpoint> load_latest_checkpoint_for_rank(ProcessGroup& pg, const std::string& dir,
                                                                int local_learners);

// "learner<j>/<role>" with j shifted by `shift`; other names unchanged. nullopt when j + shift
// falls outside [0, limit).
std::optional<std::string> shift_learner_name(const std::string& name, int shift, int limit);

}  // namespace cbt
