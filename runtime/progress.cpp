// Progress display of the training loop: a '\r'-redrawn bar or plain periodic lines.
#include "runtime/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "graph/errors.h"

namespace cbt {

ProgressStyle parse_progress_style(const std::string& s, bool stdout_is_terminal) {
  if (s == "auto") return stdout_is_terminal ? ProgressStyle::Bar : ProgressStyle::Lines;
  if (s == "bar") return ProgressStyle::Bar;
  if (s == "lines") return ProgressStyle::Lines;
  if (s == "off") return ProgressStyle::Off;
  throw UserError("--progress must be auto, bar, lines or off, not '" + s + "'");
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long t = std::llround(seconds);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", t / 60, t % 60);
  return buf;
}

Progress::~Progress() {
  if (drawn_width_ > 0) out_ << "\n" << std::flush;
}

void Progress::begin_epoch(int64_t epoch, int64_t epochs, int64_t rounds, int64_t first, int64_t last) {
  epoch_ = epoch, epochs_ = epochs, rounds_ = rounds, first_ = first;
  last_ = last < 0 ? rounds : std::min(last, rounds);
  last_draw_ = -1;
}

void Progress::set_rounds(int64_t rounds) {
  if (last_ == rounds_) last_ = rounds;  // not cut short by a step limit
  rounds_ = rounds;
  last_ = std::min(last_, rounds_);
}

std::string Progress::bar_line(int64_t done, double loss, double ips, double eta) const {
  const int w = opt_.bar_width;
  const int filled = rounds_ > 0 ? static_cast<int>(w * done / rounds_) : w;
  std::string bar(static_cast<size_t>(w), ' ');
  for (int i = 0; i < filled; ++i) bar[static_cast<size_t>(i)] = '=';
  if (filled < w) bar[static_cast<size_t>(filled)] = '>';
  char buf[256];
  std::snprintf(buf, sizeof buf, "epoch %lld/%lld [%s] %lld/%lld  loss %.4f  %.0f img/s  ETA %s",
                static_cast<long long>(epoch_), static_cast<long long>(epochs_), bar.c_str(),
                static_cast<long long>(done), static_cast<long long>(rounds_), loss, ips, format_duration(eta).c_str());
  return buf;
}

void Progress::update(int64_t done, double loss, double images, double seconds) {
  if (opt_.style == ProgressStyle::Off) return;
  const double ips = seconds > 0 ? images / seconds : 0;
  const int64_t since = done - first_;
  const double eta = since > 0 ? seconds / static_cast<double>(since) * static_cast<double>(last_ - done) : NAN;
  if (opt_.style == ProgressStyle::Lines) {
    if (opt_.log_every <= 0 || done % opt_.log_every != 0) return;
    char buf[200];
    std::snprintf(buf, sizeof buf, "epoch %lld step %lld/%lld loss %.4f %.0f img/s ETA %s",
                  static_cast<long long>(epoch_), static_cast<long long>(done), static_cast<long long>(rounds_), loss,
                  ips, format_duration(eta).c_str());
    out_ << buf << std::endl;
    return;
  }
  // Bar: redraw at most every redraw_seconds (a terminal is slow to scroll through
  // thousands of updates a second), and always on the epoch's last round.
  if (done < last_ && last_draw_ >= 0 && seconds - last_draw_ < opt_.redraw_seconds) return;
  last_draw_ = seconds;
  std::string line = bar_line(done, loss, ips, eta);
  const size_t width = line.size();
  if (width < drawn_width_) line.append(drawn_width_ - width, ' ');  // erase a longer old line
  out_ << '\r' << line << std::flush;
  drawn_width_ = width;
}

void Progress::end_epoch() {
  if (drawn_width_ == 0) return;
  out_ << "\n" << std::flush;
  drawn_width_ = 0;
}

}  // namespace cbt
