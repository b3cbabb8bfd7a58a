// Cases for the CUDA-vs-CPU harness: a forward node with random inputs. The harness runs it
// on both devices, then emits its backward nodes through the gradient rule (random dY) and
// runs each of those on both devices too, comparing every output within the case's
// tolerances. Every registered CUDA kernel must be reached by at least one case.
#pragma once
#include <string>
#include <vector>

#include "graph/ir.h"

namespace cbt::test {

struct CudaCase {
  std::string name;                 // unique, e.g. "Conv/3x3_stride2_pad1_batch1"
  Node node;                        // forward node (ONNX or cbtrain domain)
  std::vector<Tensor> inputs;       // host tensors (float32 / int64 ...), never all zeros
  bool training = true;             // apply the training rewrite (BatchNorm, Dropout)
  bool check_backward = true;       // also compare the backward nodes of the gradient rule
  double rtol = 1e-4, atol = 1e-5;  // float32 tolerances for this case
  int64_t opset = 17;
};

bool register_cuda_case(CudaCase c);
const std::vector<CudaCase>& cuda_cases();

}  // namespace cbt::test

#define CBT_CUDA_CASE_CAT2(a, b) a##b
#define CBT_CUDA_CASE_CAT(a, b) CBT_CUDA_CASE_CAT2(a, b)
// Registers cases from a function body returning std::vector<CudaCase>.
#define CBT_CUDA_CASES(fn)                                                 \
  static const bool CBT_CUDA_CASE_CAT(cbt_cuda_cases_, __COUNTER__) = [] { \
    for (auto& c : fn()) ::cbt::test::register_cuda_case(std::move(c));    \
    return true;                                                           \
  }()
