// The confirm round's choice (tuner/tune_session.cc): the finalists and the analytical default are
// timed together, and the fastest by score wins, but the default keeps the shape unless a
// finalist beats it by more than the timings' noise. Confirm rounds put configs within a percent
// or two of each other in either order from one run to the next; a tie stored as the winner runs
// no faster than the default, and one that reads its operands differently can run slower in
// another process (docs/tuning.md, Confirm round).
#pragma once

#include <functional>
#include <vector>

#include "kernels/kernel_config.h"
#include "tuner/candidate_runner.h"

namespace mmtune {

// The least gain over the default's score that lets another finalist win, whatever the spreads.
inline constexpr double kMinGainOverDefault = 0.01;

// The winner among `confirmed`'s passing measurements (status kOk), each weighed by `score` (its
// speed, times its tiles' use of the sizes a bucket shape serves); null where none passed. The
// default (the measurement of `default_config`) stays unless the best other finalist's score
// exceeds it by more than kMinGainOverDefault and more than the two timings' relative spreads
// (MAD / median) together.
const CandidateMeasurement* ConfirmedWinner(
    const std::vector<CandidateMeasurement>& confirmed, const KernelConfig& default_config,
    const std::function<double(const CandidateMeasurement&)>& score);

}  // namespace mmtune
