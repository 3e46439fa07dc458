// Steepest-ascent hill climbing over the neighbourhood, as a component that `local` and `auto`
// drive: from a centre, propose every neighbour not proposed yet, wait for all of their results,
// move to the best neighbour if it beats the centre, and stop at a local optimum (no neighbour
// strictly better). Evaluating all neighbours before moving costs a little more than moving at the
// first improvement, but it makes each step the best one available, it does not depend on the
// order results arrive in, and batches of proposals stay full.
#pragma once

#include <cstddef>
#include <vector>

#include "search/neighborhood.h"
#include "search/search_ledger.h"

namespace mmtune {

class HillClimber {
 public:
  HillClimber(const Neighborhood& neighborhood, SearchLedger& ledger);

  // Starts a climb at `base`, which must have a score: a failed config is never a centre.
  void Start(std::size_t base);
  // Ends the current climb where it is.
  void Stop() { climbing_ = false; }
  bool climbing() const { return climbing_; }
  std::size_t center() const { return center_; }
  // Whether `index` has been a centre of some climb (its neighbours were all proposed then).
  bool expanded(std::size_t index) const { return expanded_[index]; }

  // Appends proposals to `out` until it holds `max_count`, the climb must wait for results, or
  // the climb reaches a local optimum (then `climbing()` turns false).
  void Propose(std::size_t max_count, std::vector<std::size_t>& out);

 private:
  const Neighborhood& neighborhood_;
  SearchLedger& ledger_;
  std::vector<bool> expanded_;
  std::size_t center_ = 0;
  bool climbing_ = false;
};

}  // namespace mmtune
