// `exhaustive`: every index in order, the default first. The baseline the others are judged by,
// and what `search_bench` replays them against.
#include "search/strategy_internal.h"

namespace mmtune {
namespace {

class ExhaustiveStrategy final : public LedgerStrategy {
 public:
  using LedgerStrategy::LedgerStrategy;
  std::string_view name() const override { return "exhaustive"; }

  std::vector<std::size_t> Propose(std::size_t max_count) override {
    std::vector<std::size_t> out;
    while (out.size() < max_count && next_ < ledger_.size()) {
      ledger_.MarkProposed(next_);
      out.push_back(next_++);
    }
    return out;
  }

 private:
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeExhaustiveStrategy(SearchContext context) {
  return std::make_unique<ExhaustiveStrategy>(std::move(context));
}

}  // namespace mmtune
