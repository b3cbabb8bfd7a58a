// Crash-safe file writing: temporary file in the same folder, fsync, rename, fsync folder.
#pragma once
#include <string>
#include <string_view>

namespace cbt {

// Replaces `path` with `contents` atomically; throws UserError naming the path on any
// failure and leaves no temporary file and no partial `path` behind.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace cbt
