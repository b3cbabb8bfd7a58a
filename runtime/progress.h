// What a person watching a run sees: a redrawn progress bar per epoch on a terminal, plain
// periodic lines elsewhere (CI logs, files).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

namespace cbt {

enum class ProgressStyle {
  Bar,    // one line per epoch, redrawn in place with '\r' (throttled): a terminal
  Lines,  // one line every `log_every` rounds: pipes and files
  Off,
};

// "auto" (Bar when stdout is a terminal, else Lines), "bar", "lines", "off"; UserError otherwise.
ProgressStyle parse_progress_style(const std::string& s, bool stdout_is_terminal);

struct ProgressOptions {
  ProgressStyle style = ProgressStyle::Lines;
  int64_t log_every = 200;      // Lines: rounds between lines (0: none)
  double redraw_seconds = 0.1;  // Bar: at most this often, plus the last round of an epoch
  int bar_width = 30;
};

class Progress {
 public:
  Progress(std::ostream& out, const ProgressOptions& opt) : out_(out), opt_(opt) {}
  ~Progress();

  // An epoch of `rounds` rounds starts at round `first` (not 0 after a resume) and will stop
  // after round `last` (< rounds when a step limit ends it early; -1: rounds).
  void begin_epoch(int64_t epoch, int64_t epochs, int64_t rounds, int64_t first, int64_t last = -1);
  // The epoch's rounds changed (the learners tuned while training): `rounds` in all.
  void set_rounds(int64_t rounds);
  // After round `done` of the epoch (1-based): the epoch's mean loss so far, the images
  // trained since begin_epoch and the seconds they took.
  void update(int64_t done, double loss, double images, double seconds);
  // Ends the bar's line so that what follows starts on a fresh one.
  void end_epoch();

 private:
  std::string bar_line(int64_t done, double loss, double ips, double eta) const;

  std::ostream& out_;
  ProgressOptions opt_;
  int64_t epoch_ = 0, epochs_ = 0, rounds_ = 0, first_ = 0, last_ = 0;
  double last_draw_ = -1;
  size_t drawn_width_ = 0;  // characters of the bar now on screen (0: none)
};

// "1:02:03" or "4:05": a duration for people.
std::string format_duration(double seconds);

}  // namespace cbt
