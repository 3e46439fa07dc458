// The direct (unpacked) family's part of the analytical model: its register tile, where it
// beats packing (whole or in k blocks), the order it visits its tiles in, and the model config
// (docs/analytical-model.md, steps 1-2).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/cache_line.h"
#include "kernels/microkernel.h"
#include "kernels/model_internal.h"

namespace mmtune {

std::int64_t DirectKcModel(const CacheBudget& cache, std::int64_t m, int nr, std::int64_t elem) {
  const std::int64_t row_bytes = (std::max<std::int64_t>(m, 1) + std::max(nr, 1)) * elem;
  return static_cast<std::int64_t>(cache.l2) / 2 / row_bytes / 64 * 64;
}

namespace {

// Bytes of A, B and C together.
std::int64_t OperandBytes(const Problem& problem) {
  const auto input = static_cast<std::int64_t>(DTypeSize(problem.dtype));
  const auto output = static_cast<std::int64_t>(CTypeSize(problem.dtype));
  return (problem.m * problem.k + problem.k * problem.n) * input + problem.m * problem.n * output;
}

}  // namespace

bool OperandsFitHalfOfL2(const Problem& problem, const CacheBudget& cache) {
  return OperandBytes(problem) * 2 <= static_cast<std::int64_t>(cache.l2);
}

namespace model {
namespace {

// The most rows a direct tile reads from A in place by rows (A not transposed after the
// row-major view). Each row is a separate address, base + i * lda; the kernels address rows 8
// and up from a second pointer (microkernel_impl.h), because from one pointer GCC 12 keeps the
// offsets of taller tiles on the stack and reloads them in the k loop. 16 rows is two such
// halves; taller tiles still spill. A transposed A is read along its rows (a[p * lda + i]), one
// address per k step, so any height goes there.
constexpr int kRowsPerAPointer = 8;
constexpr int kMaxInPlaceRowsOfA = 2 * kRowsPerAPointer;

// Whether a tile of `mr` rows of A read in place by rows (more than kRowsPerAPointer) suits
// `problem`. Each k step reads one element of every row, from lines lda * elem bytes apart;
// where that stride is a multiple of a large power of two, the rows share few L1 sets and evict
// each other before their lines are used up (at lda = 3072 f32 all 16 rows of a tile share one
// set). Taken where no set holds more than half its ways of those rows. And only where M is two
// or more whole row panels, unless half the tile's accumulators would leave the FMA pipes no
// slack, no more than the latency needs (`one_panel_suffices`, DirectTile's call): on one zmm
// FMA pipe a tall tile over a single row panel runs behind two shorter tiles, while on the two
// pipes measured it runs ahead, so the core fact tall_tile_over_one_panel takes any no wider
// than N. A partial row panel runs the edge kernel, which addresses its rows through a table and
// is slower.
// Measurements: docs/analytical-model.md, step 2.
bool TallInPlaceTileFits(const Problem& problem, const CacheBudget& cache, int mr,
                         std::int64_t elem, bool one_panel_suffices) {
  if (mr <= kRowsPerAPointer) return true;
  if (mr > kMaxInPlaceRowsOfA || problem.m % mr != 0 ||
      (problem.m < 2 * static_cast<std::int64_t>(mr) && !one_panel_suffices)) {
    return false;
  }
  const std::int64_t ways = std::max(1, cache.l1_ways);
  const std::int64_t sets =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(cache.l1d) / kCacheLineBytes / ways);
  const std::int64_t row_bytes = std::max<std::int64_t>(1, problem.k) * elem;  // lda = K
  std::vector<int> rows_in_set(static_cast<std::size_t>(sets), 0);
  for (int i = 0; i < mr; ++i) {
    const std::int64_t set = i * row_bytes / kCacheLineBytes % sets;
    if (++rows_in_set[static_cast<std::size_t>(set)] > ways / 2) return false;
  }
  return true;
}

// The register tile of a direct (unpacked) problem (`problem` in its row-major view): the
// registered tile with the fewest estimated cycles for the whole problem. Small problems are
// where a poor fit costs most: a partial tile at the bottom or right edge costs the whole tile
// of the snug kernel that runs it (SnugTiles), so each partial tile is costed as that kernel,
// not as a whole tile of the entry, and a tile that fits the edges well can beat a wider one
// that wastes columns there. Per k step a tile is bound by the slowest of
//   - FMA throughput: mr * nv FMAs on `fma_pipes` (VectorFmasPerCycle for `isa`);
//   - FMA latency: each accumulator is one chain of k FMAs, kFmaLatency cycles apart, so fewer than
//     fma_pipes * kFmaLatency accumulators leave the pipes idle;
//   - loads: mr broadcasts of A and nv vectors of B
// (TileCyclesPerK), and each tile call adds kTileCallCycles (call, zeroing, the C update: the
// whole loop's pipeline fill and drain), which favours fewer, larger tiles when k is short.
// Tiles that TallInPlaceTileFits rejects are left out where A is read by rows, tiles narrower
// than `min_vectors` vectors or `min_rows` rows always, and with `whole_panels_only` tiles that
// do not divide N. The model ranks tiles; it does not predict times. Its picks per machine and
// the measurements behind these constants: docs/analytical-model.md, step 2.
struct TileChoice {
  Tile tile;
  double cycles = 0.0;  // the model's estimate for the whole problem
};

template <typename T>
TileChoice DirectTile(const Machine& machine, const CacheBudget& cache, const Problem& problem,
                      IsaLevel isa, int min_vectors = 1, bool whole_panels_only = false,
                      int min_rows = 1) {
  const double fma_pipes = VectorFmasPerCycle(machine, isa);
  constexpr double kTileCallCycles = 40.0;
  const int lanes = VectorLanes(isa, sizeof(T));
  const bool a_by_rows = problem.trans_a == Trans::kNo;
  const double k = static_cast<double>(std::max<std::int64_t>(problem.k, 1));
  // Where the core's facts say so, a tall tile over a single row panel is taken whatever its
  // accumulators: there such a tile beats two shorter ones (see TallInPlaceTileFits), unless it
  // is wider than N.
  const bool any_tile_over_one_panel =
      isa == IsaLevel::kAvx512 && TwoZmmPipesAnd(machine, &CoreFacts::tall_tile_over_one_panel);
  TileChoice best;
  for (const auto& entry : MicroKernels<T>(isa)) {
    const int nv = entry.nr / lanes;
    if (entry.k_unroll != 1 || nv < min_vectors || entry.mr < min_rows) continue;
    if (whole_panels_only && problem.n % entry.nr != 0) continue;
    const int accumulators = entry.mr * nv;
    // No wider than N: a wider tile's columns past N run a snug kernel of other rows (the
    // edge kernel), and two shorter tiles beat it (docs/analytical-model.md, step 2).
    const bool one_panel_suffices = (any_tile_over_one_panel && entry.nr < problem.n + lanes) ||
                                    accumulators / 2 <= kFmaLatency * fma_pipes;
    if (a_by_rows &&
        !TallInPlaceTileFits(problem, cache, entry.mr, sizeof(T), one_panel_suffices)) {
      continue;
    }
    // One call of `tile` (the entry or a snug kernel of its partial tiles).
    auto call_cycles = [&](const MicroKernelEntry<T>& tile) {
      return k * TileCyclesPerK(tile.mr, tile.nr / lanes, fma_pipes) + kTileCallCycles;
    };
    // Whole tiles, then the partial ones of the last row panel, of the last column panel and
    // their corner, each in the snug kernel the driver runs it with (SnugTiles).
    const SnugTiles<T>& snug = SnugTiles<T>::Of(entry);
    const std::int64_t whole_rows = problem.m / entry.mr;
    const std::int64_t whole_cols = problem.n / entry.nr;
    const int rows_left = static_cast<int>(problem.m % entry.mr);
    const int cols_left = static_cast<int>(problem.n % entry.nr);
    double cycles = static_cast<double>(whole_rows * whole_cols) * call_cycles(entry);
    if (rows_left > 0) {
      cycles += static_cast<double>(whole_cols) * call_cycles(snug.For(rows_left, entry.nr));
    }
    if (cols_left > 0) {
      cycles += static_cast<double>(whole_rows) * call_cycles(snug.For(entry.mr, cols_left));
    }
    if (rows_left > 0 && cols_left > 0) cycles += call_cycles(snug.For(rows_left, cols_left));
    if (best.tile.mr == 0 || cycles < best.cycles) best = {{entry.mr, entry.nr, isa}, cycles};
  }
  return best;
}

// The most lines of a panel read in place (`rows` rows of `row_bytes`, `stride_bytes` apart)
// that map to one set of a cache of `cache_bytes` in `cache_ways` ways. Rows whose stride is a
// multiple of a large power of two share few sets (a 12 KiB stride puts every row at one of 32
// places in a 2048-set L2), so a panel far smaller than the cache can still evict its own lines
// before the next row tile reads them again.
std::int64_t PanelLinesPerSet(std::uint64_t cache_bytes, int cache_ways, std::int64_t rows,
                              std::int64_t row_bytes, std::int64_t stride_bytes) {
  const std::int64_t ways = std::max(1, cache_ways);
  const std::int64_t sets = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(cache_bytes) / kCacheLineBytes / ways);
  const std::int64_t way_bytes = sets * kCacheLineBytes;
  // A row that does not start on a line (malloc's 16-byte offset) spans one line more.
  const std::int64_t lines = (row_bytes + kCacheLineBytes - 1) / kCacheLineBytes + 1;
  const std::int64_t offset = stride_bytes % way_bytes;
  // Rows that stay within one way's span start `offset` bytes apart, so a set holds lines of
  // only the rows whose spans reach it (f64 56^3: 448-byte rows of 5 lines each put one row in a
  // set, where the bound below counts 5 and would send the problem to packed, which is slower).
  if (offset >= kCacheLineBytes && rows * offset <= way_bytes) {
    return std::min(rows, (lines * kCacheLineBytes + offset - 1) / offset);
  }
  const std::int64_t step = offset == 0 ? way_bytes : std::gcd(offset, way_bytes);
  if (step < kCacheLineBytes) return (rows * lines + sets - 1) / sets;  // rows drift over all sets
  const std::int64_t places = way_bytes / step;             // where a row can start
  const std::int64_t sets_between = step / kCacheLineBytes;  // from one place to the next
  return (rows + places - 1) / places * ((lines + sets_between - 1) / sets_between);
}

// Where a direct problem on one thread visits its tiles row panel by row panel
// (TileOrder::kRowPanels): where k is short and B's panel and C's column panel, both read in
// place N elements a row apart, crowd L1 sets (more lines in one set than L1 has ways). Column
// panel by column panel, each row tile then finds the B panel evicted by the C rows written
// since, and reads it back from L2 at a stride the prefetchers do not follow; row panel by row
// panel, B and C stream along their rows. With k past kMaxRowPanelsFirstK the order does not
// matter, and where the sets are not crowded row panels lose a little. Two threads splitting the
// columns lose with row panels (both threads write the C lines on their boundary at once), so
// more threads keep column panels. Measurements: docs/analytical-model.md, step 8.
constexpr std::int64_t kMaxRowPanelsFirstK = 32;

bool RowPanelsFirst(const Problem& problem, const CacheBudget& cache, int nr, int kc,
                    std::int64_t elem) {
  const std::int64_t k_block = kc > 0 ? std::min<std::int64_t>(kc, problem.k) : problem.k;
  if (problem.threads != 1 || k_block > kMaxRowPanelsFirstK) return false;
  // B and C are read in place with their minimum leading dimension, N (the row-major view).
  const std::int64_t row_bytes = nr * elem;
  const std::int64_t stride_bytes = problem.n * elem;
  const std::int64_t lines =
      PanelLinesPerSet(cache.l1d, cache.l1_ways, k_block, row_bytes, stride_bytes) +
      PanelLinesPerSet(cache.l1d, cache.l1_ways, problem.m, row_bytes, stride_bytes);
  return lines > cache.l1_ways;
}

}  // namespace

