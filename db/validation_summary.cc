#include "db/validation_summary.h"

#include <cmath>

namespace mmtune {

ValidationSummary SummarizeValidations(const std::vector<RangeValidationRecord>& records) {
  ValidationSummary summary;
  double log_runtime = 0.0, log_nearest = 0.0, log_default = 0.0, seconds = 0.0;
  for (const RangeValidationRecord& r : records) {
    if (!(r.own_gflops > 0.0) || !(r.runtime_gflops > 0.0) || !(r.nearest_gflops > 0.0) ||
        !(r.default_gflops > 0.0)) {
      continue;  // a ratio of nothing says nothing
    }
    ++summary.shapes;
    log_runtime += std::log(r.runtime_gflops / r.own_gflops);
    log_nearest += std::log(r.nearest_gflops / r.own_gflops);
    log_default += std::log(r.default_gflops / r.own_gflops);
    seconds += r.own_tune_seconds;
    if (r.padded_gflops > 0.0) {
      ++summary.padded_measured;
      if (r.padded_gflops > r.runtime_gflops) ++summary.padding_pays;
    }
  }
  if (summary.shapes == 0) return summary;
  const double n = static_cast<double>(summary.shapes);
  summary.runtime_vs_own = std::exp(log_runtime / n);
  summary.nearest_vs_own = std::exp(log_nearest / n);
  summary.default_vs_own = std::exp(log_default / n);
  summary.own_tune_seconds = seconds / n;
  return summary;
}

}  // namespace mmtune
