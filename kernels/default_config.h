// The analytical default: a kernel configuration derived from the cache hierarchy and the ISA
// without measuring anything, in the spirit of BLIS's "analytical modeling is enough". It is what
// the runtime uses for untuned shapes and where the search starts. docs/analytical-model.md
// explains the model.
#pragma once

#include <vector>

#include "kernels/kernel_config.h"
#include "machine/machine.h"
#include "mmtune/types.h"

namespace mmtune {

// The analytical model's config for `problem` on exactly `problem.threads` threads (what runs
// untuned is UntunedConfig, which first picks the thread count). Always valid for `problem` on
// `machine` (KernelConfig::Validate passes), for any shape. A problem called with B packed
// beforehand (CallForm::kPackedB) gets PackedWeightsConfig, a batch (Problem::batch > 1)
// BatchDefault.
KernelConfig ModelConfig(const Problem& problem, const Machine& machine);

// What Runtime::GemmBatch runs a batch of `batch.batch` GEMMs with when nothing is tuned for it:
// with at least as many items as threads, a team of `batch.threads` whose members run whole
// items alone, each with one item's 1-thread default (SpilledItemsConfig where the batch spills
// L2); with fewer items, one item's UntunedConfig on the batch's threads, item after item
// (GemmPlan::RunBatch).
KernelConfig BatchDefault(const Problem& batch, const Machine& machine);

// Other model configs worth one measurement each when the search starts: where the default sits
// near the boundary between the direct and packed families (operands within 4x of half of L2),
// the other family's model config. Empty elsewhere. Each is valid for `problem` on `machine`.
std::vector<KernelConfig> AnalyticalAlternatives(const Problem& problem, const Machine& machine);

// How many threads pay off for `problem` when up to `max_threads` may run it: one per
// kMinFlopsPerThread of work, so that the fork-join (a few hundred ns on the pool's spinning
// workers) stays a small share of each thread's time, and small shapes run on the caller's
// thread alone, while mid-sized ones already gain from a second thread. At least 1. The
// measurements: docs/runtime.md, Threads.
inline constexpr double kMinFlopsPerThread = 256e3;
int DefaultThreadCount(const Problem& problem, int max_threads);

// What the runtime runs `problem` with when nothing is tuned for it: the analytical default on
// DefaultThreadCount of the problem's threads (a 16^3 with two to spend runs on one). The tuner
// starts from it, and the benchmarks' default series run it.
KernelConfig UntunedConfig(const Problem& problem, const Machine& machine);

// The packed alternative for a GEMM whose operands arrive from beyond L2, as an item of a batch
// that spills it does: where ModelConfig reads A and B in place with the direct family (whose
// premise is that they sit in L2 and are read many times from there), the packed family's model
// config, which reads each once in streaming order into blocks that stay in L1 and L2. Which of
// the two is faster depends on the core (docs/analytical-model.md, Batches). bf16 and s8 on AMX
// tile kernels: the model's config for C arriving from beyond L2 (each tile prefetches the next
// one's C, on the shorter tile of kAmxColdCTile: docs/low-precision.md). ModelConfig elsewhere.
KernelConfig ColdOperandsConfig(const Problem& problem, const Machine& machine);

// The config weights packed in advance (Runtime::PackB) run with where ModelConfig reads a
// row-major B as stored with the gemv family (M = 1, B a matrix): the packed family's model
// config. Its panels hold B in the k-grouped order the dot-product instructions take, which B
// as stored is not, and one-row calls run the packed kernel of one row over them
// (docs/runtime.md, Packed weights, has the measurements). Its row blocks are a tall problem's,
// for the larger calls the same weights may serve. Where ModelConfig reads B in place with the
// direct family and the weights take more than half of L2, ColdOperandsConfig: the direct
// family's premise, B read from L2 many times, fails there, and the packed family's B packing
// is paid once. ModelConfig of the plain call elsewhere, whatever `problem.form` says; f32 and
// f64 packed configs on the tile that pads M and N the least (model::PackedWeightsModel), and the
// packed configs of row-major weights with weights' cache blocks (model::SetPackedBlocks).
KernelConfig PackedWeightsConfig(const Problem& problem, const Machine& machine);

// `config`, the winner of `tuned_for`, as the runtime lends it to `problem` (same dtype, layout
// and transposes): a packed config takes the model's cache blocks for `problem` (weights' blocks
// where it is called on row-major packed weights), sized for its own tile, wherever its block
// spanned the whole of `tuned_for` in that dimension, since a block that a small problem cut
// short says nothing about a larger one (taken as stored, a tiny winner's blocks run a large
// problem far below the default; docs/runtime.md, Which config runs). Its tile, k unroll,
// prefetch, loop and threads, and every block it chose below its problem's extent, stay. Other
// families are returned as they are.
KernelConfig LentConfig(KernelConfig config, const Problem& tuned_for, const Problem& problem,
                        const Machine& machine);

// Cache sizes the model uses, with fallbacks for machines where hwloc reports none.
struct CacheBudget {
  std::uint64_t l1d = 32 * 1024;
  std::uint64_t l2 = 512 * 1024;         // per core
  std::uint64_t l3_per_core = 2 << 20;   // the core's share of the last-level cache
  int l1_ways = 8;
  int l2_ways = 8;
  int llc_cores = 0;  // cores that share one instance of the last-level cache (0: unknown)
};
// From hwloc's caches; with `machine`, its last-level cache is the effective one where measured
// (Machine::effective_llc_bytes), shared as hwloc says it is.
CacheBudget CacheBudgetOf(const Topology& topology);
CacheBudget CacheBudgetOf(const Machine& machine);

// Whether the operands of `count` GEMMs of `problem` (A, B and C of each) together exceed one
// core's L2: the items of such a batch bring their operands from beyond L2, one after another.
bool BatchSpillsL2(const Problem& problem, std::int64_t count, const CacheBudget& cache);

// The direct alternative for a GEMM whose operands arrive from beyond L2, as an item of a batch
// that spills it does: where ModelConfig reads A and B in place, the same family with a
// register tile as wide as N where the model ranks one level with its own
// (model::PlanColdDirect); ModelConfig elsewhere.
KernelConfig ColdItemsDirectConfig(const Problem& item, const Machine& machine);

// What each item of a batch that spills L2 runs with alone, untuned: ColdItemsDirectConfig where
// it is direct on a core whose direct family reads such cold items at least as fast as packing
// them (CoreFacts::direct_reads_cold_items), else ColdOperandsConfig.
KernelConfig SpilledItemsConfig(const Problem& item, const Machine& machine);

// The problem as the kernels run it: a column-major problem becomes its row-major transpose
// (M and N trade places, and so do the operands). Configs' tiles and blocks refer to this view.
Problem RowMajorView(Problem problem);
// Whether a bf16/s8 problem's A has k contiguous (row-major, or column-major transposed), so that
// its vector kernels can read it in place (KernelConfig::a_in_place). Asked of the caller's
// problem, not its RowMajorView: these problems keep their operands in either layout.
inline bool LowpAIsKContiguous(const Problem& problem) {
  return (problem.layout == Layout::kRowMajor) == (problem.trans_a == Trans::kNo);
}

// Whether A, B and C together fit in half of L2: the small problems, which the direct family
// runs whole (docs/analytical-model.md, step 1) and which may take an AVX2 tile (step 2).
bool OperandsFitHalfOfL2(const Problem& problem, const CacheBudget& cache);

// The direct family's model k block for M = `m` rows and a tile `nr` wide with `elem`-byte
// elements: the m x kc block of A and the kc x nr panel of B together in half of L2, a multiple
// of 64 (0 when not even 64 fit). docs/analytical-model.md, step 1.
std::int64_t DirectKcModel(const CacheBudget& cache, std::int64_t m, int nr, std::int64_t elem);

// The packed family's model kc (k elements per packed panel) for micro-panels `nr` wide with
// `b_elem`-byte B elements, before rounding and clamping to the problem: a kc x nr B micro-panel
// of L2 / 16 bytes (at most 64 KiB), or of L1 / 2 where that is longer
// (docs/analytical-model.md, step 3).
std::int64_t PackedKcModel(const CacheBudget& cache, int nr, std::int64_t b_elem);

// The packed family's model mc (rows of the packed A block) for k blocks of `kc` with
// `a_elem`-byte A elements, before rounding to the tile and clamping to the problem: an mc x kc
// block of half of L2, at most 512 KiB (docs/analytical-model.md, step 4).
std::int64_t PackedMcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t a_elem);