KernelConfig DirectModel(const Problem& problem, const Machine& machine, Tile tile, int kc,
                         std::int64_t elem) {
  KernelConfig c;
  c.isa = tile.isa;
  c.threads = problem.threads;
  c.family = KernelFamily::kDirect;
  c.mr = tile.mr;
  c.nr = tile.nr;
  c.kc = kc;
  // No C prefetch: a direct problem's C is already in cache (A, B and C fit in half of L2), and
  // the prefetch loop runs once per tile, every few dozen k steps, costing more than it saves
  // (docs/analytical-model.md, step 6).
  c.prefetch_c = false;
  // Not unrolled, but for long k loops on two 512-bit pipes (below), and on generic machines.
  // With AVX-512 on one zmm FMA pipe and with AVX2, ku1 runs as fast as ku4 or faster, judged by
  // the fastest of interleaved repetitions: the medians of a busy host mix the kernel's speed
  // with the neighbours' and can favour ku4. Generic kernels keep 4 (not measured off x86). With
  // two 512-bit FMA pipes, k loops of kMinUnrolledTwoPipeK or more are unrolled by 4, where it
  // pays; shorter loops lose with it (the facts' unrolls_long_direct_k). Zen 5 keeps ku1: it runs
  // the direct defaults level or a little faster with it, and B panels that crowd their L2 sets
  // clearly faster. Measurements:
  // docs/analytical-model.md, step 2 (k unroll).
  const std::int64_t k_loop = kc > 0 ? std::min<std::int64_t>(kc, problem.k) : problem.k;
  c.k_unroll = machine.kernel_isa == IsaLevel::kGeneric ||
                       UnrollsKLoop(machine, &CoreFacts::unrolls_long_direct_k, k_loop)
                   ? 4
                   : 1;
  // One thread has no loop to split; jc is the space's canonical choice then.
  c.parallel_loop = problem.threads > 1 && problem.m >= problem.n ? ParallelLoop::kIc
                                                                  : ParallelLoop::kJc;
  c.tile_order = RowPanelsFirst(problem, CacheBudgetOf(machine), tile.nr, kc, elem)
                     ? TileOrder::kRowPanels
                     : TileOrder::kColumnPanels;
  return c;
}

