#include "kernels/packed_b.h"

#include <algorithm>
#include <new>

#include "kernels/gemm_internal.h"
#include "kernels/microkernel.h"
#include "machine/cpu_features.h"

namespace mmtune {

template <typename X>
bool PackedB<X>::Fits(const KernelConfig& config, int a_group) const {
  return config.family == KernelFamily::kPacked && config.isa == config_.isa &&
         (a_side_ ? config.mr == config_.mr : config.nr == config_.nr) && a_group == a_group_ &&
         std::min<std::int64_t>(config.kc, detail::RoundUp(k_, a_group_)) == kc_;
}

template <typename X>
bool PackedB<X>::PackedFor(const KernelConfig& config) const {
  const auto* kernel = FindMicroKernel<X>(config.isa, config.mr, config.nr, config.k_unroll);
  return kernel != nullptr && Fits(config, detail::AGroupOf<X>(*kernel));
}

template <typename X>
KernelConfig ShortTileConfig(const PackedB<X>& packed, std::int64_t rows) {
  const KernelConfig& config = packed.config();
  const int current = packed.a_side() ? config.nr : config.mr;
  KernelConfig best = config;
  int best_side = current;
  for (const auto& entry : MicroKernels<X>(config.isa)) {
    const int side = packed.a_side() ? entry.nr : entry.mr;
    if (side < rows || side >= current || side > best_side) continue;
    KernelConfig candidate = config;
    candidate.mr = entry.mr;
    candidate.nr = entry.nr;
    candidate.k_unroll = entry.k_unroll;
    candidate.mc = static_cast<int>(detail::RoundUp(config.mc, entry.mr));
    candidate.nc = static_cast<int>(detail::RoundUp(config.nc, entry.nr));
    if (!packed.PackedFor(candidate) || !candidate.ValidateFor(GemmTypes<X>::kDType)) continue;
    if constexpr (GemmTypes<X>::kLowPrecision) {
      if (!CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
    }
    // Of kernels with an equal side, the config's own k unroll.
    if (side == best_side && candidate.k_unroll != config.k_unroll) continue;
    best = candidate;
    best_side = side;
  }
  return best;
}

template <typename X>
void PackedB<X>::Free::operator()(B* p) const {
  ::operator delete(p, std::align_val_t{kAlignment});
}

template class PackedB<float>;
template class PackedB<double>;
template class PackedB<Bf16Gemm>;
template class PackedB<S8Gemm>;
template KernelConfig ShortTileConfig(const PackedB<float>&, std::int64_t);
template KernelConfig ShortTileConfig(const PackedB<double>&, std::int64_t);
template KernelConfig ShortTileConfig(const PackedB<Bf16Gemm>&, std::int64_t);
template KernelConfig ShortTileConfig(const PackedB<S8Gemm>&, std::int64_t);

}  // namespace mmtune
