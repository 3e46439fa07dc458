// The peaks a tune stores for its machine (the roofline's "100%"), measured only while the
// machine is quiet: a peak timed beside other work reads low for good, and every "% of peak"
// after it reads high, above 100% even. A stored peak is replaced only by a quiet measurement that beats it by more than
// the noise, so repeated tunes can raise it towards the truth but never lower it.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "machine/machine.h"
#include "mmtune/result.h"
#include "tuner/peak.h"

namespace mmtune {

// Cores busy with other work, averaged over `seconds` (from /proc/stat: all CPUs' non-idle time).
// kUnsupported where /proc/stat cannot be read.
Result<double> BusyCores(double seconds);

struct QuietPeakOptions {
  PeakOptions peak;
  double busy_limit = 0.25;      // more cores busy than this is not quiet
  double sample_seconds = 0.2;   // length of one load check
  double wait_seconds = 5.0;     // how long to wait for quiet when nothing is stored yet
  double noise = 0.05;           // a new peak replaces a stored one only when this much higher
  // The load check, replaceable in tests; BusyCores by default.
  std::function<Result<double>(double seconds)> busy_cores;
  // The measurement, replaceable in tests; MeasurePeaks by default.
  std::function<Result<PeakReport>(const Machine&, const PeakOptions&)> measure;
};

struct QuietPeaks {
  nlohmann::json peaks;  // what to store: `stored` with the beaten entries replaced, or null
  bool changed = false;  // differs from `stored`
  std::string note;      // one line for the user when a measurement was skipped or discarded
};

// Measures the peaks when the machine is quiet before and after (once more when the two checks
// disagree), then merges them into `stored` (to_json(PeakReport) or null): an entry missing from
// `stored` is added, one beaten by more than `noise` is replaced, the rest stay. With nothing
// stored it waits up to `wait_seconds` for quiet; with peaks stored it measures only if quiet at
// once. A failing measurement is an error; a busy machine is not (the note says so).
Result<QuietPeaks> MeasurePeaksWhenQuiet(const Machine& machine, const nlohmann::json& stored,
                                         const QuietPeakOptions& options = {});

}  // namespace mmtune