namespace {

// The longest K a direct problem reads in one pass where it does not fit in half of L2: longer
// passes run well behind k blocks, and behind packed (docs/analytical-model.md, step 1).
constexpr std::int64_t kMaxWholeDirectK = 1536;

// The shortest k block worth a pass over C: with shorter blocks direct loses to packed
// (docs/analytical-model.md, step 1).
constexpr std::int64_t kMinDirectKc = 384;
// With vectors narrower than a cache line (AVX2), problems of up to this many rows and K up to
// kMaxWholeDirectK stay direct whatever their size: packing B, which only M rows share, costs
// more than direct's reads of B in place (docs/analytical-model.md, step 1).
constexpr std::int64_t kMaxFewRowsDirect = 16;

// Where the in-place B panel of a direct tile shares too few L2 sets (more than half the ways of
// one set), every row tile streams it from L3 again. That still feeds one zmm FMA per cycle,
// and such panels beat packing there, but not two vector FMA pipes: there a crowded panel runs
// at about half of packed's speed, and at packed's speed once B's rows are padded by one line
// (docs/analytical-model.md, step 1). So on cores with two vector FMA pipes the panel's lines in
// one set are held to half its ways: the return is how far past that a panel of `rows` rows is
// (<= 1: fine), 0 on other cores.
double PanelSetPressure(const Machine& machine, const CacheBudget& cache, std::int64_t rows,
                        int nr, std::int64_t elem, std::int64_t ldb) {
  if (VectorFmasPerCycle(machine, machine.kernel_isa) < 2.0) return 0.0;
  const double lines = static_cast<double>(
      PanelLinesPerSet(cache.l2, cache.l2_ways, rows, nr * elem, ldb * elem));
  return lines / std::max(1.0, std::floor(cache.l2_ways / 2.0));
}

// Whether a direct problem in k blocks may keep a B panel that crowds its L2 sets (more than
// PanelSetPressure allows) rather than shortening the blocks until it fits: on cores whose facts
// say their L3 streams such panels (Zen 5), where M is at most kMaxCrowdedPanelRows. There such panels stream from L3 fast enough, and packing B,
// whose cost only M rows share, costs more; past that many rows packing pays. Longer blocks than
// kMaxCrowdedPanelKc run a little slower, so the blocks stop there. Other two-pipe cores, whose
// L3 does not keep up, still shorten the blocks (PanelSetPressure), and so do the whole-K rules
// here: a crowded panel read whole is not reliably faster than packed. Measurements:
// docs/analytical-model.md, step 1.
constexpr std::int64_t kMaxCrowdedPanelRows = 128;
constexpr std::int64_t kMaxCrowdedPanelKc = 512;

bool StreamsCrowdedPanels(const Machine& machine, const Problem& problem) {
  return TwoZmmPipesAnd(machine, &CoreFacts::l3_streams_crowded_panels) &&
         problem.m <= kMaxCrowdedPanelRows;
}

// The bytes of A a direct problem may read in place (whole, or an m x kc block): all of L2 on
// cores with one zmm FMA pipe and on AVX2 cores; with two 512-bit FMA pipes, 410 KiB (a fifth
// of a 2 MiB L2) or half of L2 where that is less. There the four-vector packed tile
// (FewestLoadsPackedTile) beats direct once A passes about that size, while below it direct
// holds. The bound is in bytes, not a share of L2: a fifth of a 1 MiB L2 is too little and
// sends shapes to packed that run faster direct. Not where the packed tile wastes columns at
// N's edge (more than kMaxPackedColumnWaste of N computed): there direct stays ahead.
// Measurements: docs/analytical-model.md, step 1.
constexpr double kTwoPipeDirectABytes = static_cast<double>(std::int64_t{2} << 20) / 5;
constexpr double kMaxPackedColumnWaste = 1.1;

template <typename T>
double DirectARoom(const Machine& machine, const CacheBudget& cache, std::int64_t n) {
  const IsaLevel isa = machine.kernel_isa;
  const double fma_pipes = VectorFmasPerCycle(machine, isa);
  const double l2 = static_cast<double>(cache.l2);
  if (!TwoZmmPipes(machine)) return l2;
  const Tile packed = FewestLoadsPackedTile(MicroKernels<T>(isa), VectorLanes(isa, sizeof(T)),
                                            fma_pipes, AmpleAccumulators(fma_pipes));
  if (packed.nr == 0) return l2;
  const double computed = static_cast<double>((n + packed.nr - 1) / packed.nr * packed.nr);
  return computed <= kMaxPackedColumnWaste * static_cast<double>(std::max<std::int64_t>(n, 1))
             ? std::min(l2 / 2, kTwoPipeDirectABytes)
             : l2;
}

// Any of three conditions keeps `problem` direct:
//   - A, B and C together fit in half of L2: nothing needs blocking, so packing would only add
//     copies;
//   - the kernels' vectors are a cache line wide (AVX-512), the direct tile's B panel (k x nr,
//     read in place and reused by every row tile of its column panel) fits in a quarter of L2,
//     A (read once per column panel) is no larger than L2, and K <= kMaxWholeDirectK. Both
//     operands are then read from L2, and packing B would cost more than it saves;
//   - AVX-512 again, and K split into blocks of kc >= kMinDirectKc keeps the m x kc block of A
//     and the kc x nr panel of B together in half of L2: the same reuse per block, with C read
//     and written once per block (`kc` set: the largest multiple of 64 that fits). With A and
//     the panel past half of L2 direct runs well behind shorter blocks.
// With AVX-512, direct beats the packed default on the shapes these rules keep, on one thread
// and more; it stops paying as A grows towards 4x L2, or where a panel read whole is larger. The
// AVX2 tiles lose on the direct side of the second rule, though 6x16 reads as much of each B row
// (one line) as the AVX-512 8x16 does; why is not pinned down, so AVX2 machines keep the first
// condition, and a fourth: at most kMaxFewRowsDirect rows and K <= kMaxWholeDirectK, whatever
// the L2 sets (a few row panels read B no more often than packing it would). On cores with two vector FMA pipes each condition also needs the panel's rows
// (K of them, or kc in blocks; B's rows are taken N elements apart) to fit their L2 sets
// (PanelSetPressure): the blocks are shortened until they do. `tile`: DirectTile's.
// Measurements: docs/analytical-model.md, step 1.
template <typename T>
DirectFit FitDirect(const Problem& problem, const Machine& machine, const CacheBudget& cache,
                    Tile tile) {
  const double l2 = static_cast<double>(cache.l2);
  const std::int64_t elem = sizeof(T);
  const double footprint = static_cast<double>(OperandBytes(problem));
  const double whole_panel_sets =
      PanelSetPressure(machine, cache, problem.k, tile.nr, elem, problem.n);
  const DirectFit fits_whole{std::max(footprint / (l2 / 2), whole_panel_sets), 0};
  if (VectorLanes(machine.kernel_isa, sizeof(T)) * elem < kCacheLineBytes) {
    // A few rows, read in one to three row panels: direct reads B in place once per panel,
    // where packing would read and write all of it for every call.
    const bool few_rows = problem.m <= kMaxFewRowsDirect && problem.k <= kMaxWholeDirectK;
    return few_rows ? DirectFit{0.0, 0} : fits_whole;
  }
  const double b_panel = static_cast<double>(problem.k * tile.nr * elem);
  const double a_bytes = static_cast<double>(problem.m * problem.k * elem);
  const double a_room = DirectARoom<T>(machine, cache, problem.n);
  const DirectFit panel_in_l2{
      std::max({b_panel / (l2 / 4), a_bytes / a_room,
                static_cast<double>(problem.k) / static_cast<double>(kMaxWholeDirectK),
                whole_panel_sets}),
      0};
  std::int64_t kc = DirectKcModel(cache, problem.m, tile.nr, elem);
  auto crowded = [&](std::int64_t rows) {
    return PanelSetPressure(machine, cache, rows, tile.nr, elem, problem.n) > 1.0;
  };
  const bool keeps_crowded_panel = crowded(kc) && StreamsCrowdedPanels(machine, problem);
  if (keeps_crowded_panel) {
    kc = std::min(kc, kMaxCrowdedPanelKc);
  } else {
    while (kc > 64 && crowded(kc)) kc -= 64;
  }
  DirectFit best = fits_whole.pressure <= panel_in_l2.pressure ? fits_whole : panel_in_l2;
  // Blocks only where the whole K does not fit: each block re-reads and re-writes C.
  if (best.pressure > 1.0 && kc < problem.k) {
    const double a_block = static_cast<double>(problem.m * kc * elem);
    const DirectFit blocked{std::max(static_cast<double>(kMinDirectKc) /
                                         static_cast<double>(std::max<std::int64_t>(kc, 1)),
                                     a_block / a_room),
                            static_cast<int>(std::min<std::int64_t>(kc, 1 << 16)),
                            keeps_crowded_panel};
    if (blocked.pressure < best.pressure) best = blocked;
  }
  return best;
}

constexpr int kMinBlockedTileVectors = 3;
// A crowded panel (StreamsCrowdedPanels) streams from L3 into every row tile: tiles with more
// rows read it fewer times, and run clearly ahead of wider, shorter tiles that the model ranks
// level with them (docs/analytical-model.md, step 1).
constexpr int kMinCrowdedPanelTileRows = 8;
constexpr double kBlockedWideTileSlack = 1.05;  // model cycles a wide tile may cost over the best

// Small problems on an AVX-512 machine may take an AVX2 tile (which the AVX-512 CPU runs just
// as well) where it covers N exactly and the AVX-512 tile does not: the partial column panel
// computes a whole tile's columns for a few. That pays where two ymm FMAs per cycle match one
// zmm FMA. Where the AVX2 tile needs a partial panel too it loses: AVX2's partial panels are
// padded copies. The model must also find it kLowerIsaTileGain better, so cores with two 512-bit
// FMA pipes keep AVX-512, but where N is one AVX2 vector (see PlanDirect). Measurements:
// docs/analytical-model.md, step 2.
constexpr double kLowerIsaTileGain = 1.1;

}  // namespace

