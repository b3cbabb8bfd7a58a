// Trainer: a whole SMA round on one GPU as one CUDA graph. Queued round by round, every
// learner costs the host a handful of calls (its gather, its gradient's and its update's
// graphs, the events between its queue and the synchronisation queue): with 16 small learners
// the host issues a round about as fast as the GPU runs it. Captured once, the round is one
// launch on the synchronisation queue: a fork to every learner's queue, each learner's gather,
// forward, backward and local update, a join, the sum of the corrections and the update of z.
// Graphs replay in order on that queue, so each round's updates read the z of the round
// before, as in DESIGN.md. The learners' queues take no work of their own meanwhile; anything
// that queues work there first makes them wait for the graphs (leave_round_graph).
#include "runtime/trainer.h"

namespace cbt {

bool Trainer::round_graph_usable() const {
  // The learners' programs have run once directly (their kernels' caches) and replay graphs
  // of their own: their steps can be captured, and none of them is random.
  if (!opt_.round_graph || !opt_.cuda_graphs || round_graph_failed_) return false;
  if (opt_.algorithm != Algorithm::Sma || opt_.device.is_cpu() || groups_.size() != 1 || all_reduce_)
    return false;
  if (rounds_ < 2) return false;
  for (const auto& l : learners_)
    if (!l->replays_graphs()) return false;
  return true;
}

std::shared_ptr<void> Trainer::capture_round_graph(bool gathers) {
  DeviceGroup& g = groups_[0];
  Backend& q = *g.sync;
  if (!q.begin_capture()) return nullptr;
  try {
    auto fork = q.record();
    const int64_t b = opt_.batch_size;
    for (size_t j = 0; j < learners_.size(); ++j) {
      Learner& l = *learners_[j];
      l.backend().wait(fork);
      if (gathers)
        resident_[0]->gather_at(start_cell_, static_cast<int64_t>(j) * b, b, l.input(), l.labels(), l.backend());
      l.enqueue_round();
    }
    sum_learners(g);  // the join: the synchronisation queue waits for every learner
    central_update(g);
    return q.end_capture();
  } catch (const InternalError&) {
    // A kernel that cannot be captured: end the capture (which fails too) and queue rounds
    // one by one from now on.
    try {
      q.end_capture();
    } catch (const InternalError&) {
    }
    return nullptr;
  }
}

float Trainer::graph_round(const int64_t* start, bool read_loss) {
  DeviceGroup& g = groups_[0];
  Backend& q = *g.sync;
  const bool gathers = start != nullptr;
  if (gathers) {
    const int64_t k = static_cast<int64_t>(learners_.size());
    CBT_CHECK(*start >= 0 && *start + k * opt_.batch_size <= resident_positions_, "round_resident: positions ",
              *start, " to ", *start + k * opt_.batch_size, " of an order of ", resident_positions_);
    if (!start_cell_.defined()) start_cell_ = q.empty(DType::Int64, {1});
    Tensor h(DType::Int64, {1});
    h.ptr<int64_t>()[0] = *start;
    q.copy_from_host(start_cell_, h);
  }
  if (!in_round_graph_) {
    // The first graph after work on the learners' own queues starts after that work.
    for (auto& l : learners_) q.wait(l->backend().record());
    in_round_graph_ = true;
  }
  std::shared_ptr<void>& graph = round_graphs_[gathers ? 1 : 0];
  if (!graph) graph = capture_round_graph(gathers);
  if (!graph) {
    round_graph_failed_ = true;  // round_graph_usable() is false from now on
    return gathers ? round_resident(*start, read_loss) : round({}, {}, read_loss);
  }
  q.replay(graph);
  ++rounds_;
  ++graph_rounds_;
  if (!read_loss) return NAN;
  // The losses were written inside the graph: once it is done, each learner reads its own.
  q.synchronize();
  return mean_loss();
}

void Trainer::leave_round_graph() {
  if (!in_round_graph_) return;
  auto done = groups_[0].sync->record();
  for (auto& l : learners_) l->backend().wait(done);
  groups_[0].central_ready = done;
  in_round_graph_ = false;
}

}  // namespace cbt
