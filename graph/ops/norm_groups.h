// The groups of InstanceNormalization (one a channel) and GroupNormalization (num_groups),
// shared by their schema and their CPU and CUDA kernels (one truth for the group count).
#pragma once
#include <cstdint>

#include "graph/ir.h"

namespace cbt {

// The group count of node `n` over an input of `channels` channels (the schema has checked
// that num_groups is there and divides them).
inline int64_t norm_groups(const Node& n, int64_t channels) {
  return n.op_type == "InstanceNormalization" ? channels : n.attrs.get_int("num_groups", 1);
}

}  // namespace cbt
