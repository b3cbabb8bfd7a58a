// Device copies of ops/kernel.h's counter-based random numbers; the arithmetic must stay
// bit-identical to the host versions so that CPU and GPU dropout masks agree.
#pragma once
#include <cstdint>

namespace cbt::cuda {

// SplitMix64 of seed and index, as rng_hash in ops/kernel.h.
__device__ inline uint64_t rng_hash(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) from the top 24 bits (exact in float), as rng_uniform in ops/kernel.h.
__device__ inline float rng_uniform(uint64_t seed, uint64_t index) {
  return static_cast<float>(rng_hash(seed, index) >> 40) * (1.0f / 16777216.0f);
}

}  // namespace cbt::cuda
