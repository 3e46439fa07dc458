// The packed family's part of the analytical model: the cache blocks (kc, mc, nc), the loop
// that threads split, and the model config (docs/analytical-model.md, steps 2-5).
#include <algorithm>
#include <cstdint>
#include <iterator>

#include "kernels/gemm_internal.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/microkernel.h"
#include "kernels/model_internal.h"
#include "kernels/packing.h"

namespace mmtune {

// The B micro-panel takes L2 / 16 bytes (or half of L1 where that is more), not BLIS's half of
// L1: it streams from L2 well enough (two vectors per k step, many FMAs apart), so L1 does not
// bound kc, and longer k loops amortize each tile's C update and the per-panel costs. It stops
// at 64 KiB (L2 / 16 of a 1 MiB L2): longer panels gain nothing, and on a 2 MiB L2 they lose.
// Measurements: docs/analytical-model.md, step 3.
constexpr std::int64_t kMaxPackedPanelBytes = std::int64_t{64} << 10;

namespace {

// The kc of a B micro-panel `nr` wide that takes L2 / `l2_parts` bytes, at most `most_bytes`, or
// half of L1 where that is more.
std::int64_t StreamedPanelKc(const CacheBudget& cache, int nr, std::int64_t b_elem,
                             std::int64_t l2_parts, std::int64_t most_bytes) {
  const std::int64_t panel_row = std::max<std::int64_t>(1, nr * b_elem);
  const std::int64_t l2_share =
      std::min(static_cast<std::int64_t>(cache.l2) / l2_parts, most_bytes);
  return std::max(static_cast<std::int64_t>(cache.l1d) / 2, l2_share) / panel_row;
}

// Weights packed once (CallForm::kPackedB, B's panels): no B block is packed in the call, so the
// micro-panel may take twice PackedKcModel's bytes (L2 / 8, at most 128 KiB) and K splits evenly:
// fewer, longer k blocks pass C and start each tile fewer times. Measurements:
// docs/analytical-model.md, step 3.
constexpr std::int64_t kMaxWeightsPanelBytes = std::int64_t{128} << 10;

std::int64_t WeightsKcModel(const CacheBudget& cache, int nr, std::int64_t b_elem) {
  return StreamedPanelKc(cache, nr, b_elem, 8, kMaxWeightsPanelBytes);
}

}  // namespace

std::int64_t PackedKcModel(const CacheBudget& cache, int nr, std::int64_t b_elem) {
  return StreamedPanelKc(cache, nr, b_elem, 16, kMaxPackedPanelBytes);
}

// The most bytes of the packed A block: half of a 1 MiB L2. Half of a 2 MiB L2 runs slower
// (docs/analytical-model.md, step 4).
constexpr std::int64_t kMaxPackedABlockBytes = std::int64_t{512} << 10;

std::int64_t PackedMcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t a_elem) {
  const std::int64_t block_bytes =
      std::min(static_cast<std::int64_t>(cache.l2) / 2, kMaxPackedABlockBytes);
  return block_bytes / std::max<std::int64_t>(1, kc * a_elem);
}

// The most bytes of the packed B block: 4 MiB. A guest may report an L3 share far larger than
// its own (hundreds of MiB a core), half of which would let nc take all of N; but the real L3
// is shared with other tenants, and with the packed B block and the C columns it updates (both
// re-read once per k or row block) past a few MiB the tiles run slower
// (docs/analytical-model.md, step 5). Where the reported share is real (a few MiB a core on a
// server) half of it is under the cap.
constexpr std::int64_t kMaxPackedBBlockBytes = std::int64_t{4} << 20;

std::int64_t PackedNcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t b_elem) {
  const std::int64_t block_bytes =
      std::min(static_cast<std::int64_t>(cache.l3_per_core) / 2, kMaxPackedBBlockBytes);
  return block_bytes / std::max<std::int64_t>(1, kc * b_elem);
}

// The tile (AMX) kernels consume their operands an order of magnitude faster than the vector
// kernels: the B micro-panel stays in two thirds of L1 while the A panels stream past it (four
// tile loads feed four tile dot products, more bytes a cycle than L2 delivers), and the packed A
// and B blocks stay in L2 (L3 does not keep up). Measurements: docs/low-precision.md.
std::int64_t TileKcModel(const CacheBudget& cache, int nr, std::int64_t b_elem) {
  return static_cast<std::int64_t>(cache.l1d) * 2 / 3 / std::max<std::int64_t>(1, nr * b_elem);
}

