// NumPy .npy reading and writing (format 1.0/2.0, little-endian, C order) for host tensors.
#pragma once
#include <string>

#include "graph/tensor.h"

namespace cbt {

// Throws UserError naming the file on anything it cannot read (bad magic, Fortran order,
// unsupported dtype, size mismatch).
Tensor load_npy(const std::string& path);
// Writes atomically (temporary file, then rename); throws UserError on failure.
void save_npy(const std::string& path, const Tensor& t);

}  // namespace cbt
