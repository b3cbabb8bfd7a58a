// bfloat16 on the host: the top 16 bits of a float32, rounded to nearest even. The CPU kernels
// of the channels-last conversions and the tests' references use these; CUDA code uses
// __nv_bfloat16, which rounds the same way.
#pragma once
#include <cstdint>
#include <cstring>

namespace cbt {

inline uint16_t bf16_from_float(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN stays a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float float_from_bf16(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// f rounded to the nearest bfloat16, as a float.
inline float round_to_bf16(float f) { return float_from_bf16(bf16_from_float(f)); }

}  // namespace cbt
