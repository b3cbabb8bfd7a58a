// Gathering the ranks' training states into one checkpoint on rank 0, and handing each rank
// its part on resume.
#include "runtime/checkpoint_ranks.h"

#include <charconv>

namespace cbt {

std::optional<std::string> shift_learner_name(const std::string& name, int shift, int limit) {
  const std::string prefix = "learner";
  const size_t slash = name.find('/');
  if (name.rfind(prefix, 0) != 0 || slash == std::string::npos) return name;
  int j = 0;
  auto [end, ec] = std::from_chars(name.data() + prefix.size(), name.data() + slash, j);
  if (ec != std::errc() || end != name.data() + slash) return name;
  const int shifted = j + shift;
  if (shifted < 0 || shifted >= limit) return std::nullopt;
  return prefix + std::to_string(shifted) + name.substr(slash);
}

TrainerState gather_trainer_state(ProcessGroup& pg, const TrainerState& mine, int local_learners) {
  if (pg.size() == 1) return mine;
  Checkpoint c;
  c.state = mine;
  auto parts = pg.gather(encode_checkpoint(c), "the gathering of the checkpoint");
  if (!pg.is_root()) return {};
  TrainerState all;
  all.rounds = mine.rounds;
  all.lr = mine.lr;
  const int total = local_learners * pg.size();
  for (int r = 0; r < pg.size(); ++r) {
    Checkpoint part = decode_checkpoint(parts[r], "the state of rank " + std::to_string(r));
    for (auto& [name, t] : part.state.tensors) {
      const bool central = name.rfind("learner", 0) != 0;
      if (central && r != 0) continue;  // every rank holds the same central model
      auto global = shift_learner_name(name, r * local_learners, total);
      CBT_CHECK(global, "rank ", r, " sent ", name, " beyond its ", local_learners, " learners");
      all.tensors.emplace_back(*global, std::move(t));
    }
  }
  return all;
}

std::optional<LoadedCheckpoint> load_latest_checkpoint_for_rank(ProcessGroup& pg, const std::string& dir,
                                                                int local_learners) {
  if (pg.size() == 1) return load_latest_checkpoint(dir);
  std::optional<LoadedCheckpoint> loaded;
  std::vector<std::string> parts;
  if (pg.is_root()) {
    loaded = load_latest_checkpoint(dir);
    parts.resize(static_cast<size_t>(pg.size()));
    for (int r = 0; loaded && r < pg.size(); ++r) {
      Checkpoint c;
      c.meta = loaded->checkpoint.meta;
      c.state.rounds = loaded->checkpoint.state.rounds;
      c.state.lr = loaded->checkpoint.state.lr;
      for (const auto& [name, t] : loaded->checkpoint.state.tensors)
        if (auto local = shift_learner_name(name, -r * local_learners, local_learners))
          c.state.tensors.emplace_back(*local, t);
      // A header (the path and the files skipped, one a line; paths hold no NUL), NUL, the part.
      std::string header = loaded->path + "\n";
      for (const auto& s : loaded->skipped) header += s + "\n";
      parts[r] = header + '\0' + encode_checkpoint(c);
    }
  }
  std::string mine = pg.scatter(parts, "the distribution of the checkpoint");
  if (mine.empty()) return std::nullopt;
  const size_t nul = mine.find('\0');
  CBT_CHECK(nul != std::string::npos, "checkpoint part without its header");
  LoadedCheckpoint out;
  out.checkpoint = decode_checkpoint(std::string_view(mine).substr(nul + 1),
                                     "the checkpoint part of rank " + std::to_string(pg.rank()));
  const std::string header = mine.substr(0, nul);
  size_t pos = 0;
  for (bool first = true; pos < header.size(); first = false) {
    size_t nl = header.find('\n', pos);
    std::string line = header.substr(pos, nl - pos);
    if (first)
      out.path = line;
    else
      out.skipped.push_back(line);
    pos = nl + 1;
  }
  return out;
}

}  // namespace cbt
