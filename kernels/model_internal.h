// The pieces of the analytical model that its parts share (default_config.cc, the packed
// model in packed_model.cc, the direct model in direct_model.cc): what the core's FMA pipes
// allow, the register tiles of the packed family, and each family's model config.
// docs/analytical-model.md explains the model. Internal to the kernels library.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/default_config.h"
#include "kernels/kernel_config.h"
#include "kernels/microkernel.h"
#include "machine/core_facts.h"
#include "machine/machine.h"
#include "mmtune/types.h"

namespace mmtune::model {

// A register tile: mr rows x nr columns of C.
struct Tile {
  int mr = 0;
  int nr = 0;
  IsaLevel isa = IsaLevel::kGeneric;  // whose registered kernels the tile is (direct tiles)
};

// Vector FMAs the core completes per cycle with `isa`'s vectors: two for 256-bit vectors on
// current x86 cores; for 512-bit ones what the machine's peaks measured, else the core's facts
// table (machine/core_facts.h: one on Zen 4, which runs a zmm FMA as two halves;
// docs/analytical-model.md, step 2).
inline double VectorFmasPerCycle(const Machine& machine, IsaLevel isa) {
  if (isa != IsaLevel::kAvx512) return 2.0;
  return machine.zmm_fmas_per_cycle > 0.0 ? machine.zmm_fmas_per_cycle
                                          : CoreFactsOf(machine.cpu).zmm_fmas_per_cycle;
}

// Bytes of vector operands the core's FMA or dot-product pipes take a cycle with `isa`'s vectors.
inline double DotProductBytesPerCycle(const Machine& machine, IsaLevel isa) {
  return VectorFmasPerCycle(machine, isa) * VectorLanes(isa, 4) * 4;
}

// The most of those bytes a cycle at which vector k loops whose B micro-panel streams from L2,
// on every core at once, keep up with a panel in L1: one zmm pipe's 64 do, two zmm pipes' 128 do
// not (docs/low-precision.md, Kernels).
inline constexpr double kL2FedDotBytesPerCycle = 64.0;

// AVX-512 kernels on a core with two 512-bit FMA pipes.
inline bool TwoZmmPipes(const Machine& machine) {
  return machine.kernel_isa == IsaLevel::kAvx512 &&
         VectorFmasPerCycle(machine, machine.kernel_isa) >= 2.0;
}

// A boolean core fact as the machine's calibration measured it, else as its core family's row
// says (machine/core_facts.h).
inline bool CoreFact(const Machine& machine, bool CoreFacts::*fact) {
  return CoreFactsOf(machine.cpu, machine.measured_facts).*fact;
}

// A core fact that applies only with two zmm FMA pipes.
inline bool TwoZmmPipesAnd(const Machine& machine, bool CoreFacts::*fact) {
  return TwoZmmPipes(machine) && CoreFact(machine, fact);
}

// Whether a k loop of `k_loop` steps (K, or kc in blocks) runs unrolled by 4: only loops of
// kMinUnrolledTwoPipeK or more, on two zmm FMA pipes, where `fact` (the direct or the packed
// family's) says unrolling pays; shorter loops lose with it (docs/analytical-model.md, step 2).
inline constexpr std::int64_t kMinUnrolledTwoPipeK = 256;
inline bool UnrollsKLoop(const Machine& machine, bool CoreFacts::*fact, std::int64_t k_loop) {
  return k_loop >= kMinUnrolledTwoPipeK && TwoZmmPipesAnd(machine, fact);
}

// FMA latency in cycles (current x86 cores), and how many times the accumulators that latency
// needs (kFmaLatency * vector FMAs per cycle) a tile may hold before its FMAs slow down: past
// that, direct and packed tiles run their k loops a few percent behind less crowded ones
// (docs/analytical-model.md, step 2).
inline constexpr double kFmaLatency = 4.0;
inline constexpr double kAmpleAccumulatorsPerChain = 4.0;

// Accumulators beyond which a tile's FMAs slow down on `fma_pipes` pipes: 16 on Zen 4's
// AVX-512 (one zmm FMA per cycle), 32 with two pipes.
inline double AmpleAccumulators(double fma_pipes) {
  return kAmpleAccumulatorsPerChain * fma_pipes * kFmaLatency;
}

// A tile with at least the accumulators the FMA latency needs on `fma_pipes` pipes but fewer
// than twice as many (not roomy) runs its k loop at the FMA latency, throughput and load bounds
// at once, and behind TileCyclesPerK: f32 2x64 on two zmm pipes at 0.6x, 2x32 on Zen 4's one at
// 0.66x, where 1x32, bound by the latency alone, ran at 0.93x (docs/analytical-model.md, step 2).
// Such starved tiles cost kStarvedTileCost more where the model must rank them.
inline constexpr double kRoomyLatencyChains = 2.0;
inline constexpr double kStarvedTileCost = 1.5;
inline bool RoomyTile(int mr, int vectors, double fma_pipes) {
  return mr * vectors >= kRoomyLatencyChains * kFmaLatency * fma_pipes;
}
inline bool StarvedTile(int mr, int vectors, double fma_pipes) {
  return mr * vectors >= kFmaLatency * fma_pipes && !RoomyTile(mr, vectors, fma_pipes);
}

// How a model cost compares with another: costs within floating-point rounding of each other
// are level, so that ties fall to the callers' tie-breaks.
enum class CostOrder { kBelow, kLevel, kAbove };
inline CostOrder CompareCosts(double cost, double other) {
  constexpr double kTie = 1e-9;
  if (cost < other * (1 - kTie)) return CostOrder::kBelow;
  return cost <= other * (1 + kTie) ? CostOrder::kLevel : CostOrder::kAbove;
}

// Cycles per k step of a register tile of `mr` rows and `vectors` vectors of accumulators on
// `fma_pipes` pipes, bound by the slowest of FMA throughput (mr * vectors FMAs), FMA latency
// (each accumulator is one chain of FMAs kFmaLatency cycles apart) and loads (mr broadcasts of
// A and `vectors` vectors of B); tiles with more than AmpleAccumulators pay a few percent on
// their FMAs. The load rate is fitted to the broadcast-heavy tiles, which run slower than two
// loads per cycle would allow. It ranks tiles; it does not predict times
// (docs/analytical-model.md, step 2).
inline double TileCyclesPerK(int mr, int vectors, double fma_pipes) {
  constexpr double kLoadsPerCycle = 1.5;
  constexpr double kCrowdedTileFmaCost = 1.04;
  const int accumulators = mr * vectors;
  const double fma_cost = accumulators > AmpleAccumulators(fma_pipes) ? kCrowdedTileFmaCost : 1.0;
  return std::max({accumulators * fma_cost / fma_pipes, kFmaLatency,
                   (mr + vectors) / kLoadsPerCycle});
}

// The rows `kernel`'s tiles compute for `rows` rows, in its whole tiles' work: its whole tiles,
// and a partial one as a whole tile or, where the packed driver runs it in the kernel of its
// rows (`snug_rows`: an A the call packs; SnugTiles), as that kernel's k-loop cycles are of the
// tile's (TileCyclesPerK, kStarvedTileCost more for a starved one; never more than a whole
// tile).
template <typename Entry>
double ComputedRows(const Entry& kernel, std::int64_t rows, int lanes, double fma_pipes,
                    bool snug_rows) {
  const std::int64_t whole = rows / kernel.mr * kernel.mr;
  if (whole == rows) return static_cast<double>(rows);
  if (!snug_rows) return static_cast<double>(whole + kernel.mr);
  const auto& snug = SnugTilesOf(kernel).For(static_cast<int>(rows - whole), kernel.nr);
  const int vectors = std::max(1, kernel.nr / lanes);
  const double starved = StarvedTile(snug.mr, vectors, fma_pipes) ? kStarvedTileCost : 1.0;
  const double share = starved * TileCyclesPerK(snug.mr, vectors, fma_pipes) /
                       TileCyclesPerK(kernel.mr, vectors, fma_pipes);
  return static_cast<double>(whole) + kernel.mr * std::min(1.0, share);
}

// Whether a registry entry is an AMX tile kernel, which the vector register models do not cover.
template <typename Entry>
constexpr bool IsTileKernel(const Entry& entry) {
  if constexpr (requires { entry.tiles; }) {
    return entry.tiles;
  } else {
    return false;
  }
}

// Whether a registry entry's tile fits the vector registers: low-precision entries say
// (LowpMicroKernelEntry::fits_registers); the f32 and f64 lists hold only tiles that fit.
template <typename Entry>
constexpr bool FitsRegisters(const Entry& entry) {
  if constexpr (requires { entry.fits_registers; }) {
    return entry.fits_registers;
  } else {
    return true;
  }
}

// Whether a registry entry may serve as the packed model's vector tile: registered with k
// unroll 1 (the unroll PackedConfig sets), not an AMX tile, and within the registers.
template <typename Entry>
constexpr bool IsPackedVectorCandidate(const Entry& entry) {
  return entry.k_unroll == 1 && !IsTileKernel(entry) && FitsRegisters(entry);
}

// The packed register tile: the two-vector-wide tile with the most rows whose accumulators are
// no more than AmpleAccumulators and which fits the registers (6x16 on AVX2, 4x16 for AVX2's
// widening bf16 kernels, 8x32 f32 and 8x16 f64 on Zen 4; cores with two 512-bit FMA pipes take
// FewestLoadsPackedTile's). Two B vectors per k keep the load ports light
// while enough independent accumulators cover the FMA latency; more rows amortize each B load
// over more FMAs, until the tile crowds the FMA pipes.
// `kernels` is a registry table (f32/f64 or low-precision entries), `lanes` the accumulator
// lanes of a vector.
template <typename KernelTable>
Tile PackedTile(const KernelTable& kernels, int lanes, double fma_pipes) {
  Tile best;
  for (const auto& entry : kernels) {
    if (entry.nr != 2 * lanes || !IsPackedVectorCandidate(entry)) continue;
    if (2 * entry.mr > AmpleAccumulators(fma_pipes)) continue;
    if (entry.mr > best.mr) best = {entry.mr, entry.nr};
  }
  return best;
}

// The packed tile on a core with two 512-bit FMA pipes: of the tiles with the accumulators the
// FMA latency needs and no more than `most_accumulators`, the one with the fewest loads per FMA,
// (mr broadcasts of A + nv vectors of B) / (mr * nv FMAs). Two FMAs a cycle need twice the
// loads of one, and the wider B panel also halves PackB's per-panel work. f32 and f64 allow
// AmpleAccumulators, which gives 6x64 f32 and 6x32 f64: these run ahead of the 14-row
// two-vector tiles, most where N is wide, and the three-vector tiles (8x48, 8x24) about level
// with them (docs/analytical-model.md, step 2).
template <typename KernelTable>
Tile FewestLoadsPackedTile(const KernelTable& kernels, int lanes, double fma_pipes,
                           double most_accumulators) {
  Tile best;
  double best_loads_per_fma = 0.0;
  for (const auto& entry : kernels) {
    const int nv = entry.nr / lanes;
    const int accumulators = entry.mr * nv;
    if (!IsPackedVectorCandidate(entry) || accumulators < kFmaLatency * fma_pipes ||
        accumulators > most_accumulators) {
      continue;
    }
    const double loads_per_fma = static_cast<double>(entry.mr + nv) / accumulators;
    if (best.mr == 0 || loads_per_fma < best_loads_per_fma) {
      best = {entry.mr, entry.nr};
      best_loads_per_fma = loads_per_fma;
    }
  }
  return best;
}

// The most accumulators a packed vector tile at `isa` holds where the machine's AVX-512 runs on
// two zmm pipes: twice what the latency needs for the dot products of bf16 and s8, else
// AmpleAccumulators.
inline double MostPackedAccumulators(const Machine& machine, IsaLevel isa, bool dot_products) {
  const double fma_pipes = VectorFmasPerCycle(machine, isa);
  const bool fewer = dot_products && isa == machine.kernel_isa && TwoZmmPipes(machine);
  return fewer ? 2 * kFmaLatency * fma_pipes : AmpleAccumulators(fma_pipes);
}

// The packed vector tile of `kernels` (a registry table at `isa`, accumulators of `lanes`
// lanes): FewestLoadsPackedTile's where `isa` is the machine's AVX-512 on two zmm FMA pipes,
// PackedTile's elsewhere. The dot products of bf16 and s8 (`dot_products`) take at most twice
// the accumulators their latency needs there, 4x64: the 24-accumulator 6x64 ran behind it on
// small and medium shapes (docs/low-precision.md).
template <typename KernelTable>
Tile PackedVectorTile(const KernelTable& kernels, const Machine& machine, IsaLevel isa, int lanes,
                      bool dot_products) {
  const double fma_pipes = VectorFmasPerCycle(machine, isa);
  if (isa != machine.kernel_isa || !TwoZmmPipes(machine)) {
    return PackedTile(kernels, lanes, fma_pipes);
  }
  return FewestLoadsPackedTile(kernels, lanes, fma_pipes,
                               MostPackedAccumulators(machine, isa, dot_products));
}

// The packed model's cache blocks for the tile of `c` (its isa, mr and nr, and for the bf16 and
// s8 vector kernels its loop and whether it reads A in place) on `problem` (row-major view), by
// element type; weights' blocks where `problem.form` is CallForm::kPackedB (B's panels packed
// once).
void SetPackedBlocks(const Machine& machine, const Problem& problem, KernelConfig& c);

// Which loop threads split in the packed family (packed_model.cc has the rule), for every GEMM
// type.
ParallelLoop PackedParallelLoop(const Problem& problem, int mr);

// The packed config of `tile` at `isa` on `problem` (row-major view): no k unroll (PackedModel
// adds it for f32 and f64 where it pays), C prefetched, the model's cache blocks (SetPackedBlocks),
// threads splitting `loop`.
KernelConfig PackedConfig(const Problem& problem, const Machine& machine, IsaLevel isa, Tile tile,
                          ParallelLoop loop);

// The model config of the packed 5-loop family (f32 or f64): blocks sized for L1, L2 and the
// L3 share.
template <typename T>
KernelConfig PackedModel(const Problem& problem, const Machine& machine);

// PackedModel's config for B packed once (weights): on the vector tile as fast per element as
// PackedModel's that computes the fewest padded rows and columns of `problem` (its B panels'
// packing, slower for narrower panels, is paid once). `problem` is the row-major view; its form
// is kPackedB where the weights are its B, and its A, packed in each call, runs a partial row
// panel in the kernel of its rows (ComputedRows).
template <typename T>
KernelConfig PackedWeightsModel(const Problem& problem, const Machine& machine);

// How far `problem` is past what the direct family handles well, as a multiple of its limit
// (`pressure` <= 1: direct), and the k block it runs with there (`kc`, 0 = the whole K).
struct DirectFit {
  double pressure = 0.0;
  int kc = 0;
  bool crowded_panel = false;  // the k block's B panel crowds its L2 sets (StreamsCrowdedPanels)
};

// The direct family's tile and fit for `problem`. Where K must be split into blocks, both
// operands stream from L2 on every tile, and tiles three or more vectors wide run fastest where
// N is wide. Where the wide tile wastes columns at the right edge the model's tile stays (4x64
// computes 128 columns for N = 100). Measurements: docs/analytical-model.md, step 1.
struct DirectPlan {
  Tile tile;
  DirectFit fit;
};

template <typename T>
DirectPlan PlanDirect(const Problem& problem, const Machine& machine);

// PlanDirect for a problem whose operands arrive from beyond L2, each line read once (an item
// of a batch that spills L2): where the plan is direct, a tile as wide as N where the model
// ranks one within the slack PlanDirect gives wide tiles. Such a tile reads B once and walks down
// A once, a few rows at a time, in an order the prefetchers follow from L3; a narrower one walks
// down A once per column panel, more rows at once; wider tiles that fall short of N gained
// nothing or lost (docs/analytical-model.md, Batches).
template <typename T>
DirectPlan PlanColdDirect(const Problem& problem, const Machine& machine);

// The model config of the direct (unpacked) family with `tile` (DirectTile's choice) and k
// blocks of `kc` (0: the whole K at once; FitDirect's choice), for `elem`-byte elements.
KernelConfig DirectModel(const Problem& problem, const Machine& machine, Tile tile, int kc,
                         std::int64_t elem);

}  // namespace mmtune::model
