// Search strategies behind one interface. A strategy walks a fixed candidate list (the space of
// one problem, see space.h) by index: it proposes indices it has not proposed before and is told
// the score of each one it proposed. Scores are "higher is better" (GFLOP/s); a candidate that
// failed verification has no score and must never be preferred. (A candidate the tuner dropped
// early as clearly slow gets its rough one-round score.)
//
// Strategies know nothing about timing, the DB or threads, so they are tested on synthetic cost
// functions, and their behaviour depends only on the space, the results and the seed: the same
// inputs give the same proposals (`--seed` makes a tune reproducible up to measurement noise).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_config.h"
#include "mmtune/result.h"

namespace mmtune {

struct SearchContext {
  // The candidates, all valid for the problem. Index 0 is the analytical default (the seed);
  // the warm-start configs follow it (see BuildSearchSpace).
  std::vector<KernelConfig> space;
  std::size_t warm_start_count = 0;  // indices 1 .. warm_start_count are warm starts
  std::uint64_t seed = 0;            // random number seed
  std::int64_t max_evals = 0;        // the evaluation budget if known, 0 = unknown/unlimited
};

// Puts `seed_config` first and the `warm_start` configs (deduplicated, those not already in the
// space appended) right after it, followed by the rest of `space` in its original order.
SearchContext BuildSearchSpace(const KernelConfig& seed_config,
                               const std::vector<KernelConfig>& warm_start,
                               std::vector<KernelConfig> space, std::uint64_t seed,
                               std::int64_t max_evals);

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string_view name() const = 0;
  // Up to `max_count` indices into the space, none proposed before. Fewer (or none) means the
  // strategy has nothing more it wants to try now; an empty result after all proposals were
  // observed means the search is over.
  virtual std::vector<std::size_t> Propose(std::size_t max_count) = 0;
  // The result of a proposed index: its score, or nullopt when it failed.
  virtual void Observe(std::size_t index, std::optional<double> score) = 0;
};

// "exhaustive", "random", "model", "local", "evolutionary", "auto".
std::vector<std::string> StrategyNames();
// Unknown name → kInvalidArgument naming the valid ones.
Status CheckStrategyName(std::string_view name);
Result<std::unique_ptr<SearchStrategy>> MakeStrategy(std::string_view name,
                                                     SearchContext context);

}  // namespace mmtune
