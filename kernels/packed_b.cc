#include "kernels/packed_b.h"

#include <algorithm>
#include <map>
#include <new>

#include "kernels/gemm_internal.h"
#include "kernels/microkernel.h"
#include "kernels/model_internal.h"
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

namespace {

// What a tile other than the packed-for one costs beyond the model's cycles: on the Xeon's
// f32 768x768 weights 4x64 tiles ran 0.91-0.98x the packed-for 6x64 where both compute M rows
// exactly and 1.07-1.19x where 6x64 pads 11-33% of them; 10x32, 12x32 and 14x32 on 8x32's
// panels 1.17-1.45x 8x32 where it pads 12 to 28 rows (docs/runtime.md, Packed weights).
constexpr double kOtherTileCost = 1.05;

// The fewest tiles of rows each thread takes where threads split the rows.
constexpr std::int64_t kMinIcTilesPerThread = 4;

}  // namespace

template <typename X>
PanelConfigs<X>::PanelConfigs(const PackedB<X>& packed, const Machine& machine)
    : PanelConfigs(packed.config(), packed.n(), packed.a_side(), machine) {}

template <typename X>
PanelConfigs<X>::PanelConfigs(const KernelConfig& config, std::int64_t n, bool a_side,
                              const Machine& machine)
    : n_(n), threads_(config.threads) {
  const int current = a_side ? config.nr : config.mr;
  const bool splits_either = threads_ > 1 && !a_side &&
                             (config.parallel_loop == ParallelLoop::kJc ||
                              config.parallel_loop == ParallelLoop::kIc);
  const auto* own = FindMicroKernel<X>(config.isa, config.mr, config.nr, config.k_unroll);
  modelled_ = own != nullptr && !model::IsTileKernel(*own);
  // A kernel reads the panels where it packs k in the same runs as the config's kernel: the
  // ISA, the panel width and the k block are the config's (PackedB::PackedFor).
  const int a_group = own != nullptr ? detail::AGroupOf<X>(*own) : 0;
  const double fma_pipes = model::VectorFmasPerCycle(machine, config.isa);
  const int lanes = VectorLanes(config.isa, GemmTypes<X>::kLowPrecision ? 4 : sizeof(X));
  auto add = [&](const KernelConfig& tile_config, double extra_cost) {
    Tile tile;
    tile.side = a_side ? tile_config.nr : tile_config.mr;
    const int vectors = std::max(1, tile_config.nr / lanes);
    tile.cost = model::TileCyclesPerK(tile_config.mr, vectors, fma_pipes) * extra_cost;
    // A tile other than the packed-for one runs calls of more rows than the packed-for tile
    // has only where it is roomy: 2x64 f32 tiles on two zmm pipes ran 0.6x the 6x64 tile's
    // speed on 9 to 50 rows where the model ranks them level.
    tile.roomy = model::RoomyTile(tile_config.mr, vectors, fma_pipes);
    tile.partial_cost.assign(static_cast<std::size_t>(tile.side), tile.cost);
    tile.partial_cost[0] = 0.0;
    const auto* kernel = FindMicroKernel<X>(tile_config.isa, tile_config.mr, tile_config.nr,
                                            tile_config.k_unroll);
    if (!a_side && modelled_ && kernel != nullptr) {
      for (int r = 1; r < tile.side; ++r) {
        tile.partial_cost[static_cast<std::size_t>(r)] =
            tile.cost * model::ComputedRows(*kernel, r, lanes, fma_pipes, true) / tile.side;
      }
    }
    tile.jc = tile.ic = configs_.size();
    configs_.push_back(tile_config);
    if (splits_either) {
      KernelConfig other = tile_config;
      const bool is_ic = tile_config.parallel_loop == ParallelLoop::kIc;
      other.parallel_loop = is_ic ? ParallelLoop::kJc : ParallelLoop::kIc;
      (is_ic ? tile.jc : tile.ic) = configs_.size();
      configs_.push_back(other);
    }
    tiles_.push_back(tile);
  };
  add(config, 1.0);
  // One kernel a side other than the tile's, the config's own k unroll where that side has it:
  // shorter ones, and longer ones for the vector tiles the model ranks, with no more
  // accumulators than the packed model gives a tile of this type.
  const double most_accumulators =
      model::MostPackedAccumulators(machine, config.isa, GemmTypes<X>::kLowPrecision);
  std::map<int, KernelConfig> others;
  for (const auto& entry : MicroKernels<X>(config.isa)) {
    const int side = a_side ? entry.nr : entry.mr;
    const bool longer_allowed =
        modelled_ && entry.mr * std::max(1, entry.nr / lanes) <= most_accumulators;
    if (side == current || (side > current && !longer_allowed)) continue;
    KernelConfig candidate = config;
    candidate.mr = entry.mr;
    candidate.nr = entry.nr;
    candidate.k_unroll = entry.k_unroll;
    candidate.mc = static_cast<int>(detail::RoundUp(config.mc, entry.mr));
    candidate.nc = static_cast<int>(detail::RoundUp(config.nc, entry.nr));
    const int width = a_side ? entry.mr : entry.nr;
    if (width != (a_side ? config.mr : config.nr) || detail::AGroupOf<X>(entry) != a_group ||
        !candidate.ValidateFor(GemmTypes<X>::kDType)) {
      continue;
    }
    if constexpr (GemmTypes<X>::kLowPrecision) {
      if (!CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
    }
    auto [kept, added] = others.try_emplace(side, candidate);
    if (!added && kept->second.k_unroll != config.k_unroll &&
        candidate.k_unroll == config.k_unroll) {
      kept->second = candidate;
    }
  }
  for (const auto& [side, candidate] : others) add(candidate, kOtherTileCost);
}

template <typename X>
std::size_t PanelConfigs<X>::For(std::int64_t rows) const {
  rows = std::max<std::int64_t>(rows, 1);
  std::size_t best = 0;
  auto cost_of = [&](const Tile& tile) {
    return static_cast<double>(rows / tile.side) * tile.cost +
           tile.partial_cost[static_cast<std::size_t>(rows % tile.side)];
  };
  const bool short_call = rows < tiles_.front().side;
  for (std::size_t i = 1; i < tiles_.size(); ++i) {
    const Tile& tile = tiles_[i];
    const Tile& chosen = tiles_[best];
    if (short_call || !modelled_) {
      if (tile.side >= rows && tile.side < chosen.side) best = i;
      continue;
    }
    if (!tile.roomy) continue;
    const double cost = cost_of(tile);
    const double chosen_cost = cost_of(chosen);
    // Rows computed, a partial panel's counted as its share of a whole tile's cycles.
    const double computed = cost / tile.cost * tile.side;
    const double chosen_computed = chosen_cost / chosen.cost * chosen.side;
    const model::CostOrder order = model::CompareCosts(cost, chosen_cost);
    const model::CostOrder computed_order = model::CompareCosts(computed, chosen_computed);
    // Of tiles level in both, the shorter: a longer one would run M's last rows in the same
    // shorter kernel anyway (20 rows on 8x32 panels: 10x32, not 12x32 ending in 8x32).
    if (order == model::CostOrder::kBelow ||
        (order == model::CostOrder::kLevel &&
         (computed_order == model::CostOrder::kBelow ||
          (computed_order == model::CostOrder::kLevel && tile.side < chosen.side)))) {
      best = i;
    }
  }
  const Tile& tile = tiles_[best];
  const bool rows_split = modelled_ && 2 * rows >= n_ &&
                          rows >= static_cast<std::int64_t>(threads_) * tile.side *
                                      kMinIcTilesPerThread;
  return rows_split ? tile.ic : tile.jc;
}

namespace {

template <typename X>
KernelConfig PanelCallConfigOf(const KernelConfig& packed_for, const Problem& problem,
                               const Machine& machine) {
  const PanelConfigs<X> configs(packed_for, problem.n, PackedB<X>::ASideOf(problem.layout),
                                machine);
  return configs.configs()[configs.For(problem.m)];
}

}  // namespace

KernelConfig PanelCallConfig(const KernelConfig& packed_for, const Problem& problem,
                             const Machine& machine) {
  if (packed_for.family != KernelFamily::kPacked) return packed_for;
  switch (problem.dtype) {
    case DType::kF32: return PanelCallConfigOf<float>(packed_for, problem, machine);
    case DType::kF64: return PanelCallConfigOf<double>(packed_for, problem, machine);
    case DType::kBF16: return PanelCallConfigOf<Bf16Gemm>(packed_for, problem, machine);
    case DType::kS8: return PanelCallConfigOf<S8Gemm>(packed_for, problem, machine);
  }
  return packed_for;
}

template <typename X>
void PackedB<X>::Free::operator()(B* p) const {
  ::operator delete(p, std::align_val_t{kAlignment});
}

template class PackedB<float>;
template class PackedB<double>;
template class PackedB<Bf16Gemm>;
template class PackedB<S8Gemm>;
template class PanelConfigs<float>;
template class PanelConfigs<double>;
template class PanelConfigs<Bf16Gemm>;
template class PanelConfigs<S8Gemm>;

}  // namespace mmtune
