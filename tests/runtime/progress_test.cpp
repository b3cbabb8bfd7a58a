// The progress display: bar redraws (throttled, '\r', erasing longer lines), plain lines
// every log_every rounds, and the choice between them.
#include "runtime/progress.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <sstream>

#include "graph/errors.h"

namespace cbt {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Progress, BarRedrawsInPlaceAtMostEveryRedrawInterval) {
  std::mt19937 rng(5);
  std::ostringstream out;
  {
    Progress p(out, {ProgressStyle::Bar, 0, 0.1, 20});
    p.begin_epoch(2, 3, 50, 0);
    // 50 rounds at random times within 1 s: the bar is drawn at the first round, then only
    // when 0.1 s have passed since the last drawing, and at the last round.
    std::vector<double> t(50);
    for (auto& v : t) v = std::uniform_real_distribution<double>(0, 1)(rng);
    std::sort(t.begin(), t.end());
    int expected = 0;
    double last = -1;
    for (int i = 0; i < 50; ++i) {
      if (i == 49 || last < 0 || t[i] - last >= 0.1) ++expected, last = t[i];
      p.update(i + 1, 1.0 / (i + 1), 32.0 * (i + 1), t[i]);
    }
    p.end_epoch();
    EXPECT_EQ(count(out.str(), "\r"), expected);
    EXPECT_LE(expected, 12);
  }
  const std::string s = out.str();
  EXPECT_EQ(count(s, "\n"), 1) << "one line per epoch";
  std::regex bar(R"(\repoch 2/3 \[=*>? *\] (\d+)/50  loss [0-9.]+  \d+ img/s  ETA (\d+:\d\d|\?))");
  int matches = 0;
  int64_t prev = 0;
  for (std::sregex_iterator it(s.begin(), s.end(), bar), end; it != end; ++it, ++matches) {
    int64_t done = std::stoll((*it)[1]);
    EXPECT_GT(done, prev);
    prev = done;
  }
  EXPECT_EQ(matches, count(s, "\r"));
  EXPECT_EQ(prev, 50) << "the last round is always drawn";
  EXPECT_NE(s.find("[====================] 50/50"), std::string::npos) << s;
}

TEST(Progress, ShorterBarLineErasesTheLongerOne) {
  std::ostringstream out;
  Progress p(out, {ProgressStyle::Bar, 0, 0.0, 10});
  p.begin_epoch(1, 1, 100, 0);
  p.update(1, 12345.678, 1e9, 0.5);  // long: big loss and throughput
  p.update(2, 0.5, 64, 1.0);
  const std::string s = out.str();
  const size_t second = s.rfind('\r');
  ASSERT_NE(second, std::string::npos);
  EXPECT_EQ(s.size() - second - 1, second - 1) << "the redraw is padded to the old width";
}

TEST(Progress, LinesEveryLogEveryRoundsWithEta) {
  std::ostringstream out;
  Progress p(out, {ProgressStyle::Lines, 4, 0.1, 20});
  p.begin_epoch(1, 2, 12, 0);
  for (int i = 1; i <= 12; ++i) p.update(i, 0.5, 10.0 * i, 0.1 * i);  // 100 img/s, 0.1 s per round
  p.end_epoch();
  const std::string s = out.str();
  EXPECT_EQ(s.find('\r'), std::string::npos);
  EXPECT_EQ(count(s, "\n"), 3);
  EXPECT_NE(s.find("epoch 1 step 4/12 loss 0.5000 100 img/s ETA 0:01"), std::string::npos) << s;
  EXPECT_NE(s.find("epoch 1 step 12/12 loss 0.5000 100 img/s ETA 0:00"), std::string::npos) << s;
}

TEST(Progress, EtaCountsFromTheFirstRoundOfAResumedEpochAndStopsAtTheStepLimit) {
  std::ostringstream out;
  Progress p(out, {ProgressStyle::Lines, 10, 0.1, 20});
  p.begin_epoch(1, 1, 1000, 100, 400);  // resumed at round 100, --max-steps ends at 400
  p.update(110, 1.0, 320, 20.0);        // 10 rounds in 20 s: 290 to go
  EXPECT_NE(out.str().find("ETA 9:40"), std::string::npos) << out.str();
}

TEST(Progress, StyleChoice) {
  EXPECT_EQ(parse_progress_style("auto", true), ProgressStyle::Bar);
  EXPECT_EQ(parse_progress_style("auto", false), ProgressStyle::Lines);
  EXPECT_EQ(parse_progress_style("bar", false), ProgressStyle::Bar);
  EXPECT_EQ(parse_progress_style("off", true), ProgressStyle::Off);
  EXPECT_THROW(parse_progress_style("fancy", true), UserError);
  EXPECT_EQ(format_duration(3725), "1:02:05");
  EXPECT_EQ(format_duration(65.4), "1:05");
  EXPECT_EQ(format_duration(NAN), "?");
}

}  // namespace
}  // namespace cbt
