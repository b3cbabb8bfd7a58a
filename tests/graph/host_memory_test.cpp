// Host memory left to the process: /proc/meminfo bounded by the cgroup's limit, read from fake
// trees laid out like / (cgroup v2 and v1, a limit on an ancestor, no limit, nothing readable).
#include "graph/host_memory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "common/tiny_dataset.h"

namespace cbt {
namespace {
namespace fs = std::filesystem;

constexpr size_t kMiB = size_t{1} << 20;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A /proc/meminfo of `total`, `available` and `swap` MiB.
void meminfo(const fs::path& root, size_t total, size_t available, size_t swap) {
  write(root / "proc/meminfo", "MemTotal:       " + std::to_string(total * 1024) + " kB\nMemFree:        1000 kB\n" +
                                   "MemAvailable:   " + std::to_string(available * 1024) +
                                   " kB\nSwapFree:       " + std::to_string(swap * 1024) + " kB\n");
}

TEST(HostMemory, MeminfoAloneWithoutAGroupLimit) {
  std::mt19937 rng(7);
  const size_t total = 4096 + rng() % 100000, available = 1 + rng() % total, swap = rng() % 5000;
  fs::path root = test::temp_dir("host_memory_plain");
  meminfo(root, total, available, swap);
  HostMemory m = host_memory(root.string());
  EXPECT_EQ(m.total, total * kMiB);
  EXPECT_EQ(m.available, (available + swap) * kMiB);

  // cgroup v2 with "max" everywhere is no limit.
  write(root / "proc/self/cgroup", "0::/user.slice/session-1.scope\n");
  write(root / "sys/fs/cgroup/user.slice/session-1.scope/memory.max", "max\n");
  write(root / "sys/fs/cgroup/user.slice/memory.max", "max\n");
  m = host_memory(root.string());
  EXPECT_EQ(m.total, total * kMiB);
  EXPECT_EQ(m.available, (available + swap) * kMiB);
}

TEST(HostMemory, CgroupV2LimitOfTheGroupOrAnAncestorBoundsIt) {
  std::mt19937 rng(11);
  const size_t limit = 2000 + rng() % 1000, current = 500 + rng() % 1000, inactive = rng() % 400;
  fs::path root = test::temp_dir("host_memory_v2");
  meminfo(root, 64 * 1024, 32 * 1024, 1024);
  write(root / "proc/self/cgroup", "0::/docker/abc\n");
  const fs::path group = root / "sys/fs/cgroup/docker/abc";
  write(group / "memory.max", std::to_string(limit * kMiB) + "\n");
  write(group / "memory.current", std::to_string(current * kMiB) + "\n");
  write(group / "memory.stat",
        "anon 1\nfile 2\ninactive_file " + std::to_string(inactive * kMiB) + "\nactive_file 3\n");
  HostMemory m = host_memory(root.string());
  EXPECT_EQ(m.total, limit * kMiB);
  EXPECT_EQ(m.available, (limit - current + inactive) * kMiB);

  // A tighter limit on the parent wins; the group's own is looser.
  write(root / "sys/fs/cgroup/docker/memory.max", std::to_string(1000 * kMiB) + "\n");
  write(root / "sys/fs/cgroup/docker/memory.current", std::to_string(900 * kMiB) + "\n");
  m = host_memory(root.string());
  EXPECT_EQ(m.available, 100 * kMiB);
  EXPECT_EQ(m.total, 1000 * kMiB);

  // Usage beyond the limit (it happens while the kernel reclaims) leaves nothing, not a wrap.
  write(group / "memory.current", std::to_string((limit + 50) * kMiB) + "\n");
  write(group / "memory.stat", "inactive_file 0\n");
  EXPECT_EQ(host_memory(root.string()).available, 0u);
}

TEST(HostMemory, CgroupV1LimitAndItsMountInAContainer) {
  std::mt19937 rng(13);
  const size_t limit = 3000 + rng() % 1000, usage = 100 + rng() % 1000, inactive = rng() % 100;
  fs::path root = test::temp_dir("host_memory_v1");
  meminfo(root, 64 * 1024, 32 * 1024, 0);
  // The container sees its own group at the mount's top, not under the path /proc names.
  write(root / "proc/self/cgroup", "12:pids:/x\n4:memory:/process_api/d13e\n0::/\n");
  const fs::path top = root / "sys/fs/cgroup/memory";
  write(top / "memory.limit_in_bytes", std::to_string(limit * kMiB) + "\n");
  write(top / "memory.usage_in_bytes", std::to_string(usage * kMiB) + "\n");
  write(top / "memory.stat", "cache 5\ntotal_inactive_file " + std::to_string(inactive * kMiB) + "\n");
  HostMemory m = host_memory(root.string());
  EXPECT_EQ(m.total, limit * kMiB);
  EXPECT_EQ(m.available, (limit - usage + inactive) * kMiB);

  // v1's "no limit" (2^63 rounded down to a page) is none.
  write(top / "memory.limit_in_bytes", "9223372036854771712\n");
  m = host_memory(root.string());
  EXPECT_EQ(m.total, size_t{64} * 1024 * kMiB);
  EXPECT_EQ(m.available, size_t{32} * 1024 * kMiB);
}

TEST(HostMemory, NothingReadableIsZero) {
  fs::path root = test::temp_dir("host_memory_none");
  HostMemory m = host_memory(root.string());
  EXPECT_EQ(m.total, 0u);
  EXPECT_EQ(m.available, 0u);
  // This machine's own figures are there and consistent.
  m = host_memory();
  EXPECT_GT(m.total, 0u);
  EXPECT_LE(m.available, m.total + (size_t{1} << 40));
}

}  // namespace
}  // namespace cbt
