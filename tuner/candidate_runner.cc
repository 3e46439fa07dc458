#include "tuner/candidate_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>

#include "kernels/gemm.h"
#include "machine/roofline.h"
#include "tuner/problem_buffers.h"
#include "tuner/result_checker.h"
#include "tuner/s8_result_checker.h"

namespace mmtune {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Operand copies stay below this much memory in cold-cache mode; warm ones take their second
// placement only below it.
constexpr std::uint64_t kColdCacheMemoryLimit = 4ull << 30;

// The last-level cache the cold-cache copies must exceed: twice the effective one where the
// peaks measured it (the read sweep's next size, which reads below 1.5x memory's rate but may
// still be partly cached), else hwloc's; 32 MiB where the topology lists none.
std::uint64_t ColdCacheTargetBytes(const Machine& machine) {
  if (machine.effective_llc_bytes > 0) return 2 * machine.effective_llc_bytes;
  const std::uint64_t bytes = LastLevelCacheBytes(machine.topology);
  return bytes > 0 ? bytes : (32ull << 20);
}

// What the runner needs to know of one GEMM (gemm_types.h): its operand buffers and result
// checker, and the runs that verify a candidate. Each kind verifies with alpha 1, beta 0 on a
// poisoned C (a correct GEMM never reads it) and with a general alpha and beta on a random C.
template <class Kind_, typename Buffers_, typename Checker_>
struct Workload {
  using Kind = Kind_;
  using Plan = GemmPlan<Kind>;
  using Args = GemmArgs<Kind>;
  using Scalar = typename GemmTypes<Kind>::Scalar;
  using Buffers = Buffers_;
  using Checker = Checker_;
  struct VerificationRun {
    Scalar alpha, beta;
    bool poison;  // C poisoned (beta 0) or reset to the initial random C
  };
};

template <typename T>
struct SameTypeWorkload : Workload<T, ProblemBuffers<T>, ResultChecker<T>> {
  static constexpr typename SameTypeWorkload::VerificationRun kRuns[] = {
      {T(1), T(0), true}, {T(-1.5), T(0.5), false}};
};

struct Bf16Workload : Workload<Bf16Gemm, ProblemBuffers<BFloat16, BFloat16, float>,
                               ResultChecker<float, BFloat16>> {
  static constexpr VerificationRun kRuns[] = {{1.0f, 0.0f, true}, {-1.5f, 0.5f, false}};
};

// s8: beta 2 and alpha -3 on a C of random 32-bit values, so the result wraps modulo 2^32.
struct S8Workload
    : Workload<S8Gemm, ProblemBuffers<std::uint8_t, std::int8_t, std::int32_t>, S8ResultChecker> {
  static constexpr VerificationRun kRuns[] = {{1, 0, true}, {-3, 2, false}};
};

template <class W>
class Runner final : public CandidateRunner {
 public:
  using Plan = typename W::Plan;
  using Args = typename W::Args;
  using Scalar = typename W::Scalar;

  // `copies`: operand sets, a multiple of the problem's batch (each call runs one group of
  // `batch` sets, one set per item).
  Runner(const Problem& problem, const MeasureOptions& options, ThreadPool& pool, int copies)
      : problem_(problem),
        options_(options),
        pool_(pool),
        buffers_(problem, copies, options.data_seed, pool),
        checker_(problem, buffers_.a(0), buffers_.lda(), buffers_.b(0), buffers_.ldb(),
                 buffers_.c_initial(), buffers_.ldc(), options.data_seed),
        batch_(static_cast<int>(problem.batch)),
        groups_(buffers_.copies() / batch_) {
    if (batch_ > 1) items_ = buffers_.Items();
  }

  const Problem& problem() const override { return problem_; }
  bool full_check() const override { return checker_.full(); }
  int verified_configs() const override { return static_cast<int>(verified_.size()); }

  Status Verify(const KernelConfig& config) override {
    auto candidate = Prepare(0, config);
    if (!candidate) return candidate.error();
    return VerifyCandidate(*candidate);
  }

  void WarmUp(const KernelConfig& config, double seconds) override {
    auto candidate = Prepare(0, config);
    if (!candidate) return;
    const Clock::time_point start = Clock::now();
    while (SecondsSince(start) < seconds) (void)Sample(*candidate);
  }

