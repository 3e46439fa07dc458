#include "tuner/confirmed_winner.h"

#include <algorithm>

namespace mmtune {

const CandidateMeasurement* ConfirmedWinner(
    const std::vector<CandidateMeasurement>& confirmed, const KernelConfig& default_config,
    const std::function<double(const CandidateMeasurement&)>& score) {
  const CandidateMeasurement* the_default = nullptr;
  double default_score = 0.0;
  const CandidateMeasurement* best = nullptr;
  double best_score = 0.0;
  for (const CandidateMeasurement& m : confirmed) {
    if (m.status != MeasurementStatus::kOk) continue;
    const double s = score(m);
    if (m.config == default_config) {
      the_default = &m;
      default_score = s;
    } else if (best == nullptr || s > best_score) {
      best = &m;
      best_score = s;
    }
  }
  if (the_default == nullptr) return best;
  if (best == nullptr) return the_default;
  const double margin =
      std::max(kMinGainOverDefault,
               the_default->stats.RelativeSpread() + best->stats.RelativeSpread());
  return best_score > default_score * (1.0 + margin) ? best : the_default;
}

}  // namespace mmtune
