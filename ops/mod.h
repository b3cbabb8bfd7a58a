// Mod's rule for integers, shared by the CPU and CUDA kernels: fmod 1 takes the dividend's sign
// (C's %), fmod 0 the divisor's (Python's %); a divisor of 0 gives 0 (a GPU kernel cannot stop
// the program to refuse it). Floats take fmod 1 only (the schema checks), as std::fmod / fmodf.
#pragma once

namespace cbt {

template <class T>
constexpr T integer_mod(T a, T b, bool fmod) {
  if (b == 0) return T(0);
  T r = a % b;
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace cbt
