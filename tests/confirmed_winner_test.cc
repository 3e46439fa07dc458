// The confirm round keeps the analytical default unless a finalist beats it by more than the
// noise: at least kMinGainOverDefault, and more than the two timings' relative spreads together.
#include "tuner/confirmed_winner.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace mmtune {
namespace {

KernelConfig ConfigWithMc(int mc) {
  KernelConfig config;
  config.family = KernelFamily::kPacked;
  config.mc = mc;
  return config;
}

// A passing measurement of `config` at `gflops`, its timings spread by `spread` of the median.
CandidateMeasurement Measured(const KernelConfig& config, double gflops, double spread) {
  CandidateMeasurement m;
  m.config = config;
  m.gflops = gflops;
  m.stats.median = 1.0 / gflops;
  m.stats.mad = spread * m.stats.median;
  m.stats.count = 9;
  return m;
}

double Speed(const CandidateMeasurement& m) { return m.gflops; }

const KernelConfig kDefault = ConfigWithMc(64);
const KernelConfig kOther = ConfigWithMc(128);
const KernelConfig kThird = ConfigWithMc(256);

// The config ConfirmedWinner picks from `round`, or kNone where it picks none.
const KernelConfig kNone = ConfigWithMc(1);
KernelConfig WinnerOf(const std::vector<CandidateMeasurement>& round,
                      const std::function<double(const CandidateMeasurement&)>& score = Speed) {
  const CandidateMeasurement* winner = ConfirmedWinner(round, kDefault, score);
  return winner != nullptr ? winner->config : kNone;
}

TEST(ConfirmedWinnerTest, TheDefaultKeepsATie) {
  EXPECT_EQ(WinnerOf({Measured(kOther, 100.9, 0.001), Measured(kDefault, 100.0, 0.001)}),
            kDefault);
}

TEST(ConfirmedWinnerTest, AClearlyFasterFinalistWins) {
  EXPECT_EQ(WinnerOf({Measured(kDefault, 100.0, 0.002), Measured(kOther, 101.5, 0.002),
                      Measured(kThird, 105.0, 0.002)}),
            kThird);
}

TEST(ConfirmedWinnerTest, NoisyTimingsNeedALargerGain) {
  // 3% faster, but each timing spreads by 2%: within the noise; 5% is beyond it.
  EXPECT_EQ(WinnerOf({Measured(kDefault, 100.0, 0.02), Measured(kOther, 103.0, 0.02)}), kDefault);
  EXPECT_EQ(WinnerOf({Measured(kDefault, 100.0, 0.02), Measured(kOther, 105.0, 0.02)}), kOther);
}

TEST(ConfirmedWinnerTest, TheScoreDecidesNotTheSpeedAlone) {
  // A bucket shape's weighting: the faster finalist wastes half its tile work on the sizes the
  // bucket serves.
  auto half_for_other = [](const CandidateMeasurement& m) {
    return m.gflops * (m.config == kOther ? 0.5 : 1.0);
  };
  EXPECT_EQ(WinnerOf({Measured(kDefault, 100.0, 0.001), Measured(kOther, 150.0, 0.001)},
                     half_for_other),
            kDefault);
}

TEST(ConfirmedWinnerTest, WithoutAPassingDefaultTheFastestWins) {
  std::vector<CandidateMeasurement> round = {Measured(kDefault, 200.0, 0.001),
                                             Measured(kOther, 100.0, 0.001),
                                             Measured(kThird, 100.5, 0.001)};
  round[0].status = MeasurementStatus::kFailed;
  EXPECT_EQ(WinnerOf(round), kThird);
  // The default alone, or nothing passing.
  EXPECT_EQ(WinnerOf({Measured(kDefault, 100.0, 0.0)}), kDefault);
  round[1].status = round[2].status = MeasurementStatus::kFailed;
  EXPECT_EQ(WinnerOf(round), kNone);
}

}  // namespace
}  // namespace mmtune
