// TFRecord framing (length, masked CRC-32C of the length, data, masked CRC-32C of the data)
// around TensorBoard Event protos.
#include "tensorboard/event_file.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "event.pb.h"
#include "graph/errors.h"

namespace cbt::tensorboard {

namespace fs = std::filesystem;

namespace {

std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected Castagnoli
    t[i] = c;
  }
  return t;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void put_le(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

}  // namespace

uint32_t crc32c(const void* data, size_t n) {
  static const std::array<uint32_t, 256> table = make_crc32c_table();
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(const void* data, size_t n) {
  const uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

EventWriter::EventWriter(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw UserError("cannot create the TensorBoard folder " + dir);
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  path_ = (fs::path(dir) / ("events.out.tfevents." + std::to_string(static_cast<long long>(now_seconds())) + "." +
                            host + "." + std::to_string(getpid()) + ".cbtrain"))
              .string();
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw UserError("cannot write the TensorBoard event file " + path_);
  Event e;
  e.set_wall_time(now_seconds());
  e.set_file_version("brain.Event:2");
  write_record(e.SerializeAsString());
  flush();
}

EventWriter::~EventWriter() {
  if (out_.is_open()) out_.flush();
}

void EventWriter::write_record(const std::string& data) {
  std::string len;
  put_le(len, data.size(), 8);
  std::string rec = len;
  put_le(rec, masked_crc32c(len.data(), len.size()), 4);
  rec += data;
  put_le(rec, masked_crc32c(data.data(), data.size()), 4);
  out_.write(rec.data(), static_cast<std::streamsize>(rec.size()));
  if (!out_) throw UserError("cannot write the TensorBoard event file " + path_ + " (disk full?)");
}

void EventWriter::scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  Event e;
  e.set_wall_time(now_seconds());
  e.set_step(step);
  Summary* s = e.mutable_summary();
  for (const auto& [tag, v] : values) {
    SummaryValue* sv = s->add_value();
    sv->set_tag(tag);
    sv->set_simple_value(static_cast<float>(v));
  }
  write_record(e.SerializeAsString());
}

void EventWriter::flush() {
  out_.flush();
  if (!out_) throw UserError("cannot write the TensorBoard event file " + path_ + " (disk full?)");
}

namespace {

void read_file(const std::string& path, ScalarSeries& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open the event file " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  size_t pos = 0;
  int64_t index = 0;
  while (pos < bytes.size()) {
    const std::string where = path + ": record " + std::to_string(index);
    if (bytes.size() - pos < 12) throw UserError(where + " is truncated");
    const char* p = bytes.data() + pos;
    const uint64_t len = get_le(p, 8);
    if (get_le(p + 8, 4) != masked_crc32c(p, 8)) throw UserError(where + ": the length's CRC does not match");
    if (len > bytes.size() - pos - 12 || bytes.size() - pos - 12 - len < 4) throw UserError(where + " is truncated");
    const char* data = p + 12;
    if (get_le(data + len, 4) != masked_crc32c(data, len)) throw UserError(where + ": the data's CRC does not match");
    Event e;
    if (!e.ParseFromArray(data, static_cast<int>(len))) throw UserError(where + " is not an Event");
    if (e.has_summary())
      for (const SummaryValue& v : e.summary().value())
        if (v.has_simple_value()) out[v.tag()].push_back({e.step(), e.wall_time(), v.simple_value()});
    pos += 12 + len + 4;
    ++index;
  }
}

}  // namespace

ScalarSeries read_scalars(const std::string& file_or_dir) {
  ScalarSeries out;
  std::error_code ec;
  if (fs::is_directory(file_or_dir, ec)) {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(file_or_dir, ec))
      if (entry.is_regular_file() && entry.path().filename().string().find("tfevents") != std::string::npos)
        files.push_back(entry.path().string());
    if (files.empty()) throw UserError(file_or_dir + " holds no TensorBoard event file (*tfevents*)");
    std::sort(files.begin(), files.end());
    for (const auto& f : files) read_file(f, out);
  } else {
    read_file(file_or_dir, out);
  }
  return out;
}

}  // namespace cbt::tensorboard