  std::vector<CandidateMeasurement> Measure(const std::vector<KernelConfig>& configs,
                                            double best_seconds, TimingMode mode,
                                            const MeasurementSink& on_final) override {
    const bool confirm = mode == TimingMode::kConfirm;
    const Rounds rounds{confirm ? options_.confirm_min_samples : options_.min_samples,
                        confirm ? options_.confirm_max_samples : options_.max_samples,
                        mode == TimingMode::kSearch,
                        confirm ? options_.confirm_max_seconds : 0.0};
    const double sample_seconds =
        confirm ? options_.confirm_min_sample_seconds : options_.min_sample_seconds;
    std::vector<CandidateMeasurement> results(configs.size());
    auto publish = [&](std::size_t index) {
      if (on_final) on_final(index, results[index]);
    };
    std::vector<Candidate> candidates;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const Clock::time_point start = Clock::now();
      results[i].config = configs[i];
      auto candidate = Prepare(i, configs[i]);
      const Status status = candidate ? VerifyOnce(*candidate) : Status(candidate.error());
      if (status) {
        Calibrate(*candidate, sample_seconds);
        candidates.push_back(std::move(*candidate));
        results[i].seconds_spent += SecondsSince(start);
      } else {
        results[i].status = MeasurementStatus::kFailed;
        results[i].error = status.error().message;
        results[i].seconds_spent += SecondsSince(start);
        publish(i);
      }
    }
    TimeInterleaved(candidates, best_seconds, rounds, results, publish);
    return results;
  }

 private:
  // The stopping rule of one batch.
  struct Rounds {
    int min_samples;
    int max_samples;
    bool allow_skip;
    double max_seconds;  // past min_samples, no round starts after this long (0: no limit)
  };

  struct Candidate {
    std::size_t index;  // into the batch
    Plan plan;
    // A problem called with B packed beforehand (CallForm::kPackedB) and a packed config: B of
    // every operand copy, packed once and untimed, as the runtime's packed weights hold it.
    // Empty otherwise: other families read B as stored, from the weights' copy at run time.
    std::vector<PackedB<typename W::Kind>> packed_b;
    int calls_per_sample = 1;
    std::vector<double> samples;
    bool active = true;
  };

  Result<Candidate> Prepare(std::size_t index, const KernelConfig& config) {
    auto plan = Plan::Create(config);
    if (!plan) return plan.error();
    Candidate candidate{index, std::move(*plan), {}, 1, {}, true};
    if (problem_.form == CallForm::kPackedB && config.family == KernelFamily::kPacked) {
      for (int copy = 0; copy < buffers_.copies(); ++copy) {
        const Args args = buffers_.template ArgsFor<Args>(copy, Scalar(1), Scalar(0));
        auto packed = candidate.plan.PackB(args.layout, args.trans_b, args.n, args.k, args.b,
                                           args.ldb);
        if (!packed) return packed.error();
        candidate.packed_b.push_back(std::move(*packed));
      }
    }
    return candidate;
  }

  // One call of `candidate` on operand group `group`: one GEMM on copy `group`, or a batch on
  // the group's `batch_` copies.
  Status Run(const Candidate& candidate, int group, Scalar alpha, Scalar beta) {
    const int first = group * batch_;
    const Args args = buffers_.template ArgsFor<Args>(first, alpha, beta);
    if (batch_ > 1) {
      const auto at = static_cast<std::size_t>(first);
      return candidate.plan.RunBatch(args, batch_, &items_.a[at], &items_.b[at], &items_.c[at],
                                     pool_);
    }
    if (candidate.packed_b.empty()) return candidate.plan.Run(args, pool_);
    return candidate.plan.Run(args, candidate.packed_b[static_cast<std::size_t>(first)], pool_);
  }

  // Every item of the first two groups (so both operand placements, ProblemBuffers) against
  // the reference, its canaries intact.
  Status VerifyCandidate(const Candidate& candidate) {
    for (int group = 0; group < std::min(groups_, 2); ++group) {
      for (const auto& run : W::kRuns) {
        const int first = group * batch_;
        for (int item = first; item < first + batch_; ++item) {
          if (run.poison) {
            buffers_.PoisonC(item);
          } else {
            buffers_.ResetC(item);
          }
        }
        if (auto status = Run(candidate, group, run.alpha, run.beta); !status) {
          return status;
        }
        for (int item = first; item < first + batch_; ++item) {
          const std::string which =
              (batch_ > 1 ? " (item " + std::to_string(item - first) + " of the batch)" : "") +
              (buffers_.PlacementBytes(item) > 0
                   ? " on operands " + std::to_string(buffers_.kMallocOffsetBytes) +
                         " bytes past a page"
                   : std::string());
          if (!buffers_.CanariesIntact(item)) {
            return MakeError(ErrorCode::kWrongResult,
                             "wrote outside C (canary overwritten)" + which);
          }
          if (auto status = checker_.Check(run.alpha, run.beta, buffers_.c(item)); !status) {
            return MakeError(status.error().code,
                             status.error().message + which + " with alpha " +
                                 std::to_string(run.alpha) + ", beta " +
                                 std::to_string(run.beta));
          }
        }
      }
    }
    return OkStatus();
  }

