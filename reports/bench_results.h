// Reads the Google Benchmark JSON that `mmtune bench --json FILE` writes, for the report's
// comparison of the tuned runtime, the analytical default and the peer libraries. The contract
// (docs/report.md): every entry of "benchmarks" is named
// "<dtype>/<layout>/<trans>/<M>x<N>x<K>/t<threads>/<impl>" (Google Benchmark may append
// "/real_time" and "key:value" modifiers), carries the counters "gflops" and "pct_peak", and with
// repetitions the "median" aggregate is preferred over the plain runs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

// One implementation's result for one problem.
struct BenchImplResult {
  std::string impl;                  // tuned, default, openblas, onednn, libxsmm, ...
  std::optional<double> gflops;      // nullopt when every run of it failed
  std::optional<double> pct_peak;    // % of the compute peak, as the bench computed it
  bool from_median_aggregate = false;  // else the median of `runs` plain runs
  int runs = 0;
  std::string label;  // the benchmark's label (the tier and config, a peer's version)
  std::string error;  // the first error message when no run succeeded
};

struct BenchProblem {
  std::string key;  // "f32/row/NN/128x768x768/t1", as ProblemKey
  Problem problem;
  // tuned, default, then the peers by name: a fixed order, whatever order the runs interleaved in
  std::vector<BenchImplResult> results;
};

struct BenchResults {
  std::string path;
  // The string-valued "context" fields shown to people: mmtune_*, peer_*, date and host_name,
  // sorted by key.
  std::vector<std::pair<std::string, std::string>> context;
  std::vector<BenchProblem> problems;  // in the order the file first names each problem
};

// The key of a problem in bench names and in the reports: "f32/row/NN/128x768x768/t1", with
// "/packed-b" after a problem tuned with B packed beforehand (bench names never have it).
std::string ProblemKey(const Problem& problem);

// A missing file is kNotFound (the caller's mistake); an unreadable one kIo; anything that does
// not follow the contract kInvalidArgument, in one line naming the file and what is wrong.
Result<BenchResults> ReadBenchResults(const std::string& path);
Result<BenchResults> ParseBenchResults(std::string_view text, const std::string& path);

}  // namespace mmtune
