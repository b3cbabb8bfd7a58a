// Crash-safe file writing: temporary file in the same folder, fsync, rename, fsync folder.
#pragma once
#include <string>
#include <string_view>

namespace cbt {

// Replaces `path` with `contents` atomically; throws UserError naming the path on any
// failure and leaves no temporary file and no partial `path` behind.
void write_file_atomically(const std::string& path, std::string_view contents);

// Creates `dir` when missing and checks that a file can be made in it, so that a run whose
// outputs could never be written fails before training rather than hours into it; throws
// UserError naming `what` ("checkpoint folder") and the folder.
void ensure_writable_folder(const std::string& dir, const std::string& what);

}  // namespace cbt