  // Verifies a config the first time this runner measures it: the confirmation times finalists
  // the search verified on these same operands, and on a shape whose calls take a tenth of a
  // second, verifying them again would cost a tenth of its search budget.
  Status VerifyOnce(const Candidate& candidate) {
    const KernelConfig& config = candidate.plan.config();
    if (std::find(verified_.begin(), verified_.end(), config) != verified_.end()) return OkStatus();
    if (auto status = VerifyCandidate(candidate); !status) return status;
    verified_.push_back(config);
    return OkStatus();
  }

  // One sample of calls; returns the seconds per call. Cold-cache timing moves to the next
  // operand group every call. Warm timing has the two placements' groups (or one group whose
  // items alternate them, a batch's): a sample runs the first half of its calls (an even number,
  // Calibrate) on one and the rest on the other, starting with each in turn, so that one
  // placement's operands at a time are in the caches. A team's workers are woken first,
  // untimed, as back-to-back calls find them: other candidates ran since this one's last
  // sample, some on one thread, and a worker that fell asleep meanwhile costs a futex wake-up
  // per sample, enough to put 2-thread configs that are faster awake behind the 1-thread default
  // in round one, where the early skip drops them (docs/tuning.md, Timing).
  double Sample(const Candidate& candidate) {
    if (const int team = candidate.plan.config().threads; team > 1) pool_.Run(team, [](int) {});
    const int calls = candidate.calls_per_sample;
    const int first_group = next_group_;
    const Clock::time_point start = Clock::now();
    for (int call = 0; call < calls; ++call) {
      int group = 0;
      if (options_.cold_cache) {
        group = next_group_;
        next_group_ = (next_group_ + 1) % groups_;
      } else {
        group = (first_group + (call >= calls / 2 ? 1 : 0)) % groups_;
      }
      // Verified plans on valid arguments cannot fail; a failure would show as a wrong result
      // in the next verification, so the status is not needed here.
      (void)Run(candidate, group, Scalar(1), Scalar(0));
    }
    const double seconds = SecondsSince(start) / calls;
    if (!options_.cold_cache) next_group_ = (first_group + 1) % groups_;
    return seconds;
  }

  void Calibrate(Candidate& candidate, double sample_seconds) {
    candidate.calls_per_sample = 1;
    (void)Sample(candidate);  // warm-up: caches, pages, workspace growth
    const double one_call = std::max(1e-9, Sample(candidate));
    candidate.calls_per_sample = static_cast<int>(
        std::clamp(std::ceil(sample_seconds / one_call), 1.0, 1e6));
    // Warm samples split their calls evenly between the two placements (Sample).
    if (!options_.cold_cache && groups_ == 2) {
      candidate.calls_per_sample += candidate.calls_per_sample % 2;
    }
  }

  // Fills in the timing statistics of a candidate whose timing is over and hands it on.
  template <typename Publish>
  void Finish(Candidate& candidate, std::vector<CandidateMeasurement>& results,
              const Publish& publish) {
    candidate.active = false;
    CandidateMeasurement& result = results[candidate.index];
    result.stats = Summarize(candidate.samples);
    if (result.stats.median > 0.0) result.gflops = problem_.Flops() / result.stats.median * 1e-9;
    publish(candidate.index);
  }

