// Learning-rate schedules over training steps: constant, cosine, step/multistep, with an
// optional linear warm-up.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cbt {

struct LrSchedule {
  enum class Kind { Constant, Cosine, Step };
  Kind kind = Kind::Constant;
  float base_lr = 0.01f;
  int64_t total_steps = 1;  // cosine: decays to min_lr at the last step
  float min_lr = 0.0f;
  std::vector<int64_t> milestones;  // step: multiply by gamma at each of these steps
  float gamma = 0.1f;
  int64_t warmup_steps = 0;  // linear ramp from base_lr/warmup_steps

  float at(int64_t step) const;  // step counts from 0
};

// Parses "constant", "cosine", "step"; throws UserError otherwise.
LrSchedule::Kind parse_lr_schedule(const std::string& s);

}  // namespace cbt
