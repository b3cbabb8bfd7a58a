// libFuzzer target: arbitrary bytes as an .onnx file through cbt::load_model (built by scripts/fuzz.sh).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graph/errors.h"
#include "onnx_import/model_io.h"

namespace {

// The importer takes a path, so every input goes through one file per process. It lives in
// a private folder of its own because external data is resolved next to the model: a fixed
// data file there lets mutated models reach the external-data reader without touching
// anything outside the folder.
struct Scratch {
  std::string dir;
  std::string model;

  Scratch() {
    const char* base = std::getenv("CBT_FUZZ_TMP");
    std::string root = base ? base : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    std::string tmpl = root + "/cbt_fuzz.XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      std::perror("onnx_import_fuzzer: mkdtemp");
      std::abort();
    }
    dir = tmpl;
    model = dir + "/model.onnx";
    std::string data(4096, '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 37);
    write_file(dir + "/weights.bin", reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  ~Scratch() {
    ::unlink(model.c_str());
    ::unlink((dir + "/weights.bin").c_str());
    ::rmdir(dir.c_str());
  }

  static void write_file(const std::string& path, const uint8_t* data, size_t size) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
      std::perror("onnx_import_fuzzer: open");
      std::abort();
    }
    while (size > 0) {
      ssize_t n = ::write(fd, data, size);
      if (n <= 0) {
        std::perror("onnx_import_fuzzer: write");
        std::abort();
      }
      data += n;
      size -= static_cast<size_t>(n);
    }
    ::close(fd);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Scratch scratch;
  Scratch::write_file(scratch.model, data, size);
  // Tight budgets so that a hostile size field is rejected instead of exhausting memory;
  // 4 MiB still admits every seed model.
  cbt::ImportOptions opts;
  opts.max_file_bytes = 4ull << 20;
  opts.max_tensor_bytes = 64ull << 20;
  try {
    cbt::ImportedModel m = cbt::load_model(scratch.model, opts);
    (void)m;
  } catch (const cbt::UserError&) {
    // Rejection with a message (ModelError derives from it): the expected outcome for garbage.
  }
  // Anything else (InternalError, std::bad_alloc, std::out_of_range...) escapes and libFuzzer
  // reports it as a crash: the importer must turn bad input into a UserError.
  return 0;
}