template <typename T>
DirectPlan PlanDirect(const Problem& problem, const Machine& machine) {
  const IsaLevel isa = machine.kernel_isa;
  const CacheBudget cache = CacheBudgetOf(machine);
  const TileChoice model = DirectTile<T>(machine, cache, problem, isa);
  DirectPlan plan{model.tile, FitDirect<T>(problem, machine, cache, model.tile)};
  if (plan.fit.kc > 0) {
    const int min_rows =
        plan.fit.crowded_panel
            ? static_cast<int>(std::clamp<std::int64_t>(problem.m, 1, kMinCrowdedPanelTileRows))
            : 1;
    const TileChoice wide =
        DirectTile<T>(machine, cache, problem, isa, kMinBlockedTileVectors, false, min_rows);
    if (wide.tile.mr > 0 && wide.cycles <= kBlockedWideTileSlack * model.cycles) {
      plan = {wide.tile, FitDirect<T>(problem, machine, cache, wide.tile)};
    }
  }
  if (isa == IsaLevel::kAvx512 && OperandsFitHalfOfL2(problem, cache) &&
      problem.n % model.tile.nr != 0) {
    const TileChoice lower = DirectTile<T>(machine, cache, problem, IsaLevel::kAvx2, 1, true);
    // Where N is one AVX2 vector both tiles issue one FMA a row and k step, and the AVX2 tile's
    // whole panels need no masks (and run the plain kernel): it is taken where the model finds
    // it no slower. Wider N keeps AVX-512 (at N = 24, three ymm FMAs a row against two zmm; see
    // docs/analytical-model.md, step 2).
    const bool one_lower_vector = problem.n == VectorLanes(IsaLevel::kAvx2, sizeof(T));
    const bool lower_wins = one_lower_vector ? model.cycles >= lower.cycles
                                             : model.cycles > kLowerIsaTileGain * lower.cycles;
    if (lower.tile.mr > 0 && lower_wins) {
      plan.tile = lower.tile;  // the fit is the same: the whole problem fits in half of L2
    }
  }
  return plan;
}

