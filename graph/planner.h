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
  size_t arena_bytes = 0;                // planned size
  size_t naive_bytes = 0;                // one buffer per value, nothing reused
  size_t alignment = 256;
};

// Plans every node output that is not in `external` (inputs, parameters, gradients bound
// elsewhere). Values in `keep_alive` live until the end (e.g. the loss, read after a step).
MemoryPlan plan_memory(const std::vector<Node>& nodes, const std::map<std::string, ValueType>& types,
                       const std::set<std::string>& external,
                       const std::set<std::string>& keep_alive, size_t alignment = 256);

std::string format_bytes(size_t bytes);

}  // namespace cbt
