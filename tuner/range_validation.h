// How good is the runtime for shapes that were never tuned? `tune --validate N` answers it for the
// ranges a tune stood for: N held-out shapes per range, drawn at random inside it, are each tuned
// on their own (in a private DB, so they never become winners) and timed in one interleaved round
// beside what the runtime runs for them (their bucket's winner), what the nearest tier would run
// and the analytical default. bench/bucket_bench.cc runs the same measurement without a DB.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "db/store.h"
#include "db/validation_summary.h"
#include "kernels/thread_pool.h"
#include "machine/machine.h"
#include "mmtune/result.h"
#include "mmtune/types.h"
#include "tuner/tune_session.h"

namespace mmtune {

// Up to `count` distinct shapes inside `range`, each ranged dimension drawn log-uniformly (small
// sizes are as likely per octave as large ones, as in prefill lengths), never a bucket shape of
// `policy` nor one of `exclude`; sorted. Fewer when the range holds fewer such shapes.
std::vector<Shape> HeldOutShapes(const ShapeRange& range, const BucketPolicy& policy, int count,
                                 std::uint64_t seed, const std::vector<Shape>& exclude = {});

// Tunes `shape` of `range` on its own with `request`'s strategy, budget, seed and measure
// options (its `problems` are ignored), then times its own winner, the runtime's pick from
// `winners` and `range` (and every other range in `ranges`), the nearest tier's pick from
// `winners` alone and the analytical default together; where the runtime answers with a bucket,
// also that bucket's winner on the bucket shape (RangeValidationRecord::padded_gflops). Fails
// when a config fails verification. `stop` cuts the own tune short (see RunTuning).
Result<RangeValidationRecord> ValidateHeldOutShape(const ShapeRangeRecord& range,
                                                   const Shape& shape,
                                                   const std::vector<WinnerRecord>& winners,
                                                   const std::vector<ShapeRangeRecord>& ranges,
                                                   const Machine& machine,
                                                   const TuneRequest& request, ThreadPool& pool,
                                                   const std::atomic<bool>* stop = nullptr);

// Called after each held-out shape is measured and recorded: its record, its 0-based index and
// the number of shapes to measure in all.
using ValidationHandler =
    std::function<void(const RangeValidationRecord&, std::size_t index, std::size_t total)>;

// `tune --validate N`: for each of `ranges` that spans more than one shape, `count` held-out
// shapes with no winner of their own in `store` are validated against the store's winners and
// ranges of `machine` (what the runtime reads), and each is recorded in `store` with the tune's
// `session_id` as soon as it is measured. `stop` ends it, the shape in flight not recorded.
// Returns what it recorded.
Result<std::vector<RangeValidationRecord>> ValidateRanges(
    TuningStore& store, std::int64_t machine_id, std::int64_t session_id, const Machine& machine,
    const std::vector<ShapeRangeRecord>& ranges, int count, const TuneRequest& request,
    ThreadPool& pool, const ValidationHandler& on_validated,
    const std::atomic<bool>* stop = nullptr);

}  // namespace mmtune
