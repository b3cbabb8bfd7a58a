// TensorBoard event files: scalars written as Event protos in TFRecord framing, and read back
// (for `cbtrain plot` and tests). No protobuf type appears in this header.
#pragma once
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cbt::tensorboard {

// CRC-32C (Castagnoli) of `n` bytes, and TFRecord's masked form of it.
uint32_t crc32c(const void* data, size_t n);
uint32_t masked_crc32c(const void* data, size_t n);

class EventWriter {
 public:
  // Creates `dir` when needed and a new events.out.tfevents.<time>.<host>.<pid> file in it,
  // starting with the file_version event; UserError when it cannot.
  explicit EventWriter(const std::string& dir);
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;
  ~EventWriter();

  // One event at `step` holding every (tag, value) pair as a simple_value scalar.
  void scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values);
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& data);
  std::string path_;
  std::ofstream out_;
};

struct ScalarPoint {
  int64_t step = 0;
  double wall_time = 0;
  double value = 0;
};
using ScalarSeries = std::map<std::string, std::vector<ScalarPoint>>;

// Every scalar of an event file, or of every *tfevents* file of a folder (in name order);
// UserError on a missing file, a bad CRC or a record that does not parse.
ScalarSeries read_scalars(const std::string& file_or_dir);

}  // namespace cbt::tensorboard
