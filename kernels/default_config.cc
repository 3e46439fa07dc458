#include "kernels/default_config.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/gemm_internal.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/microkernel.h"
#include "kernels/model_internal.h"

namespace mmtune {

CacheBudget CacheBudgetOf(const Topology& topology) {
  CacheBudget budget;
  auto per_core = [](const CacheLevel& cache) {
    return cache.size_bytes / static_cast<std::uint64_t>(std::max(1, cache.CoresPerInstance()));
  };
  if (const CacheLevel* l1 = topology.DataCache(1); l1 != nullptr && l1->size_bytes > 0) {
    budget.l1d = l1->size_bytes;
    if (l1->associativity > 0) budget.l1_ways = l1->associativity;
  }
  if (const CacheLevel* l2 = topology.DataCache(2); l2 != nullptr && l2->size_bytes > 0) {
    budget.l2 = per_core(*l2);
    if (l2->associativity > 0) budget.l2_ways = l2->associativity;
  }
  const CacheLevel* l3 = topology.DataCache(3);
  if (l3 != nullptr && l3->size_bytes > 0) {
    budget.l3_per_core = per_core(*l3);
    budget.llc_cores = l3->CoresPerInstance();
  } else {
    budget.l3_per_core = std::max<std::uint64_t>(budget.l2, budget.l3_per_core);
    if (const CacheLevel* l2 = topology.DataCache(2); l2 != nullptr) {
      budget.llc_cores = l2->CoresPerInstance();
    }
  }
  return budget;
}

CacheBudget CacheBudgetOf(const Machine& machine) {
  CacheBudget budget = CacheBudgetOf(machine.topology);
  if (machine.effective_llc_bytes > 0) {
    budget.l3_per_core =
        machine.effective_llc_bytes / static_cast<std::uint64_t>(std::max(1, budget.llc_cores));
  }
  return budget;
}

// A column-major C = op(A) * op(B) is the row-major C^T = op(B)^T * op(A)^T (kernels/gemm.cc).
Problem RowMajorView(Problem problem) {
  if (problem.layout == Layout::kColMajor) {
    std::swap(problem.m, problem.n);
    std::swap(problem.trans_a, problem.trans_b);
    problem.layout = Layout::kRowMajor;
  }
  return problem;
}

namespace {

// The row-major view of `original` called in `form`, as model::SetPackedBlocks sizes its cache
// blocks: weights' blocks (CallForm::kPackedB) only where the weights are the view's B, as
// row-major ones are; column-major weights are its A, and its B is packed in every call.
Problem PackedBlocksView(const Problem& original, CallForm form) {
  Problem view = RowMajorView(original);
  view.form = original.layout == Layout::kRowMajor ? form : CallForm::kPlain;
  return view;
}

}  // namespace

using model::DirectModel;
using model::DirectPlan;
using model::PackedConfig;
using model::PackedModel;
using model::PackedParallelLoop;
using model::PackedVectorTile;
using model::PlanColdDirect;
using model::PlanDirect;
using model::SetPackedBlocks;
using model::Tile;

namespace {

constexpr std::int64_t kPageBytes = 4096;

// Rows of the matrix the gemv kernels stream together (mr). Four hide the load latency, and the
// dot form (the matrix's rows along k) stays there: eight are level or mixed in sign. The axpy
// form (rows along the output, added into an accumulator) takes eight where a row is longer than
// a 4 KiB page or the matrix is larger than this core's share of L3: there eight rows run
// faster, while with short rows and the matrix in L3 four win (docs/analytical-model.md,
// step 1).
template <typename T>
int GemvRows(const Problem& p, const CacheBudget& cache) {  // p: the row-major view
  constexpr int kRows = 4;
  constexpr int kLongRowRows = 8;
  if (detail::GemvDotForm(p.m, p.trans_a, p.trans_b)) return kRows;
  // Threads split the output, so each streams its share of every row.
  const std::int64_t threads = std::max(1, p.threads);
  const std::int64_t row_bytes =
      (p.m == 1 ? p.n : p.m) * static_cast<std::int64_t>(sizeof(T)) / threads;
  const double matrix_bytes = static_cast<double>(row_bytes) * static_cast<double>(p.k);
  const bool long_rows = row_bytes > kPageBytes;
  const bool from_memory = matrix_bytes >= static_cast<double>(cache.l3_per_core);
  return long_rows || from_memory ? kLongRowRows : kRows;
}

template <typename T>
KernelConfig DefaultFor(const Problem& problem, const Machine& machine) {
  if (problem.m == 1 || problem.n == 1) {
    // Two vectors per step keep loads wide (one where the ISA has no such kernel).
    KernelConfig c;
    c.isa = machine.kernel_isa;
    c.threads = problem.threads;
    c.family = KernelFamily::kGemv;
    c.mr = GemvRows<T>(problem, CacheBudgetOf(machine));
    const int lanes = VectorLanes(machine.kernel_isa, sizeof(T));
    c.nr = FindGemvKernel<T>(c.isa, c.mr, 2 * lanes) != nullptr ? 2 * lanes : lanes;
    return c;
  }
  const DirectPlan direct = PlanDirect<T>(problem, machine);
  return direct.fit.pressure <= 1.0
             ? DirectModel(problem, machine, direct.tile, direct.fit.kc, sizeof(T))
             : PackedModel<T>(problem, machine);
}

// Where a kind runs faster on a smaller AMX tile than the one with the most C tiles once K is
// long enough: from min_k on, in place of `instead`. Measured, not derived: bf16 and s8 on the
// Xeon's AMX (docs/low-precision.md).
struct AmxLongKTile {
  DType dtype;
  std::int64_t min_k;
  Tile instead;
  Tile tile;
};
constexpr AmxLongKTile kAmxLongKTiles[] = {{DType::kBF16, 256, {32, 32}, {16, 32}},
                                           {DType::kS8, 384, {32, 32}, {16, 32}}};

// Whether a thread's tiles of C accumulate in a buffer of sums across the k blocks (c_buffer):
// under jc, with more than one k block, where a thread's part of each row of C is shorter than a
// page (so the threads' parts share pages, and a tile one k block stores is often in the other
// core's cache when the next loads it) and its block of sums fits in a quarter of L2. On one
// thread, and with C's rows split in longer parts, the buffer's own traffic costs more than it
// saves. Measurements: docs/low-precision.md.
template <class Kind>
bool TileSumsInBuffer(const Problem& problem, const KernelConfig& c, const CacheBudget& cache) {
  const auto threads = static_cast<std::int64_t>(problem.threads);
  if (threads <= 1 || c.parallel_loop != ParallelLoop::kJc || problem.k <= c.kc) return false;
  constexpr auto c_elem = static_cast<std::int64_t>(sizeof(typename Kind::C));
  const std::int64_t part = detail::CeilDiv(problem.n, threads);
  const std::int64_t block = detail::RoundUp(problem.m, c.mr) * std::min<std::int64_t>(part, c.nc);
  return part * c_elem < kPageBytes && block * c_elem <= static_cast<std::int64_t>(cache.l2) / 4;
}

// Where C's lines come from beyond L2 and each tile prefetches the next one's (prefetch_c), the
// tile that runs in place of `instead`: a shorter tile's prefetches keep up with its k steps.
// Measured, not derived: bf16 batches on the Xeon's AMX (docs/low-precision.md).
struct AmxColdCTile {
  Tile instead;
  Tile tile;
};
constexpr AmxColdCTile kAmxColdCTile = {{32, 32}, {16, 32}};

// The AMX tile kernel of a packed default: of the tile kernels, the one with the most C tiles
// (the fewest tile loads per tile dot product) no taller than M needs, so that a short M does not
// compute rows of zeros for nothing; then kAmxLongKTiles, and kAmxColdCTile where `cold_c`.
template <class Entries>
Tile AmxTile(const Entries& kernels, DType dtype, std::int64_t m, std::int64_t k, bool cold_c) {
  Tile best;
  for (const auto& entry : kernels) {
    if (!entry.tiles) continue;
    const bool fits = entry.mr <= std::max<std::int64_t>(16, m);
    const bool larger = entry.mr * entry.nr > best.mr * best.nr ||
                        (entry.mr * entry.nr == best.mr * best.nr && entry.nr > best.nr);
    if (fits && larger) best = {entry.mr, entry.nr};
  }
  // `tile` in place of `instead`, where the best so far is `instead` and a tile kernel has `tile`.
  auto replace = [&](const Tile& instead, const Tile& tile) {
    const bool applies = best.mr == instead.mr && best.nr == instead.nr;
    const bool exists = std::any_of(kernels.begin(), kernels.end(), [&](const auto& entry) {
      return entry.tiles && entry.mr == tile.mr && entry.nr == tile.nr;
    });
    if (applies && exists) best = tile;
  };
  for (const AmxLongKTile& row : kAmxLongKTiles) {
    if (row.dtype == dtype && k >= row.min_k) replace(row.instead, row.tile);
  }
  if (cold_c) replace(kAmxColdCTile.instead, kAmxColdCTile.tile);
  return best;
}

// The fewest rows of C a thread takes under icown: below, its rows do not pay for packing all of
// B (docs/low-precision.md).
constexpr std::int64_t kOwnBMinRowsPerThread = 128;

// The loop threads split for the tile kernels, `c` holding the tile and blocks. Not ic, where
// half of the B panels a thread reads come from the other core's cache, slower than the tile unit
// consumes them; ic only where N has fewer tiles than threads. Under jc every row of C is split
// between the threads, and their cores fetch each other's lines of it (the hardware prefetchers
// read ahead into the other thread's part of each row), once per k block; under icown each
// thread has rows of its own but packs all of B. So icown where the k blocks write C at least as
// often per product as a thread's extra packing reads B (M >= kc), each thread has rows enough
// for its packing (kOwnBMinRowsPerThread) and B is small enough to be read twice (3/4 of L2);
// else jc. Measurements: docs/low-precision.md.
template <class Kind>
ParallelLoop TileParallelLoop(const Problem& problem, const KernelConfig& c,
                              const CacheBudget& cache) {
  const auto threads = static_cast<std::int64_t>(problem.threads);
  if (threads <= 1) return ParallelLoop::kJc;
  if (problem.n < threads * c.nr) {
    return problem.m >= threads * c.mr ? ParallelLoop::kIc : ParallelLoop::kJc;
  }
  const double b_bytes = static_cast<double>(problem.k) * static_cast<double>(problem.n) *
                         sizeof(typename Kind::B);
  const bool own_b = problem.m >= c.kc && problem.m >= threads * kOwnBMinRowsPerThread &&
                     b_bytes <= 0.75 * static_cast<double>(cache.l2);
  return own_b ? ParallelLoop::kIcOwnB : ParallelLoop::kJc;
}

// The low-precision types: the gemv family for M = 1 or N = 1 (as for f32), else the packed
// family (no direct family: the dot-product instructions need k-grouped panels). Where the CPU
// has AMX for the type, its tile kernels (AmxTile); else PackedVectorTile's vector tile. The same
// cache model as PackedModel with the input element sizes (a bf16 or s8 panel holds 2x or 4x the
// k of an f32 one), kc a multiple of the k group (of a tile row for AMX), and AVX2 kernels on an
// AVX-512 CPU without the dot-product extension.
template <class Kind>
IsaLevel LowpIsa(const Machine& machine) {
  return CpuRunsLowp<Kind>(machine.cpu, machine.kernel_isa) ? machine.kernel_isa
                                                            : IsaLevel::kAvx2;
}

// LowpDefault's packed-family config, for any shape; `cold_c`: the caller knows that C arrives
// from beyond L2 (the items of a batch that spills it). Tile kernels prefetch the next tile's C
// (prefetch_c) only there: on single GEMMs, even ones whose C is larger than L2, it ran from
// 0.92x to 1.08x (docs/low-precision.md).
template <class Kind>
KernelConfig LowpPacked(const Problem& original, const Machine& machine, bool cold_c = false) {
  const Problem problem = RowMajorView(original);
  const IsaLevel isa = LowpIsa<Kind>(machine);
  const CacheBudget cache = CacheBudgetOf(machine);
  if (isa == IsaLevel::kAvx512 && CpuRunsLowpTiles<Kind>(machine.cpu)) {
    const Tile tile =
        AmxTile(MicroKernels<Kind>(isa), Kind::kDType, problem.m, problem.k, cold_c);
    KernelConfig c = PackedConfig(problem, machine, isa, tile, ParallelLoop::kJc);
    c.prefetch_c = cold_c;
    const ParallelLoop loop = TileParallelLoop<Kind>(problem, c, cache);
    if (loop != c.parallel_loop) {
      c.parallel_loop = loop;
      model::SetPackedBlocks(machine, problem, c);  // the loop's blocks
    }
    c.a_in_place = LowpAIsKContiguous(original) && c.parallel_loop != ParallelLoop::kJr;
    c.c_buffer = TileSumsInBuffer<Kind>(problem, c, cache);
    return c;
  }
  // 32-bit accumulator lanes. The dot-product instructions take the FMA pipes, so f32's tile
  // rule holds, with fewer accumulators on two zmm pipes (docs/low-precision.md).
  const Tile best =
      PackedVectorTile(MicroKernels<Kind>(isa), machine, isa, VectorLanes(isa, 4), true);
  KernelConfig c = PackedConfig(problem, machine, isa, best, PackedParallelLoop(problem, best.mr));
  // Unrolled as f32's packed k loops are, where the core's facts say it pays for these types.
  if (problem.m >= c.mr &&
      model::UnrollsKLoop(machine, &CoreFacts::unrolls_long_lowp_k,
                          std::min<std::int64_t>(c.kc, problem.k))) {
    c.k_unroll = 4;
  }
  // A k-contiguous A read in place saves its packing where all of it stays in L2 across the B
  // panels; a larger one reads faster as the packed, contiguous block (docs/low-precision.md).
  const double a_bytes = static_cast<double>(original.m) * static_cast<double>(original.k) *
                         sizeof(typename Kind::A);
  c.a_in_place = LowpAIsKContiguous(original) && a_bytes < static_cast<double>(cache.l2);
  if (c.a_in_place) model::SetPackedBlocks(machine, problem, c);  // the B block beside A in L2
  return c;
}

template <class Kind>
KernelConfig LowpDefault(const Problem& original, const Machine& machine) {
  const Problem problem = RowMajorView(original);
  if (problem.m == 1 || problem.n == 1) {
    KernelConfig c;
    c.isa = LowpIsa<Kind>(machine);
    c.threads = problem.threads;
    c.family = KernelFamily::kGemv;
    c.mr = 4;
    c.nr = 2 * VectorLanes(c.isa, 4);  // 32-bit accumulator lanes
    return c;
  }
  return LowpPacked<Kind>(original, machine);
}

template <typename T>
std::vector<KernelConfig> AlternativesFor(const Problem& problem, const Machine& machine) {
  if (problem.m == 1 || problem.n == 1) return {};
  // Near the family boundary (within 4x of it, either side) the model cannot tell which family
  // wins: the other family's model config is worth one measurement.
  const DirectPlan direct = PlanDirect<T>(problem, machine);
  const double pressure = direct.fit.pressure;
  if (pressure > 4.0 || pressure < 0.25) return {};
  return {pressure <= 1.0 ? PackedModel<T>(problem, machine)
                          : DirectModel(problem, machine, direct.tile, direct.fit.kc, sizeof(T))};
}

}  // namespace

int DefaultThreadCount(const Problem& problem, int max_threads) {
  const double by_work = std::floor(problem.Flops() / kMinFlopsPerThread);
  return static_cast<int>(std::clamp(by_work, 1.0, static_cast<double>(std::max(1, max_threads))));
}

namespace {

// One item of a batch as BatchDefault runs it: alone on one thread where the batch has items
// enough for its threads, else on the batch's threads.
Problem ItemOf(const Problem& batch) {
  Problem item = batch;
  item.batch = 1;
  if (batch.batch >= batch.threads) item.threads = 1;
  return item;
}

// The configs a batch's item may run with alone: BatchDefault's first (SpilledItemsConfig where
// the batch spills L2, else the item's 1-thread default), then those of the two that differ
// from it: the item's default and the packed model's (ColdOperandsConfig).
std::vector<KernelConfig> ItemsAloneConfigs(const Problem& batch, const Machine& machine) {
  const Problem item = ItemOf(batch);
  const KernelConfig own = ModelConfig(item, machine);
  std::vector<KernelConfig> configs = {BatchSpillsL2(item, batch.batch, CacheBudgetOf(machine))
                                           ? SpilledItemsConfig(item, machine)
                                           : own};
  for (const KernelConfig& other : {own, ColdOperandsConfig(item, machine)}) {
    if (std::find(configs.begin(), configs.end(), other) == configs.end()) {
      configs.push_back(other);
    }
  }
  for (KernelConfig& config : configs) config.threads = batch.threads;
  return configs;
}

}  // namespace

KernelConfig BatchDefault(const Problem& batch, const Machine& machine) {
  if (batch.batch < batch.threads) return UntunedConfig(ItemOf(batch), machine);
  return ItemsAloneConfigs(batch, machine).front();
}

KernelConfig ModelConfig(const Problem& original, const Machine& machine) {
  if (original.batch > 1) return BatchDefault(original, machine);
  if (original.form == CallForm::kPackedB) return PackedWeightsConfig(original, machine);
  const Problem problem = RowMajorView(original);
  switch (problem.dtype) {
    case DType::kF32: return DefaultFor<float>(problem, machine);
    case DType::kF64: return DefaultFor<double>(problem, machine);
    case DType::kBF16: return LowpDefault<Bf16Gemm>(original, machine);
    case DType::kS8: return LowpDefault<S8Gemm>(original, machine);
  }
  return DefaultFor<float>(problem, machine);
}

KernelConfig UntunedConfig(const Problem& problem, const Machine& machine) {
  Problem untuned = problem;
  untuned.threads = DefaultThreadCount(problem, problem.threads);
  return ModelConfig(untuned, machine);
}

bool BatchSpillsL2(const Problem& problem, std::int64_t count, const CacheBudget& cache) {
  return static_cast<double>(count) * problem.OperandBytes() > static_cast<double>(cache.l2);
}

KernelConfig PackedWeightsConfig(const Problem& packed_b, const Machine& machine) {
  Problem original = packed_b;
  original.form = CallForm::kPlain;
  KernelConfig config = ModelConfig(original, machine);
  const Problem problem = RowMajorView(original);
  // The direct family reads the weights in place, from L2 where they stay there; weights of
  // more than half of L2 come from beyond it on every call, and the packed family, its B
  // packing paid once, streams them through L2 panel by panel (docs/runtime.md, Packed weights).
  const double weights_bytes = static_cast<double>(DTypeSize(original.dtype)) *
                               static_cast<double>(original.k) * static_cast<double>(original.n);
  if (config.family == KernelFamily::kDirect &&
      weights_bytes > static_cast<double>(CacheBudgetOf(machine).l2) / 2) {
    config = ColdOperandsConfig(original, machine);
  }
  // Panels packed once: f32 and f64 take the tile that pads the fewest rows and columns, and
  // every dtype the blocks of its weights (PackedBlocksView).
  if (config.family == KernelFamily::kPacked && original.batch <= 1) {
    const Problem weights = PackedBlocksView(original, CallForm::kPackedB);
    switch (problem.dtype) {
      case DType::kF32: return model::PackedWeightsModel<float>(weights, machine);
      case DType::kF64: return model::PackedWeightsModel<double>(weights, machine);
      default:
        if (weights.form == CallForm::kPackedB) model::SetPackedBlocks(machine, weights, config);
        return config;
    }
  }
  // Row-major weights are the panels' B side; column-major ones would be A panels of a
  // one-column product.
  if (config.family != KernelFamily::kGemv || original.layout != Layout::kRowMajor ||
      problem.m != 1 || problem.n == 1) {
    return config;
  }
  switch (problem.dtype) {
    case DType::kF32: config = PackedModel<float>(problem, machine); break;
    case DType::kF64: config = PackedModel<double>(problem, machine); break;
    case DType::kBF16: config = LowpPacked<Bf16Gemm>(original, machine); break;
    case DType::kS8: config = LowpPacked<S8Gemm>(original, machine); break;
  }
  // Row blocks as large as the model gives a tall problem: one row never fills one.
  Problem tall = problem;
  tall.m = std::int64_t{1} << 20;
  model::SetPackedBlocks(machine, tall, config);
  return config;
}

namespace {

// `replace.operator()<T>(problem)` (T: f32 or f64, `problem` the row-major view) where
// ModelConfig runs `original` with the direct family; ModelConfig elsewhere.
template <class Replace>
KernelConfig InPlaceOfDirect(const Problem& original, const Machine& machine,
                             const Replace& replace) {
  const KernelConfig config = ModelConfig(original, machine);
  if (config.family != KernelFamily::kDirect) return config;
  const Problem problem = RowMajorView(original);
  return problem.dtype == DType::kF64 ? replace.template operator()<double>(problem)
                                      : replace.template operator()<float>(problem);
}

}  // namespace

KernelConfig ColdOperandsConfig(const Problem& original, const Machine& machine) {
  const KernelConfig config = InPlaceOfDirect(original, machine, [&]<typename T>(
                                                                     const Problem& problem) {
    return PackedModel<T>(problem, machine);
  });
  if (config.family != KernelFamily::kPacked) return config;
  switch (original.dtype) {
    case DType::kBF16: return LowpPacked<Bf16Gemm>(original, machine, true);
    case DType::kS8: return LowpPacked<S8Gemm>(original, machine, true);
    default: return config;
  }
}

KernelConfig ColdItemsDirectConfig(const Problem& original, const Machine& machine) {
  return InPlaceOfDirect(original, machine, [&]<typename T>(const Problem& problem) {
    const DirectPlan direct = PlanColdDirect<T>(problem, machine);
    return DirectModel(problem, machine, direct.tile, direct.fit.kc, sizeof(T));
  });
}

KernelConfig SpilledItemsConfig(const Problem& item, const Machine& machine) {
  if (model::CoreFact(machine, &CoreFacts::direct_reads_cold_items)) {
    KernelConfig direct = ColdItemsDirectConfig(item, machine);
    if (direct.family == KernelFamily::kDirect) return direct;
  }
  return ColdOperandsConfig(item, machine);
}

KernelConfig LentConfig(KernelConfig config, const Problem& tuned_for, const Problem& problem,
                        const Machine& machine) {
  if (config.family != KernelFamily::kPacked) return config;
  const Problem from = RowMajorView(tuned_for);
  KernelConfig model = config;
  SetPackedBlocks(machine, PackedBlocksView(problem, problem.form), model);
  if (config.mc >= detail::RoundUp(from.m, config.mr)) config.mc = model.mc;
  if (config.kc >= from.k) config.kc = model.kc;
  if (config.nc >= detail::RoundUp(from.n, config.nr)) config.nc = model.nc;
  return config;
}

std::vector<KernelConfig> AnalyticalAlternatives(const Problem& original,
                                                  const Machine& machine) {
  if (original.batch > 1) {
    if (original.batch < original.threads) return AnalyticalAlternatives(ItemOf(original), machine);
    std::vector<KernelConfig> configs = ItemsAloneConfigs(original, machine);
    configs.erase(configs.begin());
    return configs;
  }
  const Problem problem = RowMajorView(original);
  switch (problem.dtype) {
    case DType::kF32: return AlternativesFor<float>(problem, machine);
    case DType::kF64: return AlternativesFor<double>(problem, machine);
    case DType::kBF16:
    case DType::kS8: return {};  // one family: nothing to choose between
  }
  return {};
}

}  // namespace mmtune
