// `local`: hill climbing from the best of the default and the warm starts (see hill_climber.h).
// At a local optimum it restarts from the best config that has a score, has not been a centre
// yet and still has unproposed neighbours: usually a runner-up neighbour of the last climb, so
// the search widens around the best region it knows (best-first) instead of jumping away. Only
// when no such config is left (the explored region is closed) does it probe a random unproposed
// config, and it climbs from the first probe that succeeds.
#include <queue>

#include "search/hill_climber.h"
#include "search/neighborhood.h"
#include "search/search_random.h"
#include "search/strategy_internal.h"

namespace mmtune {
namespace {

class LocalStrategy final : public LedgerStrategy {
 public:
  explicit LocalStrategy(SearchContext context)
      : LedgerStrategy(std::move(context)), neighborhood_(context_.space),
        climber_(neighborhood_, ledger_), random_(context_.seed),
        restart_queue_(WorseFirst{&ledger_}) {}
  std::string_view name() const override { return "local"; }

  std::vector<std::size_t> Propose(std::size_t max_count) override {
    std::vector<std::size_t> out;
    if (!ProposeSeeds(max_count, out)) return out;
    while (out.size() < max_count) {
      climber_.Propose(max_count, out);
      if (climber_.climbing()) break;  // full, or waiting for results
      if (const std::optional<std::size_t> base = NextRestart()) {
        climber_.Start(*base);
        continue;
      }
      // Nothing left to restart from. A pending result may still offer one; otherwise probe.
      if (ledger_.pending() > 0) break;
      const std::optional<std::size_t> probe = ledger_.RandomUnproposed(random_);
      if (!probe) break;  // exhausted
      ledger_.MarkProposed(*probe);
      out.push_back(*probe);
    }
    return out;
  }

 private:
  // Orders the restart queue so that its top is the best config.
  struct WorseFirst {
    const SearchLedger* ledger;
    bool operator()(std::size_t a, std::size_t b) const { return ledger->Better(b, a); }
  };

  // The best scored config that was never a centre and still has an unproposed neighbour.
  // Both conditions only ever turn false, so a config that fails them leaves the queue for good.
  std::optional<std::size_t> NextRestart() {
    const std::vector<std::size_t>& log = ledger_.observation_log();
    for (; log_cursor_ < log.size(); ++log_cursor_) {
      if (ledger_.has_score(log[log_cursor_])) restart_queue_.push(log[log_cursor_]);
    }
    while (!restart_queue_.empty()) {
      const std::size_t candidate = restart_queue_.top();
      if (!climber_.expanded(candidate) && HasUnproposedNeighbor(candidate)) return candidate;
      restart_queue_.pop();
    }
    return std::nullopt;
  }

  bool HasUnproposedNeighbor(std::size_t index) const {
    for (std::uint32_t neighbor : neighborhood_.Neighbors(index)) {
      if (!ledger_.proposed(neighbor)) return true;
    }
    return false;
  }

  Neighborhood neighborhood_;
  HillClimber climber_;
  SearchRandom random_;
  std::priority_queue<std::size_t, std::vector<std::size_t>, WorseFirst> restart_queue_;
  std::size_t log_cursor_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeLocalStrategy(SearchContext context) {
  return std::make_unique<LocalStrategy>(std::move(context));
}

}  // namespace mmtune
