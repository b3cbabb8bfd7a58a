// Timing copies side by side: several configurations in one CUDA graph against one graph each;
// the timing buffers' random inputs and their comparison on the device.
#include "ops/cuda/copy_timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/gpu.h"
#include "ops/cuda/algo_choice.h"
#include "spin_kernel.h"

namespace cbt::cuda {
namespace {

// Configurations that hold a stream for 40, 10 and 80 us, and one whose launch fails: in one
// graph each is timed as a graph of its own times it (within a quarter), at least its 3 runs of
// 8 one-thread kernels side by side (3 x t / (3 x 8) per copy), in the order of their lengths;
// the failing one is -1. The same with one replay (Replays::One, a search's first round).
TEST(CopyTiming, ConfigurationsTimedInOneGraphTimeAsOneGraphEach) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const std::vector<uint64_t> ns = {40'000, 10'000, 80'000, 0};
  Streams side(8);
  auto launch = [&](size_t i, size_t, cudaStream_t s) {
    if (ns[i] == 0) return false;
    test::spin_for(ns[i], s);
    return cudaPeekAtLastError() == cudaSuccess;
  };
  const std::vector<float> ms = time_each_side_by_side(stream, side, 3, ns.size(), launch);
  ASSERT_EQ(ms.size(), ns.size());
  EXPECT_EQ(ms[3], -1.0f);
  EXPECT_LT(ms[1], ms[0]);
  EXPECT_LT(ms[0], ms[2]);
  for (size_t i = 0; i < 3; ++i) {
    const float alone =
        time_side_by_side(stream, side, 3, [&](size_t copy, cudaStream_t s) { return launch(i, copy, s); });
    EXPECT_GE(ms[i], 0.9f * static_cast<float>(ns[i]) * 1e-6f / 8) << i;
    EXPECT_NEAR(ms[i], alone, 0.25f * alone) << i;
  }
  // One run a copy (a first round's timing) replayed once against the same after a warm-up
  // replay. (Against 3 runs a copy it would be longer: the fork and join of a configuration's
  // copies take a few microseconds that 3 runs share.)
  const std::vector<float> warm = time_each_side_by_side(stream, side, 1, ns.size(), launch);
  const std::vector<float> once = time_each_side_by_side(stream, side, 1, ns.size(), launch, {Replays::One});
  ASSERT_EQ(once.size(), ns.size());
  EXPECT_EQ(once[3], -1.0f);
  EXPECT_LT(once[1], once[0]);
  EXPECT_LT(once[0], once[2]);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_GE(once[i], 0.9f * static_cast<float>(ns[i]) * 1e-6f / 8) << i;
    EXPECT_NEAR(once[i], warm[i], 0.25f * warm[i]) << i;
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// A search's two rounds: of configurations holding a stream for 320, 80, 640 and 112 us and one
// whose launch fails, those within 1.5 times the fastest (80 and 112 us) are timed again, as one
// graph of 3 runs a copy times them (within a quarter), and the others are negative; with room for
// one, only one of those two is; the laps of both rounds are logged.
TEST(CopyTiming, AShortlistTimesAgainOnlyTheConfigurationsNearTheBest) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  // (Spins of 20 and 28 us, 8 copies at once, were told apart neither in the first round nor in
  // the second on some H200s: the graph's fork and join cost as much as their difference.)
  const std::vector<uint64_t> ns = {320'000, 80'000, 640'000, 0, 112'000};
  Streams side(8);
  auto launch = [&](size_t i, size_t, cudaStream_t s) {
    if (ns[i] == 0) return false;
    test::spin_for(ns[i], s);
    return cudaPeekAtLastError() == cudaSuccess;
  };
  SearchPhases laps;
  const std::vector<float> ms = time_shortlisted(stream, side, 3, ns.size(), launch, Shortlist{}, &laps);
  ASSERT_EQ(ms.size(), ns.size());
  for (size_t i : {0, 2, 3}) EXPECT_LT(ms[i], 0.0f) << i;
  const std::vector<float> full = time_each_side_by_side(stream, side, 3, ns.size(), launch);
  for (size_t i : {1, 4}) {
    EXPECT_GE(ms[i], 0.9f * static_cast<float>(ns[i]) * 1e-6f / 8) << i;
    EXPECT_NEAR(ms[i], full[i], 0.25f * full[i]) << i;
  }
  EXPECT_LT(ms[1], ms[4]);
  for (const char* lap : {"alone1 ", "replay1 ", "capture ", "replays "})
    EXPECT_NE(laps.str().find(lap), std::string::npos) << lap << " in " << laps.str();
  EXPECT_EQ(laps.str().find("alone "), std::string::npos) << "the second round runs nothing alone: " << laps.str();
  // With room for one, one of the two near ones is timed again: which, the first round's single
  // replay decides.
  const std::vector<float> one = time_shortlisted(stream, side, 3, ns.size(), launch, Shortlist{1.5f, 1});
  for (size_t i : {0, 2, 3}) EXPECT_LT(one[i], 0.0f) << i;
  EXPECT_NE(one[1] >= 0, one[4] >= 0) << one[1] << " " << one[4];
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// The first look: of ten configurations, every fifth (0 and 5) runs first. When neither comes
// within twice the bar, the search ends there and the other eight never run; when one does, the
// others are timed too and the fastest, which was not in the sample, is found and timed again;
// when the sample's launches fail, the others are timed. Without a bar, or with fewer
// configurations than stride x least, there is no first look.
TEST(CopyTiming, AFirstLookEndsASearchThatCannotComeNearTheBar) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  Streams side(8);
  std::vector<uint64_t> ns;
  std::vector<int> runs;
  auto launch = [&](size_t i, size_t, cudaStream_t s) {
    ++runs[i];
    if (ns[i] == 0) return false;
    test::spin_for(ns[i], s);
    return cudaPeekAtLastError() == cudaSuccess;
  };
  auto search = [&](const std::vector<uint64_t>& spins, float bar_ms) {
    ns = spins;
    runs.assign(ns.size(), 0);
    return time_after_first_look(stream, side, 3, ns.size(), launch, Shortlist{}, FirstLook{bar_ms, 2.0f, 5, 2});
  };
  // Each spin of t us side by side 8 times is about t / 8 us a copy: 20 to 80 us, the bar 5 us.
  const std::vector<uint64_t> slow = {160'000, 320'000, 640'000, 320'000, 640'000,
                                      320'000, 640'000, 320'000, 640'000, 320'000};
  const LookedTimes gave_up = search(slow, 0.005f);
  ASSERT_EQ(gave_up.ms.size(), slow.size());
  EXPECT_TRUE(gave_up.gave_up);
  EXPECT_EQ(gave_up.looked, 2u);
  EXPECT_GE(gave_up.ms[0], 0.9f * 0.16f / 8);
  EXPECT_GT(gave_up.ms[5], gave_up.ms[0]);
  for (size_t i = 0; i < slow.size(); ++i) {
    if (i % 5 == 0) continue;
    EXPECT_LT(gave_up.ms[i], 0.0f) << i;
    EXPECT_EQ(runs[i], 0) << "configuration " << i << " ran after the give-up";
  }
  // The sample's best (20 us a copy) is within twice a bar of 15 us: the fast one at 3 (5 us) is
  // found, and only it is within 1.5 times itself.
  std::vector<uint64_t> near = slow;
  near[3] = 40'000;
  const LookedTimes went_on = search(near, 0.015f);
  EXPECT_FALSE(went_on.gave_up);
  EXPECT_EQ(went_on.looked, 2u);
  EXPECT_GE(went_on.ms[3], 0.9f * 0.04f / 8);
  for (size_t i = 0; i < near.size(); ++i) {
    EXPECT_GT(runs[i], 0) << i;
    if (i != 3) EXPECT_LT(went_on.ms[i], 0.0f) << i;
  }
  // A sample whose launches fail says nothing of the others, which are timed.
  std::vector<uint64_t> refused = near;
  refused[0] = refused[5] = 0;
  const LookedTimes after_refusal = search(refused, 0.001f);
  EXPECT_FALSE(after_refusal.gave_up);
  EXPECT_GE(after_refusal.ms[3], 0.0f);
  // No bar, or too few configurations for a sample of 2 every 5th: time_shortlisted, all run.
  const std::vector<uint64_t> nine(near.begin(), near.begin() + 9);
  for (const auto& [spins, bar] : {std::pair{near, -1.0f}, std::pair{nine, 0.001f}}) {
    const LookedTimes plain = search(spins, bar);
    EXPECT_EQ(plain.looked, 0u);
    EXPECT_FALSE(plain.gave_up);
    EXPECT_GE(plain.ms[3], 0.0f);
    for (size_t i = 0; i < spins.size(); ++i) EXPECT_GT(runs[i], 0) << i;
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// fill_random: values in [-1, 1), spread over the range, the same for the same seed and
// different for another.
TEST(CopyTiming, RandomFillIsSpreadAndRepeatable) {
  CBT_SKIP_WITHOUT_GPU();
  const size_t n = 100'003;
  DeviceBuffer a(n * sizeof(float)), b(n * sizeof(float)), c(n * sizeof(float));
  ASSERT_TRUE(a.p && b.p && c.p);
  a.fill_random(n, 7);
  b.fill_random(n, 7);
  c.fill_random(n, 8);
  const std::vector<float> va = a.download(n), vb = b.download(n), vc = c.download(n);
  EXPECT_EQ(std::memcmp(va.data(), vb.data(), n * sizeof(float)), 0);
  size_t same = 0;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_GE(va[i], -1.0f) << i;
    ASSERT_LT(va[i], 1.0f) << i;
    same += va[i] == vc[i];
    sum += va[i];
  }
  EXPECT_LT(same, n / 1000);
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_LT(*std::min_element(va.begin(), va.end()), -0.99f);
  EXPECT_GT(*std::max_element(va.begin(), va.end()), 0.99f);
}

// relative_error on the device is the host's max |got - ref| / max |ref| in double, bit for
// bit, for a result off in one place by a random amount (and 0 for the same bytes), with a
// scratch buffer of its own or one passed in and reused.
TEST(CopyTiming, RelativeErrorOnTheDeviceIsTheHostsFormula) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::mt19937_64 rng(11);
  DeviceBuffer scratch(relative_error_scratch_bytes);
  ASSERT_TRUE(scratch.p);
  for (size_t n : {size_t{1}, size_t{31}, size_t{4096}, size_t{1'000'001}}) {
    DeviceBuffer ref(n * sizeof(float)), got(n * sizeof(float));
    ASSERT_TRUE(ref.p && got.p);
    ref.fill_random(n, rng());
    std::vector<float> r = ref.download(n), g = r;
    EXPECT_EQ(relative_error(ref, ref, n, stream), 0.0) << n;
    const size_t at = rng() % n;
    const float off = std::uniform_real_distribution<float>(1e-4f, 1e-3f)(rng);
    g[at] += (rng() & 1) ? off : -off;
    ASSERT_EQ(cudaMemcpy(got.p, g.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
      diff = std::max(diff, std::abs(static_cast<double>(g[i]) - static_cast<double>(r[i])));
      scale = std::max(scale, std::abs(static_cast<double>(r[i])));
    }
    const double want = diff / std::max(scale, 1e-30);
    EXPECT_GT(want, 0.0) << n;
    EXPECT_EQ(relative_error(got, ref, n, stream), want) << n;
    // With one scratch buffer for every comparison (as a search passes): reset each time.
    EXPECT_EQ(relative_error(got, ref, n, stream, &scratch), want) << n;
    EXPECT_EQ(relative_error(ref, ref, n, stream, &scratch), 0.0) << n;
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// A result with a NaN or an infinity in one random place is not close to the reference at
// any tolerance, although every other value is the reference's own (fmax alone drops NaNs).
TEST(CopyTiming, ANonFiniteResultIsNeverAccurate) {
  CBT_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::mt19937_64 rng(12);
  const size_t n = 50'000;
  DeviceBuffer ref(n * sizeof(float)), got(n * sizeof(float));
  ASSERT_TRUE(ref.p && got.p);
  ref.fill_random(n, rng());
  const std::vector<float> r = ref.download(n);
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    std::vector<float> g = r;
    g[rng() % n] = bad;
    ASSERT_EQ(cudaMemcpy(got.p, g.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    const double err = relative_error(got, ref, n, stream);
    EXPECT_FALSE(std::isfinite(err)) << bad << ": " << err;
    for (bool tf32 : {false, true}) EXPECT_FALSE(accurate_enough(err, float_precision(tf32))) << bad;
  }
  EXPECT_EQ(relative_error(ref, ref, n, stream), 0.0);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace cbt::cuda
