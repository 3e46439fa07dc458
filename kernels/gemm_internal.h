// Shared by the GEMM drivers: the problem in row-major terms and the per-family entry points.
#pragma once

#include <cstdint>

#include "kernels/cache_line.h"
#include "kernels/epilogue.h"
#include "kernels/gemm_types.h"
#include "kernels/kernel_config.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/microkernel.h"
#include "kernels/packing.h"
#include "kernels/thread_pool.h"

namespace mmtune::detail {

// C (m x n, element (i, j) at c[i * ldc + j * c_col_stride]) = alpha * op(A) * op(B) + beta * C
// with op(A) and op(B) read through row-major views. For f32 and f64 a column-major problem
// becomes its transpose: C^T = op(B)^T * op(A)^T, which in row-major terms swaps A with B and M
// with N and keeps each operand's transpose flag, so C's columns stay unit-stride. The
// low-precision GEMMs keep A and B (s8's operands differ in sign) and read a column-major
// operand as its transposed view; C is then written with row stride 1 and column stride ldc.
template <typename X>
struct RowMajorGemm {
  using Types = GemmTypes<X>;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  typename Types::Scalar alpha = 1;
  typename Types::Scalar beta = 0;
  MatrixView<typename Types::A> a;
  MatrixView<typename Types::B> b;
  typename Types::C* c = nullptr;
  std::int64_t ldc = 0;           // C's row stride
  std::int64_t c_col_stride = 1;  // 1 except for column-major low-precision problems
  Epilogue<typename Types::C> epilogue;  // its bias per row or column of this (row-major) C
  const DequantizeToF32* dequantize = nullptr;  // s8 only (GemmArgs::dequantize)
};

inline Trans Flip(Trans t) { return t == Trans::kNo ? Trans::kYes : Trans::kNo; }

// Whether the gemv driver reads a row-major problem with M = 1 or N = 1 in its dot form (the
// matrix's rows run along k: op(B) transposed for M = 1, A by rows for N = 1) rather than its
// axpy form (the matrix's rows run along the output). The analytical default asks too.
inline bool GemvDotForm(std::int64_t m, Trans trans_a, Trans trans_b) {
  return m == 1 ? trans_b == Trans::kYes : trans_a == Trans::kNo;
}
inline std::int64_t CeilDiv(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }
inline std::int64_t RoundUp(std::int64_t x, std::int64_t y) { return CeilDiv(x, y) * y; }

// Elements of `p` before its next cache line starts: 0 where it starts one, or where its
// elements straddle lines (an address not a multiple of sizeof(T)). The drivers' copy; the
// per-ISA kernels keep their own (microkernel_impl.h), since an inline helper shared with
// them could be linked in its AVX-512 build everywhere.
template <typename T>
std::int64_t ElementsBeforeLine(const T* p) {
  constexpr auto kElementBytes = static_cast<std::int64_t>(sizeof(T));
  const auto offset = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) %
                                                static_cast<std::uintptr_t>(kCacheLineBytes));
  if (offset % kElementBytes != 0) return 0;
  return (kCacheLineBytes - offset) % kCacheLineBytes / kElementBytes;
}

// The share [begin, end) of `units` work units that member `index` of `members` gets.
inline void Partition(std::int64_t units, int members, int index, std::int64_t* begin,
                      std::int64_t* end) {
  *begin = units * index / members;
  *end = units * (index + 1) / members;
}

// The kernels of X (KernelEntries, microkernel.h) and what its direct family needs: the
// low-precision GEMMs have no direct family (no tile plans).
struct NoDirectTilePlan {
  int count = 0;
};
template <typename T>
struct DirectTilePlan;
template <typename X, bool kLowPrecision = GemmTypes<X>::kLowPrecision>
struct KernelsOf : KernelEntries<X> {
  using Snug = SnugTiles<X>;
  using TilePlan = DirectTilePlan<X>;
};
template <typename X>
struct KernelsOf<X, true> : KernelEntries<X> {
  using Snug = SnugTiles<X>;
  using TilePlan = NoDirectTilePlan;
};

// The drivers return false, having written nothing of C, where their scratch memory (packed
// blocks, copies, sums: workspace.h) cannot be had. Members that meet at barriers (threads
// packing a block they share) agree on that before any of them writes C (TeamVote); members
// that share nothing run as shares (RunIndependentShares).

