#include "runtime/winner_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/default_config.h"

namespace mmtune {
namespace {

double LogDistance(const Problem& a, const Problem& b) {
  auto term = [](std::int64_t x, std::int64_t y) {
    return std::abs(std::log(static_cast<double>(std::max<std::int64_t>(1, x))) -
                    std::log(static_cast<double>(std::max<std::int64_t>(1, y))));
  };
  return term(a.m, b.m) + term(a.n, b.n) + term(a.k, b.k);
}

// M = 1 or N = 1: a matrix-vector product, which the gemv family streams at memory bandwidth.
bool IsVectorShape(const Problem& p) { return p.m == 1 || p.n == 1; }

// Whether `config` runs `problem` in the direct family's k blocks (kc shorter than K).
bool SplitsK(const KernelConfig& config, const Problem& problem) {
  return config.family == KernelFamily::kDirect && config.kc > 0 && config.kc < problem.k;
}

// The most a direct winner's problem may differ from the borrowing one, as a ratio of M, of N
// and of K each: a direct tile is chosen for how it covers its own shape, and lent to shapes
// 4x and more away it ran far below their default (docs/runtime.md, Which config runs).
constexpr double kMaxDirectLendRatio = 2.0;

bool WithinDirectLendRatio(const Problem& a, const Problem& b) {
  auto close = [](std::int64_t x, std::int64_t y) {
    const double lo = static_cast<double>(std::max<std::int64_t>(1, std::min(x, y)));
    const double hi = static_cast<double>(std::max<std::int64_t>(1, std::max(x, y)));
    return hi <= kMaxDirectLendRatio * lo;
  };
  return close(a.m, b.m) && close(a.n, b.n) && close(a.k, b.k);
}

std::string DefaultThreadsReason(const Problem& problem, const KernelConfig& untuned) {
  if (untuned.threads == std::max(1, problem.threads)) {
    return "the analytical default uses every allowed thread";
  }
  return "the analytical default: " + std::to_string(untuned.threads) + " of " +
         std::to_string(problem.threads) + " allowed, one per " +
         std::to_string(static_cast<int>(kMinFlopsPerThread / 1e3)) + " kFLOP of work";
}

// `whose` names the winner: "the winner's" (exact tier) or "the bucket winner's".
std::string TunedThreadsReason(const std::string& whose, const KernelConfig& winner,
                               const Problem& tuned, int default_threads) {
  std::string reason = whose + ", tuned with " + std::to_string(tuned.threads) +
                       " thread(s) allowed";
  if (winner.threads < default_threads) {
    reason += ", measured faster than the default on " + std::to_string(default_threads);
  }
  return reason;
}

}  // namespace

bool WinnerIndex::SameKind(const Problem& a, const Problem& b) {
  return a.dtype == b.dtype && a.layout == b.layout && a.trans_a == b.trans_a &&
         a.trans_b == b.trans_b && a.form == b.form && a.batch == b.batch;
}

WinnerIndex WinnerIndex::Build(const std::vector<WinnerRecord>& winners, const Machine& machine,
                               std::vector<std::string>* skipped,
                               const std::vector<ShapeRangeRecord>& ranges) {
  WinnerIndex index;
  index.machine_ = machine;
  index.ranges_ = ranges;
  for (const WinnerRecord& winner : winners) {
    Status status = winner.problem.Validate();
    if (status) status = winner.config.Validate(winner.problem, machine);
    if (status && !(winner.gflops >= 0.0 && std::isfinite(winner.gflops))) {
      status = Error{ErrorCode::kCorrupt, "gflops is not a finite non-negative number"};
    }
    if (!status) {
      if (skipped != nullptr) {
        skipped->push_back("winner for " + winner.problem.ToString() + " skipped: " +
                           status.error().message);
      }
      continue;
    }
    index.entries_.push_back(Entry{winner.problem, winner.config, winner.gflops});
    if (winner.problem.batch > 1) index.batch_counts_.push_back(winner.problem.batch);
  }
  std::sort(index.batch_counts_.begin(), index.batch_counts_.end());
  index.batch_counts_.erase(std::unique(index.batch_counts_.begin(), index.batch_counts_.end()),
                            index.batch_counts_.end());
  return index;
}

bool WinnerIndex::HasBatchesOf(std::int64_t count) const {
  return std::binary_search(batch_counts_.begin(), batch_counts_.end(), count);
}

const WinnerIndex::Entry* WinnerIndex::FindExact(const Problem& problem,
                                                 const Entry** too_few) const {
  const int max_threads = std::max(1, problem.threads);
  // The untuned default's thread count (UntunedConfig's, without the rest of the model).
  const int default_threads = DefaultThreadCount(problem, max_threads);
  // The fastest winner of this very shape that fits the thread budget. A winner on fewer
  // threads than the default only where it was tuned with this budget, so that the tune timed it
  // against the default on these threads; a 1-thread tune's winner would leave a core idle where
  // the default uses it (docs/runtime.md, "Threads").
  const Entry* exact = nullptr;
  for (const Entry& entry : entries_) {
    if (!SameKind(entry.problem, problem) || entry.problem.m != problem.m ||
        entry.problem.n != problem.n || entry.problem.k != problem.k ||
        entry.config.threads > max_threads) {
      continue;
    }
    if (entry.config.threads < default_threads && entry.problem.threads != max_threads) {
      if (too_few != nullptr) *too_few = &entry;
      continue;
    }
    if (exact == nullptr || entry.gflops > exact->gflops) exact = &entry;
  }
  return exact;
}

const WinnerIndex::Entry* WinnerIndex::FindBucket(const Problem& problem,
                                                  const ShapeRangeRecord** range) const {
  // Of the ranges that hold the problem, the one whose bucket is closest to it; the bucket's
  // winner follows the exact tier's thread rules for the bucket shape, and must run this shape.
  // Shape ranges are tuned as plain single calls only (`tune --packed-b` and `tune --batch`
  // take no range).
  if (!IsPlainCall(problem)) return nullptr;
  const Shape shape{problem.m, problem.n, problem.k};
  const Entry* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const ShapeRangeRecord& candidate : ranges_) {
    if (candidate.dtype != problem.dtype || candidate.layout != problem.layout ||
        candidate.trans_a != problem.trans_a || candidate.trans_b != problem.trans_b ||
        !candidate.range.Contains(shape)) {
      continue;
    }
    const Shape bucket = BucketShapeOf(shape, candidate.range, candidate.buckets);
    Problem at_bucket = problem;
    at_bucket.m = bucket.m;
    at_bucket.n = bucket.n;
    at_bucket.k = bucket.k;
    const double distance = LogDistance(at_bucket, problem);
    if (distance >= best_distance) continue;
    const Entry* winner = FindExact(at_bucket, nullptr);
    if (winner == nullptr) continue;
    Problem as_run = problem;
    as_run.threads = winner->config.threads;
    if (!winner->config.Validate(as_run, machine_)) continue;
    best = winner;
    best_distance = distance;
    *range = &candidate;
  }
  return best;
}

