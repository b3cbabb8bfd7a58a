// Which of cuDNN's candidate algorithms a convolution op takes, from what cuDNN said about
// each: plain data, so that the rule is tested without a GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cbt::cuda {

struct AlgoCandidate {
  float ms = 0;                // measured time (Find), or unused for a heuristic ranking
  bool deterministic = false;  // cuDNN's determinism flag
  bool usable = false;         // succeeded, accurate, allowed math, within the workspace
};

// The index of the candidate to take out of cuDNN's order (-1: none is usable).
// Measured (`measured`, the order is by time): the fastest usable one, or the first usable
// deterministic one when it is at most `det_slack` slower (0.25: up to 25% slower).
// Heuristic ranking: the first usable deterministic one, else the first usable one.
int choose_candidate(const std::vector<AlgoCandidate>& c, bool measured, double det_slack);

// What cuDNN's backend API notes of an engine, as plain flags.
struct EngineNotes {
  bool tensor_core = false;          // runs on tensor cores (TF32 for float32 data)
  bool down_convert = false;         // converts its inputs to a narrower type
  bool reduced_precision = false;    // reduces in a narrower type
  bool fft = false;                  // FFT or Winograd transforms: errors far above FMA rounding
  bool nondeterministic = false;     // results depend on scheduling (atomic sums)
  bool runtime_compilation = false;  // compiles a kernel when its plan is built
};

// What an engine's data and math may be: float32 with FMA sums; float32 with TF32 tensor cores
// allowed (--precision tf32); bfloat16 data (a channels-last convolution of --precision bf16)
// with float32 sums, on tensor cores (bfloat16 products are exact in them).
enum class EnginePrecision : uint8_t { Float32, Tf32, BFloat16 };
inline EnginePrecision float_precision(bool tf32) { return tf32 ? EnginePrecision::Tf32 : EnginePrecision::Float32; }

// Whether cbtrain may run an engine with these notes: never one that narrows its inputs or
// its sums, computes through FFT or Winograd transforms, or compiles at run time; tensor cores
// only with Tf32 or BFloat16; under `deterministic` only deterministic ones.
bool engine_allowed(const EngineNotes& n, EnginePrecision p, bool deterministic);

// The largest relative error (max |got - ref| / max |ref| on random inputs, against a plain
// engine's result) an engine may show and still be taken. float32 engines differ from
// the reference by the order of their sums: 1e-4. TF32 rounds every input to 10 bits of
// mantissa (a unit roundoff of 2^-11, about 4.9e-4), so under --precision tf32 tensor-core
// engines are off by a few times that: 5e-3, still below the Winograd engines' 1e-2 and
// more. bfloat16 outputs are rounded to 8 bits (2^-8, 3.9e-3, each of the two results being
// compared): 1.6e-2. A NaN never passes.
double max_relative_error(EnginePrecision p);
bool accurate_enough(double relative_error, EnginePrecision p);

// The slack the convolutions use: 0.25, or CBT_CONV_DET_SLACK from the environment (a
// non-negative number; 0 takes the fastest always). Read once.
double deterministic_slack();

// How many copies of a convolution the engines are timed as at once, for `learners` learners
// on the GPU: min(learners, 8), or CBT_CONV_CONCURRENCY (1 to 16) when set, for experiments.
int timing_concurrency(int learners);

// What makes two GPUs the same model for the convolution choices, as one line of text
// without spaces between its fields' names and values: name, compute capability,
// multiprocessors, memory, shared memory and L2. Empty when the properties cannot be read.
std::string device_signature(int device);

// The first device of the process (the lowest index) of the same model as `device`: name,
// compute capability, multiprocessors, memory and caches alike. A convolution's choice is
// cached under that device and serves every GPU alike, so that one search serves them all
// (they searched in turn before, one after another). `device` itself when none is alike or
// its properties cannot be read.
int first_device_alike(int device);

}  // namespace cbt::cuda