template <typename T>
DirectPlan PlanColdDirect(const Problem& problem, const Machine& machine) {
  const DirectPlan plan = PlanDirect<T>(problem, machine);
  const IsaLevel isa = machine.kernel_isa;
  if (plan.fit.pressure > 1.0 || plan.tile.isa != isa) return plan;
  const int lanes = VectorLanes(isa, sizeof(T));
  int widest = 0;
  for (const auto& entry : MicroKernels<T>(isa)) widest = std::max(widest, entry.nr / lanes);
  const std::int64_t spanning = (problem.n + lanes - 1) / lanes;  // vectors of a tile as wide as N
  if (plan.tile.nr / lanes >= spanning || spanning > widest) return plan;
  const CacheBudget cache = CacheBudgetOf(machine);
  const TileChoice model = DirectTile<T>(machine, cache, problem, isa);
  const TileChoice wide = DirectTile<T>(machine, cache, problem, isa, static_cast<int>(spanning));
  if (wide.tile.mr == 0 || wide.cycles > kBlockedWideTileSlack * model.cycles) return plan;
  const DirectPlan cold{wide.tile, FitDirect<T>(problem, machine, cache, wide.tile)};
  return cold.fit.pressure <= 1.0 ? cold : plan;
}

template DirectPlan PlanDirect<float>(const Problem&, const Machine&);
template DirectPlan PlanDirect<double>(const Problem&, const Machine&);
template DirectPlan PlanColdDirect<float>(const Problem&, const Machine&);
template DirectPlan PlanColdDirect<double>(const Problem&, const Machine&);

}  // namespace model
}  // namespace mmtune
