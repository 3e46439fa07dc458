// Runs the real `mmtune` binary: exit codes, one-line errors and output formats are what users
// and scripts see.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.h"

namespace {

using mmtune::testing::Lines;
using mmtune::testing::RunMmtune;
using mmtune::testing::RunResult;

TEST(CliTest, NoCommandIsAUsageError) {
  const RunResult r = RunMmtune("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("mmtune: error: ", 0), 0u) << r.err;
}

TEST(CliTest, UnknownCommandIsNamed) {
  const RunResult r = RunMmtune("tnue");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("unknown command 'tnue'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("info"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(CliTest, UnknownFlagIsAUsageError) {
  for (const char* args : {"info --bogus", "--bogus", "info --json=yes-please extra"}) {
    SCOPED_TRACE(args);
    const RunResult r = RunMmtune(args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("mmtune: error: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(CliTest, HelpAndVersionSucceed) {
  const RunResult help = RunMmtune("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("info"), std::string::npos);
  EXPECT_NE(help.out.find("MMTUNE_ISA"), std::string::npos);
  const RunResult info_help = RunMmtune("info --help");
  EXPECT_EQ(info_help.exit_code, 0);
  EXPECT_NE(info_help.out.find("--measure"), std::string::npos);
  const RunResult version = RunMmtune("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("mmtune ", 0), 0u) << version.out;
}

TEST(CliTest, InfoPrintsTheMachine) {
  const RunResult r = RunMmtune("info");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* field : {"CPU ", "Fingerprint ", "Topology ", "Caches ", "L1d", "ISA ",
                            "Kernel ISA "}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << "missing '" << field << "' in\n" << r.out;
  }
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliTest, InfoJsonIsStableAcrossRunsAndIsaCaps) {
  const RunResult first = RunMmtune("info --json");
  const RunResult second = RunMmtune("info --json", "MMTUNE_ISA=generic");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto a = nlohmann::json::parse(first.out);
  const auto b = nlohmann::json::parse(second.out);
  EXPECT_EQ(a.at("schema_version"), 1);
  const std::string fingerprint = a.at("machine").at("fingerprint");
  EXPECT_EQ(fingerprint.size(), 16u);
  EXPECT_EQ(b.at("machine").at("fingerprint"), fingerprint);
  EXPECT_EQ(b.at("machine").at("isa").at("kernel_level"), "generic");
  EXPECT_EQ(b.at("machine").at("isa").at("cap"), "generic");
  EXPECT_TRUE(a.at("machine").at("isa").at("cap").is_null());
  EXPECT_FALSE(a.contains("peaks"));
  EXPECT_GE(a.at("machine").at("topology").at("cores").get<int>(), 1);
}

TEST(CliTest, InvalidIsaCapIsAUsageError) {
  const RunResult r = RunMmtune("info", "MMTUNE_ISA=avx1024");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("MMTUNE_ISA"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("avx1024"), std::string::npos) << r.err;
}

}  // namespace
