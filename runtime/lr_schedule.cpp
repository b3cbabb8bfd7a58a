// Learning-rate schedules.
#include "runtime/lr_schedule.h"

#include <cmath>

#include "graph/errors.h"

namespace cbt {

float LrSchedule::at(int64_t step) const {
  float lr = base_lr;
  if (warmup_steps > 0 && step < warmup_steps)
    return base_lr * static_cast<float>(step + 1) / static_cast<float>(warmup_steps);
  switch (kind) {
    case Kind::Constant:
      break;
    case Kind::Cosine: {
      int64_t span = std::max<int64_t>(1, total_steps - warmup_steps);
      double t = std::min(1.0, static_cast<double>(step - warmup_steps) / span);
      lr = static_cast<float>(min_lr + 0.5 * (base_lr - min_lr) * (1.0 + std::cos(M_PI * t)));
      break;
    }
    case Kind::Step:
      for (int64_t m : milestones)
        if (step >= m) lr *= gamma;
      break;
  }
  return lr;
}

LrSchedule::Kind parse_lr_schedule(const std::string& s) {
  if (s == "constant") return LrSchedule::Kind::Constant;
  if (s == "cosine") return LrSchedule::Kind::Cosine;
  if (s == "step") return LrSchedule::Kind::Step;
  throw UserError("--lr-schedule must be constant, cosine or step, not '" + s + "'");
}

}  // namespace cbt