std::int64_t TileMcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t a_elem) {
  return static_cast<std::int64_t>(cache.l2) / 8 / std::max<std::int64_t>(1, kc * a_elem);
}

std::int64_t TileNcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t b_elem) {
  return static_cast<std::int64_t>(cache.l2) / 2 / std::max<std::int64_t>(1, kc * b_elem);
}

// Where every thread packs all of B (icown), its B blocks take turns with the tiles over all of
// N rather than over its share, and shorter blocks, packed just before the tiles read them, run
// faster. Measurements: docs/low-precision.md.
std::int64_t TileOwnBNcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t b_elem) {
  return static_cast<std::int64_t>(cache.l2) / 8 / std::max<std::int64_t>(1, kc * b_elem);
}

BlockModels BlockModelsFor(bool tiles, ParallelLoop loop) {
  if (!tiles) return BlockModels{&PackedKcModel, &PackedMcModel, &PackedNcModel};
  return BlockModels{&TileKcModel, &TileMcModel,
                     loop == ParallelLoop::kIcOwnB ? &TileOwnBNcModel : &TileNcModel};
}

namespace model {
namespace {

// The block of a loop over `extent` rows or columns that takes as many blocks as `model` would
// and splits them evenly, each a multiple of `step` (whole tiles): so no thin last block is left
// over. Rounding the model down to the tile instead would leave one: f64 M = 128 in A blocks of
// 126 (6x32) runs its last 2 rows against the whole packed B block, slower than one 132-row
// block (docs/analytical-model.md, step 6). A block may exceed the model by less than one step.
std::int64_t BalancedBlock(std::int64_t extent, std::int64_t model, int step) {
  const std::int64_t rows = std::max<std::int64_t>(extent, 1);
  const std::int64_t blocks = (rows + std::max<std::int64_t>(model, step) - 1) /
                              std::max<std::int64_t>(model, step);
  const std::int64_t even = (rows + blocks - 1) / blocks;
  return (even + step - 1) / step * step;
}

// The cache blocks of the packed loops. kc: PackedKcModel, rounded down to `kc_step` for aligned
// panels. mc: PackedMcModel, the packed A block (mc x kc) in about half of the core's L2, the
// other half holding the B micro-panels streaming through. nc: PackedNcModel, the packed B
// block (kc x nc) in about half of this core's share of L3. mc and nc split M and N evenly
// (BalancedBlock). No block larger than the problem (whole tiles, kc whole groups of `k_group`)
// or than the config limits. kc is sized for a micro-panel `kc_panel_nr` wide, which may be
// narrower than the tile's (PackedModel). `models` may replace these (tile kernels: the Tile*Model
// blocks), and `even_k` splits K evenly too, as BalancedBlock does M and N: every k block passes
// C through memory once, which a thin last block pays for a few k steps (short L1 panels).
void SetCacheBlocks(const CacheBudget& cache, const Problem& problem, std::int64_t a_elem,
                    std::int64_t b_elem, int kc_step, int k_group, int kc_panel_nr,
                    const BlockModels& models, bool even_k, KernelConfig& c) {
  std::int64_t kc = models.kc(cache, kc_panel_nr, b_elem);
  kc = std::clamp<std::int64_t>(kc / kc_step * kc_step, kc_step, 1 << 14);
  if (even_k) kc = BalancedBlock(problem.k, kc, kc_step);
  const std::int64_t mc = BalancedBlock(problem.m, models.mc(cache, kc, a_elem), c.mr);
  const std::int64_t nc = BalancedBlock(problem.n, models.nc(cache, kc, b_elem), c.nr);
  kc = std::min<std::int64_t>(
      kc, (std::max<std::int64_t>(1, problem.k) + k_group - 1) / k_group * k_group);
  constexpr std::int64_t kMaxBlock = 1 << 16;
  c.kc = static_cast<int>(kc);
  c.mc = static_cast<int>(std::min(mc, kMaxBlock / c.mr * c.mr));
  c.nc = static_cast<int>(std::min(nc, kMaxBlock / c.nr * c.nr));
}

// For the vector kernels reading A in place from L2, split jc, and a row-major B, whose packing
// reads a few lines of each row at a time (kPackBRowStepBytes, packing.h): where a thread's B
// block takes more than a quarter of L2, nc narrows to those bytes of a row (whole panels, at
// least one), split evenly over N. Such a block stays in L2 from its packing to its last tile,
// beside A and the lines of B it was packed from; a wider one, packed whole before its tiles
// run, pushes them out (docs/low-precision.md).
void NarrowBBlockBesideInPlaceA(const CacheBudget& cache, const Problem& problem,
                                std::int64_t b_elem, KernelConfig& c) {
  const std::int64_t share = detail::CeilDiv(problem.n, std::int64_t{std::max(1, c.threads)});
  const std::int64_t block_bytes =
      std::int64_t{c.kc} * std::min<std::int64_t>(c.nc, share) * b_elem;
  if (block_bytes <= static_cast<std::int64_t>(cache.l2) / 4) return;
  const std::int64_t row_step = kPackBRowStepBytes / b_elem / c.nr * c.nr;
  c.nc = static_cast<int>(BalancedBlock(problem.n, std::max<std::int64_t>(c.nr, row_step), c.nr));
}

}  // namespace

void SetPackedBlocks(const Machine& machine, const Problem& problem, KernelConfig& c) {
  const CacheBudget cache = CacheBudgetOf(machine);
  const bool weights = problem.form == CallForm::kPackedB;
  switch (problem.dtype) {
    case DType::kF32:
    case DType::kF64: {
      const auto elem = static_cast<std::int64_t>(DTypeSize(problem.dtype));
      // kc as for a two-vector panel: the k depth, not the panel's bytes, is what matters, and
      // the four-vector tiles run faster at that kc (a 128 KiB micro-panel) than at the shorter
      // one PackedKcModel's 64 KiB would give them (docs/analytical-model.md, step 3).
      const int lanes = VectorLanes(c.isa, static_cast<std::size_t>(elem));
      BlockModels models = BlockModelsFor(false, c.parallel_loop);
      if (weights) models.kc = &WeightsKcModel;
      SetCacheBlocks(cache, problem, elem, elem, 8, 1, std::min(c.nr, 2 * lanes), models, weights,
                     c);
      return;
    }
    // A bf16 or s8 panel holds 2x or 4x the k of an f32 one; kc whole groups of k, and whole
    // tile rows for the AMX kernels. The vector kernels' kc on one thread as for a two-vector
    // panel, as f32's: a group step of a four-vector tile takes as long as an f32 k step of one,
    // so this gives both the same k loop between C updates. On more threads, where the dot
    // products take more vector bytes a cycle than L2 feeds every core at once
    // (kL2FedDotBytesPerCycle), their B micro-panel stays in two thirds of L1 and K splits evenly,
    // as the tile kernels' do: a group step reads 1.5x the B bytes of an f32 k step, and with
    // every core streaming, its panel from L2 slowed their k loops (docs/low-precision.md).
    // Elsewhere weights take WeightsKcModel's kc. Beside an A read in place, a narrower B block
    // where it would crowd L2 (NarrowBBlockBesideInPlaceA).
    case DType::kBF16:
    case DType::kS8:
      WithGemmOf(problem.dtype, [&]<typename Kind>() {
        if constexpr (GemmTypes<Kind>::kLowPrecision) {
          const auto* kernel = FindMicroKernel<Kind>(c.isa, c.mr, c.nr, c.k_unroll);
          const int run = kernel != nullptr ? kernel->a_group : Kind::kGroup;
          const bool tiles = kernel != nullptr && kernel->tiles;
          const bool panel_in_l1 =
              tiles || (problem.threads > 1 &&
                        DotProductBytesPerCycle(machine, c.isa) > kL2FedDotBytesPerCycle);
          BlockModels models = BlockModelsFor(tiles, c.parallel_loop);
          if (panel_in_l1) {
            models.kc = &TileKcModel;
          } else if (weights) {
            models.kc = &WeightsKcModel;
          }
          const int panel_nr = panel_in_l1 ? c.nr : std::min(c.nr, 2 * VectorLanes(c.isa, 4));
          SetCacheBlocks(cache, problem, sizeof(typename Kind::A), sizeof(typename Kind::B),
                         std::max(16, run), run, panel_nr, models, panel_in_l1 || weights, c);
          if (!tiles && c.a_in_place && problem.trans_b == Trans::kNo &&
              c.parallel_loop == ParallelLoop::kJc) {
            NarrowBBlockBesideInPlaceA(cache, problem, sizeof(typename Kind::B), c);
          }
        }
      });
      return;
  }
}

namespace {

// The fewest rows of C each thread takes under ic where the problem is not clearly tall: fewer,
// and the half of each B block a thread fetches from the other core's cache costs more than
// packing all of A itself (docs/analytical-model.md, step 7).
constexpr std::int64_t kSharedBMinRowsPerThread = 768;

}  // namespace

// Threads share the B block (split ic) where A is clearly taller than B is wide (M >= 2N), or at
// least as tall with kSharedBMinRowsPerThread rows for each thread, and there are enough row
// panels for everyone; otherwise each packs and reads its own columns of B (split jc) and packs
// all of A. Under ic every thread reads the whole packed B block, half of it packed by (and
// fetched from the cache of) the other core, under jc only its own columns, while A's packing is
// repeated by every thread: the crossing pays only where each thread runs the block over many
// rows, or where N is too narrow for jc's repeated packing of A to pay. Measurements:
// docs/analytical-model.md, step 7.
ParallelLoop PackedParallelLoop(const Problem& problem, int mr) {
  const auto threads = static_cast<std::int64_t>(problem.threads);
  const bool tall = problem.m >= 2 * problem.n;
  const bool many_rows = problem.m >= problem.n && problem.m >= threads * kSharedBMinRowsPerThread;
  return threads > 1 && (tall || many_rows) && problem.m >= threads * mr * 4 ? ParallelLoop::kIc
                                                                             : ParallelLoop::kJc;
}

KernelConfig PackedConfig(const Problem& problem, const Machine& machine, IsaLevel isa, Tile tile,
                          ParallelLoop loop) {
  KernelConfig c;
  c.isa = isa;
  c.threads = problem.threads;
  c.family = KernelFamily::kPacked;
  c.mr = tile.mr;
  c.nr = tile.nr;
  c.k_unroll = 1;
  c.prefetch_c = true;
  c.parallel_loop = loop;
  SetPackedBlocks(machine, problem, c);
  return c;
}

namespace {

// What a tile other than the model's costs per element it computes where B is packed once, by
// element size: where none computes padded rows, f32 8x32, 8x48, 10x32, 12x32 and 14x32 ran at
// 0.98-0.99 of the Xeon's 6x64, f64 8x16, 10x16 and 12x16 at 0.95-0.98 of its 6x32
// (docs/analytical-model.md, step 2).
struct OtherWeightsTileCost {
  std::int64_t elem_bytes;
  double cost;
};
constexpr OtherWeightsTileCost kOtherWeightsTileCosts[] = {{4, 1.02}, {8, 1.05}};

double OtherWeightsTileCostOf(std::int64_t elem_bytes) {
  for (const OtherWeightsTileCost& row : kOtherWeightsTileCosts) {
    if (row.elem_bytes == elem_bytes) return row.cost;
  }
  return kOtherWeightsTileCosts[std::size(kOtherWeightsTileCosts) - 1].cost;
}

// The packed model's config on `tile` (row-major view).
template <typename T>
KernelConfig PackedModelOn(const Problem& problem, const Machine& machine, Tile tile) {
  const IsaLevel isa = machine.kernel_isa;
  KernelConfig c =
      PackedConfig(problem, machine, isa, tile, PackedParallelLoop(problem, tile.mr));
  // Unrolled where the k blocks are long and the core's facts say it pays (Intel's two zmm
  // pipes: docs/analytical-model.md, step 2, k unroll); not where the problem has fewer rows
  // than the tile, whose k loop then waits on B's stream rather than its FMAs.
  if (problem.m >= c.mr && UnrollsKLoop(machine, &CoreFacts::unrolls_long_packed_k,
                                        std::min<std::int64_t>(c.kc, problem.k))) {
    c.k_unroll = 4;
  }
  return c;
}

// The vector tile that computes the fewest elements of a problem of `m` x `n`, padding included
// (a partial row panel's as ComputedRows has it, `snug_rows` where the call packs A), of the
// registered tiles at least two vectors wide (as every packed tile measured) as fast per element
// as `model` (TileCyclesPerK) that read no more bytes per cycle of their k loop than it does (a B
// panel of kc k steps outgrows L1, so both operands stream from L2): tiles other than `model`
// charged kOtherWeightsTileCosts; of equal cost, the one with fewer accumulators (f32 8x32 ran
// level with or ahead of 8x48 on 64 and 128 rows). `model` where none is cheaper.
template <typename KernelTable>
Tile LeastPaddedTile(const KernelTable& kernels, Tile model, int lanes, double fma_pipes,
                     std::int64_t elem_bytes, std::int64_t m, std::int64_t n, bool snug_rows) {
  auto cycles = [&](const Tile& tile) {
    return TileCyclesPerK(tile.mr, tile.nr / lanes, fma_pipes);
  };
  auto cycles_per_element = [&](const Tile& tile) { return cycles(tile) / (tile.mr * tile.nr); };
  auto bytes_per_cycle = [&](const Tile& tile) {
    return static_cast<double>((tile.mr + tile.nr) * elem_bytes) / cycles(tile);
  };
  auto computed = [&](const auto& entry) {
    return ComputedRows(entry, m, lanes, fma_pipes, snug_rows) *
           static_cast<double>(detail::RoundUp(n, entry.nr));
  };
  Tile best = model;
  double best_cost = 0.0;
  for (const auto& entry : kernels) {
    if (entry.mr == model.mr && entry.nr == model.nr) {
      best_cost = computed(entry);
      break;
    }
  }
  for (const auto& entry : kernels) {
    const Tile tile{entry.mr, entry.nr};
    if (!IsPackedVectorCandidate(entry) || entry.nr % lanes != 0 || entry.nr < 2 * lanes ||
        (tile.mr == model.mr && tile.nr == model.nr) ||
        CompareCosts(cycles_per_element(tile), cycles_per_element(model)) == CostOrder::kAbove ||
        CompareCosts(bytes_per_cycle(tile), bytes_per_cycle(model)) == CostOrder::kAbove) {
      continue;
    }
    const double cost = computed(entry) * OtherWeightsTileCostOf(elem_bytes);
    const CostOrder order = CompareCosts(cost, best_cost);
    const bool fewer_accumulators = tile.mr * tile.nr < best.mr * best.nr;
    const bool best_is_model = best.mr == model.mr && best.nr == model.nr;
    if (order == CostOrder::kBelow ||
        (order == CostOrder::kLevel && !best_is_model && fewer_accumulators)) {
      best = tile;
      best_cost = cost;
    }
  }
  return best;
}

// The packed model's f32 / f64 vector tile on this machine's ISA.
template <typename T>
Tile PackedModelTile(const Machine& machine) {
  const IsaLevel isa = machine.kernel_isa;
  return PackedVectorTile(MicroKernels<T>(isa), machine, isa, VectorLanes(isa, sizeof(T)), false);
}

}  // namespace

template <typename T>
KernelConfig PackedModel(const Problem& problem, const Machine& machine) {
  return PackedModelOn<T>(problem, machine, PackedModelTile<T>(machine));
}

namespace {

// The most B panels a thread's A block may pass and still be read in place rather than packed:
// packing A costs the same whatever the panels, reading it in place (MR rows a tile, lda apart)
// costs a little more than the packed panel on each of them (docs/analytical-model.md, step 2).
constexpr std::int64_t kMostInPlacePanels = 24;

}  // namespace

template <typename T>
KernelConfig PackedWeightsModel(const Problem& problem, const Machine& machine) {
  const IsaLevel isa = machine.kernel_isa;
  KernelConfig c = PackedModelOn<T>(
      problem, machine,
      LeastPaddedTile(MicroKernels<T>(isa), PackedModelTile<T>(machine),
                      VectorLanes(isa, sizeof(T)), VectorFmasPerCycle(machine, isa),
                      static_cast<std::int64_t>(sizeof(T)), problem.m, problem.n,
                      problem.form == CallForm::kPackedB));
  // A k-contiguous A (of the row-major view) read in place where few panels pass each block.
  const std::int64_t columns = c.parallel_loop == ParallelLoop::kJc
                                    ? detail::CeilDiv(problem.n, std::max(1, problem.threads))
                                    : problem.n;
  const std::int64_t panels = detail::CeilDiv(std::min<std::int64_t>(c.nc, columns), c.nr);
  c.a_in_place = problem.trans_a == Trans::kNo && c.parallel_loop != ParallelLoop::kJr &&
                 panels <= kMostInPlacePanels;
  return c;
}

template KernelConfig PackedModel<float>(const Problem&, const Machine&);
template KernelConfig PackedModel<double>(const Problem&, const Machine&);
template KernelConfig PackedWeightsModel<float>(const Problem&, const Machine&);
template KernelConfig PackedWeightsModel<double>(const Problem&, const Machine&);

}  // namespace model
}  // namespace mmtune
