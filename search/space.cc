#include "search/space.h"

#include <algorithm>
#include <set>

#include "kernels/default_config.h"
#include "kernels/lowp_microkernel.h"
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

// The packed family around the cache model for one micro-kernel `base`: kc as the model sizes
// it (PackedKcModel: a B micro-panel of kc x NR), mc for L2 (an A block of mc x kc), nc for L3
// (a B block of kc x nc), each around the model value for each loop; the Tile*Model blocks for
// the tile kernels (`tiles`). kc is a multiple of `kc_unit` (the low-precision k groups).
void AddPackedConfigs(const Problem& problem, const CacheBudget& cache, const KernelConfig& base,
                      std::int64_t a_elem, std::int64_t b_elem, int kc_unit, bool tiles,
                      std::initializer_list<std::int64_t> kc_fixed,
                      const std::vector<ParallelLoop>& loops,
                      const std::vector<std::pair<int, int>>& prefetches,
                      std::vector<KernelConfig>& out) {
  const std::int64_t m_limit = (problem.m + base.mr - 1) / base.mr * base.mr;
  const std::int64_t n_limit = (problem.n + base.nr - 1) / base.nr * base.nr;
  // Up to K rounded up to the unit: one k block covers a K that is not a multiple of it.
  const std::int64_t k_limit = (problem.k + kc_unit - 1) / kc_unit * kc_unit;
  // kc and mc are every loop's; nc is around each loop's model (BlockModelsFor), the loops that
  // share a model together.
  const BlockModels models = BlockModelsFor(tiles, ParallelLoop::kJc);
  std::vector<std::pair<decltype(models.nc), std::vector<ParallelLoop>>> nc_groups;
  for (ParallelLoop loop : loops) {
    const auto nc_model = BlockModelsFor(tiles, loop).nc;
    auto group = std::find_if(nc_groups.begin(), nc_groups.end(),
                              [&](const auto& g) { return g.first == nc_model; });
    if (group == nc_groups.end()) group = nc_groups.insert(nc_groups.end(), {nc_model, {}});
    group->second.push_back(loop);
  }
  const std::int64_t kc_model = models.kc(cache, base.nr, b_elem);
  for (int kc : Around(kc_model, kc_fixed, kc_unit, std::max<std::int64_t>(kc_unit, k_limit))) {
    const std::int64_t mc_model = models.mc(cache, kc, a_elem);
    for (int mc : Around(mc_model, {}, base.mr, m_limit)) {
      for (const auto& [nc_model, group] : nc_groups) {
        for (int nc : Around(nc_model(cache, kc, b_elem), {}, base.nr, n_limit)) {
          for (ParallelLoop loop : group) {
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

// The loops threads may split, where there are threads to split one: jc, ic and jr, and for the
// tile kernels also icown. Only a tile kernel writes C often enough for a row split without
// shared B to pay for packing all of B; with the vector kernels icown ran level with ic and jc
// (docs/low-precision.md).
std::vector<ParallelLoop> LoopsFor(int threads, bool tiles) {
  if (threads <= 1) return {ParallelLoop::kJc};
  std::vector<ParallelLoop> loops = {ParallelLoop::kJc, ParallelLoop::kIc, ParallelLoop::kJr};
  if (tiles) loops.push_back(ParallelLoop::kIcOwnB);
  return loops;
}

// What every config of one micro-kernel shares; C is prefetched before its tile is updated.
template <class Entry>
KernelConfig KernelBase(IsaLevel isa, const Entry& kernel, int threads) {
  KernelConfig base;
  base.isa = isa;
  base.mr = kernel.mr;
  base.nr = kernel.nr;
  base.k_unroll = kernel.k_unroll;
  base.threads = threads;
  base.prefetch_c = true;
  return base;
}

// Each packed config of out[begin..] again reading A in place, but under jr, whose threads share
// the packed A block.
void AddAInPlaceVariants(std::size_t begin, std::vector<KernelConfig>& out) {
  const std::size_t end = out.size();
  for (std::size_t i = begin; i < end; ++i) {
    if (out[i].parallel_loop == ParallelLoop::kJr) continue;
    KernelConfig in_place = out[i];
    in_place.a_in_place = true;
    out.push_back(in_place);
  }
}

// A gemv kernel has no blocks, unroll or prefetch to choose.
template <class Entry>
KernelConfig GemvConfig(IsaLevel isa, const Entry& kernel, int threads) {
  KernelConfig c;
  c.family = KernelFamily::kGemv;
  c.isa = isa;
  c.mr = kernel.mr;
  c.nr = kernel.nr;
  c.threads = threads;
  return c;
}

std::vector<std::pair<int, int>> PrefetchVariants(const SpaceOptions& options) {
  return options.prefetch_variants ? std::vector<std::pair<int, int>>{{0, 0}, {8, 8}}
                                   : std::vector<std::pair<int, int>>{{0, 0}};
}

template <typename T>
void AddMatrixConfigs(const Problem& problem, const Machine& machine, IsaLevel isa,
                      const SpaceOptions& options, bool direct_only,
                      std::vector<KernelConfig>& out) {
  const CacheBudget cache = CacheBudgetOf(machine);
  const std::int64_t elem = sizeof(T);
  const std::vector<ParallelLoop> loops = LoopsFor(problem.threads, false);

  for (const MicroKernelEntry<T>& kernel : MicroKernels<T>(isa)) {
    const KernelConfig base = KernelBase(isa, kernel, problem.threads);
    // Direct: the whole K at once; parallel over rows or columns; with and without the C
    // prefetch (C is usually in cache already at these sizes); column panels first and, on one
    // thread without the C prefetch, row panels first (two threads splitting the columns lost
    // with row panels: docs/analytical-model.md, step 8). Where the model's k block is shorter
    // than K, also in blocks of half, once and twice it (no C prefetch: each block's C tile was
    // just written by the previous one).
    struct DirectVariant {
      bool prefetch_c;
      int kc;
      TileOrder order;
    };
    std::vector<DirectVariant> direct_variants = {{false, 0, TileOrder::kColumnPanels},
                                                  {true, 0, TileOrder::kColumnPanels}};
    if (problem.threads == 1) direct_variants.push_back({false, 0, TileOrder::kRowPanels});
    const std::int64_t kc_model = DirectKcModel(cache, problem.m, kernel.nr, elem);
    if (kc_model >= 64 && kc_model < problem.k) {
      for (int kc : Around(kc_model, {}, 64, problem.k - 1)) {
        direct_variants.push_back({false, kc, TileOrder::kColumnPanels});
      }
    }
    for (ParallelLoop loop : loops) {
      if (loop == ParallelLoop::kJr) continue;
      for (const DirectVariant& variant : direct_variants) {
        KernelConfig c = base;
        c.family = KernelFamily::kDirect;
        c.parallel_loop = loop;
        c.prefetch_c = variant.prefetch_c;
        c.kc = variant.kc;
        c.tile_order = variant.order;
        out.push_back(c);
      }
    }
    if (direct_only) continue;
    const std::size_t packed_begin = out.size();
    AddPackedConfigs(problem, cache, base, elem, elem, 8, false, {128, 256, 384}, loops,
                     PrefetchVariants(options), out);
    // Weights packed once leave A as the only operand to pack: where it is k-contiguous, also
    // read in place (as PackedWeightsModel may).
    if (problem.form == CallForm::kPackedB && problem.trans_a == Trans::kNo) {
      AddAInPlaceVariants(packed_begin, out);
    }
  }
}

// bf16 and s8: every gemv kernel for M = 1 or N = 1; else the packed family (the dot-product
// instructions need k-grouped panels), any of the parallel loops, kc a multiple of 16 (every k
// group, and whole unrolled steps), A packed or, where it is k-contiguous, read in place, and for
// the tile kernels on threads splitting jc in more than one k block, C's sums through a buffer or
// not (cbuf: it pays only there, docs/low-precision.md), and the next tile's C prefetched or not.
// The fixed kc points hold as many bytes of a B micro-panel row as the f32 ones.
template <class Kind>
void AddLowpConfigs(const Problem& problem, const Machine& machine, IsaLevel isa,
                    const SpaceOptions& options, bool a_k_contiguous,
                    std::vector<KernelConfig>& out) {
  if (!CpuRunsLowp<Kind>(machine.cpu, isa)) return;
  if (problem.m == 1 || problem.n == 1) {
    for (const LowpGemvKernelEntry<Kind>& kernel : GemvKernels<Kind>(isa)) {
      out.push_back(GemvConfig(isa, kernel, problem.threads));
    }
    return;
  }
  const CacheBudget cache = CacheBudgetOf(machine);
  constexpr std::int64_t a_elem = sizeof(typename Kind::A);
  constexpr std::int64_t b_elem = sizeof(typename Kind::B);
  constexpr std::int64_t scale = 4 / b_elem;
  for (const LowpMicroKernelEntry<Kind>& kernel : MicroKernels<Kind>(isa)) {
    if (!CpuRunsLowpKernel(machine.cpu, kernel)) continue;
    const std::vector<ParallelLoop> loops = LoopsFor(problem.threads, kernel.tiles);
    KernelConfig base = KernelBase(isa, kernel, problem.threads);
    // A tile kernel's kc holds whole tile rows; it has no software prefetch of A and B, and C's
    // (prefetch_c) is added below.
    base.prefetch_c = !kernel.tiles;
    const std::size_t first = out.size();
    AddPackedConfigs(problem, cache, base, a_elem, b_elem, std::max(16, kernel.a_group),
                     kernel.tiles, {128 * scale, 256 * scale, 384 * scale}, loops,
                     kernel.tiles ? std::vector<std::pair<int, int>>{{0, 0}}
                                  : PrefetchVariants(options),
                     out);
    if (kernel.tiles && problem.threads > 1) {
      const std::size_t unbuffered_end = out.size();
      for (std::size_t i = first; i < unbuffered_end; ++i) {
        if (out[i].parallel_loop != ParallelLoop::kJc || out[i].kc >= problem.k) continue;
        KernelConfig buffered = out[i];
        buffered.c_buffer = true;
        out.push_back(buffered);
      }
    }
    if (a_k_contiguous) AddAInPlaceVariants(first, out);
    if (!kernel.tiles) continue;
    // A tile kernel's prefetch_c prefetches the next tile's C: it pays where C comes from
    // beyond L2, which the model knows only of batches (docs/low-precision.md).
    const std::size_t tiles_end = out.size();
    for (std::size_t i = first; i < tiles_end; ++i) {
      KernelConfig prefetching = out[i];
      prefetching.prefetch_c = true;
      out.push_back(prefetching);
    }
  }
}

template <typename T>
void AddGemvConfigs(const Problem& problem, IsaLevel isa, std::vector<KernelConfig>& out) {
  for (const GemvKernelEntry<T>& kernel : GemvKernels<T>(isa)) {
    out.push_back(GemvConfig(isa, kernel, problem.threads));
  }
}

// f32 and f64 at `isa`. On an AVX-512 machine a small problem (A, B and C in half of L2) also
// gets the AVX2 direct configs, which the analytical default may take there: an AVX2 tile that
// covers N exactly computes no columns past N, where the AVX-512 tile's partial column panel
// computes a whole tile (docs/analytical-model.md, step 2).
template <typename T>
void AddConfigs(const Problem& problem, const Machine& machine, IsaLevel isa,
                const SpaceOptions& options, std::vector<KernelConfig>& out) {
  if (problem.m == 1 || problem.n == 1) {
    AddGemvConfigs<T>(problem, isa, out);
    return;
  }
  AddMatrixConfigs<T>(problem, machine, isa, options, false, out);
  if (isa == IsaLevel::kAvx512 && !options.all_isa_levels &&
      OperandsFitHalfOfL2(problem, CacheBudgetOf(machine))) {
    AddMatrixConfigs<T>(problem, machine, IsaLevel::kAvx2, options, true, out);
  }
}

// The ISA levels searched: the machine's kernel level (all levels up to it on request). The
// low-precision kinds fall back to AVX2 on an AVX-512 CPU without their dot-product extension,
// as their analytical default does.
std::vector<IsaLevel> SearchedLevels(const Problem& problem, const Machine& machine,
                                     const SpaceOptions& options) {
  IsaLevel top = machine.kernel_isa;
  if ((problem.dtype == DType::kBF16 && !CpuRunsLowp<Bf16Gemm>(machine.cpu, top)) ||
      (problem.dtype == DType::kS8 && !CpuRunsLowp<S8Gemm>(machine.cpu, top))) {
    top = IsaLevel::kAvx2;
  }
  std::vector<IsaLevel> levels;
  for (IsaLevel isa : kIsaLevels) {
    if (!IsaWithin(isa, top)) continue;
    if (isa != top && !options.all_isa_levels) continue;
    levels.push_back(isa);
  }
  return levels;
}

// The thread counts whose configs the space holds: the problem's, and with `search_threads`
// every power of two below it.
std::vector<int> ThreadCounts(const Problem& problem, const SpaceOptions& options) {
  const int most = std::max(1, problem.threads);
  std::vector<int> counts;
  if (options.search_threads) {
    for (int count = 1; count < most; count *= 2) counts.push_back(count);
  }
  counts.push_back(most);
  return counts;
}

// `a_k_contiguous`: whether a bf16/s8 A can be read in place (AddLowpConfigs).
std::vector<KernelConfig> Generate(const Problem& problem, const Machine& machine,
                                   const SpaceOptions& options, bool a_k_contiguous) {
  std::vector<KernelConfig> out;
  for (int threads : ThreadCounts(problem, options)) {
    Problem on = problem;
    on.threads = threads;
    for (IsaLevel isa : SearchedLevels(on, machine, options)) {
      switch (on.dtype) {
        case DType::kF32: AddConfigs<float>(on, machine, isa, options, out); break;
        case DType::kF64: AddConfigs<double>(on, machine, isa, options, out); break;
        case DType::kBF16:
          AddLowpConfigs<Bf16Gemm>(on, machine, isa, options, a_k_contiguous, out);
          break;
        case DType::kS8:
          AddLowpConfigs<S8Gemm>(on, machine, isa, options, a_k_contiguous, out);
          break;
      }
    }
  }
  // The generator should only produce valid configs; filtering keeps that a guarantee.
  std::erase_if(out, [&](const KernelConfig& c) { return !c.Validate(problem, machine).ok(); });
  return out;
}

}  // namespace

std::vector<KernelConfig> GenerateSpace(const Problem& problem, const Machine& machine,
                                        const SpaceOptions& options) {
  if (problem.batch > 1) {
    Problem item = problem;
    item.batch = 1;
    if (problem.batch < problem.threads) return GenerateSpace(item, machine, options);
    // Each member of the team runs whole items alone (GemmPlan::RunBatch): the configs of one
    // item on one thread, for each team size.
    item.threads = 1;
    const std::vector<KernelConfig> alone = GenerateSpace(item, machine, options);
    std::vector<KernelConfig> out;
    for (int team : ThreadCounts(problem, options)) {
      for (KernelConfig config : alone) {
        config.threads = team;
        out.push_back(config);
      }
    }
    return out;
  }
  // Tiles and blocks refer to the problem as the kernels run it (validity is the same for both
  // views: only gemv constrains the shape, and it takes M = 1 or N = 1 alike).
  return Generate(RowMajorView(problem), machine, options, LowpAIsKContiguous(problem));
}

}  // namespace mmtune