// The packed family's model nc (columns of the packed B block) for k blocks of `kc` with
// `b_elem`-byte B elements, before rounding to the tile and clamping to the problem: a kc x nc
// block of half of this core's share of L3, at most 4 MiB (docs/analytical-model.md, step 5).
std::int64_t PackedNcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t b_elem);

// The three models above for the tile (AMX) kernels: a kc x nr B micro-panel of two thirds of
// L1, an A block of L2 / 8 and a B block of L2 / 2 bytes, or of L2 / 8 where every thread packs
// all of B (icown): TileOwnBNcModel (docs/low-precision.md).
std::int64_t TileKcModel(const CacheBudget& cache, int nr, std::int64_t b_elem);
std::int64_t TileMcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t a_elem);
std::int64_t TileNcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t b_elem);
std::int64_t TileOwnBNcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t b_elem);

// The kc, mc and nc models of one kind of packed micro-kernel: the Tile* ones for tile kernels
// (`tiles`), else the Packed* ones, nc by the loop the threads split. The default and the search
// space both take them from here.
struct BlockModels {
  std::int64_t (*kc)(const CacheBudget& cache, int nr, std::int64_t b_elem);
  std::int64_t (*mc)(const CacheBudget& cache, std::int64_t kc, std::int64_t a_elem);
  std::int64_t (*nc)(const CacheBudget& cache, std::int64_t kc, std::int64_t b_elem);
};
BlockModels BlockModelsFor(bool tiles, ParallelLoop loop);

}  // namespace mmtune
