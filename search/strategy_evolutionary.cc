// `evolutionary`: the default and the warm starts, then random picks until the first population
// is proposed, then children of the steady-state evolution (see evolution.h) until the space is
// exhausted.
#include "search/evolution.h"
#include "search/neighborhood.h"
#include "search/search_random.h"
#include "search/strategy_internal.h"

namespace mmtune {
namespace {

class EvolutionaryStrategy final : public LedgerStrategy {
 public:
  explicit EvolutionaryStrategy(SearchContext context)
      : LedgerStrategy(std::move(context)), neighborhood_(context_.space),
        random_(context_.seed), evolution_(neighborhood_, ledger_, random_, kPopulationSize) {}
  std::string_view name() const override { return "evolutionary"; }

  std::vector<std::size_t> Propose(std::size_t max_count) override {
    std::vector<std::size_t> out;
    ProposeSeeds(max_count, out);
    // The first population: the seeds plus random picks (they need not wait for results).
    while (out.size() < max_count && ledger_.proposed_count() < kPopulationSize) {
      const std::optional<std::size_t> pick = ledger_.RandomUnproposed(random_);
      if (!pick) break;
      ledger_.MarkProposed(*pick);
      out.push_back(*pick);
    }
    while (out.size() < max_count) {
      const std::optional<std::size_t> child = evolution_.ProposeChild();
      if (!child) break;
      out.push_back(*child);
    }
    return out;
  }

 private:
  Neighborhood neighborhood_;
  SearchRandom random_;
  Evolution evolution_;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeEvolutionaryStrategy(SearchContext context) {
  return std::make_unique<EvolutionaryStrategy>(std::move(context));
}

}  // namespace mmtune
