// `mmtune report` through the real binary: the files it writes from a real tune (and a real
// bench), that the DB is only read, and bad input (one line, non-zero exit, nothing written).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.h"

namespace {

using mmtune::testing::ExpectOneLineError;
using mmtune::testing::FreshTestDir;
using mmtune::testing::RunMmtune;
using mmtune::testing::RunResult;
using mmtune::testing::Slurp;

// A DB with two tuned shapes, one of them searched by two strategies.
struct Tuned {
  std::string db;
  // Whether a tune stored this machine's peaks: it measures them only on a quiet machine (and
  // warns where it did not), which other tests running beside this one may deny it.
  bool peaks_stored = false;
};

const Tuned& TunedDbAndPeaks() {
  static const Tuned tuned = [] {
    Tuned result{FreshTestDir("report_shared") + "/tuned.db"};
    for (const char* strategy : {"random", "local"}) {
      const RunResult r = RunMmtune("tune --db '" + result.db + "' --shapes 24x24x24,1x40x32 " +
                                    "--evals 4 --budget 0 --seed 3 --strategy " + strategy);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      if (r.err.find("mmtune: warning: peaks") == std::string::npos) result.peaks_stored = true;
    }
    return result;
  }();
  return tuned;
}

const std::string& TunedDb() { return TunedDbAndPeaks().db; }

TEST(ReportCliTest, WritesJsonAndHtmlFromARealTuneAndBench) {
  const std::string dir = FreshTestDir("report_real");
  const std::string bench = dir + "/bench.json";
  const RunResult b = RunMmtune("bench --db '" + TunedDb() + "' --shapes 24x24x24,16x16x16 " +
                                "--against none --repetitions 2 --min-time 0.01 --json '" +
                                bench + "'");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string before = Slurp(TunedDb());

  const RunResult r = RunMmtune("report --db '" + TunedDb() + "' --bench '" + bench +
                                "' --html '" + dir + "/r.html' --json '" + dir + "/r.json'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 problems, 1 machine, 2 bench problems"), std::string::npos) << r.out;
  EXPECT_EQ(Slurp(TunedDb()), before) << "the report changed the DB";

  const nlohmann::json report = nlohmann::json::parse(Slurp(dir + "/r.json"), nullptr, false);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["schema_version"], 1);
  ASSERT_EQ(report["machines"].size(), 1u);
  EXPECT_EQ(report["machines"][0]["peaks"].is_object(), TunedDbAndPeaks().peaks_stored)
      << report["machines"][0]["peaks"].dump();
  EXPECT_EQ(report["sessions"].size(), 2u);
  ASSERT_EQ(report["problems"].size(), 2u);
  for (const nlohmann::json& problem : report["problems"]) {
    EXPECT_GT(problem["gflops"].get<double>(), 0.0) << problem["key"];
    EXPECT_EQ(problem["searches"].size(), 2u) << problem["key"];  // random, then local
    EXPECT_FALSE(problem["landscape"].empty()) << problem["key"];
    for (const nlohmann::json& search : problem["searches"]) {
      EXPECT_EQ(search["eval_index"].size(), search["best_gflops"].size());
    }
  }
  ASSERT_EQ(report["bench"]["problems"].size(), 2u);
  EXPECT_EQ(report["bench"]["problems"][0]["results"][0]["impl"], "tuned");

  const std::string html = Slurp(dir + "/r.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("id=\"bench-table\""), std::string::npos);
}

TEST(ReportCliTest, BadInputIsOneLineAndWritesNothing) {
  const std::string dir = FreshTestDir("report_bad");
  const std::string out = dir + "/r.html";
  const std::string db = "'" + TunedDb() + "'";
  ExpectOneLineError(RunMmtune("report --db " + db), 2);
  ExpectOneLineError(RunMmtune("report --db " + db + " --html " + out + " --colour"), 2);
  ExpectOneLineError(RunMmtune("report --db " + db + " --html " + out + " --json " + out), 2);
  ExpectOneLineError(RunMmtune("report --db " + db + " --html " + db), 2);
  ExpectOneLineError(RunMmtune("report --db " + db + " --html " + out + " --bench " + dir +
                               "/missing.json"), 2);
  ExpectOneLineError(RunMmtune("report --db " + dir + "/missing.db --html " + out), 1);
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing.db"));

  std::ofstream(dir + "/not-a-db") << "hello";
  ExpectOneLineError(RunMmtune("report --db " + dir + "/not-a-db --html " + out), 1);
  EXPECT_EQ(Slurp(dir + "/not-a-db"), "hello");

  std::ofstream(dir + "/bad-bench.json") << R"({"benchmarks": [{"name": "BM_x"}]})";
  const RunResult bad_bench = RunMmtune("report --db " + db + " --html " + out + " --bench " +
                                        dir + "/bad-bench.json");
  ExpectOneLineError(bad_bench, 1);
  EXPECT_NE(bad_bench.err.find("bad-bench.json"), std::string::npos) << bad_bench.err;

  ExpectOneLineError(RunMmtune("report --db " + db + " --html " + dir + "/no/such/dir/r.html"), 1);
  EXPECT_FALSE(std::filesystem::exists(out));
  // Only the files this test made: no report, no temporary file left behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "not-a-db" || name == "bad-bench.json") << name;
  }
}

}  // namespace
