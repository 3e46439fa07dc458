// `model`: only the analytical default (index 0). Zero search: it measures what the runtime would
// use untuned, which makes it the yardstick for what tuning gains.
#include "search/strategy_internal.h"

namespace mmtune {
namespace {

class ModelStrategy final : public LedgerStrategy {
 public:
  using LedgerStrategy::LedgerStrategy;
  std::string_view name() const override { return "model"; }

  std::vector<std::size_t> Propose(std::size_t max_count) override {
    if (max_count == 0 || ledger_.size() == 0 || ledger_.proposed(0)) return {};
    ledger_.MarkProposed(0);
    return {0};
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeModelStrategy(SearchContext context) {
  return std::make_unique<ModelStrategy>(std::move(context));
}

}  // namespace mmtune
