#include "search/hill_climber.h"

#include <cassert>

namespace mmtune {

HillClimber::HillClimber(const Neighborhood& neighborhood, SearchLedger& ledger)
    : neighborhood_(neighborhood), ledger_(ledger), expanded_(ledger.size(), false) {}

void HillClimber::Start(std::size_t base) {
  assert(ledger_.has_score(base));
  center_ = base;
  expanded_[base] = true;
  climbing_ = true;
}

void HillClimber::Propose(std::size_t max_count, std::vector<std::size_t>& out) {
  while (climbing_ && out.size() < max_count) {
    bool waiting = false;
    for (std::uint32_t neighbor : neighborhood_.Neighbors(center_)) {
      if (!ledger_.proposed(neighbor)) {
        if (out.size() == max_count) return;
        ledger_.MarkProposed(neighbor);
        out.push_back(neighbor);
      }
      if (!ledger_.observed(neighbor)) waiting = true;
    }
    if (waiting) return;

    std::size_t best = center_;
    for (std::uint32_t neighbor : neighborhood_.Neighbors(center_)) {
      if (ledger_.Better(neighbor, best)) best = neighbor;
    }
    // Only a strictly higher score moves the climb: an equal one could cycle between the two.
    if (best != center_ && *ledger_.score(best) > *ledger_.score(center_)) {
      center_ = best;
      expanded_[best] = true;
    } else {
      climbing_ = false;
    }
  }
}

}  // namespace mmtune
