// A steady-state evolutionary search, as a component that `evolutionary` and `auto` drive.
//
// The population keeps one member per micro-kernel (the best config seen with that ISA level,
// tile and k unroll, whoever proposed it), up to `population_size` kernels. The tile decides
// the shape of the rest of the landscape (which blocks fit, how well), so a peak hidden behind a
// tile that is mediocre at the current blocks stays represented instead of being crowded out by
// variations of the current best. Each child comes from one of three operators:
//   - mutation (40%): a random walk of one or two neighbour steps from a tournament winner, so
//     it explores the parent's surroundings and, once those are proposed, the ring beyond;
//   - crossover (35%): the parameter groups of two tournament winners mixed at random, snapped
//     to the nearest unproposed config of the space;
//   - immigration (25%): a uniformly random unproposed config, so that a deceptive landscape
//     cannot trap the search around one peak (on the test landscapes, a quarter of random picks
//     found a narrow distant peak faster than any lower share).
// Steady state (no generations) suits a tuner that measures a few candidates at a time: a result
// joins the population as soon as it arrives.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "search/neighborhood.h"
#include "search/search_ledger.h"
#include "search/search_random.h"

namespace mmtune {

class Evolution {
 public:
  Evolution(const Neighborhood& neighborhood, SearchLedger& ledger, SearchRandom& random,
            std::size_t population_size);

  // A new child, already marked proposed in the ledger; nullopt when the space is exhausted or
  // when nothing has a score yet but results are pending (the population has no parent yet).
  std::optional<std::size_t> ProposeChild();

  // The current population (best first is not guaranteed); for tests and diagnostics.
  const std::vector<std::size_t>& population() const { return population_; }

 private:
  // Folds results that arrived since the last call into the population.
  void FoldObservations();
  std::size_t Tournament();
  std::optional<std::size_t> Mutate();
  std::optional<std::size_t> Crossover();
  std::optional<std::size_t> Immigrant();
  std::optional<std::size_t> Take(std::size_t index);

  const Neighborhood& neighborhood_;
  SearchLedger& ledger_;
  SearchRandom& random_;
  std::size_t population_size_;
  std::vector<std::size_t> population_;
  std::size_t log_cursor_ = 0;
};

}  // namespace mmtune
