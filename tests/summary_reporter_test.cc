// The summary table `mmtune bench` prints after Google Benchmark's own: medians per problem and
// implementation, the ratio to the best peer, failed implementations never counted.
#include "comparison/summary_reporter.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace mmtune {
namespace {

using Run = benchmark::BenchmarkReporter::Run;

Run PlainRun(const std::string& name, double gflops) {
  Run run;
  run.run_name.function_name = name;
  run.counters["gflops"] = benchmark::Counter(gflops);
  return run;
}

Run MedianRun(const std::string& name, double gflops) {
  Run run = PlainRun(name, gflops);
  run.run_type = Run::RT_Aggregate;
  run.aggregate_name = "median";
  return run;
}

Run FailedRun(const std::string& name) {
  Run run;
  run.run_name.function_name = name;
  run.error_occurred = true;
  run.error_message = "wrong result";
  return run;
}

// The summary, with Google Benchmark's per-run lines sent elsewhere.
std::string Summarize(const std::vector<std::string>& keys, const std::vector<Run>& runs) {
  SummaryReporter reporter(keys, /*color=*/false);
  std::ostringstream console;
  reporter.SetOutputStream(&console);
  reporter.SetErrorStream(&console);
  for (const Run& run : runs) reporter.ReportRuns({run});
  std::ostringstream summary;
  reporter.PrintSummary(summary);
  return summary.str();
}

std::string LineOf(const std::string& text, const std::string& start) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(start, 0) == 0) return line;
  }
  return "";
}

TEST(SummaryReporterTest, MediansAndRatioToTheBestPeer) {
  const std::string summary = Summarize(
      {"f32/row/NN/64x64x64/t1"},
      {PlainRun("f32/row/NN/64x64x64/t1/tuned", 10.0),
       PlainRun("f32/row/NN/64x64x64/t1/tuned", 30.0),
       PlainRun("f32/row/NN/64x64x64/t1/tuned", 20.0),
       MedianRun("f32/row/NN/64x64x64/t1/default", 15.0),
       MedianRun("f32/row/NN/64x64x64/t1/openblas", 25.0),
       MedianRun("f32/row/NN/64x64x64/t1/onednn", 40.0)});
  const std::string row = LineOf(summary, "f32/row/NN/64x64x64/t1");
  ASSERT_FALSE(row.empty()) << summary;
  // Columns: tuned (median of the three runs), default, then peers in the order first seen.
  std::istringstream fields(row.substr(row.find(' ')));
  std::string tuned, fallback, openblas, onednn, ratio, vs, best;
  fields >> tuned >> fallback >> openblas >> onednn >> ratio >> vs >> best;
  EXPECT_EQ(tuned, "20.0");
  EXPECT_EQ(fallback, "15.0");
  EXPECT_EQ(openblas, "25.0");
  EXPECT_EQ(onednn, "40.0");
  EXPECT_EQ(ratio, "0.50");
  EXPECT_EQ(best, "onednn");
  const std::string header = LineOf(summary, " ");
  EXPECT_LT(header.find("tuned"), header.find("default")) << summary;
  EXPECT_LT(header.find("openblas"), header.find("onednn")) << summary;
}

TEST(SummaryReporterTest, AFailedPeerIsShownAndNeverTheBest) {
  const std::string summary = Summarize(
      {"f64/col/TN/8x8x8/t2"},
      {MedianRun("f64/col/TN/8x8x8/t2/tuned", 6.0),
       MedianRun("f64/col/TN/8x8x8/t2/libxsmm", 50.0), FailedRun("f64/col/TN/8x8x8/t2/libxsmm"),
       MedianRun("f64/col/TN/8x8x8/t2/openblas", 4.0)});
  const std::string row = LineOf(summary, "f64/col/TN/8x8x8/t2");
  EXPECT_NE(row.find("failed"), std::string::npos) << summary;
  EXPECT_NE(row.find("1.50 vs openblas"), std::string::npos) << summary;
}

TEST(SummaryReporterTest, WithoutPeersThereIsNoRatioColumn) {
  const std::string summary =
      Summarize({"f32/row/NN/5x7x11/t1", "f32/row/NN/9x9x9/t1"},
                {MedianRun("f32/row/NN/9x9x9/t1/tuned", 3.0),
                 MedianRun("f32/row/NN/9x9x9/t1/default", 2.0),
                 MedianRun("f32/row/NN/5x7x11/t1/tuned", 1.0)});
  EXPECT_EQ(summary.find("best peer"), std::string::npos) << summary;
  // Rows follow the order of the keys given, not the order the runs came in.
  EXPECT_LT(summary.find("5x7x11"), summary.find("9x9x9")) << summary;
  // A missing implementation is a dash.
  EXPECT_NE(LineOf(summary, "f32/row/NN/5x7x11/t1").find(" -"), std::string::npos) << summary;
}

}  // namespace
}  // namespace mmtune
