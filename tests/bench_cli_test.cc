// `mmtune bench` through the real binary: the Google Benchmark JSON it writes (names, counters,
// context), the lookup tier in the tuned row's label, and bad input (one line, non-zero exit).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.h"

namespace {

using mmtune::testing::ExpectOneLineError;
using mmtune::testing::FreshTestDir;
using mmtune::testing::RunMmtune;
using mmtune::testing::RunResult;
using mmtune::testing::Slurp;

const std::string& TunedDb() {
  static const std::string db = [] {
    const std::string path = FreshTestDir("bench_shared") + "/tuned.db";
    // One evaluation, the default's: its winner is of the family 20x12x36's default takes, which
    // the nearest tier borrows from, whatever timings an emulator gives.
    const RunResult r = RunMmtune("tune --db '" + path +
                                  "' --shapes 24x24x24 --strategy random --evals 1 --budget 0");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }();
  return db;
}

// Whether `name`'s row is oneDNN's bf16 matmul on a CPU without AVX-512, where oneDNN 2 has
// none: the bench's row may then say the peer cannot run the problem.
bool OneDnnWithoutBf16(const std::string& name) {
  static const bool avx512 = [] {
    const nlohmann::json info = nlohmann::json::parse(RunMmtune("info --json").out, nullptr, false);
    return info.is_object() && info["machine"]["isa"]["max_level"] == "avx512";
  }();
  return !avx512 && name.rfind("bf16/", 0) == 0 && name.find("/onednn/") != std::string::npos;
}

// Runs `mmtune bench <args> --json <json_path>` on the shared DB, expects success, and calls
// `row(impl, label)` for each timed row (one with GFLOP/s), none of which may be an error row
// but a peer's that cannot run the problem where it has no such call (OneDnnWithoutBf16);
// returns the JSON's context.
template <class Row>
nlohmann::json ForEachTimedRow(const std::string& args, const std::string& json_path, Row row) {
  const RunResult r =
      RunMmtune("bench --db '" + TunedDb() + "' " + args + " --json '" + json_path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(Slurp(json_path), nullptr, false);
  EXPECT_TRUE(doc.is_object()) << Slurp(json_path);
  if (!doc.is_object()) return nullptr;
  for (const nlohmann::json& entry : doc["benchmarks"]) {
    std::string name = entry["run_name"].get<std::string>();
    if (OneDnnWithoutBf16(name) && entry.contains("error_occurred")) {
      EXPECT_EQ(entry.value("error_message", ""), "this implementation cannot run the problem")
          << name;
      continue;
    }
    EXPECT_FALSE(entry.contains("error_occurred")) << name << ": " << entry.dump();
    if (!entry.contains("gflops") || entry["gflops"].get<double>() <= 0.0) continue;
    name.resize(name.rfind("/real_time"));
    row(name, name.substr(name.rfind('/') + 1), entry.value("label", ""));
  }
  return doc["context"];
}

TEST(BenchCliTest, WritesGoogleBenchmarkJsonWithTunedAndDefaultRows) {
  const std::string dir = FreshTestDir("bench_json");
  const std::string json_path = dir + "/bench.json";
  const RunResult r = RunMmtune("bench --db '" + TunedDb() +
                                "' --shapes 24x24x24,20x12x36 --against none --repetitions 2 "
                                "--min-time 0.01 --json '" + json_path + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(Slurp(json_path), nullptr, false);
  ASSERT_TRUE(doc.is_object()) << Slurp(json_path);
  EXPECT_TRUE(doc["context"]["mmtune_fingerprint"].is_string());
  int plain_rows = 0;
  bool exact_tuned = false, nearest_tuned = false, defaults = false;
  for (const nlohmann::json& row : doc["benchmarks"]) {
    const std::string name = row["run_name"].get<std::string>();
    ASSERT_EQ(name.rfind("f32/row/NN/", 0), 0u) << name;
    if (row.contains("aggregate_name")) continue;
    ++plain_rows;
    EXPECT_GT(row["gflops"].get<double>(), 0.0) << name;
    EXPECT_TRUE(row.contains("pct_peak")) << name;
    const std::string label = row.value("label", "");
    if (name.find("24x24x24/t1/tuned") != std::string::npos) {
      exact_tuned |= label.rfind("exact:", 0) == 0;
    }
    if (name.find("20x12x36/t1/tuned") != std::string::npos) {
      nearest_tuned |= label.rfind("nearest:", 0) == 0;
    }
    defaults |= name.find("/default") != std::string::npos;
  }
  EXPECT_EQ(plain_rows, 2 * 2 * 2);  // 2 shapes x (tuned, default) x 2 repetitions
  EXPECT_TRUE(exact_tuned);
  EXPECT_TRUE(nearest_tuned);
  EXPECT_TRUE(defaults);
  // The summary table closes the console output; no colour codes when stdout is not a terminal.
  EXPECT_NE(r.out.find("summary: median GFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nf32/row/NN/20x12x36/t1 "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
}

// bf16 and s8 rows are timed like f32 ones: verified against the sampled reference first (a
// wrong result would be an error row without gflops), then timed.
TEST(BenchCliTest, LowPrecisionDtypesAreVerifiedAndTimed) {
  const std::string dir = FreshTestDir("bench_lowp");
  for (const char* dtype : {"bf16", "s8"}) {
    SCOPED_TRACE(dtype);
    const std::string json_path = dir + "/" + dtype + ".json";
    const RunResult r = RunMmtune("bench --db '" + TunedDb() + "' --dtype " + dtype +
                                  " --shapes 33x40x52 --against none --repetitions 1 "
                                  "--min-time 0.01 --json '" + json_path + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json doc = nlohmann::json::parse(Slurp(json_path), nullptr, false);
    ASSERT_TRUE(doc.is_object()) << Slurp(json_path);
    int timed = 0;
    for (const nlohmann::json& row : doc["benchmarks"]) {
      const std::string name = row["run_name"].get<std::string>();
      EXPECT_EQ(name.rfind(std::string(dtype) + "/row/NN/33x40x52/t1/", 0), 0u) << name;
      EXPECT_FALSE(row.contains("error_occurred")) << name << ": " << row.dump();
      if (row.contains("gflops") && row["gflops"].get<double>() > 0.0) ++timed;
    }
    EXPECT_EQ(timed, 2);  // tuned (the default tier here) and default
  }
}

// --packed-b: the packed weights (tuned, default) beside mmtune's plain call, each verified and
// timed, in every dtype, with labels that say how B was given.
TEST(BenchCliTest, PackedWeightsAreVerifiedAndTimedInEveryDtype) {
  const std::string dir = FreshTestDir("bench_packed_b");
  for (const char* dtype : {"f32", "f64", "bf16", "s8"}) {
    SCOPED_TRACE(dtype);
    std::map<std::string, int> timed;
    const nlohmann::json context = ForEachTimedRow(
        std::string("--packed-b --dtype ") + dtype +
            " --shapes 1x40x52,33x40x52 --against none --repetitions 1 --min-time 0.01",
        dir + "/" + dtype + ".json",
        [&](const std::string& name, const std::string& impl, const std::string& label) {
          ++timed[impl];
          if (impl == "unpacked") return;
          // Panels for packed configs, which one-row GEMMs' weights take too.
          const bool panels = label.find(": packed ") != std::string::npos;
          EXPECT_EQ(label.rfind(panels ? "packed B (panels); " : "packed B (copy); ", 0), 0u)
              << name << ": " << label;
          if (name.find("/1x40x52/") != std::string::npos) {
            EXPECT_TRUE(panels) << label;
          }
        });
    EXPECT_EQ(context["mmtune_packed_b"], "true");
    EXPECT_EQ(timed, (std::map<std::string, int>{{"default", 2}, {"tuned", 2}, {"unpacked", 2}}));
  }
}

// --packed-b with --epilogue or --dequantize: a linear layer with packed weights, every row
// verified with what it applies (the fused packed rows, mmtune's fused unpacked call, the peers
// fused or followed by the pass) and timed.
TEST(BenchCliTest, PackedWeightsWithEpiloguesAndDequantization) {
  const std::string dir = FreshTestDir("bench_packed_fused");
  for (const auto& [dtype, extra] : std::vector<std::pair<std::string, std::string>>{
           {"f32", "--epilogue bias+gelu"},
           {"bf16", "--epilogue silu"},
           {"s8", "--epilogue bias+relu"},
           {"s8", "--dequantize --epilogue bias+gelu"}}) {
    SCOPED_TRACE(dtype + " " + extra);
    std::map<std::string, int> timed;
    const nlohmann::json context = ForEachTimedRow(
        "--packed-b --dtype " + dtype + " " + extra +
            " --shapes 1x40x52,33x40x52 --against all --repetitions 1 --min-time 0.01",
        dir + "/" + dtype + std::to_string(extra.size()) + ".json",
        [&](const std::string& name, const std::string& impl, const std::string& label) {
          ++timed[impl];
          if (impl == "tuned" || impl == "default") {
            EXPECT_EQ(label.rfind("fused; packed B (", 0), 0u) << name << ": " << label;
          } else if (impl == "unpacked") {
            EXPECT_EQ(label.rfind("fused; ", 0), 0u) << name << ": " << label;
          }
        });
    EXPECT_EQ(context["mmtune_packed_b"], "true");
    for (const char* impl : {"tuned", "default", "unpacked"}) {
      EXPECT_EQ(timed[impl], 2) << impl;
    }
  }
}

// --batch: the runtime's batched call (tuned, default) beside one call per item, each verified
// (on items across the batch) and timed in every dtype, the whole batch's work counted.
TEST(BenchCliTest, BatchesAreVerifiedAndTimedInEveryDtype) {
  const std::string dir = FreshTestDir("bench_batch");
  for (const char* dtype : {"f32", "f64", "bf16", "s8"}) {
    SCOPED_TRACE(dtype);
    std::map<std::string, int> timed;
    const nlohmann::json context = ForEachTimedRow(
        std::string("--batch 5 --dtype ") + dtype +
            " --shapes 1x40x52,33x40x52 --threads 2 --against none --repetitions 1 "
            "--min-time 0.01",
        dir + "/" + dtype + ".json",
        [&](const std::string& name, const std::string& impl, const std::string& label) {
          ++timed[impl];
          EXPECT_EQ(label.rfind("batch of 5; ", 0), 0u) << name << ": " << label;
        });
    EXPECT_EQ(context["mmtune_batch"], "5");
    EXPECT_EQ(timed, (std::map<std::string, int>{{"default", 2}, {"loop", 2}, {"tuned", 2}}));
  }
  // A batch of one is still a batch.
  std::map<std::string, int> timed;
  ForEachTimedRow("--batch 1 --shapes 33x40x52 --against none --repetitions 1 --min-time 0.01",
                  dir + "/one.json",
                  [&](const std::string& name, const std::string& impl, const std::string& label) {
                    ++timed[impl];
                    EXPECT_EQ(label.rfind("batch of 1; ", 0), 0u) << name << ": " << label;
                  });
  EXPECT_EQ(timed, (std::map<std::string, int>{{"default", 1}, {"loop", 1}, {"tuned", 1}}));
}

// --batch with --epilogue: every item of the fused batch rows (tuned, default, one fused call
// per item) gets the bias and the activation, "plain" none, "separate" a pass over every
// item's C; each row is verified on items across the batch and timed, peers included.
TEST(BenchCliTest, BatchesWithEpiloguesAreVerifiedAndTimed) {
  const std::string dir = FreshTestDir("bench_batch_epilogue");
  for (const auto& [dtype, epilogue] : std::vector<std::pair<std::string, std::string>>{
           {"f32", "bias+gelu"}, {"f64", "silu"}, {"bf16", "bias"}, {"s8", "bias+relu"}}) {
    SCOPED_TRACE(dtype);
    std::map<std::string, int> timed;
    const nlohmann::json context = ForEachTimedRow(
        "--batch 3 --epilogue " + epilogue + " --dtype " + dtype +
            " --shapes 1x40x52,33x40x52 --threads 2 --against all --repetitions 1 "
            "--min-time 0.01",
        dir + "/" + dtype + ".json",
        [&](const std::string& name, const std::string& impl, const std::string& label) {
          ++timed[impl];
          const std::string expected = impl == "plain"      ? "batch of 3; no epilogue; "
                                       : impl == "separate" ? "batch of 3; then a pass over C; "
                                       : impl == "onednn"
                                           ? "batch of 3; batched call, bias and post-op fused; "
                                           : "batch of 3; fused; ";
          if (impl != "openblas" && impl != "libxsmm") {
            EXPECT_EQ(label.rfind(expected, 0), 0u) << name << ": " << label;
          }
        });
    EXPECT_EQ(context["mmtune_batch"], "3");
    EXPECT_EQ(context["mmtune_epilogue"], epilogue);
    for (const char* impl : {"tuned", "default", "plain", "separate", "loop"}) {
      EXPECT_EQ(timed[impl], 2) << impl;
    }
    // oneDNN's batched matmul with the bias and post-op, where this build has oneDNN (f64: it
    // has none; bf16 without AVX-512 may say it cannot run).
    if (context.contains("peer_onednn") && dtype != "f64" &&
        !(dtype == "bf16" && OneDnnWithoutBf16("bf16/row/NN/1x40x52/t2/onednn/"))) {
      EXPECT_EQ(timed["onednn"], 2);
    }
  }
}

// --epilogue: the fused rows (tuned, default), the GEMM alone and the GEMM then a pass, each
// verified against the reference with the epilogue (plain without) and timed, in every dtype
// (s8 with relu, the others with gelu or silu), with the peers in this build.
TEST(BenchCliTest, EpiloguesAreVerifiedAndTimedInEveryDtype) {
  const std::string dir = FreshTestDir("bench_epilogue");
  for (const auto& [dtype, epilogue] :
       std::vector<std::pair<std::string, std::string>>{
           {"f32", "bias+gelu"}, {"f64", "silu"}, {"bf16", "gelu+bias"}, {"s8", "bias+relu"}}) {
    SCOPED_TRACE(dtype);
    std::map<std::string, int> timed;
    const nlohmann::json context = ForEachTimedRow(
        "--epilogue " + epilogue + " --dtype " + dtype +
            " --shapes 1x40x52,33x40x52 --against all --repetitions 1 --min-time 0.01",
        dir + "/" + dtype + ".json",
        [&](const std::string& name, const std::string& impl, const std::string& label) {
          ++timed[impl];
          if (impl == "tuned" || impl == "default") {
            EXPECT_EQ(label.rfind("fused; ", 0), 0u) << name << ": " << label;
          }
        });
    EXPECT_EQ(context["mmtune_epilogue"],
              epilogue == "gelu+bias" ? "bias+gelu" : epilogue);
    for (const char* impl : {"tuned", "default", "plain", "separate"}) {
      EXPECT_EQ(timed[impl], 2) << impl;
    }
  }
}

// --dequantize (s8): every row checked against the dequantized formula on f32 C ("plain"
// against the s32 product), with and without an epilogue, beside every peer in the build.
TEST(BenchCliTest, DequantizedRowsAreVerifiedAndTimed) {
  const std::string dir = FreshTestDir("bench_dequantize");
  for (const std::string epilogue : {"", "bias+gelu"}) {
    SCOPED_TRACE(epilogue);
    std::map<std::string, int> timed;
    const nlohmann::json context = ForEachTimedRow(
        "--dtype s8 --dequantize" + (epilogue.empty() ? "" : " --epilogue " + epilogue) +
            " --shapes 1x40x52,33x40x52 --against all --repetitions 1 --min-time 0.01",
        dir + "/s8" + epilogue + ".json",
        [&](const std::string& name, const std::string& impl, const std::string& label) {
          ++timed[impl];
          if (impl == "tuned" || impl == "default") {
            EXPECT_EQ(label.rfind("fused; ", 0), 0u) << name << ": " << label;
          }
        });
    EXPECT_EQ(context["mmtune_dequantize"], "true");
    EXPECT_EQ(context["mmtune_epilogue"], epilogue.empty() ? "none" : epilogue);
    for (const char* impl : {"tuned", "default", "plain", "separate"}) {
      EXPECT_EQ(timed[impl], 2) << impl;
    }
  }
}

TEST(BenchCliTest, BadInputIsOneLine) {
  const std::string dir = FreshTestDir("bench_bad");
  ExpectOneLineError(RunMmtune("bench --db '" + dir + "/missing.db' --shapes 8x8x8"), 1);
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing.db"));
  ExpectOneLineError(RunMmtune("bench --db '" + TunedDb() + "' --shapes 12x"), 2);
  ExpectOneLineError(RunMmtune("bench --db '" + TunedDb() + "' --against mkl"), 2);
  ExpectOneLineError(RunMmtune("bench --db '" + TunedDb() + "' --shapes 8x0x8 --against none"),
                     2);
  ExpectOneLineError(RunMmtune("bench --db '" + TunedDb() + "' --repetitions 0"), 2);
  ExpectOneLineError(RunMmtune("bench --db '" + TunedDb() + "' --batch -2"), 2);
  ExpectOneLineError(RunMmtune("bench --db '" + TunedDb() + "' --batch 4 --packed-b"), 2);
  for (const char* epilogue : {"tanh", "bias+bias", "relu+gelu", "none", "bias+"}) {
    SCOPED_TRACE(epilogue);
    ExpectOneLineError(
        RunMmtune("bench --db '" + TunedDb() + "' --epilogue '" + epilogue + "'"), 2);
  }
  ExpectOneLineError(
      RunMmtune("bench --db '" + TunedDb() + "' --dtype s8 --epilogue bias+silu --against none"),
      2);
  ExpectOneLineError(RunMmtune("bench --db '" + TunedDb() + "' --preset quick --shapes 8x8x8"),
                     2);
  ExpectOneLineError(RunMmtune("bench --db '" + TunedDb() + "' --dtype f32 --dequantize"), 2);
  ExpectOneLineError(
      RunMmtune("bench --db '" + TunedDb() + "' --dtype s8 --dequantize --batch 2"), 2);
}

}  // namespace
