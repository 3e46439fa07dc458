// The packed family's part of the analytical model: the cache blocks (kc, mc, nc), the loop
// that threads split, and the model config (docs/analytical-model.md, steps 2-5).
#include <algorithm>
#include <cstdint>

#include "kernels/lowp_microkernel.h"
#include "kernels/microkernel.h"
#include "kernels/model_internal.h"

namespace mmtune {

// On Zen 4 (L1d 32 KiB, L2 1 MiB), interleaved, 1 thread, 512^3..2048^3: kc = 512 ran 8-17%
// faster than the L1 rule's 128 for AVX-512 f32 14x32 and 6-14% for f64 14x16, and AVX2 6x16 at
// 512-1024 3-6% faster than at its L1 rule's 256; 512..1024 were level. The B micro-panel
// streams from L2 well enough (two vectors per k step, many FMAs apart), so L1 does not bound
// kc; longer k loops amortize each tile's C update and the per-panel costs. L2 / 16 gives 512
// for both AVX-512 dtypes and 1024 for AVX2 f32 there; on Zen 3's 512 KiB L2 it gives AVX2 f32
// 512 where the L1 rule gave 256 (not re-measured there). Longer panels gained nothing on Zen 4
// and lost on a Xeon with a 2 MiB L2, whose L2 / 16 gives 1024 for f32 14x32: interleaved, 1
// thread, kc = 512 (a 64 KiB micro-panel) ran 1.18x (512x4096x4096), 1.06x (1024^3) and 1.03x
// (2048^3) faster; so the micro-panel stops at the 64 KiB that Zen 4's L2 / 16 gave.
constexpr std::int64_t kMaxPackedPanelBytes = std::int64_t{64} << 10;

std::int64_t PackedKcModel(const CacheBudget& cache, int nr, std::int64_t b_elem) {
  const std::int64_t panel_row = std::max<std::int64_t>(1, nr * b_elem);
  const std::int64_t l2_share =
      std::min(static_cast<std::int64_t>(cache.l2) / 16, kMaxPackedPanelBytes);
  return std::max(static_cast<std::int64_t>(cache.l1d) / 2, l2_share) / panel_row;
}

// The most bytes of the packed A block: half of Zen 4's 1 MiB L2. On the Xeon's 2 MiB L2, half
// of it (f32 14x32, kc = 512: mc = 504) ran at 0.93-0.95 of mc = 252 (1024^3, 2048^3,
// interleaved, 1 thread).
constexpr std::int64_t kMaxPackedABlockBytes = std::int64_t{512} << 10;

std::int64_t PackedMcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t a_elem) {
  const std::int64_t block_bytes =
      std::min(static_cast<std::int64_t>(cache.l2) / 2, kMaxPackedABlockBytes);
  return block_bytes / std::max<std::int64_t>(1, kc * a_elem);
}

// The most bytes of the packed B block: 4 MiB. The Zen 5 guest reports a private 508 MiB L3 per
// core, so half of it let nc take all of N; but its real L3 is shared with other tenants, and
// with the packed B block and the C columns it updates (both re-read once per k or row block)
// past a few MiB the tiles ran slower. 1 thread, interleaved, nc against the whole N: f32
// 512x4096x4096 nc2048 1.03x (nc1024 1.02x), 256x8192x2048 nc2048 1.07x (nc4096 1.02x); f64
// 512x4096x4096 nc1024 1.10x (nc2048 1.09x). Where the reported share is real (4 MiB a core on
// a Zen 5 or Zen 4 server) half of it is under the cap.
constexpr std::int64_t kMaxPackedBBlockBytes = std::int64_t{4} << 20;

std::int64_t PackedNcModel(const CacheBudget& cache, std::int64_t kc, std::int64_t b_elem) {
  const std::int64_t block_bytes =
      std::min(static_cast<std::int64_t>(cache.l3_per_core) / 2, kMaxPackedBBlockBytes);
  return block_bytes / std::max<std::int64_t>(1, kc * b_elem);
}