Lookup WinnerIndex::Find(const Problem& problem) const {
  const int max_threads = std::max(1, problem.threads);
  const int default_threads = DefaultThreadCount(problem, max_threads);
  const Entry* too_few_threads = nullptr;
  if (const Entry* exact = FindExact(problem, &too_few_threads); exact != nullptr) {
    return Lookup{LookupTier::kExact, exact->config, exact->problem, exact->gflops,
                  TunedThreadsReason("the winner's", exact->config, exact->problem,
                                     default_threads),
                  ""};
  }
  const ShapeRangeRecord* range = nullptr;
  if (const Entry* bucket = FindBucket(problem, &range); bucket != nullptr) {
    return Lookup{LookupTier::kBucket, bucket->config, bucket->problem, bucket->gflops,
                  TunedThreadsReason("the bucket winner's", bucket->config, bucket->problem,
                                     DefaultThreadCount(bucket->problem, max_threads)),
                  range->range.ToString() + " (" + range->buckets.ToString() + ")"};
  }
  const std::string skipped_note =
      too_few_threads == nullptr
          ? std::string()
          : "; the winner tuned with " + std::to_string(too_few_threads->problem.threads) +
                " thread(s) allowed runs on " + std::to_string(too_few_threads->config.threads) +
                ", fewer than the default, and was never timed against it with " +
                std::to_string(max_threads) + " allowed: not used";

  // Nearest: closest shape first (the fastest among equally close ones) whose config still
  // validates for this shape (a gemv winner cannot run a matrix shape, for one). Each rule
  // below keeps out a loan that ran far below the default (docs/runtime.md, Which config runs):
  // a vector shape borrows only from vector shapes; only a winner of the family the analytical
  // default takes for this shape, since the family boundary is where a borrowed config goes
  // most wrong; no winner on fewer threads than the default would run this shape on, which
  // would leave a core idle; within the direct family, only a winner that splits K into blocks
  // where the default does and reads it whole where the default does; and only from a problem
  // within kMaxDirectLendRatio of this one in each dimension. A packed winner is lent with the
  // model's cache blocks where its own spanned its whole problem (LentConfig).
  const KernelConfig untuned = UntunedConfig(problem, machine_);
  const Entry* nearest = nullptr;
  double nearest_distance = std::numeric_limits<double>::infinity();
  for (const Entry& entry : entries_) {
    if (!SameKind(entry.problem, problem) || entry.config.threads > max_threads ||
        IsVectorShape(entry.problem) != IsVectorShape(problem) ||
        entry.config.family != untuned.family || entry.config.threads < untuned.threads ||
        SplitsK(entry.config, problem) != SplitsK(untuned, problem) ||
        (untuned.family == KernelFamily::kDirect &&
         !WithinDirectLendRatio(entry.problem, problem))) {
      continue;
    }
    const double distance = LogDistance(entry.problem, problem);
    const bool closer = distance < nearest_distance ||
                        (distance == nearest_distance && entry.gflops > nearest->gflops);
    if (!closer) continue;
    Problem as_tuned = problem;
    as_tuned.threads = entry.config.threads;
    if (!entry.config.Validate(as_tuned, machine_)) continue;
    nearest = &entry;
    nearest_distance = distance;
  }
  if (nearest != nullptr) {
    KernelConfig lent = LentConfig(nearest->config, nearest->problem, problem, machine_);
    const int threads = lent.threads;
    return Lookup{LookupTier::kNearest, std::move(lent), nearest->problem, nearest->gflops,
                  "the nearest winner's " + std::to_string(threads) + ", no fewer than the "
                  "default's " + std::to_string(untuned.threads) + skipped_note, ""};
  }

  return Lookup{LookupTier::kDefault, untuned, Problem{}, 0.0,
                DefaultThreadsReason(problem, untuned) + skipped_note, ""};
}

}  // namespace mmtune
