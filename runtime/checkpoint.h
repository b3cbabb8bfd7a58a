// Crash-safe training checkpoints: one self-checking file per saved round (DIR/ckpt-<round>.cbt),
// written atomically; resume takes the newest one whose checksum holds.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/lr_schedule.h"
#include "runtime/trainer.h"

namespace cbt {

// --checkpoint-dir, --checkpoint-every, --resume, --force-resume.
struct CheckpointOptions {
  std::string dir;           // empty: no checkpoints
  int64_t every_rounds = 0;  // 0: not by rounds
  int64_t every_epochs = 0;  // 0: not by epochs
  bool resume = false;
  bool force_resume = false;  // resume even with another model or configuration
};

// Parses --checkpoint-every: "N" (rounds) or "Ne" (epochs), N >= 1; UserError otherwise.
void parse_checkpoint_every(const std::string& s, CheckpointOptions& opt);

// What a checkpoint says about itself besides the state.
struct CheckpointMeta {
  uint64_t fingerprint = 0;    // model_fingerprint of the model trained
  std::string config;          // checkpoint_config: one "key=value" line per setting
  int64_t epoch = 1;           // the next round to run is round_in_epoch of epoch (from 1);
  int64_t round_in_epoch = 0;  // it may equal the epoch's round count: only evaluation is left
  int64_t round = 0;           // rounds done in all
};

struct Checkpoint {
  CheckpointMeta meta;
  TrainerState state;
};

// A hash of the model's structure: initializer names, shapes and dtypes, node op types and
// domains, and the opset (not the weights: they are what training changes).
uint64_t model_fingerprint(const Graph& model);

// The resolved configuration that decides the trajectory: batch, learners, algorithm,
// optimizer and its hyper-parameters, schedule, seed, loss, training-set size, determinism.
std::string checkpoint_config(const TrainerOptions& opt, const LrSchedule& schedule, uint64_t seed,
                              int64_t train_samples);

// The file format (little-endian): magic "CBTCKPT1", u32 format version, u32 reserved,
// u64 payload bytes, u32 CRC-32 (zlib) of the payload, then the payload: fingerprint,
// configuration, position, round count and learning rate, then every state tensor (name,
// dtype, dims, raw data).
std::string encode_checkpoint(const Checkpoint& c);
// UserError naming `what` for a wrong magic or version, a bad checksum or a truncated file.
Checkpoint decode_checkpoint(std::string_view bytes, const std::string& what);
Checkpoint read_checkpoint(const std::string& path);

// DIR/ckpt-<round, 12 digits>.cbt
std::string checkpoint_path(const std::string& dir, int64_t round);
// The checkpoint files of `dir`, newest (highest round) first; temporary files of
// interrupted writes are not listed.
std::vector<std::string> list_checkpoints(const std::string& dir);

// Writes `c` atomically (creating `dir` if needed); only once it is durable are older
// checkpoints beyond the newest `keep` and leftover temporary files removed. Returns the path.
std::string write_checkpoint(const std::string& dir, const Checkpoint& c, int keep = 2);

struct LoadedCheckpoint {
  Checkpoint checkpoint;
  std::string path;
  std::vector<std::string> skipped;  // "path: why" for newer files that failed their checks
};
// The newest checkpoint of `dir` that reads back intact, falling back to older ones;
// nullopt when there is none.
std::optional<LoadedCheckpoint> load_latest_checkpoint(const std::string& dir);

// Refuses (UserError, naming `path` and the differences) a checkpoint of another model or
// configuration; with `force` it only reports the differences to `log`.
void check_resumable(const CheckpointMeta& saved, const CheckpointMeta& now, bool force, const std::string& path,
                     std::ostream& log);

// The name of the first state tensor holding a NaN or infinity ("" when all are finite).
std::string first_non_finite(const TrainerState& s);

}  // namespace cbt
