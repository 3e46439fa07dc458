// The concrete strategies, made by MakeStrategy (strategy.cc), and what they share. Internal to
// search/: the tuner only sees SearchStrategy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "search/search_ledger.h"
#include "search/strategy.h"

namespace mmtune {

std::unique_ptr<SearchStrategy> MakeExhaustiveStrategy(SearchContext context);
std::unique_ptr<SearchStrategy> MakeRandomStrategy(SearchContext context);
std::unique_ptr<SearchStrategy> MakeModelStrategy(SearchContext context);
std::unique_ptr<SearchStrategy> MakeLocalStrategy(SearchContext context);
std::unique_ptr<SearchStrategy> MakeEvolutionaryStrategy(SearchContext context);
std::unique_ptr<SearchStrategy> MakeAutoStrategy(SearchContext context);

// A strategy that keeps its proposals and results in a ledger; `Observe` only records.
class LedgerStrategy : public SearchStrategy {
 public:
  explicit LedgerStrategy(SearchContext context)
      : context_(std::move(context)), ledger_(context_.space.size()) {}
  void Observe(std::size_t index, std::optional<double> score) override {
    ledger_.Record(index, score);
  }

 protected:
  // The seeds are index 0 (the analytical default) and the warm starts after it.
  std::size_t seed_count() const {
    return std::min(context_.space.size(), context_.warm_start_count + 1);
  }
  // Proposes the seeds not proposed yet (up to `max_count` in `out`); true once every seed has
  // a result.
  bool ProposeSeeds(std::size_t max_count, std::vector<std::size_t>& out) {
    bool all_observed = true;
    for (std::size_t i = 0; i < seed_count(); ++i) {
      if (!ledger_.proposed(i) && out.size() < max_count) {
        ledger_.MarkProposed(i);
        out.push_back(i);
      }
      all_observed = all_observed && ledger_.observed(i);
    }
    return all_observed;
  }

  SearchContext context_;
  SearchLedger ledger_;
};

// The population size of the evolutionary search, in micro-kernels (one member each): enough
// for every kernel of an AVX2 space (32) and the best 32 of an AVX-512 one (48).
inline constexpr std::size_t kPopulationSize = 32;

}  // namespace mmtune
