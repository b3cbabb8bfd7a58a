// Host memory left to this process: /proc/meminfo and the cgroup's memory limit.
#include "graph/host_memory.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace cbt {
namespace {
namespace fs = std::filesystem;

// A limit this large is "no limit" (cgroup v1 writes 2^63 rounded down to a page).
constexpr size_t kNoLimit = size_t{1} << 60;

// The first line of `path` as a number of bytes; nothing for "max", a missing file or text.
std::optional<size_t> read_bytes(const fs::path& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word)) return std::nullopt;
  try {
    size_t used = 0;
    unsigned long long v = std::stoull(word, &used);
    if (used != word.size()) return std::nullopt;
    return static_cast<size_t>(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The value of `key` in a memory.stat file ("key value" lines); 0 when absent.
size_t stat_value(const fs::path& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  unsigned long long v = 0;
  while (in >> k >> v)
    if (k == key) return static_cast<size_t>(v);
  return 0;
}

struct Limit {
  size_t limit = 0;
  size_t headroom = 0;  // limit - usage + reclaimable page cache
};

// The group in `dir` when it has a limit: `limit_file`, `usage_file`, and `cache_key` of memory.stat.
std::optional<Limit> group_limit(const fs::path& dir, const char* limit_file, const char* usage_file,
                                 const char* cache_key) {
  const std::optional<size_t> limit = read_bytes(dir / limit_file);
  if (!limit || *limit >= kNoLimit) return std::nullopt;
  const size_t usage = read_bytes(dir / usage_file).value_or(0);
  const size_t cache = stat_value(dir / "memory.stat", cache_key);
  const size_t used = usage > cache ? usage - cache : 0;
  return Limit{*limit, *limit > used ? *limit - used : 0};
}

// `best` becomes `l` when l leaves less headroom.
void keep_tighter(std::optional<Limit>& best, const std::optional<Limit>& l) {
  if (l && (!best || l->headroom < best->headroom)) best = l;
}

// The tightest limit from the group at `leaf` up to `top` (both folders of one hierarchy).
std::optional<Limit> tightest(fs::path leaf, const fs::path& top, const char* limit_file, const char* usage_file,
                              const char* cache_key) {
  std::optional<Limit> best;
  for (;;) {
    keep_tighter(best, group_limit(leaf, limit_file, usage_file, cache_key));
    if (leaf == top || !leaf.has_relative_path() || leaf.parent_path() == leaf) break;
    leaf = leaf.parent_path();
    if (leaf.string().size() < top.string().size()) break;
  }
  return best;
}

// The process's cgroup limit, v2 (a "0::PATH" line of /proc/self/cgroup) or v1 (a line
// "N:...memory...:PATH"); in a container the group's path may not exist under the mount, whose
// top is then the container's own group.
std::optional<Limit> cgroup_limit(const std::string& root) {
  std::ifstream in(root + "/proc/self/cgroup");
  std::string line;
  std::optional<Limit> best;
  while (std::getline(in, line)) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    fs::path top;
    const char *limit_file = nullptr, *usage_file = nullptr, *cache_key = nullptr;
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      top = fs::path(root + "/sys/fs/cgroup");
      limit_file = "memory.max", usage_file = "memory.current", cache_key = "inactive_file";
    } else {
      std::stringstream names(controllers);
      std::string name;
      bool memory = false;
      while (std::getline(names, name, ',')) memory = memory || name == "memory";
      if (!memory) continue;
      top = fs::path(root + "/sys/fs/cgroup/memory");
      limit_file = "memory.limit_in_bytes", usage_file = "memory.usage_in_bytes", cache_key = "total_inactive_file";
    }
    std::error_code ec;
    const fs::path rel = fs::path(path).relative_path();
    const fs::path leaf = rel.empty() ? top : top / rel;
    keep_tighter(best, tightest(fs::is_directory(leaf, ec) ? leaf : top, top, limit_file, usage_file, cache_key));
  }
  return best;
}
}  // namespace

HostMemory host_memory(const std::string& root) {
  std::ifstream in(root + "/proc/meminfo");
  size_t available = 0, swap_free = 0, total = 0;
  bool have_available = false;
  std::string key, unit;
  size_t kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") available = kib << 10, have_available = true;
    if (key == "SwapFree:") swap_free = kib << 10;
    if (key == "MemTotal:") total = kib << 10;
  }
  if (!have_available) return {};
  HostMemory m{available + swap_free, total};
  if (const std::optional<Limit> l = cgroup_limit(root)) {
    m.available = std::min(m.available, l->headroom);
    m.total = std::min(m.total, l->limit);
  }
  return m;
}

}  // namespace cbt
