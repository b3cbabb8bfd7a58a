// Crash-safe file writing: temporary file in the same folder, fsync, rename, fsync folder.
// The one writer of every file cbtrain leaves behind (models, checkpoints, configurations,
// .npy, plots, convolution choices); here so that onnx_import and runtime share it.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace cbt {

// Replaces `path` atomically with what `body` writes to the file descriptor it is given
// (`body` returns 0, or an errno when it fails). Throws UserError naming the path and the step
// that failed ("cannot write PATH (fsync): ..."), and leaves no temporary file and no partial
// `path` behind; a folder that cannot be synced (EINVAL on some filesystems) is accepted, any
// other failure to sync it is an error.
void write_file_atomically(const std::string& path, const std::function<int(int fd)>& body);
// The same with `contents` as the whole file.
void write_file_atomically(const std::string& path, std::string_view contents);

// Writes all `n` bytes at `p` to `fd`, retrying on EINTR; returns 0 or the errno of the failure.
int write_all(int fd, const char* p, size_t n);

// Creates `dir` when missing and checks that a file can be made in it, so that a run whose
// outputs could never be written fails before training rather than hours into it; throws
// UserError naming `what` ("checkpoint folder") and the folder.
void ensure_writable_folder(const std::string& dir, const std::string& what);

}  // namespace cbt
