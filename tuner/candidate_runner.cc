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

// Operand copies stay below this much memory in cold-cache mode.
constexpr std::uint64_t kColdCacheMemoryLimit = 4ull << 30;

// The last-level cache the cold-cache copies must exceed; 32 MiB where the topology lists none.
std::uint64_t ColdCacheTargetBytes(const Machine& machine) {
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
struct RealWorkload : Workload<T, ProblemBuffers<T>, ResultChecker<T>> {
  static constexpr typename RealWorkload::VerificationRun kRuns[] = {{T(1), T(0), true},
                                                                     {T(-1.5), T(0.5), false}};
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

  Runner(const Problem& problem, const MeasureOptions& options, ThreadPool& pool, int copies)
      : problem_(problem),
        options_(options),
        pool_(pool),
        buffers_(problem, copies, options.data_seed, pool),
        checker_(problem, buffers_.a(0), buffers_.lda(), buffers_.b(0), buffers_.ldb(),
                 buffers_.c_initial(), buffers_.ldc(), options.data_seed) {}

  const Problem& problem() const override { return problem_; }
  bool full_check() const override { return checker_.full(); }

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
                        mode == TimingMode::kSearch};
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
      const Status status = candidate ? VerifyCandidate(*candidate) : Status(candidate.error());
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

  // One call of `candidate` on operand copy `copy`.
  Status Run(const Candidate& candidate, int copy, Scalar alpha, Scalar beta) {
    const Args args = buffers_.template ArgsFor<Args>(copy, alpha, beta);
    if (candidate.packed_b.empty()) return candidate.plan.Run(args, pool_);
    return candidate.plan.Run(args, candidate.packed_b[static_cast<std::size_t>(copy)], pool_);
  }

  Status VerifyCandidate(const Candidate& candidate) {
    for (const auto& run : W::kRuns) {
      if (run.poison) {
        buffers_.PoisonC(0);
      } else {
        buffers_.ResetC(0);
      }
      if (auto status = Run(candidate, 0, run.alpha, run.beta); !status) {
        return status;
      }
      if (!buffers_.CanariesIntact(0)) {
        return MakeError(ErrorCode::kWrongResult, "wrote outside C (canary overwritten)");
      }
      if (auto status = checker_.Check(run.alpha, run.beta, buffers_.c(0)); !status) {
        return MakeError(status.error().code,
                         status.error().message + " with alpha " +
                             std::to_string(run.alpha) + ", beta " +
                             std::to_string(run.beta));
      }
    }
    return OkStatus();
  }

  // One call per operand copy in turn; returns the seconds per call. A team's workers are woken
  // first, untimed, as back-to-back calls find them: other candidates ran since this one's last
  // sample, some on one thread, and a worker that fell asleep meanwhile costs a futex wake-up
  // per sample, enough to put 2-thread configs that are faster awake behind the 1-thread default
  // in round one, where the early skip drops them (docs/tuning.md, Timing).
  double Sample(const Candidate& candidate) {
    if (const int team = candidate.plan.config().threads; team > 1) pool_.Run(team, [](int) {});
    const Clock::time_point start = Clock::now();
    for (int call = 0; call < candidate.calls_per_sample; ++call) {
      const int copy = next_copy_;
      next_copy_ = (next_copy_ + 1) % buffers_.copies();
      // Verified plans on valid arguments cannot fail; a failure would show as a wrong result
      // in the next verification, so the status is not needed here.
      (void)Run(candidate, copy, Scalar(1), Scalar(0));
    }
    return SecondsSince(start) / candidate.calls_per_sample;
  }

  void Calibrate(Candidate& candidate, double sample_seconds) {
    candidate.calls_per_sample = 1;
    (void)Sample(candidate);  // warm-up: caches, pages, workspace growth
    const double one_call = std::max(1e-9, Sample(candidate));
    candidate.calls_per_sample = static_cast<int>(
        std::clamp(std::ceil(sample_seconds / one_call), 1.0, 1e6));
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
      for (std::size_t c : order) {
        Candidate& candidate = candidates[c];
        if (!candidate.active) continue;
        const SampleStats stats = Summarize(candidate.samples);
        if (stats.count >= rounds.min_samples &&
            stats.RelativeSpread() <= options_.target_spread) {
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
  int next_copy_ = 0;
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
  const int copies = options.cold_cache
                         ? ColdCacheCopies(problem, ColdCacheTargetBytes(machine),
                                           kColdCacheMemoryLimit)
                         : 1;
  auto make = [&]<class W>() -> std::unique_ptr<CandidateRunner> {
    return std::make_unique<Runner<W>>(problem, options, pool, copies);
  };
  try {
    switch (problem.dtype) {
      case DType::kF32: return make.template operator()<RealWorkload<float>>();
      case DType::kF64: return make.template operator()<RealWorkload<double>>();
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
