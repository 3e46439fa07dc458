// The winners of one machine, indexed for the runtime's four lookup tiers: the exact problem,
// else the winner of its bucket shape where a tuned shape range holds it, else the nearest tuned
// problem (log-space distance over M, N, K with the same dtype, layout, transposes and call
// form; its config re-validated for the new shape), else the analytical default. Built once
// when a runtime opens, from DB rows it checks itself; immutable afterwards, so any number of
// threads may look up at once without a lock.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "db/store.h"
#include "kernels/kernel_config.h"
#include "machine/machine.h"
#include "mmtune/runtime.h"
#include "mmtune/types.h"

namespace mmtune {

struct Lookup {
  LookupTier tier = LookupTier::kDefault;
  KernelConfig config;
  Problem tuned;        // exact / bucket / nearest: the tuned problem the config won on
  double gflops = 0.0;  // measured on `tuned`; 0 for the default
  std::string threads_reason;  // why `config.threads` threads run, for people
  std::string bucket_range;    // bucket: "1..2048x4096x4096 (pow2)", the range that held it
};

class WinnerIndex {
 public:
  WinnerIndex() = default;

  // Keeps the rows whose config can run here: one that needs an ISA level `machine` lacks, or
  // that fails validation for its own problem, is left out, with one line in `skipped` saying
  // why (the runtime warns once per row, at open). `ranges` are the tuned shape ranges whose
  // problems the bucket tier answers.
  static WinnerIndex Build(const std::vector<WinnerRecord>& winners, const Machine& machine,
                           std::vector<std::string>* skipped,
                           const std::vector<ShapeRangeRecord>& ranges = {});

  // The config for `problem`; `problem.threads` is the most threads the caller allows (a winner
  // that runs on more is not used). Always returns a config valid for `problem` on the machine.
  // No tier runs a problem on fewer threads than the analytical default would, unless the
  // winner was measured against that default at the caller's thread count (tuned with
  // `problem.threads` allowed).
  Lookup Find(const Problem& problem) const;

  std::size_t size() const { return entries_.size(); }

  // Whether any winner was tuned for batches of `count` GEMMs (`tune --batch`), of any shape.
  bool HasBatchesOf(std::int64_t count) const;

 private:
  struct Entry {
    Problem problem;
    KernelConfig config;
    double gflops = 0.0;
  };
  static bool SameKind(const Problem& a, const Problem& b);
  // The exact tier for `problem`: its fastest winner within the thread rules, or nullptr; a
  // winner left out only for running on fewer threads than the default goes to `too_few`.
  const Entry* FindExact(const Problem& problem, const Entry** too_few) const;
  // The bucket tier: the winner of the bucket shape of a range holding `problem`, or nullptr.
  const Entry* FindBucket(const Problem& problem, const ShapeRangeRecord** range) const;

  std::vector<Entry> entries_;
  std::vector<std::int64_t> batch_counts_;  // sorted, of the entries with batch > 1
  std::vector<ShapeRangeRecord> ranges_;
  Machine machine_;
};

}  // namespace mmtune
