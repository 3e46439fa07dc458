#include "tuner/sample_stats.h"

#include <algorithm>
#include <cmath>

namespace mmtune {
namespace {

double MedianOf(std::vector<double> values) {
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(),
                                         values.begin() + static_cast<std::ptrdiff_t>(middle));
  return 0.5 * (lower + upper);
}

}  // namespace

SampleStats Summarize(const std::vector<double>& samples) {
  SampleStats stats;
  if (samples.empty()) return stats;
  stats.count = static_cast<int>(samples.size());
  stats.median = MedianOf(samples);
  stats.min = *std::min_element(samples.begin(), samples.end());
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double value : samples) deviations.push_back(std::abs(value - stats.median));
  stats.mad = MedianOf(std::move(deviations));
  return stats;
}

}  // namespace mmtune
