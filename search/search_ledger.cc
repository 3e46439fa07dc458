#include "search/search_ledger.h"

#include <cassert>

namespace mmtune {

SearchLedger::SearchLedger(std::size_t size)
    : state_(size, State::kUnproposed), scores_(size, 0.0), failed_(size, false),
      unproposed_(size), position_(size) {
  for (std::size_t i = 0; i < size; ++i) {
    unproposed_[i] = static_cast<std::uint32_t>(i);
    position_[i] = static_cast<std::uint32_t>(i);
  }
}

std::optional<double> SearchLedger::score(std::size_t index) const {
  if (state_[index] != State::kObserved || failed_[index]) return std::nullopt;
  return scores_[index];
}

bool SearchLedger::Better(std::size_t a, std::size_t b) const {
  const std::optional<double> score_a = score(a);
  const std::optional<double> score_b = score(b);
  if (!score_a) return false;
  if (!score_b) return true;
  if (*score_a != *score_b) return *score_a > *score_b;
  return a < b;
}

void SearchLedger::MarkProposed(std::size_t index) {
  assert(index < size() && state_[index] == State::kUnproposed);
  state_[index] = State::kPending;
  ++pending_;
  // Swap-remove from the unproposed list.
  const std::uint32_t last = unproposed_.back();
  unproposed_[position_[index]] = last;
  position_[last] = position_[index];
  unproposed_.pop_back();
}

void SearchLedger::Record(std::size_t index, std::optional<double> score) {
  if (index >= size() || state_[index] != State::kPending) return;
  state_[index] = State::kObserved;
  --pending_;
  // NaN is no score: it would compare false with everything and poison the best.
  failed_[index] = !score.has_value() || *score != *score;
  scores_[index] = failed_[index] ? 0.0 : *score;
  observation_log_.push_back(index);
  if (!failed_[index] && (!best_ || Better(index, *best_))) best_ = index;
}

std::optional<std::size_t> SearchLedger::RandomUnproposed(SearchRandom& random) const {
  if (unproposed_.empty()) return std::nullopt;
  return unproposed_[random.Below(unproposed_.size())];
}

}  // namespace mmtune
