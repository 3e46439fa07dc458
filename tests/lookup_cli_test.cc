// `mmtune lookup` and `mmtune tune --from-record` through the real binary: the tiers a user sees
// after a tune, the record-then-tune loop, and bad input (one line, non-zero exit, files intact).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.h"

namespace {

using mmtune::testing::ExpectOneLineError;
using mmtune::testing::FreshTestDir;
using mmtune::testing::Lines;
using mmtune::testing::RunMmtune;
using mmtune::testing::RunResult;
using mmtune::testing::Slurp;

// A small tuned DB, shared by the tests of this file (tuning takes seconds).
const std::string& TunedDb() {
  static const std::string db = [] {
    const std::string path = FreshTestDir("lookup_shared") + "/tuned.db";
    const RunResult r = RunMmtune("tune --db '" + path +
                                  "' --shapes 48x48x48 --strategy random --evals 3 --budget 0");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }();
  return db;
}

TEST(LookupCliTest, ShowsEachTier) {
  const std::string& db = TunedDb();
  const RunResult exact = RunMmtune("lookup --db '" + db + "' --shape 48x48x48 --threads 1");
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  EXPECT_NE(exact.out.find("tier:    exact"), std::string::npos) << exact.out;
  EXPECT_NE(exact.out.find("GFLOP/s measured on f32 row NN 48x48x48"), std::string::npos)
      << exact.out;

  const RunResult nearest = RunMmtune("lookup --db '" + db + "' --shape 50x40x44 --threads 1");
  ASSERT_EQ(nearest.exit_code, 0) << nearest.err;
  EXPECT_NE(nearest.out.find("tier:    nearest"), std::string::npos) << nearest.out;

  const RunResult other_dtype =
      RunMmtune("lookup --db '" + db + "' --shape 48x48x48 --dtype f64 --json");
  ASSERT_EQ(other_dtype.exit_code, 0) << other_dtype.err;
  const nlohmann::json json = nlohmann::json::parse(other_dtype.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << other_dtype.out;
  EXPECT_EQ(json["tier"], "default");
  EXPECT_TRUE(json["gflops"].is_null());
  EXPECT_TRUE(json["config"].is_object());
  EXPECT_EQ(json["winners_loaded"], 1);

  // The low-precision dtypes have no winners yet: their analytical default, packed and with kc
  // a whole number of k groups.
  for (const char* dtype : {"bf16", "s8"}) {
    const RunResult lowp = RunMmtune("lookup --db '" + db + "' --shape 64x96x100 --dtype " +
                                     dtype + " --threads 1 --json");
    ASSERT_EQ(lowp.exit_code, 0) << lowp.err;
    const nlohmann::json doc = nlohmann::json::parse(lowp.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << lowp.out;
    EXPECT_EQ(doc["tier"], "default");
    EXPECT_EQ(doc["problem"], std::string(dtype) + " row NN 64x96x100 t1");
    EXPECT_EQ(doc["config"]["family"], "packed");
    EXPECT_EQ(doc["config"]["kc"].get<int>() % (std::string(dtype) == "s8" ? 4 : 2), 0);
  }
}

// A new user's first lookup, without a DB: the analytical default, said in one line, and no file
// created. A --db that does not exist stays an error (next test).
TEST(LookupCliTest, WithoutADbTheDefaultAnswers) {
  const std::string dir = FreshTestDir("lookup_no_db");
  const RunResult r = RunMmtune("lookup --shape 256x256x256 --threads 1 --json",
                                "-C '" + dir + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "mmtune: no DB file mmtune.db: the runtime runs the analytical default "
                   "(mmtune tune writes one)\n");
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc["tier"], "default");
  EXPECT_EQ(doc["threads"], 1);
  EXPECT_FALSE(doc["threads_reason"].get<std::string>().empty());
  EXPECT_FALSE(std::filesystem::exists(dir + "/mmtune.db"));
}

// Weights for decode steps take panels of a tile of several rows, and a GEMM of one row on
// them runs a one-row kernel of the same panel width: `lookup --packed-b` shows both. A plain
// call, which runs its config as it is, shows no second config.
TEST(LookupCliTest, WeightsShowTheConfigACallOfTheirRowsRuns) {
  const std::string dir = FreshTestDir("lookup_weights_runs");
  const RunResult weights = RunMmtune("lookup --shape 1x512x512 --threads 1 --packed-b --json",
                                      "-C '" + dir + "'");
  ASSERT_EQ(weights.exit_code, 0) << weights.err;
  const nlohmann::json doc = nlohmann::json::parse(weights.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << weights.out;
  ASSERT_TRUE(doc["runs"].is_string()) << weights.out;
  const auto config = doc["config"];
  EXPECT_EQ(config["family"], "packed") << weights.out;
  EXPECT_GT(config["mr"].get<int>(), 1) << weights.out;
  const std::string panel_width = " 1x" + std::to_string(config["nr"].get<int>()) + " ";
  EXPECT_NE(doc["runs"].get<std::string>().find(panel_width), std::string::npos)
      << weights.out;
  const RunResult text = RunMmtune("lookup --shape 1x512x512 --threads 1 --packed-b",
                                   "-C '" + dir + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  runs:    " + doc["runs"].get<std::string>() +
                          " (a GEMM of 1 row on the panels of that config)\n"),
            std::string::npos)
      << text.out;
  const RunResult plain = RunMmtune("lookup --shape 1x512x512 --threads 1 --json",
                                    "-C '" + dir + "'");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const nlohmann::json plain_doc = nlohmann::json::parse(plain.out, nullptr, false);
  ASSERT_TRUE(plain_doc.is_object()) << plain.out;
  EXPECT_TRUE(plain_doc["runs"].is_null()) << plain.out;
}

TEST(LookupCliTest, BadInputIsOneLineAndTheFileStaysAsItWas) {
  const std::string dir = FreshTestDir("lookup_bad");
  ExpectOneLineError(RunMmtune("lookup --db '" + dir + "/missing.db' --shape 2x2x2"), 1);
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing.db"));
  ExpectOneLineError(RunMmtune("lookup --db '" + TunedDb() + "' --shape 12x"), 2);
  ExpectOneLineError(RunMmtune("lookup --db '" + TunedDb() + "'"), 2);  // --shape is required
  ExpectOneLineError(RunMmtune("lookup --db '" + TunedDb() + "' --shape 2x2x2 --trans XY"), 2);
  ExpectOneLineError(RunMmtune("lookup --db '" + TunedDb() + "' --shape 2x2x2 --threads 0"), 2);
  const std::string text = dir + "/notes.db";
  std::ofstream(text) << "my notes, not a DB\n";
  ExpectOneLineError(RunMmtune("lookup --db '" + text + "' --shape 2x2x2"), 1);
  EXPECT_EQ(Slurp(text), "my notes, not a DB\n");
}

TEST(LookupCliTest, RecordedProblemsAreTunedAndThenFoundExactly) {
  const std::string dir = FreshTestDir("lookup_record");
  const std::string record = dir + "/calls.json";
  std::ofstream(record) << R"({"mmtune_record": 1, "problems": [
    {"dtype": "f64", "layout": "col", "trans": "TN", "m": 20, "n": 30, "k": 40, "threads": 1,
     "calls": 10, "seconds": 0.5},
    {"dtype": "f32", "layout": "row", "trans": "NN", "m": 24, "n": 8, "k": 16, "threads": 1,
     "calls": 99, "seconds": 2.5}]})";
  const std::string db = dir + "/tuned.db";
  const RunResult tune = RunMmtune("tune --db '" + db + "' --from-record '" + record +
                                   "' --strategy random --evals 2 --budget 0");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  // Most time-consuming first.
  EXPECT_LT(tune.err.find("24x8x16"), tune.err.find("20x30x40")) << tune.err;
  const RunResult found = RunMmtune("lookup --db '" + db +
                                    "' --shape 20x30x40 --dtype f64 --layout col --trans TN "
                                    "--threads 1");
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_NE(found.out.find("tier:    exact"), std::string::npos) << found.out;

  // The record decides dtype, layout, transposes and threads: giving them too is an error.
  ExpectOneLineError(RunMmtune("tune --db '" + db + "' --from-record '" + record +
                               "' --dtype f32"),
                     2);
  ExpectOneLineError(RunMmtune("tune --db '" + db + "' --from-record '" + record +
                               "' --preset quick"),
                     2);
  std::ofstream(dir + "/broken.json") << "{\"mmtune_record\": 1, \"problems\": [{}]}";
  ExpectOneLineError(RunMmtune("tune --db '" + db + "' --from-record '" + dir + "/broken.json'"),
                     2);
}

}  // namespace
