// --conv-choices FILE: the GPUs' convolution choices read before training and written after
// (ops/cuda/conv_choices.h holds them and their text form).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "graph/atomic_file.h"
#include "ops/cuda/algo_choice.h"  // device_signature
#include "ops/cuda/conv_choices.h"

namespace cbt {

int cuda_device_count();  // cuda_backend.cpp: asks for the work queues before the first CUDA call

size_t cuda_load_conv_choices(const std::string& path, std::string* why) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return 0;  // the first run writes it
  std::ifstream in(path);
  if (!in) {
    if (why) *why = "cannot be read";
    return 0;
  }
  std::vector<std::string> here;
  for (int d = 0, n = cuda_device_count(); d < n; ++d) here.push_back(cuda::device_signature(d));
  // The lowest-numbered GPU of that signature: first_device_alike's own answer for it.
  auto local = [&](const std::string& signature) {
    for (size_t d = 0; d < here.size(); ++d)
      if (!here[d].empty() && here[d] == signature) return static_cast<int>(d);
    return -1;
  };
  return cuda::read_conv_choices(in, cuda::conv_choices_header(), local, why);
}

size_t cuda_save_conv_choices(const std::string& path) {
  cuda_device_count();  // in case this is the process's first CUDA call (the work queues)
  std::ostringstream out;
  const size_t n = cuda::write_conv_choices(out, cuda::conv_choices_header(), cuda::device_signature);
  write_file_atomically(path, out.str());
  return n;
}

}  // namespace cbt
