// How much memory the host can still give this process: what /proc/meminfo says, bounded by the
// memory limit of the process's control group (a container started with a memory limit, a
// systemd slice), where the kernel ends a process that goes past it however much the machine
// has free.
#pragma once
#include <cstddef>
#include <string>

namespace cbt {

struct HostMemory {
  size_t available = 0;  // bytes that can still be had (MemAvailable + SwapFree, or the group's headroom)
  size_t total = 0;      // MemTotal, or the group's limit when lower; 0 when nothing could be read
};

// /proc/meminfo's MemAvailable + SwapFree and MemTotal, each lowered to the tightest memory limit
// of the process's cgroup and its ancestors: cgroup v2's memory.max less memory.current plus the
// reclaimable inactive_file of memory.stat, or cgroup v1's memory.limit_in_bytes less
// memory.usage_in_bytes plus total_inactive_file. `root` is put before every path (tests give a
// folder laid out like / ).
HostMemory host_memory(const std::string& root = "");

}  // namespace cbt