// Runs `share(member)` for each member of a team of `team` as ThreadPool::RunShares shares,
// each writing its own part of C: `share` first gets its thread's scratch (false, having
// written nothing, where it cannot), and `acquire(member)` gets the same without running.
// The caller gets every share's scratch before any share runs, so that one a worker declines
// for want of memory runs on the caller. False, with nothing written, where the caller cannot.
template <class Acquire, class Share>
bool RunIndependentShares(ThreadPool& pool, int team, const Acquire& acquire, Share&& share) {
  if (team > 1) {
    for (int member = 0; member < team; ++member) {
      if (!acquire(member)) return false;
    }
  }
  return pool.RunShares(team, share);
}

// k values per run of an A panel row in the packed family: the k group, or a whole AMX tile row
// for tile kernels (B panels are then zero-padded to the same depth).
template <typename X>
int AGroupOf(const typename KernelsOf<X>::Micro& kernel) {
  if constexpr (GemmTypes<X>::kLowPrecision) {
    return kernel.a_group;
  } else {
    return 1;
  }
}

// Operands of the packed family packed before the call (PackedB): for each k block starting at
// pc, all of the operand's panels in order at RoundUp(extent, panel) * pc, the extent being m
// for A (mr-row panels) and n for B (nr-column panels). Null: packed block by block in the call.
template <typename X>
struct PrepackedOperands {
  const typename GemmTypes<X>::A* a = nullptr;
  const typename GemmTypes<X>::B* b = nullptr;
};

// The packed family for every GEMM (gemm_packed.cc); `snug`: `kernel`'s table (SnugTiles).
template <typename X>
[[nodiscard]] bool RunPacked(const KernelConfig& config, const typename KernelsOf<X>::Micro& kernel,
                             const SnugTiles<X>& snug, const RowMajorGemm<X>& g, ThreadPool& pool,
                             const PrepackedOperands<X>& prepacked = {});
// Reads A, B and C through `a`, `b`, `c` (row-major terms), not g's pointers: a BoundGemm's
// problem is made once and only the pointers come with each call (see BoundGemm).
template <typename T>
[[nodiscard]] bool RunDirect(const KernelConfig& config, const MicroKernelEntry<T>& kernel,
               const SnugTiles<T>& snug, const RowMajorGemm<T>& g, const T* a, const T* b, T* c,
               ThreadPool& pool);
// The tile calls of a bound direct problem, planned once (BoundGemm) where it is small: one
// thread, one k block, op(B) read in place (not transposed; every partial panel masked, or
// none), at most kMaxTiles tiles. A call then only adds the operands' addresses to each tile's
// offsets, as a kernel that libxsmm dispatched for the shape would, and writes nothing before
// a kernel call: each tile keeps its whole MicroKernelArgs.
template <typename T>
struct DirectTilePlan {
  static constexpr int kMaxTiles = 8;
  struct Tile {
    std::int64_t a_offset;  // elements from A's (row-major terms) first element
    std::int64_t b_offset;
    std::int64_t c_offset;
    MicroKernelFn<T> kernel;
    MicroKernelArgs<T> args;  // the tile's m and n, and what every tile shares
  };
  Tile tiles[kMaxTiles] = {};
  int count = 0;  // 0: not planned (RunDirect runs the problem)
};

// The plan of `g` with `config` (count 0 where the problem is not such a one).
template <typename T>
DirectTilePlan<T> PlanDirectTiles(const KernelConfig& config, const MicroKernelEntry<T>& kernel,
                                  const SnugTiles<T>& snug, const RowMajorGemm<T>& g);

template <typename T>
inline void RunDirectTilePlan(const DirectTilePlan<T>& plan, const T* a, const T* b, T* c) {
  for (int t = 0; t < plan.count; ++t) {
    const typename DirectTilePlan<T>::Tile& tile = plan.tiles[t];
    tile.kernel(a + tile.a_offset, b + tile.b_offset, c + tile.c_offset, tile.args);
  }
}

// The gemv family for every GEMM (M = 1 or N = 1; gemm_gemv.cc).
template <typename X>
[[nodiscard]] bool RunGemv(const KernelConfig& config, const typename KernelEntries<X>::Gemv& kernel,
             const RowMajorGemm<X>& g, ThreadPool& pool);

}  // namespace mmtune::detail
