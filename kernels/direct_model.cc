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
// and up from a second pointer (microkernel_impl.h), because from one pointer GCC 12 kept the
// offsets of taller tiles on the stack and reloaded them in the k loop. 16 rows is two such
// halves; taller tiles still spill. A transposed A is read along its rows (a[p * lda + i]), one
// address per k step, so any height goes there.
constexpr int kRowsPerAPointer = 8;
constexpr int kMaxInPlaceRowsOfA = 2 * kRowsPerAPointer;

// Whether a tile of `mr` rows of A read in place by rows (more than kRowsPerAPointer) suits
// `problem`. Each k step reads one element of every row, from lines lda * elem bytes apart;
// where that stride is a multiple of a large power of two, the rows share few L1 sets and evict
// each other before their lines are used up: on Zen 4 (8 ways), f32 128x768x3072 in k blocks ran
// 16x16 at 0.5x of 8x48 (lda = 3072: all 16 rows in one set). Taken where no set holds more
// than half its ways of those rows. And only where M is two or more whole row panels, unless
// half the tile's accumulators would leave the FMA pipes no slack, no more than the latency
// needs (`one_panel_suffices`, DirectTile's call): on Zen 4 (one zmm FMA a cycle, 4
// accumulators needed) one 16x16 tile at 16^3 ran at 0.95 of two 8x16 tiles (through
// GemmPlan::Run, interleaved), though the bare kernel calls were level; on Zen 5 (two pipes, 8
// needed, as many as 8x16 has) it ran 1.13-1.16x (three runs, interleaved, fastest of 9), and
// one 10x32 (20 accumulators) ran 10x20x20 1.11-1.14x faster than a 6x32 and a 4x32, so Zen 5
// takes any. A partial row panel runs the edge kernel, which addresses its rows through a table
// (33x4096x17: 12x32 at 0.90 of 6x64).
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
// of the snug kernel that runs it (SnugTiles: 24^3 f32 on Zen 3, 6x16, whose 8-column edge
// tiles then computed 16 columns, ran at 26 GFLOP/s; 3x24 and 4x24, which fit, at 63). Costing
// those tiles as their snug kernels rather than as whole tiles moved Zen 5 to wider tiles
// (f32 20^3 8x32 for 4x32 1.16-1.33x, 64x100x64 6x64 for 8x32 1.07x; f64 20^3 8x24 for 4x24
// 1.16x, 100^3 8x24 for 6x16 1.09x; f64 32^3 6x32 for 8x16 0.93x, the one loss past 3%, f32
// and f64 on 36^3..256^3 0.97-1.02x; 1 thread, interleaved). Per k step a tile is bound by the
// slowest of
//   - FMA throughput: mr * nv FMAs on `fma_pipes` (VectorFmasPerCycle for `isa`);
//   - FMA latency: each accumulator is one chain of k FMAs, kFmaLatency cycles apart, so fewer than
//     fma_pipes * kFmaLatency accumulators leave the pipes idle;
//   - loads: mr broadcasts of A and nv vectors of B, kLoadsPerCycle at a time;
// and each tile call adds kTileCallCycles (call, zeroing, the C update: the whole loop's pipeline
// fill and drain), which favours fewer, larger tiles when k is short. Tiles with more than
// AmpleAccumulators pay kCrowdedTileFmaCost on their FMAs (Zen 4: 8x48 and 12x32 at 0.96-0.97
// of 8x16, 16x16, 4x48 and 8x32). The load rate is fitted to the broadcast-heavy tiles, which
// ran slower than two loads per cycle would allow (Zen 3, in-L1 kernel loop: 8x8 and 12x8 at
// 0.77 and 0.71 of 6x16, where 1.5 loads per cycle predicts 0.67 and 0.69). Tiles that
// TallInPlaceTileFits rejects are left out where A is read by rows, tiles narrower than
// `min_vectors` vectors or `min_rows` rows always, and with `whole_panels_only` tiles that do not
// divide N. The model ranks tiles; it does not predict times. On Zen 4 (one zmm FMA per cycle)
// it picked 8x16 for 16^3, 100^3, 200^3 and 127x257x509, 16x16 for 32^3..256^3, 80x300x120,
// 128x768x768 and 128x3072x768, 8x32 for 512^3 (docs/analytical-model.md has the measured
// ratios) while partial tiles cost a whole tile; at 24^3 PlanDirect takes an AVX2 tile. With
// snug partial tiles it takes 4x64 for 100^3 (not measured on Zen 4: the 4x64 that ran 0.90x of
// 8x16 there computed 128 columns for 100, 8x16 and now 4x64 compute 112).
struct TileChoice {
  Tile tile;
  double cycles = 0.0;  // the model's estimate for the whole problem
};

