#include "tuner/core_calibration.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <thread>

#include "kernels/default_config.h"
#include "kernels/gemm.h"
#include "kernels/kernel_config.h"
#include "kernels/thread_pool.h"
#include "machine/cpu_binding.h"
#include "tuner/problem_buffers.h"

namespace mmtune {
namespace {

using Clock = std::chrono::steady_clock;

// One A/B of a probe: `variant` against `baseline` on an f32 m x n x k, 1 thread. An empty
// baseline is the packed family's model config for the shape (ColdOperandsConfig).
struct ProbePair {
  std::int64_t m, n, k;
  std::string_view baseline;
  std::string_view variant;
};

struct ProbeSpec {
  std::string_view fact;
  double threshold;
  std::array<ProbePair, 2> pairs;
};

// The A/Bs each fact's row was written from, each threshold between what cores with and without
// the fact measured (docs/analytical-model.md, steps 1 and 2). A probe of two shapes weighs both
// (geometric mean).
constexpr std::array<ProbeSpec, 3> kProbes = {{
    {"unrolls_long_direct_k",
     1.05,
     {{{64, 768, 768, "direct avx512 8x48 ku1 pf0/0 jc t1", "direct avx512 8x48 ku4 pf0/0 jc t1"},
       {16, 768, 768, "direct avx512 8x48 ku1 pf0/0 jc t1",
        "direct avx512 8x48 ku4 pf0/0 jc t1"}}}},
    {"tall_tile_over_one_panel",
     1.05,
     {{{10, 20, 20, "direct avx512 6x32 ku1 pf0/0 jc t1", "direct avx512 10x32 ku1 pf0/0 jc t1"},
       {10, 32, 100, "direct avx512 6x32 ku1 pf0/0 jc t1",
        "direct avx512 10x32 ku1 pf0/0 jc t1"}}}},
    {"l3_streams_crowded_panels",
     1.0,
     {{{128, 3072, 768, "", "direct avx512 8x48 ku1 kc512 pf0/0 jc t1"},
       {96, 3072, 768, "", "direct avx512 8x48 ku1 kc512 pf0/0 jc t1"}}}},
}};

// Seconds of one call of `plan`, the fastest of `samples` samples of enough calls to last
// `sample_seconds`, the two plans' samples taken in turn.
std::optional<std::array<double, 2>> FastestSeconds(const std::array<GemmPlan<float>, 2>& plans,
                                                    const GemmArgs<float>& args, int samples,
                                                    double sample_seconds) {
  std::array<int, 2> calls{};
  for (int i = 0; i < 2; ++i) {
    if (!plans[i].Run(args)) return std::nullopt;  // warm: pages, caches, clocks
    const auto start = Clock::now();
    if (!plans[i].Run(args)) return std::nullopt;
    const double once = std::chrono::duration<double>(Clock::now() - start).count();
    calls[i] = std::clamp(static_cast<int>(sample_seconds / std::max(once, 1e-9)), 1, 1 << 20);
  }
  std::array<double, 2> best{std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::infinity()};
  for (int sample = 0; sample < samples; ++sample) {
    for (int i = 0; i < 2; ++i) {
      const auto start = Clock::now();
      for (int call = 0; call < calls[i]; ++call) static_cast<void>(plans[i].Run(args));
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      best[i] = std::min(best[i], seconds / calls[i]);
    }
  }
  return best;
}

// The variant's speed over the baseline's on one pair; nullopt where either cannot run here.
std::optional<double> Speedup(const ProbePair& pair, const Machine& machine, int samples,
                              double sample_seconds) {
  Problem problem;
  problem.m = pair.m;
  problem.n = pair.n;
  problem.k = pair.k;
  std::optional<GemmPlan<float>> plans[2];
  for (int i = 0; i < 2; ++i) {
    const std::string_view text = i == 0 ? pair.baseline : pair.variant;
    Result<KernelConfig> config = text.empty()
                                      ? Result<KernelConfig>(ColdOperandsConfig(problem, machine))
                                      : ParseKernelConfig(text);
    if (!config || !config->Validate(problem, machine)) return std::nullopt;
    auto plan = GemmPlan<float>::Create(*config);
    if (!plan) return std::nullopt;
    plans[i].emplace(std::move(*plan));
  }
  ThreadPool pool(1);
  try {
    ProblemBuffers<float> buffers(problem, 1, /*seed=*/1, pool);
    const auto args = buffers.ArgsFor<GemmArgs<float>>(0, 1.0f, 0.0f);
    const auto seconds = FastestSeconds({std::move(*plans[0]), std::move(*plans[1])}, args,
                                        samples, sample_seconds);
    if (!seconds) return std::nullopt;
    return (*seconds)[0] / (*seconds)[1];
  } catch (const std::bad_alloc&) {
    return std::nullopt;  // no memory for the operands: the fact stays unmeasured
  }
}

}  // namespace

bool CalibratesCoreFacts(const Machine& machine, double zmm_fmas_per_cycle) {
  return machine.kernel_isa == IsaLevel::kAvx512 && zmm_fmas_per_cycle >= 2.0;
}

std::optional<bool> FactShown(double speedup, double threshold) {
  if (speedup >= threshold * (1.0 + kUndecidedBand)) return true;
  if (speedup <= threshold * (1.0 - kUndecidedBand)) return false;
  return std::nullopt;
}

std::vector<CoreFactProbe> CalibrateCoreFacts(const Machine& machine, int samples,
                                              double sample_seconds) {
  std::vector<CoreFactProbe> probes;
  // On a thread of its own, pinned as the peaks' loops are, so that the caller keeps its
  // affinity; a failed pin only adds noise, which the fastest samples absorb.
  std::jthread runner([&] {
    static_cast<void>(BindCurrentThreadToCore(0));
    for (const ProbeSpec& spec : kProbes) {
      double log_sum = 0.0;
      bool measured = true;
      for (const ProbePair& pair : spec.pairs) {
        const std::optional<double> speedup = Speedup(pair, machine, samples, sample_seconds);
        if (!speedup || !(*speedup > 0.0)) {
          measured = false;
          break;
        }
        log_sum += std::log(*speedup);
      }
      if (!measured) continue;
      const double speedup = std::exp(log_sum / static_cast<double>(spec.pairs.size()));
      probes.push_back({spec.fact, speedup, spec.threshold, FactShown(speedup, spec.threshold)});
    }
  });
  runner.join();
  return probes;
}

MeasuredCoreFacts MeasuredFactsOf(const std::vector<CoreFactProbe>& probes) {
  MeasuredCoreFacts measured;
  for (const CoreFactProbe& probe : probes) {
    for (const MeasuredCoreFactField& field : kMeasuredCoreFactFields) {
      if (field.name == probe.fact) measured.*field.measured = probe.holds;
    }
  }
  return measured;
}

}  // namespace mmtune
