// The console side of `mmtune bench`: Google Benchmark's own table as it runs, then one summary
// line per problem with the median GFLOP/s of every implementation and how the tuned runtime
// compares with the best peer, which is the question a user runs the bench to answer.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace mmtune {

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  // Benchmark names are "<problem key>/<impl>"; rows come out in the order of `problem_keys`.
  // Colour only on a terminal: a custom reporter does not get Google Benchmark's own check, and
  // escape codes in a CI log or a redirected file are noise.
  SummaryReporter(std::vector<std::string> problem_keys, bool color);

  void ReportRuns(const std::vector<Run>& runs) override;

  // The summary table; "tuned / best peer" is left out when no peer ran.
  void PrintSummary(std::ostream& out) const;

 private:
  struct Timings {
    std::vector<double> runs;       // gflops of each plain run
    std::optional<double> median;   // Google Benchmark's median aggregate, when repeated
    bool failed = false;
  };
  std::vector<std::string> problem_keys_;
  std::vector<std::string> impls_;  // tuned, default, then peers in the order first seen
  std::map<std::string, std::map<std::string, Timings>> timings_;  // key -> impl -> timings
};

}  // namespace mmtune
