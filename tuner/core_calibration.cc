#include "tuner/core_calibration.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <new>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "kernels/default_config.h"
#include "kernels/gemm.h"
#include "kernels/kernel_config.h"
#include "kernels/thread_pool.h"
#include "machine/cpu_binding.h"
#include "tuner/problem_buffers.h"

namespace mmtune {
namespace {

using Clock = std::chrono::steady_clock;

// The configs a probe names by what the model would run rather than by text: for a shape whose
// operands arrive from beyond L2, the packed family's (ColdOperandsConfig) and the direct
// family's (ColdItemsDirectConfig).
constexpr std::string_view kColdOperandsConfig = "cold operands";
constexpr std::string_view kColdItemsDirectConfig = "cold direct";

// One A/B of a probe: `variant` against `baseline` on `batch` f32 m x n x k GEMMs, each on
// operands of its own, run one after another on 1 thread.
struct ProbePair {
  std::int64_t m, n, k;
  std::string_view baseline;
  std::string_view variant;
  int batch = 1;
};

struct ProbeSpec {
  std::string_view fact;
  double threshold;
  bool two_zmm_pipes;  // a fact of AVX-512 kernels on two zmm FMA pipes only
  std::array<ProbePair, 2> pairs;
};

// The A/Bs each fact's row was written from, each threshold between what cores with and without
// the fact measured (docs/analytical-model.md, steps 1 and 2, and Batches). A probe of two shapes
// weighs both (geometric mean). The cold items' batches spill every L2 listed there.
constexpr std::array<ProbeSpec, 4> kProbes = {{
    {"unrolls_long_direct_k",
     1.05,
     true,
     {{{64, 768, 768, "direct avx512 8x48 ku1 pf0/0 jc t1", "direct avx512 8x48 ku4 pf0/0 jc t1"},
       {16, 768, 768, "direct avx512 8x48 ku1 pf0/0 jc t1",
        "direct avx512 8x48 ku4 pf0/0 jc t1"}}}},
    {"tall_tile_over_one_panel",
     1.05,
     true,
     {{{10, 20, 20, "direct avx512 6x32 ku1 pf0/0 jc t1", "direct avx512 10x32 ku1 pf0/0 jc t1"},
       {10, 32, 100, "direct avx512 6x32 ku1 pf0/0 jc t1",
        "direct avx512 10x32 ku1 pf0/0 jc t1"}}}},
    {"l3_streams_crowded_panels",
     1.0,
     true,
     {{{128, 3072, 768, kColdOperandsConfig, "direct avx512 8x48 ku1 kc512 pf0/0 jc t1"},
       {96, 3072, 768, kColdOperandsConfig, "direct avx512 8x48 ku1 kc512 pf0/0 jc t1"}}}},
    {"direct_reads_cold_items",
     1.0,
     false,
     {{{128, 64, 128, kColdOperandsConfig, kColdItemsDirectConfig, 64},
       {128, 128, 64, kColdOperandsConfig, kColdItemsDirectConfig, 64}}}},
}};

bool Probes(const ProbeSpec& spec, const Machine& machine, double zmm_fmas_per_cycle) {
  return !spec.two_zmm_pipes ||
         (machine.kernel_isa == IsaLevel::kAvx512 && zmm_fmas_per_cycle >= 2.0);
}

// Seconds of one run of each of `runs`, the fastest of `samples` samples of enough runs to last
// `sample_seconds`, the two runs' samples taken in turn; nullopt where a run fails.
std::optional<std::array<double, 2>> FastestSeconds(
    const std::array<std::function<bool()>, 2>& runs, int samples, double sample_seconds) {
  std::array<int, 2> calls{};
  for (int i = 0; i < 2; ++i) {
    if (!runs[i]()) return std::nullopt;  // warm: pages, caches, clocks
    const auto start = Clock::now();
    if (!runs[i]()) return std::nullopt;
    const double once = std::chrono::duration<double>(Clock::now() - start).count();
    calls[i] = std::clamp(static_cast<int>(sample_seconds / std::max(once, 1e-9)), 1, 1 << 20);
  }
  std::array<double, 2> best{std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::infinity()};
  for (int sample = 0; sample < samples; ++sample) {
    for (int i = 0; i < 2; ++i) {
      const auto start = Clock::now();
      for (int call = 0; call < calls[i]; ++call) static_cast<void>(runs[i]());
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      best[i] = std::min(best[i], seconds / calls[i]);
    }
  }
  return best;
}

Result<KernelConfig> ConfigNamed(std::string_view text, const Problem& problem,
                                 const Machine& machine) {
  if (text == kColdOperandsConfig) return ColdOperandsConfig(problem, machine);
  if (text == kColdItemsDirectConfig) return ColdItemsDirectConfig(problem, machine);
  return ParseKernelConfig(text);
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
    Result<KernelConfig> config =
        ConfigNamed(i == 0 ? pair.baseline : pair.variant, problem, machine);
    if (!config) return std::nullopt;
    config->threads = 1;
    if (!config->Validate(problem, machine)) return std::nullopt;
    auto plan = GemmPlan<float>::Create(*config);
    if (!plan) return std::nullopt;
    plans[i].emplace(std::move(*plan));
  }
  ThreadPool pool(1);
  try {
    ProblemBuffers<float> buffers(problem, pair.batch, /*seed=*/1, pool);
    const auto args = buffers.ArgsFor<GemmArgs<float>>(0, 1.0f, 0.0f);
    auto items = buffers.Items();
    auto run = [&](const GemmPlan<float>& plan) -> std::function<bool()> {
      if (pair.batch == 1) return [&] { return static_cast<bool>(plan.Run(args, pool)); };
      return [&] {
        return static_cast<bool>(
            plan.RunBatch(args, pair.batch, items.a.data(), items.b.data(), items.c.data(), pool));
      };
    };
    const auto seconds = FastestSeconds({run(*plans[0]), run(*plans[1])}, samples, sample_seconds);
    if (!seconds) return std::nullopt;
    return (*seconds)[0] / (*seconds)[1];
  } catch (const std::bad_alloc&) {
    return std::nullopt;  // no memory for the operands: the fact stays unmeasured
  }
}

}  // namespace

std::vector<std::string_view> ProbedCoreFacts(const Machine& machine, double zmm_fmas_per_cycle) {
  std::vector<std::string_view> facts;
  for (const ProbeSpec& spec : kProbes) {
    if (Probes(spec, machine, zmm_fmas_per_cycle)) facts.push_back(spec.fact);
  }
  return facts;
}

std::optional<bool> FactShown(double speedup, double threshold) {
  if (speedup >= threshold * (1.0 + kUndecidedBand)) return true;
  if (speedup <= threshold * (1.0 - kUndecidedBand)) return false;
  return std::nullopt;
}

std::vector<CoreFactProbe> CalibrateCoreFacts(const Machine& machine, double zmm_fmas_per_cycle,
                                              int samples, double sample_seconds) {
  std::vector<CoreFactProbe> probes;
  // On a thread of its own, pinned as the peaks' loops are, so that the caller keeps its
  // affinity; a failed pin only adds noise, which the fastest samples absorb.
  std::jthread runner([&] {
    static_cast<void>(BindCurrentThreadToCore(0));
    for (const ProbeSpec& spec : kProbes) {
      if (!Probes(spec, machine, zmm_fmas_per_cycle)) continue;
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