namespace model {
namespace {

// The block of a loop over `extent` rows or columns that takes as many blocks as `model` would
// and splits them evenly, each a multiple of `step` (whole tiles): so no thin last block is left
// over. Blocks of the model rounded down to the tile left one: f64 M = 128 in A blocks of 126
// (6x32, kc 512: a 128-row model) ran its last 2 rows against the whole packed B block, 0.94x
// of one 132-row block (128x3072x768, interleaved); f32 1024^3 in blocks of 252 left 16 rows.
// A block may exceed the model by less than one step.
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
// narrower than the tile's (PackedModel).
void SetCacheBlocks(const CacheBudget& cache, const Problem& problem, std::int64_t a_elem,
                    std::int64_t b_elem, int kc_step, int k_group, int kc_panel_nr,
                    KernelConfig& c) {
  std::int64_t kc = PackedKcModel(cache, kc_panel_nr, b_elem);
  kc = std::clamp<std::int64_t>(kc / kc_step * kc_step, kc_step, 1 << 14);
  const std::int64_t mc = BalancedBlock(problem.m, PackedMcModel(cache, kc, a_elem), c.mr);
  const std::int64_t nc = BalancedBlock(problem.n, PackedNcModel(cache, kc, b_elem), c.nr);
  kc = std::min<std::int64_t>(
      kc, (std::max<std::int64_t>(1, problem.k) + k_group - 1) / k_group * k_group);
  constexpr std::int64_t kMaxBlock = 1 << 16;
  c.kc = static_cast<int>(kc);
  c.mc = static_cast<int>(std::min(mc, kMaxBlock / c.mr * c.mr));
  c.nc = static_cast<int>(std::min(nc, kMaxBlock / c.nr * c.nr));
}

}  // namespace

void SetPackedBlocks(const CacheBudget& cache, const Problem& problem, KernelConfig& c) {
  switch (problem.dtype) {
    case DType::kF32:
    case DType::kF64: {
      const auto elem = static_cast<std::int64_t>(DTypeSize(problem.dtype));
      // kc as for a two-vector panel: the k depth, not the panel's bytes, is what the
      // measurements pinned. On the Xeon, interleaved, 1 thread, the four-vector tiles ran
      // kc = 512 (a 128 KiB micro-panel) faster than the 256 that PackedKcModel's 64 KiB gives
      // them: f32 6x64 1024^3 1.02-1.05x, 512x4096x4096 1.04x, 128x3072x768 1.01x; f64 6x32
      // 1024^3 1.02x.
      const int lanes = VectorLanes(c.isa, static_cast<std::size_t>(elem));
      SetCacheBlocks(cache, problem, elem, elem, 8, 1, std::min(c.nr, 2 * lanes), c);
      return;
    }
    // A bf16 or s8 panel holds 2x or 4x the k of an f32 one; kc whole groups of k.
    case DType::kBF16:
      SetCacheBlocks(cache, problem, sizeof(Bf16Gemm::A), sizeof(Bf16Gemm::B), 16,
                     Bf16Gemm::kGroup, c.nr, c);
      return;
    case DType::kS8:
      SetCacheBlocks(cache, problem, sizeof(S8Gemm::A), sizeof(S8Gemm::B), 16, S8Gemm::kGroup,
                     c.nr, c);
      return;
  }
}

// Threads share the B block (split ic) where A is at least as tall as B is wide and there are
// enough row panels for everyone; otherwise each packs and reads its own columns of B (split jc)
// and packs all of A. Under ic every thread's tiles read the whole packed B block, under jc only
// its half, while A's packing is repeated by every thread: so ic pays where N > M. On the Xeon,
// 2 threads, f32 6x64, interleaved, jc against ic: 64x4096x4096 1.49x, 128x3072x768 1.24x (f64
// 1.23x), 200x2048x2048 1.13x, 256x3072x768 1.10x, 512x4096x4096 1.05x, 512x1024x4096 1.02x;
// 1024^3 0.98x, 2048^3 0.99x, 4096x512x4096 0.94x, 3072x128x768 0.74x. Where the threads'
// cores share no cache (`share_llc` false: the Zen 5 VM reports a private L3 per core), the
// shared block crosses between them, and only clearly tall problems (M >= 2N) keep ic: there
// jc against ic ran 512^3 1.04-1.08x (three runs), 1000^3 1.04x, 1024^3 1.02x, 768^3 and
// 2048^3 1.01x, 1536x1024x1024 1.00x; 2048x1024x1024 0.99x, 1024x256x1024 0.97x,
// 4096x512x4096 0.94x, 3072x128x768 0.81x.
ParallelLoop PackedParallelLoop(const Problem& problem, int mr, bool share_llc) {
  const bool tall = problem.m >= 2 * problem.n;
  return problem.threads > 1 && (tall || (share_llc && problem.m >= problem.n)) &&
                 problem.m >= static_cast<std::int64_t>(problem.threads) * mr * 4
             ? ParallelLoop::kIc
             : ParallelLoop::kJc;
}

KernelConfig PackedConfig(const Problem& problem, const CacheBudget& cache, IsaLevel isa, Tile tile,
                          ParallelLoop loop) {
  KernelConfig c;
  c.isa = isa;
  c.threads = problem.threads;
  c.family = KernelFamily::kPacked;
  c.mr = tile.mr;
  c.nr = tile.nr;
  c.k_unroll = 1;
  c.prefetch_c = true;
  SetPackedBlocks(cache, problem, c);
  c.parallel_loop = loop;
  return c;
}

namespace {

// Whether `threads` threads, on as many cores, share a last-level cache (or may: unknown).
bool ThreadsShareLlc(const CacheBudget& cache, int threads) {
  return cache.llc_cores == 0 || cache.llc_cores >= threads;
}

}  // namespace

template <typename T>
KernelConfig PackedModel(const Problem& problem, const Machine& machine) {
  const IsaLevel isa = machine.kernel_isa;
  const CacheBudget cache = CacheBudgetOf(machine.topology);
  const double fma_pipes = VectorFmasPerCycle(machine, isa);
  const int lanes = VectorLanes(isa, sizeof(T));
  const Tile best = TwoZmmPipes(machine)
                        ? FewestLoadsPackedTile(MicroKernels<T>(isa), lanes, fma_pipes)
                        : PackedTile(MicroKernels<T>(isa), lanes, fma_pipes);
  const bool share_llc = ThreadsShareLlc(cache, problem.threads);
  return PackedConfig(problem, cache, isa, best, PackedParallelLoop(problem, best.mr, share_llc));
}

template KernelConfig PackedModel<float>(const Problem&, const Machine&);
template KernelConfig PackedModel<double>(const Problem&, const Machine&);

}  // namespace model
}  // namespace mmtune
