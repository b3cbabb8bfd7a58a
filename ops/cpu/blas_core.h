// Which OpenBLAS kernels this process runs, and better ones where its CPU detection fell short.
#pragma once
#include <string>

namespace cbt::cpu {

// The kernel set OpenBLAS chose ("Haswell", "SkylakeX", "Prescott", ...).
std::string blas_core();

// OpenBLAS 0.3.21 picks kernels by the CPU's model number and falls back to its generic SSE3
// kernels ("Prescott") on models it does not know, which virtual machines often report
// although the CPU has AVX2 and FMA (measured: LeNet-5 CPU training 20% slower). Returns
// "Haswell" (its AVX2 + FMA kernels) when that happened and OPENBLAS_CORETYPE, which chooses
// the kernels when the library loads, is not set; nullptr otherwise.
const char* suggested_blas_core();

}  // namespace cbt::cpu
