// Peaks are stored only from quiet measurements, and a stored peak is only ever raised by more
// than the noise: the load check and the measurement are replaced by scripted ones.
#include "tuner/quiet_peaks.h"

#include <gtest/gtest.h>

#include <deque>

#include "synthetic_machine.h"

namespace mmtune {
namespace {

PeakReport Report(double f32_one, double f32_all, IsaLevel isa = IsaLevel::kAvx2) {
  PeakReport report;
  report.isa = isa;
  report.cores = 2;
  report.f32_fma = Throughput{f32_one, f32_all};
  report.memory_read_gbs = Throughput{20.0, 30.0};
  return report;
}

// Options whose load checks answer `busy` in turn (the last one repeated) and whose
// measurements answer `reports` in turn; counts the measurements.
struct Script {
  std::deque<double> busy;
  std::deque<PeakReport> reports;
  int measured = 0;

  QuietPeakOptions Options() {
    QuietPeakOptions options;
    options.wait_seconds = 0.05;
    options.busy_cores = [this](double) -> Result<double> {
      const double value = busy.front();
      if (busy.size() > 1) busy.pop_front();
      return value;
    };
    options.measure = [this](const Machine&, const PeakOptions&) -> Result<PeakReport> {
      ++measured;
      const PeakReport report = reports.front();
      if (reports.size() > 1) reports.pop_front();
      return report;
    };
    return options;
  }
};

double F32One(const nlohmann::json& peaks) {
  return peaks.at("f32_fma_gflops").at("one_core").get<double>();
}

TEST(QuietPeaksTest, QuietMachineStoresTheMeasurement) {
  Script script{{0.0}, {Report(100.0, 190.0)}};
  auto result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), nullptr, script.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->changed);
  EXPECT_TRUE(result->note.empty());
  EXPECT_EQ(F32One(result->peaks), 100.0);
  EXPECT_EQ(script.measured, 1);
}

TEST(QuietPeaksTest, BusyMachineMeasuresNothing) {
  Script script{{1.5}, {Report(100.0, 190.0)}};
  auto result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), nullptr, script.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(script.measured, 0);
  EXPECT_TRUE(result->peaks.is_null());
  EXPECT_FALSE(result->changed);
  EXPECT_NE(result->note.find("1.5 cores busy"), std::string::npos) << result->note;
}

// Quiet before, busy after: that measurement is thrown away and made again.
TEST(QuietPeaksTest, MeasurementDisturbedOnTheWayIsRepeated) {
  Script script{{0.0, 1.0, 0.0, 0.0}, {Report(60.0, 90.0), Report(100.0, 190.0)}};
  auto result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), nullptr, script.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(script.measured, 2);
  EXPECT_EQ(F32One(result->peaks), 100.0);

  Script always_disturbed{{0.0, 1.0}, {Report(60.0, 90.0)}};
  result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), nullptr,
                                 always_disturbed.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(always_disturbed.measured, 2);
  EXPECT_TRUE(result->peaks.is_null());
  EXPECT_NE(result->note.find("discarded"), std::string::npos) << result->note;
}

TEST(QuietPeaksTest, StoredPeaksAreRaisedOnlyBeyondTheNoise) {
  const nlohmann::json stored = Report(100.0, 190.0);
  // Within 5%: kept. Lower: kept. Higher by more: replaced, field by field.
  Script within{{0.0}, {Report(104.0, 150.0)}};
  auto result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), stored, within.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->changed);
  EXPECT_EQ(result->peaks, stored);

  Script beaten{{0.0}, {Report(110.0, 150.0)}};
  result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), stored, beaten.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->changed);
  EXPECT_EQ(F32One(result->peaks), 110.0);
  EXPECT_EQ(result->peaks.at("f32_fma_gflops").at("all_cores").get<double>(), 190.0);

  // Busy: no wait and no measurement when peaks are stored.
  Script busy{{2.0}, {Report(500.0, 900.0)}};
  result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), stored, busy.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(busy.measured, 0);
  EXPECT_EQ(result->peaks, stored);
  EXPECT_NE(result->note.find("stored peaks stay"), std::string::npos) << result->note;

  // Peaks of another ISA level (a capped MMTUNE_ISA run) are replaced whole.
  Script other_isa{{0.0}, {Report(50.0, 90.0, IsaLevel::kGeneric)}};
  result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), stored, other_isa.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(F32One(result->peaks), 50.0);
}

// The read sweep and the effective LLC are not ceilings to raise: the latest measurement
// replaces them, and stored peaks from before them gain them.
TEST(QuietPeaksTest, EffectiveLlcTakesTheLatestMeasurement) {
  PeakReport first = Report(100.0, 190.0);
  first.read_sweep = {{1u << 20, 90.0}, {2u << 20, 30.0}};
  first.effective_llc_bytes = 1u << 20;
  PeakReport second = first;
  second.read_sweep[1].gbs = 80.0;
  second.effective_llc_bytes = 2u << 20;
  const nlohmann::json before_sweeps = Report(100.0, 190.0);
  Script script{{0.0}, {first, second}};
  auto result =
      MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), before_sweeps, script.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->changed);
  EXPECT_EQ(result->peaks.at("effective_llc_bytes"), 1u << 20);
  result = MeasurePeaksWhenQuiet(testing::SyntheticZen3Machine(), result->peaks, script.Options());
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->changed);
  EXPECT_EQ(result->peaks.at("effective_llc_bytes"), 2u << 20);
  EXPECT_EQ(result->peaks.at("read_sweep_bytes_gbs").at(1).at(1), 80.0);
}

TEST(QuietPeaksTest, BusyCoresReadsProcStat) {
  auto busy = BusyCores(0.05);
  ASSERT_TRUE(busy.ok()) << busy.error().message;
  EXPECT_GE(*busy, 0.0);
}

}  // namespace
}  // namespace mmtune
