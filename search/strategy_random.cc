// `random`: the default first, then the rest in a seeded random order (Fisher-Yates). A baseline
// that any structured search should beat.
#include <numeric>

#include "search/search_random.h"
#include "search/strategy_internal.h"

namespace mmtune {
namespace {

class RandomStrategy final : public LedgerStrategy {
 public:
  explicit RandomStrategy(SearchContext context) : LedgerStrategy(std::move(context)) {
    order_.resize(ledger_.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    SearchRandom random(context_.seed);
    // Shuffle everything after index 0: the default is always measured first.
    for (std::size_t i = order_.size(); i > 2; --i) {
      const std::size_t j = 1 + random.Below(i - 1);
      std::swap(order_[i - 1], order_[j]);
    }
  }
  std::string_view name() const override { return "random"; }

  std::vector<std::size_t> Propose(std::size_t max_count) override {
    std::vector<std::size_t> out;
    while (out.size() < max_count && next_ < order_.size()) {
      ledger_.MarkProposed(order_[next_]);
      out.push_back(order_[next_++]);
    }
    return out;
  }

 private:
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeRandomStrategy(SearchContext context) {
  return std::make_unique<RandomStrategy>(std::move(context));
}

}  // namespace mmtune
