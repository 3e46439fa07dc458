// How one timed candidate ended: shared by the candidate runner that produces it and the store
// that keeps it, neither of which should need the other for it.
#pragma once

#include <cstdint>

namespace mmtune {

enum class MeasurementStatus : std::uint8_t {
  kOk,      // verified against the reference and timed
  kFailed,  // invalid, wrong result or failed to run: `error` says why; never a winner
  kSkipped, // verified, but dropped after the first round as clearly slower than the best
};

// "ok", "failed" or "skipped": the text stored in the DB.
constexpr const char* ToString(MeasurementStatus status) {
  switch (status) {
    case MeasurementStatus::kOk: return "ok";
    case MeasurementStatus::kFailed: return "failed";
    case MeasurementStatus::kSkipped: return "skipped";
  }
  return "?";
}

}  // namespace mmtune
