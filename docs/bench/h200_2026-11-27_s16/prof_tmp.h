#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
namespace cbt_prof {
inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline bool on() {
  static bool v = std::getenv("CBT_PROFILE") != nullptr;
  return v;
}
struct Span {
  const char* w;
  double t0 = now();
  ~Span() {
    if (on()) std::fprintf(stderr, "PROFILE %s %.4f s\n", w, now() - t0);
  }
};
}  // namespace cbt_prof
