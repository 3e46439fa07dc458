// What a set of range validations (`tune --validate N`, see db/store.h RangeValidationRecord)
// says in a few numbers, for the tune's summary and the reports alike.
#pragma once

#include <cstddef>
#include <vector>

#include "db/store.h"

namespace mmtune {

// Geometric means over the held-out shapes of the runtime's, the nearest tier's and the default's
// speed as a fraction of each shape's own winner. Rows with a speed of 0 carry no ratio and are
// left out of `shapes` and the means (all 0 when none is left).
struct ValidationSummary {
  std::size_t shapes = 0;
  double runtime_vs_own = 0.0;
  double nearest_vs_own = 0.0;
  double default_vs_own = 0.0;
  double own_tune_seconds = 0.0;  // mean over the shapes
  std::size_t padded_measured = 0;  // shapes with a padded_gflops
  std::size_t padding_pays = 0;     // of those, where it beats runtime_gflops
};
ValidationSummary SummarizeValidations(const std::vector<RangeValidationRecord>& records);

}  // namespace mmtune
