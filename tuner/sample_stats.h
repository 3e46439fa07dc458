// Robust summaries of repeated timings. Shared machines are noisy (a few percent, with the odd
// outlier from another process), so decisions use the median and the median absolute deviation,
// never the mean.
#pragma once

#include <vector>

namespace mmtune {

struct SampleStats {
  double median = 0.0;
  double min = 0.0;
  double mad = 0.0;  // median absolute deviation from the median
  int count = 0;

  // MAD relative to the median: the spread the "stable enough" rule looks at.
  double RelativeSpread() const { return median > 0.0 ? mad / median : 0.0; }
};

SampleStats Summarize(const std::vector<double>& samples);

}  // namespace mmtune
