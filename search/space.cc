#include "search/space.h"

#include <algorithm>
#include <set>

#include "kernels/default_config.h"
#include "kernels/microkernel.h"

namespace mmtune {
namespace {

// Candidate values around a model value: the model's guess, half and double it, and a few fixed
// points, each rounded down to a multiple of `unit`, clamped to [unit, limit] and deduplicated.
std::vector<int> Around(std::int64_t model, std::initializer_list<std::int64_t> fixed, int unit,
                        std::int64_t limit) {
  std::set<int> values;
  auto add = [&](std::int64_t value) {
    value = std::clamp<std::int64_t>(value / unit * unit, unit, std::max<std::int64_t>(unit, limit));
    values.insert(static_cast<int>(std::min<std::int64_t>(value, 1 << 16) / unit * unit));
  };
  add(model);
  add(model / 2);
  add(model * 2);
  for (std::int64_t value : fixed) add(value);
  return {values.begin(), values.end()};
}

template <typename T>
void AddMatrixConfigs(const Problem& problem, const Machine& machine, IsaLevel isa,
                      const SpaceOptions& options, std::vector<KernelConfig>& out) {
  const CacheBudget cache = CacheBudgetOf(machine.topology);
  const std::int64_t elem = sizeof(T);
  const std::vector<ParallelLoop> loops =
      problem.threads > 1
          ? std::vector<ParallelLoop>{ParallelLoop::kJc, ParallelLoop::kIc, ParallelLoop::kJr}
          : std::vector<ParallelLoop>{ParallelLoop::kJc};
  const std::vector<std::pair<int, int>> prefetches =
      options.prefetch_variants ? std::vector<std::pair<int, int>>{{0, 0}, {8, 8}}
                                : std::vector<std::pair<int, int>>{{0, 0}};

  for (const MicroKernelEntry<T>& kernel : MicroKernels<T>(isa)) {
    KernelConfig base;
    base.isa = isa;
    base.mr = kernel.mr;
    base.nr = kernel.nr;
    base.k_unroll = kernel.k_unroll;
    base.threads = problem.threads;
    base.prefetch_c = true;
    // Direct: no blocks; parallel over rows or columns.
    for (ParallelLoop loop : loops) {
      if (loop == ParallelLoop::kJr) continue;
      KernelConfig c = base;
      c.family = KernelFamily::kDirect;
      c.parallel_loop = loop;
      out.push_back(c);
    }
    // Packed: kc sized for L1 around the model, mc for L2, nc for L3.
    const std::int64_t kc_model = static_cast<std::int64_t>(cache.l1d) / 2 / (kernel.nr * elem);
    for (int kc : Around(kc_model, {128, 256, 384}, 8, std::max<std::int64_t>(8, problem.k))) {
      const std::int64_t mc_model = static_cast<std::int64_t>(cache.l2) / 2 / (kc * elem);
      const std::int64_t m_limit = (problem.m + kernel.mr - 1) / kernel.mr * kernel.mr;
      const std::int64_t n_limit = (problem.n + kernel.nr - 1) / kernel.nr * kernel.nr;
      const std::int64_t nc_model =
          static_cast<std::int64_t>(cache.l3_per_core) / 2 / (kc * elem);
      for (int mc : Around(mc_model, {}, kernel.mr, m_limit)) {
        for (int nc : Around(nc_model, {}, kernel.nr, n_limit)) {
          for (ParallelLoop loop : loops) {
            for (auto [pa, pb] : prefetches) {
              KernelConfig c = base;
              c.family = KernelFamily::kPacked;
              c.kc = kc;
              c.mc = mc;
              c.nc = nc;
              c.parallel_loop = loop;
              c.prefetch_a = pa;
              c.prefetch_b = pb;
              out.push_back(c);
            }
          }
        }
      }
    }
  }
}

template <typename T>
void AddGemvConfigs(const Problem& problem, IsaLevel isa, std::vector<KernelConfig>& out) {
  for (const GemvKernelEntry<T>& kernel : GemvKernels<T>(isa)) {
    KernelConfig c;
    c.family = KernelFamily::kGemv;
    c.isa = isa;
    c.mr = kernel.mr;
    c.nr = kernel.nr;
    c.threads = problem.threads;
    out.push_back(c);
  }
}

template <typename T>
std::vector<KernelConfig> Generate(const Problem& problem, const Machine& machine,
                                   const SpaceOptions& options) {
  std::vector<KernelConfig> out;
  for (IsaLevel isa : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (isa > machine.kernel_isa) continue;
    if (isa != machine.kernel_isa && !options.all_isa_levels) continue;
    if (problem.m == 1 || problem.n == 1) {
      AddGemvConfigs<T>(problem, isa, out);
    } else {
      AddMatrixConfigs<T>(problem, machine, isa, options, out);
    }
  }
  // The generator should only produce valid configs; filtering keeps that a guarantee.
  std::erase_if(out, [&](const KernelConfig& c) { return !c.Validate(problem, machine).ok(); });
  return out;
}

}  // namespace

std::vector<KernelConfig> GenerateSpace(const Problem& problem, const Machine& machine,
                                        const SpaceOptions& options) {
  switch (problem.dtype) {
    case DType::kF32: return Generate<float>(problem, machine, options);
    case DType::kF64: return Generate<double>(problem, machine, options);
    case DType::kBF16:
    case DType::kS8: break;  // not searched yet: the low-precision kernels run their default
  }
  return {};
}

}  // namespace mmtune
