// `auto`, the default: the analytical default and the warm starts, a hill climb from the best of
// them, then evolutionary exploration for whatever budget remains, with a fresh climb from every
// new best config the evolution finds (a memetic search: evolution finds basins, climbing finds
// their tops). When the evaluation budget is known, climbs stop after three quarters of it so the
// last quarter always explores; with no budget (max_evals = 0) it goes on until the space is
// exhausted and the tuner's time budget stops it.
#include <limits>

#include "search/evolution.h"
#include "search/hill_climber.h"
#include "search/neighborhood.h"
#include "search/search_random.h"
#include "search/strategy_internal.h"

namespace mmtune {
namespace {

// A new best starts a climb only when it beats the last climb's start by more than measurement
// noise (about 1%); otherwise noise alone would restart climbs around the same peak.
constexpr double kClimbMargin = 1.01;

class AutoStrategy final : public LedgerStrategy {
 public:
  explicit AutoStrategy(SearchContext context)
      : LedgerStrategy(std::move(context)), neighborhood_(context_.space),
        climber_(neighborhood_, ledger_), random_(context_.seed),
        evolution_(neighborhood_, ledger_, random_, kPopulationSize),
        climb_limit_(context_.max_evals > 0 ? static_cast<std::size_t>(context_.max_evals) * 3 / 4
                                            : std::numeric_limits<std::size_t>::max()) {}
  std::string_view name() const override { return "auto"; }

  std::vector<std::size_t> Propose(std::size_t max_count) override {
    std::vector<std::size_t> out;
    if (!ProposeSeeds(max_count, out)) return out;
    while (out.size() < max_count) {
      if (ledger_.proposed_count() >= climb_limit_) climber_.Stop();
      climber_.Propose(max_count, out);
      // A climb in progress has priority; when it waits for results, so does the search.
      if (climber_.climbing()) break;
      const std::optional<std::size_t> best = ledger_.best();
      if (best && !climber_.expanded(*best) && ledger_.proposed_count() < climb_limit_ &&
          (!last_climb_score_ || *ledger_.score(*best) > *last_climb_score_ * kClimbMargin)) {
        climber_.Start(*best);
        last_climb_score_ = ledger_.score(*best);
        continue;
      }
      const std::optional<std::size_t> child = evolution_.ProposeChild();
      if (!child) break;  // exhausted, or nothing has a score yet and results are pending
      out.push_back(*child);
    }
    return out;
  }

 private:
  Neighborhood neighborhood_;
  HillClimber climber_;
  SearchRandom random_;
  Evolution evolution_;
  std::size_t climb_limit_;
  std::optional<double> last_climb_score_;  // the score a climb last started from
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeAutoStrategy(SearchContext context) {
  return std::make_unique<AutoStrategy>(std::move(context));
}

}  // namespace mmtune