  template <typename Publish>
  void TimeInterleaved(std::vector<Candidate>& candidates, double best_seconds, Rounds rounds,
                       std::vector<CandidateMeasurement>& results, const Publish& publish) {
    const Clock::time_point rounds_start = Clock::now();
    std::size_t previous = candidates.size();
    for (int round = 0; round < rounds.max_samples; ++round) {
      std::vector<std::size_t> order;
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        if (candidates[c].active) order.push_back(c);
      }
      if (order.empty()) break;
      // Rotate the order each round; never start with the candidate that ended the last one.
      std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(round % order.size()),
                  order.end());
      if (order.size() > 1 && order.front() == previous) {
        std::rotate(order.begin(), order.begin() + 1, order.end());
      }
      for (std::size_t c : order) {
        const Clock::time_point start = Clock::now();
        candidates[c].samples.push_back(Sample(candidates[c]));
        results[candidates[c].index].seconds_spent += SecondsSince(start);
        previous = c;
      }
      if (round == 0 && rounds.allow_skip) {
        double best = best_seconds > 0.0 ? best_seconds : 1e300;
        for (std::size_t c : order) best = std::min(best, candidates[c].samples.front());
        for (std::size_t c : order) {
          if (candidates[c].samples.front() > options_.skip_ratio * best) {
            results[candidates[c].index].status = MeasurementStatus::kSkipped;
            Finish(candidates[c], results, publish);
          }
        }
      }
      const bool out_of_time =
          rounds.max_seconds > 0.0 && SecondsSince(rounds_start) >= rounds.max_seconds;
      for (std::size_t c : order) {
        Candidate& candidate = candidates[c];
        if (!candidate.active) continue;
        const SampleStats stats = Summarize(candidate.samples);
        if (stats.count >= rounds.min_samples &&
            (out_of_time || stats.RelativeSpread() <= options_.target_spread)) {
          Finish(candidate, results, publish);
        }
      }
    }
    for (Candidate& candidate : candidates) {  // out of rounds: done with what they have
      if (candidate.active) Finish(candidate, results, publish);
    }
  }

  Problem problem_;
  MeasureOptions options_;
  ThreadPool& pool_;
  typename W::Buffers buffers_;
  typename W::Checker checker_;
  int batch_;   // items per call
  int groups_;  // operand groups, each `batch_` copies
  // A batch's pointer arrays: every copy's operands, in copy order.
  typename W::Buffers::ItemPointers items_;
  int next_group_ = 0;
  std::vector<KernelConfig> verified_;  // configs Measure verified, in order
};

}  // namespace

Result<std::unique_ptr<CandidateRunner>> CandidateRunner::Create(const Problem& problem,
                                                                 const Machine& machine,
                                                                 const MeasureOptions& options,
                                                                 ThreadPool& pool) {
  if (auto status = problem.Validate(); !status) return status.error();
  if (problem.threads > pool.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "threads = " + std::to_string(problem.threads) + " exceeds the pool's " +
                         std::to_string(pool.size()));
  }
  // A batch's items come one after another from beyond the caches already; cold-cache timing
  // gives it as many groups as make its copies exceed the last-level cache. A single GEMM has an
  // even number of copies, as many in each operand placement (ProblemBuffers::PlacementBytes):
  // two when warm, but one (the page) where two would pass the memory limit.
  Problem item = problem;
  item.batch = 1;
  // Each copy's operands start on pages of their own (ProblemBuffers).
  const double item_bytes = 4.0 * 4096.0 + item.OperandBytes();
  int wanted_copies = options.cold_cache ? ColdCacheCopies(item, ColdCacheTargetBytes(machine),
                                                           kColdCacheMemoryLimit)
                                         : 2;
  if (problem.batch == 1) {
    wanted_copies += wanted_copies % 2;
    if (!options.cold_cache &&
        2.0 * item_bytes > static_cast<double>(kColdCacheMemoryLimit)) {
      wanted_copies = 1;
    }
  }
  const std::int64_t batch = problem.batch;
  const std::int64_t groups = (wanted_copies + batch - 1) / batch;
  if (batch > 1 && static_cast<double>(groups * batch) * item_bytes >
                       static_cast<double>(kColdCacheMemoryLimit)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the operands of " + problem.ToString() + " exceed the tuner's " +
                         std::to_string(kColdCacheMemoryLimit >> 30) + " GiB for one batch");
  }
  const int copies = static_cast<int>(groups * batch);
  auto make = [&]<class W>() -> std::unique_ptr<CandidateRunner> {
    return std::make_unique<Runner<W>>(problem, options, pool, copies);
  };
  try {
    switch (problem.dtype) {
      case DType::kF32: return make.template operator()<SameTypeWorkload<float>>();
      case DType::kF64: return make.template operator()<SameTypeWorkload<double>>();
      case DType::kBF16: return make.template operator()<Bf16Workload>();
      case DType::kS8: return make.template operator()<S8Workload>();
    }
    return MakeError(ErrorCode::kInvalidArgument, "unknown dtype");
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kIo, "not enough memory for the operands of " +
                                         problem.ToString());
  }
}

}  // namespace mmtune
