// What a candidate costs on one problem (verifying and timing it), so that the search starts no
// more candidates than the budget left has time for: on a large shape a batch started just
// before the deadline otherwise overruns it by the whole batch.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace mmtune {

class CandidateCost {
 public:
  void Add(double seconds) {
    total_ += seconds;
    ++count_;
  }
  // The candidates that, run one after another at the mean cost so far, start within `seconds`:
  // at least one, and any number while nothing is known (or more than a batch could ask for).
  std::size_t FitIn(double seconds) const {
    constexpr double kAny = 1e9;
    if (count_ == 0 || total_ <= 0.0) return std::numeric_limits<std::size_t>::max();
    const double mean = total_ / static_cast<double>(count_);
    const double fit = std::ceil(seconds / mean);
    if (!(fit < kAny)) return std::numeric_limits<std::size_t>::max();
    return static_cast<std::size_t>(std::max(1.0, fit));
  }

 private:
  double total_ = 0.0;
  int count_ = 0;
};

}  // namespace mmtune
