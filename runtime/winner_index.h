// The winners of one machine, indexed for the runtime's three lookup tiers: the exact problem,
// else the nearest tuned problem (log-space distance over M, N, K with the same dtype, layout,
// transposes; its config re-validated for the new shape), else the analytical default. Built once
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
  Problem tuned;        // exact / nearest: the tuned problem the config won on
  double gflops = 0.0;  // measured on `tuned`; 0 for the default
  std::string threads_reason;  // why `config.threads` threads run, for people
};

class WinnerIndex {
 public:
  WinnerIndex() = default;

  // Keeps the rows whose config can run here: one that needs an ISA level `machine` lacks, or
  // that fails validation for its own problem, is left out, with one line in `skipped` saying
  // why (the runtime warns once per row, at open).
  static WinnerIndex Build(const std::vector<WinnerRecord>& winners, const Machine& machine,
                           std::vector<std::string>* skipped);

  // The config for `problem`; `problem.threads` is the most threads the caller allows (a winner
  // that runs on more is not used). Always returns a config valid for `problem` on the machine.
  // No tier runs a problem on fewer threads than the analytical default would, unless the
  // winner was measured against that default at the caller's thread count (tuned with
  // `problem.threads` allowed).
  Lookup Find(const Problem& problem) const;

  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Problem problem;
    KernelConfig config;
    double gflops = 0.0;
  };
  static bool SameKind(const Problem& a, const Problem& b);

  std::vector<Entry> entries_;
  Machine machine_;
};

}  // namespace mmtune