template <typename T>
TileChoice DirectTile(const Machine& machine, const CacheBudget& cache, const Problem& problem,
                      IsaLevel isa, int min_vectors = 1, bool whole_panels_only = false,
                      int min_rows = 1) {
  const double fma_pipes = VectorFmasPerCycle(machine, isa);
  constexpr double kLoadsPerCycle = 1.5;
  constexpr double kTileCallCycles = 40.0;
  constexpr double kCrowdedTileFmaCost = 1.04;
  const double ample_accumulators = AmpleAccumulators(fma_pipes);
  const int lanes = VectorLanes(isa, sizeof(T));
  const bool a_by_rows = problem.trans_a == Trans::kNo;
  const double k = static_cast<double>(std::max<std::int64_t>(problem.k, 1));
  // Zen 5 takes a tall tile over a single row panel whatever its accumulators: every such tile
  // measured there beat two shorter ones (see TallInPlaceTileFits).
  const bool any_tile_over_one_panel = isa == IsaLevel::kAvx512 && IsZen5(machine);
  TileChoice best;
  for (const auto& entry : MicroKernels<T>(isa)) {
    const int nv = entry.nr / lanes;
    if (entry.k_unroll != 1 || nv < min_vectors || entry.mr < min_rows) continue;
    if (whole_panels_only && problem.n % entry.nr != 0) continue;
    const int accumulators = entry.mr * nv;
    const bool one_panel_suffices =
        any_tile_over_one_panel || accumulators / 2 <= kFmaLatency * fma_pipes;
    if (a_by_rows &&
        !TallInPlaceTileFits(problem, cache, entry.mr, sizeof(T), one_panel_suffices)) {
      continue;
    }
    // One call of `tile` (the entry or a snug kernel of its partial tiles).
    auto call_cycles = [&](const MicroKernelEntry<T>& tile) {
      const int vectors = tile.nr / lanes;
      const int tile_accumulators = tile.mr * vectors;
      const double fma_cost =
          tile_accumulators > ample_accumulators ? kCrowdedTileFmaCost : 1.0;
      const double per_k = std::max({tile_accumulators * fma_cost / fma_pipes, kFmaLatency,
                                     (tile.mr + vectors) / kLoadsPerCycle});
      return k * per_k + kTileCallCycles;
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
  // only the rows whose spans reach it (f64 56^3: 448-byte rows, 5 lines each, one row a set;
  // the bound below counted 5, sent a 6x32 tile's problem to packed, and packed ran it at 0.74x).
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
// panel, B and C stream along their rows. Zen 5 (48 KiB 12-way L1), 6x64 f32, 1 thread,
// interleaved, fastest of 9, row panels against column panels: 33x4096x17 1.11-1.32x, 33x3072x17
// 1.23x, 33x2048x17 1.23x, 16x4096x16 1.17x, 33x1024x17 1.06x, 33x512x17 1.05x, 128x1024x16
// 1.02-1.06x, 256x1024x16 1.06x, 64x2048x32 1.06x; f64 6x32 33x2048x17 1.37x, 33x1024x17 1.20x,
// 64x1024x32 1.07x. With longer k the order did not matter (64x512x64 1.00x, 96x1024x96 1.01x,
// 96x512x96 0.98x), and where the sets are not crowded row panels lost a little (33x4000x17
// 0.97x). Two threads splitting the columns lost with row panels (128x1024x16 0.78-0.80x: both
// threads write the C lines on their boundary at once), so more threads keep column panels.
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
  // the prefetch loop runs once per tile, every few dozen k steps (Zen 3, 8^3..100^3, 4 tiles
  // each, interleaved: 1-6% faster without it in 23 of 24 pairs).
  c.prefetch_c = false;
  // Not unrolled, but for long k loops on two 512-bit pipes (below), and on generic machines.
  // AVX-512 on Zen 4, interleaved: ku1 was 1-10% faster than ku4 with the same tile in 21 of 24
  // pairs and within 3% in the others (8x16, 8x32 and 8x48 f32 on 16^3..512^3, 128x768x768,
  // 127x257x509, 128x3072x768), every direct winner of a search on 64^3..200^3 was ku1, and its
  // AVX2 tiles ran ku1 1-7% faster too (8x8 on 8^3..56^3). AVX2 on Zen 3 (gemm_bench
  // --mmtune_configs, the fastest of 9 interleaved repetitions, which the host's load moves
  // least): ku1 was faster in 29 of 32 f32 pairs (6x16, 4x16, 4x24, 5x16 on 16^3..128^3,
  // 100^3, 80x300x120; 2-16%, 48^3 4x24 1.20x) and in all 15 f64 pairs (6x8, 4x8, 4x12 on
  // 16^3..100^3; 2-17%); long loops were level or mixed (32x32x512, 16x64x768, 8x32x1024,
  // 64x64x256). An earlier Zen 3 session had taken ku4, which won 2-24% while its host was
  // busy; medians of a loaded host say little about the kernel. Generic kernels keep 4 (not
  // measured off x86). With two 512-bit FMA pipes, k loops of 256 or more are unrolled by 4:
  // on the Xeon, interleaved, ku4 against ku1 with the default tile ran 16x768x768 1.16x,
  // 64x768x768 1.14x, 128x768x768 1.13x, 64x64x256 1.12x, 127x257x509 1.01x, 256^3 1.00-1.05x;
  // shorter loops lost (48^3 0.95x, 64^3 0.97x, 96^3 0.97x, 128x128x64 0.97x, 33x4096x17 0.94x)
  // or were mixed (128^3 1.07x, 200^3 1.00x). Zen 5 keeps ku1: against ku4 with the same tile
  // and blocks (f32, 1 thread, interleaved, fastest of 9) it ran the direct defaults level or a
  // little faster (128x768x3072, 128x768x768, 192x768x768, 256x768x768, 127x257x509, 256^3,
  // 64x64x256: 0.98-1.03x; 100x100x2000 1.05x), and B panels that crowd their L2 sets (8x48 in
  // k blocks of 256-384, N = 1024..4096, M = 64..512) 1.14-1.34x faster.
  constexpr std::int64_t kMinUnrolledTwoPipeK = 256;
  const std::int64_t k_loop = kc > 0 ? std::min<std::int64_t>(kc, problem.k) : problem.k;
  c.k_unroll = machine.kernel_isa == IsaLevel::kGeneric ||
                       (TwoZmmPipes(machine) && !IsZen5(machine) &&
                        k_loop >= kMinUnrolledTwoPipeK)
                   ? 4
                   : 1;
  // One thread has no loop to split; jc is the space's canonical choice then.
  c.parallel_loop = problem.threads > 1 && problem.m >= problem.n ? ParallelLoop::kIc
                                                                  : ParallelLoop::kJc;
  c.tile_order = RowPanelsFirst(problem, CacheBudgetOf(machine.topology), tile.nr, kc, elem)
                     ? TileOrder::kRowPanels
                     : TileOrder::kColumnPanels;
  return c;
}

namespace {

// The longest K a direct problem reads in one pass where it does not fit in half of L2. At
// K = 2048 a whole pass ran at 0.6x of blocks of 384-704 (f32 128x2048x2048 and 64x2048x2048,
// f64 64x2048x2048; there it also lost to packed) and 0.95x at 128x1024x2048; at K = 1536
// (128x768x1536) it was 1.03x.
constexpr std::int64_t kMaxWholeDirectK = 1536;

// The shortest k block worth a pass over C: with kc = 256 (f32, M = 512: 512x512x2048,
// 512x4096x4096, 1024^3) direct lost to packed by 3-12%.
constexpr std::int64_t kMinDirectKc = 384;

// Where the in-place B panel of a direct tile shares too few L2 sets (more than half the ways of
// one set), every row tile streams it from L3 again. Zen 4 (one zmm FMA per cycle) still ran
// such panels faster than packing (128x3072x768, rows 12 KiB apart: direct 1.2-1.35x), but a
// Xeon with two zmm FMA pipes and an L2 of 2 MiB ran them at half of packed's speed and at
// packed's speed once B's rows were padded by one line (f32, 1 thread: 128x3072x768 direct 8x48
// 70 GFLOP/s, rows padded 149, packed 138-150; 512x4096x4096 kc448 68 against 160-175;
// 128x768x3072 in blocks of 1472 rows, 11.5 lines a set, 103 against blocks of 640 rows 143).
// So on cores with two vector FMA pipes the panel's lines in one set are held to half its ways:
// the return is how far past that a panel of `rows` rows is (<= 1: fine), 0 on other cores.
double PanelSetPressure(const Machine& machine, const CacheBudget& cache, std::int64_t rows,
                        int nr, std::int64_t elem, std::int64_t ldb) {
  if (VectorFmasPerCycle(machine, machine.kernel_isa) < 2.0) return 0.0;
  const double lines = static_cast<double>(
      PanelLinesPerSet(cache.l2, cache.l2_ways, rows, nr * elem, ldb * elem));
  return lines / std::max(1.0, std::floor(cache.l2_ways / 2.0));
}

// Whether a direct problem in k blocks may keep a B panel that crowds its L2 sets (more than
// PanelSetPressure allows) rather than shortening the blocks until it fits: on Zen 5, where M
// is at most kMaxCrowdedPanelRows. There such panels stream from L3 fast enough, and packing B,
// whose cost only M rows share, costs more. Zen 5, f32, 1 thread, interleaved, 8x48 ku1 in k
// blocks of 256 or 512 against the packed default (which the set rule had chosen, its blocks
// cut to 128 rows): 32x4096x4096 1.4x, 64x4096x4096 1.16-1.22x, 64x3072x768 1.19-1.23x,
// 96x3072x768 1.13-1.22x, 128x3072x3072 1.11-1.22x, 128x3072x768 1.08-1.11x, 128x4096x4096
// 1.07-1.15x, 128x2048x2048 0.97-1.04x; past 128 rows packing paid: 160x3072x768 0.93-0.98x,
// 200x3072x768 1.03-1.06x, 256x3072x768 0.91-0.96x, 256x1024x4096 0.92x, 512x4096x4096 0.88x.
// Blocks of 704 rows (DirectKcModel at M = 128) ran 0.95-0.98x of 512, so the blocks stop there
// (kMaxCrowdedPanelKc); 256 and 512 were level. The Xeon's slower L3 did not keep up
// (PanelSetPressure), nor do long blocks here: the whole K of 128x3072x768 ran 0.96-1.08x of
// packed, so the whole-K rules still check the sets.
constexpr std::int64_t kMaxCrowdedPanelRows = 128;
constexpr std::int64_t kMaxCrowdedPanelKc = 512;

bool StreamsCrowdedPanels(const Machine& machine, const Problem& problem) {
  return IsZen5(machine) && problem.m <= kMaxCrowdedPanelRows;
}

// The bytes of A a direct problem may read in place (whole, or an m x kc block): all of L2 on
// Zen 4 and AVX2 cores; with two 512-bit FMA pipes, 410 KiB (a fifth of the Xeon's 2 MiB L2)
// or half of L2 where that is less. There the four-vector packed tile (FewestLoadsPackedTile)
// beat direct wherever A reached a quarter of the Xeon's L2 (f32, 1 thread, interleaved, packed
// against the direct default: 512^3 1.22x, 512x512x256 1.20x, 256x512x512 1.18x, 320x512x512
// 1.17x, 256x512x384 1.14x, 512x256x512 1.11x, 448^3 1.05x, 384^3 1.02x, 256x384x512 1.00x,
// 128x768x3072 in k blocks of 1024 rows 1.04x), while below it direct held or lost little
// (128^3 0.90x, 127x257x509 0.85x, 64x768x768 0.95x, 128x768x768 1.02x, 128x512x512 and
// 192x512x512 1.06x); f64 256^3 1.15x, 128x768x768 1.08x. The bound is in bytes, not a share:
// on Zen 5 (1 MiB L2, two zmm FMA pipes) a fifth of L2 (205 KiB) sent 128x768x768 (A 384 KiB)
// and 256^3 to packed, and direct ran faster there (f32, 1 thread, interleaved, fastest of 9,
// this rule's direct default against the packed one: 128x768x768 1.11x, 256^3 1.09x,
// 128x768x3072 1.06x, 192x768x768 1.04x, 256x768x768 1.03x, the last three in k blocks of
// 384-512). Read whole, A of 576 KiB and more lost there (192x768x768 level, 256x768x768
// 0.94-0.97x); 128x3072x768 read whole ran 0.96-1.08x (in k blocks: StreamsCrowdedPanels).
// Not where the packed tile wastes columns at N's edge: at 127x257x509 (f64 A 517 KiB) 6x32
// computes 288 columns for 257 and ran at 0.85x of direct 8x24.
constexpr double kTwoPipeDirectABytes = static_cast<double>(std::int64_t{2} << 20) / 5;
constexpr double kMaxPackedColumnWaste = 1.1;

template <typename T>
double DirectARoom(const Machine& machine, const CacheBudget& cache, std::int64_t n) {
  const IsaLevel isa = machine.kernel_isa;
  const double fma_pipes = VectorFmasPerCycle(machine, isa);
  const double l2 = static_cast<double>(cache.l2);
  if (!TwoZmmPipes(machine)) return l2;
  const Tile packed = FewestLoadsPackedTile(MicroKernels<T>(isa), VectorLanes(isa, sizeof(T)),
                                            fma_pipes);
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
//     the panel at 5/8 of L2 (f64 128x4096x4096, 4x32, kc = 512) direct ran 0.7x of kc = 256.
// Zen 4 (L2 1 MiB), AVX-512, 1 thread, interleaved against the packed default: f32 direct
// 1.2-1.35x on 128x768x768, 128x3072x768 and 256^3, 1.04-1.10x on 512^3, and with the
// one-vector 8x16 tile 1.35x on 127x257x509, 1.45x on 200x200x1000, 1.5x on 100x100x2000, 1.17x
// on 300^3; f64 1.42x on 128x768x768, 1.13x on 256^3, level on 512^3. With A at 4x L2 or more
// direct stopped paying (1000^3 1.05x, 1024^3 0.86-1.0x, 1536^3 0.97x, 2048^3 0.5-0.7x), and
// packed was far ahead where the panel is larger (256x1024x4096, 512x4096x4096: 0.5-0.8 MiB)
// when read whole. In k blocks of 512 (8x48 tile) direct won there too up to M = 256: f32
// 128x768x3072 1.15-1.19x, 128x4096x4096 1.22x, 128x11008x4096 1.27x, 256x768x3072 1.11x,
// 256x3072x1536 1.16x, 200x2048x2048 1.12x, 256x1024x4096 1.03x; f64 128x768x3072 1.16x.
// The AVX2 tiles on the same machine lost on the direct side of the second rule (6x16 f32: 0.9x
// at 512^3), though 6x16 reads as much of each B row (one line) as 8x16 does; why was not
// pinned down, so AVX2 machines keep the first condition only. With 2 threads the direct side
// of the boundary gained more (f32 128x768x768 1.4x, 256^3 1.9x). On cores with two vector FMA
// pipes each condition also needs the panel's rows (K of them, or kc in blocks; B's rows are
// taken N elements apart) to fit their L2 sets (PanelSetPressure): the blocks are shortened
// until they do. `tile`: DirectTile's.
template <typename T>
DirectFit FitDirect(const Problem& problem, const Machine& machine, const CacheBudget& cache,
                    Tile tile) {
  const double l2 = static_cast<double>(cache.l2);
  const std::int64_t elem = sizeof(T);
  const double footprint = static_cast<double>(OperandBytes(problem));
  const double whole_panel_sets =
      PanelSetPressure(machine, cache, problem.k, tile.nr, elem, problem.n);
  const DirectFit fits_whole{std::max(footprint / (l2 / 2), whole_panel_sets), 0};
  if (VectorLanes(machine.kernel_isa, sizeof(T)) * elem < kCacheLineBytes) return fits_whole;
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
// rows read it fewer times. Zen 5, f32, 1 thread, k blocks of 512, interleaved: 8x48 against
// the 4x64 that the model ranks level with it (0.4% apart) ran 128x4096x4096 1.25x, 64x4096x4096
// 1.21x, 32x4096x4096 1.15x.
constexpr int kMinCrowdedPanelTileRows = 8;
constexpr double kBlockedWideTileSlack = 1.05;  // model cycles a wide tile may cost over the best

// Small problems on an AVX-512 machine may take an AVX2 tile (which the AVX-512 CPU runs just
// as well) where it covers N exactly and the AVX-512 tile does not: the partial column panel
// computes a whole tile's columns for a few. On Zen 4, where two ymm FMAs per cycle match one
// zmm FMA, f32: 8^3 AVX2 8x8 ran 1.95x AVX-512 8x16, 24^3 AVX2 4x24 1.7x AVX-512 8x32
// (libxsmm: 40 and 79 GFLOP/s against 21 and 89); after AVX-512 partial panels were read in
// place (masked) instead of from a padded copy, still 1.26x and 1.39x (16x8x16 1.45x,
// 8x24x100 1.35x, 48x24x64 1.33x). Where the AVX2 tile needs a partial panel too it lost
// (12^3 6x16: 0.78x, 20^3 4x24: 0.93x): AVX2's partial panels are padded copies. The model
// must also find it kLowerIsaTileGain better, so cores with two 512-bit FMA pipes keep AVX-512,
// but where N is one AVX2 vector (see PlanDirect).
constexpr double kLowerIsaTileGain = 1.1;

}  // namespace

template <typename T>
DirectPlan PlanDirect(const Problem& problem, const Machine& machine) {
  const IsaLevel isa = machine.kernel_isa;
  const CacheBudget cache = CacheBudgetOf(machine.topology);
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
    // it no slower. Zen 5, f32, 1 thread, interleaved, against the AVX-512 default: 8^3 (8x8)
    // 1.11-1.22x, 12x8x12 1.09x, 20x8x20 1.11x, 24x8x24 1.09x, 8x8x64 1.12x, 100x8x100 1.13x;
    // f64 8x4x8 1.11x, 12x4x12 1.13x, 4^3 1.17x. Wider N keeps AVX-512 there (24^3 4x24 0.74x,
    // 8x24x100 0.72x, 48x24x64 0.69x: three ymm FMAs a row against two zmm).
    const bool one_lower_vector = problem.n == VectorLanes(IsaLevel::kAvx2, sizeof(T));
    const bool lower_wins = one_lower_vector ? model.cycles >= lower.cycles
                                             : model.cycles > kLowerIsaTileGain * lower.cycles;
    if (lower.tile.mr > 0 && lower_wins) {
      plan.tile = lower.tile;  // the fit is the same: the whole problem fits in half of L2
    }
  }
  return plan;
}

template DirectPlan PlanDirect<float>(const Problem&, const Machine&);
template DirectPlan PlanDirect<double>(const Problem&, const Machine&);

}  // namespace model
}  // namespace mmtune
