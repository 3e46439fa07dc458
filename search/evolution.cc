#include "search/evolution.h"

#include <algorithm>

namespace mmtune {
namespace {

constexpr std::uint64_t kImmigrantPercent = 25;
constexpr std::uint64_t kCrossoverPercent = 35;
// How far a mutation walk may wander looking for an unproposed config before it falls back to
// the nearest unproposed config of its parent.
constexpr int kMaxWalkSteps = 12;

}  // namespace

Evolution::Evolution(const Neighborhood& neighborhood, SearchLedger& ledger,
                     SearchRandom& random, std::size_t population_size)
    : neighborhood_(neighborhood), ledger_(ledger), random_(random),
      population_size_(std::max<std::size_t>(1, population_size)) {}

void Evolution::FoldObservations() {
  const std::vector<std::size_t>& log = ledger_.observation_log();
  for (; log_cursor_ < log.size(); ++log_cursor_) {
    const std::size_t index = log[log_cursor_];
    if (!ledger_.has_score(index)) continue;  // failed configs never become parents
    // One member per micro-kernel: the best config seen with it.
    auto same_kernel = std::find_if(population_.begin(), population_.end(), [&](std::size_t m) {
      return neighborhood_.KernelOf(m) == neighborhood_.KernelOf(index);
    });
    if (same_kernel != population_.end()) {
      if (ledger_.Better(index, *same_kernel)) *same_kernel = index;
      continue;
    }
    if (population_.size() < population_size_) {
      population_.push_back(index);
      continue;
    }
    auto worst = std::min_element(
        population_.begin(), population_.end(),
        [&](std::size_t a, std::size_t b) { return ledger_.Better(b, a); });
    if (ledger_.Better(index, *worst)) *worst = index;
  }
}

std::size_t Evolution::Tournament() {
  const std::size_t a = population_[random_.Below(population_.size())];
  const std::size_t b = population_[random_.Below(population_.size())];
  return ledger_.Better(a, b) ? a : b;
}

std::optional<std::size_t> Evolution::Take(std::size_t index) {
  if (index >= ledger_.size() || ledger_.proposed(index)) return std::nullopt;
  ledger_.MarkProposed(index);
  return index;
}

std::optional<std::size_t> Evolution::Immigrant() {
  const std::optional<std::size_t> index = ledger_.RandomUnproposed(random_);
  return index ? Take(*index) : std::nullopt;
}

std::optional<std::size_t> Evolution::Mutate() {
  const std::size_t parent = Tournament();
  // One step usually, two now and then: a slightly longer jump escapes shallow local optima.
  const int wanted_steps = random_.Chance(1, 4) ? 2 : 1;
  std::size_t at = parent;
  for (int step = 1; step <= kMaxWalkSteps; ++step) {
    const auto neighbors = neighborhood_.Neighbors(at);
    if (neighbors.empty()) break;
    at = neighbors[random_.Below(neighbors.size())];
    if (step >= wanted_steps && !ledger_.proposed(at)) return Take(at);
  }
  return Take(neighborhood_.NearestMix(parent, parent, 0, [&](std::size_t i) {
    return !ledger_.proposed(i);
  }));
}

std::optional<std::size_t> Evolution::Crossover() {
  const std::size_t first = Tournament();
  std::size_t second = Tournament();
  for (int retry = 0; retry < 3 && second == first; ++retry) second = Tournament();
  const std::uint32_t all_groups = (1u << kParameterGroupCount) - 1;
  std::uint32_t from_second = static_cast<std::uint32_t>(random_.Below(all_groups + 1));
  // Taking every group from one parent would make the child a copy: flip one group.
  if (from_second == 0 || from_second == all_groups) {
    from_second ^= 1u << random_.Below(kParameterGroupCount);
  }
  return Take(neighborhood_.NearestMix(first, second, from_second, [&](std::size_t i) {
    return !ledger_.proposed(i);
  }));
}

std::optional<std::size_t> Evolution::ProposeChild() {
  FoldObservations();
  if (ledger_.exhausted()) return std::nullopt;
  if (population_.empty()) {
    // Nothing to breed from: wait for pending results, or look elsewhere if everything failed.
    if (ledger_.pending() > 0) return std::nullopt;
    return Immigrant();
  }
  const std::uint64_t roll = random_.Below(100);
  std::optional<std::size_t> child;
  if (roll < kImmigrantPercent) {
    child = Immigrant();
  } else if (roll < kImmigrantPercent + kCrossoverPercent && population_.size() >= 2) {
    child = Crossover();
  } else {
    child = Mutate();
  }
  // Every operator finds an unproposed config while one exists; this is only a safety net.
  return child ? child : Immigrant();
}

}  // namespace mmtune
