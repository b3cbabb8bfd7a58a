// Memory planner: lifetimes of intermediate tensors and offsets in one arena per learner,
// so that buffers of dead values are reused.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt {

struct MemoryPlan {
  std::map<std::string, size_t> offset;  // planned value -> byte offset in the arena
  // The output of a view op (Flatten, Reshape, Squeeze, Unsqueeze, ReshapeTo) -> the value
  // whose bytes it is (planned or external); it gets no memory of its own, its readers keep
  // that value alive, and the op's kernel then copies nothing.
  std::map<std::string, std::string> alias;
  size_t arena_bytes = 0;  // planned size
  size_t naive_bytes = 0;  // one buffer per value, nothing reused
  size_t alignment = 256;
};

// Plans every node output that is not in `external` (inputs, parameters, gradients bound
// elsewhere). Values in `keep_alive` live until the end (e.g. the loss, read after a step).
// A view op's output that is neither external nor kept alive is an alias of its input (no
// kernel of the step writes to a value it reads, so sharing the bytes is safe).
MemoryPlan plan_memory(const std::vector<Node>& nodes, const std::map<std::string, ValueType>& types,
                       const std::set<std::string>& external, const std::set<std::string>& keep_alive,
                       size_t alignment = 256);

// Whether `n` only gives its first input another shape (same bytes, same order).
bool is_view_op(const Node& n);

std::string format_bytes(size_t bytes);

}  // namespace cbt
