// The interfaces of the generated kernels and the registry that lists them. Kernels are pure
// functions: they read their operands, write only the C elements of their tile (or output
// vector), and keep no state.
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <vector>

#include "machine/cpu_features.h"
#include "mmtune/types.h"

namespace mmtune {

// How a GEMM micro-kernel reads op(A). op(B) is read row by row: packed (row stride NR) in
// `kPacked` mode, in place with stride `ldb` otherwise.
enum class AMode : std::uint8_t {
  kPacked,  // A packed in MR-row panels: element (i, p) at a[p * MR + i]; B packed likewise
  kRows,    // A in place, row-major rows: element (i, p) at a[i * lda + p]
  kCols,    // A in place, transposed: element (i, p) at a[p * lda + i]
};

// A fused epilogue (mmtune/types.h: Epilogue) as the `_epilogue` kernels apply it to their tile
// in registers, after alpha and beta: C = act(C + bias), never a second pass over the tile. The
// driver sets it on a tile's last k block, its bias at the tile's first column (kPerColumn) or
// row (kPerRow).
template <typename T>
struct TileEpilogue {
  const T* bias = nullptr;
  BiasKind bias_kind = BiasKind::kNone;
  Activation activation = Activation::kNone;
};

// A tile call's arguments but its operands: the kernels take A's, B's and C's addresses in
// registers (MicroKernelFn), and a driver sets the rest once for many tiles. Addresses in this
// struct, written before every call, slow the short tiles markedly (docs/kernels.md,
// Micro-kernels and the registry).
template <typename T>
struct MicroKernelArgs {
  std::int64_t k = 0;
  std::int64_t lda = 0;  // in-place modes only
  std::int64_t ldb = 0;  // in-place modes only; packed B has row stride NR
  std::int64_t ldc = 0;  // C: the row-major tile at `c`, unit column stride
  int m = 0;  // rows of the tile to write (1..MR); full-tile in-place kernels take only MR
  int n = 0;  // columns to write (1..NR); in-place kernels read all NR columns of B
  T alpha = 1;
  T beta = 0;  // 0: C is only written, never read
  int prefetch_a = 0;  // software prefetch distance in k iterations, 0 = none
  int prefetch_b = 0;
  bool prefetch_c = false;  // prefetch the C tile before the k loop
  // Packed kernels: elements from each k step's B to the line of the next B panel that the step
  // prefetches into L2, 0 = none (set by the driver, not the config: see gemm_packed.cc).
  std::int64_t prefetch_next_panel = 0;
  TileEpilogue<T> epilogue;  // `_epilogue` kernels only
};

// A tile: op(A) at `a`, op(B) at `b` (as the kernel's mode reads them), C's tile at `c`.
template <typename T>
using MicroKernelFn = void (*)(const T* a, const T* b, T* c, const MicroKernelArgs<T>& args);

// One register tile: MR x NR accumulators, k loop unrolled `k_unroll` times, in the three A modes.
// `rows` and `cols` read all MR rows of A and NR columns of B; their `_edge` variants read only
// the m rows of A of a tile with m < MR and, where `edge_reads_n_columns_of_b`, only the n
// columns of B of a tile with n < NR (masked loads); otherwise still NR columns of B.
// `rows_plain` is `rows` for the plain product of a whole tile: C = op(A) op(B) (it ignores
// alpha, beta and the prefetch fields, taking them as 1, 0 and none). `packed_epilogue` and
// `rows_epilogue` are `packed` and `rows` followed by args.epilogue; the others ignore it.
template <typename T>
struct MicroKernelEntry {
  IsaLevel isa;
  int mr;
  int nr;
  int k_unroll;
  MicroKernelFn<T> packed;
  MicroKernelFn<T> rows;
  MicroKernelFn<T> cols;
  MicroKernelFn<T> rows_edge;
  MicroKernelFn<T> cols_edge;
  MicroKernelFn<T> rows_plain;
  MicroKernelFn<T> packed_epilogue;
  MicroKernelFn<T> rows_epilogue;
  bool edge_reads_n_columns_of_b;
};

// y[r * incy] = alpha * dot(A row r, x) + beta * y[r * incy] for r < rows; A rows contiguous
// with stride lda, x contiguous with k elements.
template <typename T>
using GemvDotFn = void (*)(std::int64_t rows, std::int64_t k, const T* a, std::int64_t lda,
                           const T* x, T* y, std::int64_t incy, T alpha, T beta);

// acc[j] += sum_p x[p * incx] * b[p * ldb + j] for j < n, p < k; acc contiguous (the caller
// scales and writes C at the end, so long K can be split into passes).
template <typename T>
using GemvAxpyFn = void (*)(std::int64_t k, std::int64_t n, const T* x, std::int64_t incx,
                            const T* b, std::int64_t ldb, T* acc);

// GEMV kernels stream a matrix `mr` rows at a time, `nr` elements per row step.
template <typename T>
struct GemvKernelEntry {
  IsaLevel isa;
  int mr;
  int nr;
  GemvDotFn<T> dot;
  GemvAxpyFn<T> axpy;
};

// The kernel entry types of GEMM X (gemm_types.h): these for f32 and f64, the low-precision
// ones for bf16 and s8 (lowp_microkernel.h).
template <typename X>
struct KernelEntries;
template <std::floating_point T>
struct KernelEntries<T> {
  using Micro = MicroKernelEntry<T>;
  using Gemv = GemvKernelEntry<T>;
};

// The registry, one table per GEMM X and ISA level. Every kernel compiled for `isa` (empty if
// this build has none), in the order of the tile lists in kernel_tables.h and
// lowp_kernel_tables.h: by vectors wide, then rows, k unroll 1 before 4. DirectTile keeps the
// first of equally costed tiles, so that order breaks its ties toward the narrower tile.
template <typename X>
std::span<const typename KernelEntries<X>::Micro> MicroKernels(IsaLevel isa);
template <typename X>
std::span<const typename KernelEntries<X>::Gemv> GemvKernels(IsaLevel isa);

// Whether this build has kernels of `isa` (the x86 levels exist in x86-64 builds only).
bool BuildHasKernels(IsaLevel isa);

template <typename X>
const typename KernelEntries<X>::Micro* FindMicroKernel(IsaLevel isa, int mr, int nr,
                                                        int k_unroll);
template <typename X>
const typename KernelEntries<X>::Gemv* FindGemvKernel(IsaLevel isa, int mr, int nr);

// Vector lanes of `T` at `isa` (NR and GEMV nr are multiples of it).
int VectorLanes(IsaLevel isa, std::size_t element_size);

// The kernels partial tiles run in: for a tile of m <= MR rows and n <= NR columns of
// `kernel`'s, the registered kernel of the same ISA, k unroll and A group (a vector kernel for a
// vector one), no taller and no wider, with the fewest accumulators that covers them (ties: the
// fewest rows). A partial tile costs a whole tile's FMAs in its own kernel, so a 4x64 kernel's
// last 36 columns run 4x48's three vectors instead of four, and a 12x32 kernel's last 8 rows run
// 8x32, which also reads its rows at fixed offsets (microkernel_impl.h). The direct family runs
// partial tiles of both kinds in them, the packed family its partial rows (gemm_packed.cc).
// Built once per kernel, read without a search.
template <typename X>
class SnugTiles {
 public:
  using Entry = typename KernelEntries<X>::Micro;
  // The table of `kernel`, an entry of MicroKernels<X>(kernel.isa); built on first use.
  static const SnugTiles& Of(const Entry& kernel);

  const Entry& For(int m, int n) const {
    const int vectors = (n + lanes_ - 1) / lanes_;
    return *by_shape_[static_cast<std::size_t>((m - 1) * vectors_ + (vectors - 1))];
  }

 private:
  int lanes_ = 1;
  int vectors_ = 1;  // of the kernel's tile
  std::vector<const Entry*> by_shape_;  // [(m - 1) * vectors_ + (vectors - 1)]
};

// The SnugTiles table of a registry entry, its GEMM deduced from the entry's type.
template <typename T>
const SnugTiles<T>& SnugTilesOf(const MicroKernelEntry<T>& kernel) {
  return SnugTiles<T>::Of(kernel);
}

}  // namespace mmtune
