// The low-precision GEMMs (bf16 x bf16 -> f32, u8 x s8 -> s32; gemm_types.h): the interface of
// their generated micro-kernels and the registry that lists them. The hardware
// dot-product instructions (AVX512_BF16 VDPBF16PS, AVX512_VNNI VPDPBUSD) consume k in groups
// (2 bf16 or 4 bytes per 32-bit lane), so the packed family packs both operands with k grouped.
// M = 1 and N = 1 (decode steps) have a gemv family that streams the matrix in place instead.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/gemm_types.h"
#include "kernels/microkernel.h"
#include "machine/cpu_features.h"

namespace mmtune {

// An s8 tile's s32 sums turned into f32 in C's storage (epilogue.h: DequantizeToF32), as the s8
// `packed_epilogue` kernels do in registers: out(i, j) = act(scales[j] * (sum + offsets[j]) +
// bias), the offset added modulo 2^32, then `output`'s bias and activation. Scales and offsets
// at the tile's first column.
struct TileDequantize {
  const float* scales = nullptr;
  const std::int32_t* offsets = nullptr;
  TileEpilogue<float> output;
};

// Packed panels (packing.h) have k in groups of kGroup values: one group of one row or column
// is 4 bytes for both kinds, so a 32-bit broadcast of A meets a vector load of B.
template <class Kind>
struct LowpMicroKernelArgs {
  std::int64_t groups = 0;  // k groups in the panels
  const typename Kind::A* a = nullptr;
  const typename Kind::B* b = nullptr;
  // 0: `a` is a packed panel. Else the kernel reads A in place, rows a_row_stride elements
  // apart with k contiguous in each (a row-major A): every group a 4-byte word of one row and
  // every run of a tile row 64 bytes of one row, as in a panel, so no packing is needed where
  // the tile's rows and the k block (in whole groups or runs) are whole.
  std::int64_t a_row_stride = 0;
  // C element (i, j) of the tile is c[i * row_stride + j * col_stride]: the epilogue is scalar,
  // so a column-major C is written in place.
  typename Kind::C* c = nullptr;
  std::int64_t row_stride = 0;
  std::int64_t col_stride = 1;
  // Tile kernels: non-null where the tile's sums so far lie in a buffer (a whole MR x NR tile,
  // rows sums_row_stride elements apart), which the k steps then start from instead of zero or
  // C: C gets alpha * (sums + A * B) + beta * C.
  const typename Kind::C* sums = nullptr;
  std::int64_t sums_row_stride = 0;
  int m = 0;  // rows of the tile to write (<= MR)
  int n = 0;  // columns to write (<= NR)
  typename Kind::Scalar alpha = 1;
  typename Kind::Scalar beta = 0;  // 0: C is only written, never read
  int prefetch_a = 0;  // software prefetch distance in k groups, 0 = none
  int prefetch_b = 0;
  bool prefetch_c = false;
  // Tile kernels: the C tile the driver runs next (rows `row_stride` apart, as this one's),
  // whose lines a tile that stores its own C in place with beta 0 prefetches while its k steps
  // run, so that the next tile's stores find them in L1. Null: none.
  const typename Kind::C* next_c = nullptr;
  // Tile kernels: vector work to run between the k steps, while the tile unit multiplies (the
  // previous tile's epilogue): interleave(context, s, steps) after step s's dot products, so
  // that parts 0 .. steps - 1 together do all of it. Null for none.
  void (*interleave)(void* context, std::int64_t part, std::int64_t parts) = nullptr;
  void* interleave_context = nullptr;
  TileEpilogue<typename Kind::C> epilogue;  // bf16 `packed_epilogue` kernels only
  TileDequantize dequantize;                 // s8 `packed_epilogue` kernels only
};

template <class Kind>
using LowpMicroKernelFn = void (*)(const LowpMicroKernelArgs<Kind>&);

// Vector kernels read both panels in groups of Kind::kGroup. Tile kernels (AMX) multiply tiles
// of 16 rows of 64 bytes: their A panel holds each row's k in runs of a whole tile row (a_group
// values, so that a tile loads rows 64 bytes apart), B keeps Kind::kGroup, which is the layout
// the tile dot products read, and both panels are zero-padded to a multiple of a_group in k.
template <class Kind>
struct LowpMicroKernelEntry {
  IsaLevel isa;
  int mr;
  int nr;
  int k_unroll;  // groups per unrolled k-loop step
  LowpMicroKernelFn<Kind> packed;
  int a_group = Kind::kGroup;  // k values per run of one A panel row; packed k is a multiple
  bool tiles = false;          // AMX tile registers (AMX_BF16 / AMX_INT8) instead of vectors
  // Tile kernels run between enter() (the tile configuration, set once: loading it costs more
  // than a short tile call) and leave() (the tiles handed back) on the same thread; null for
  // vector kernels.
  void (*enter)() = nullptr;
  void (*leave)() = nullptr;
  // Whether the tile's accumulators and the operands its traits keep beside them fit the vector
  // registers (traits that declare OperandRegisters; others count as fitting). Where they do
  // not, the compiler keeps values on the stack: the analytical default passes such tiles over,
  // the tuner may still find one fast.
  bool fits_registers = true;
  // `packed` followed, in registers, by args.epilogue (bf16, microkernel.h: TileEpilogue) or
  // args.dequantize (s8); vector kernels only. Null for the tile kernels, and an s8 epilogue
  // without dequantization runs after the kernel (epilogue.h).
  LowpMicroKernelFn<Kind> packed_epilogue = nullptr;
};

// GEMV, dot form: sums[r] = sum_{p < k} x[p] * mat[r * ld + p] for r < rows, x contiguous. The
// matrix holds A's type when N = 1 (rows of op(A)) and B's when M = 1 (columns of op(B)).
template <class Kind>
using LowpGemvDotAFn = void (*)(std::int64_t rows, std::int64_t k, const typename Kind::A* mat,
                                std::int64_t ld, const typename Kind::B* x, typename Kind::C* sums);
template <class Kind>
using LowpGemvDotBFn = void (*)(std::int64_t rows, std::int64_t k, const typename Kind::B* mat,
                                std::int64_t ld, const typename Kind::A* x, typename Kind::C* sums);
// GEMV, axpy form: sums[r] += sum_{p < k} x[p * incx] * mat[p * ld + r] for r < rows (the
// matrix's storage rows run along the output).
template <class Kind>
using LowpGemvAxpyAFn = void (*)(std::int64_t k, std::int64_t rows, const typename Kind::B* x,
                                 std::int64_t incx, const typename Kind::A* mat, std::int64_t ld,
                                 typename Kind::C* sums);
template <class Kind>
using LowpGemvAxpyBFn = void (*)(std::int64_t k, std::int64_t rows, const typename Kind::A* x,
                                 std::int64_t incx, const typename Kind::B* mat, std::int64_t ld,
                                 typename Kind::C* sums);

// A GEMV kernel streams `mr` matrix rows at a time (dot form) or `mr` storage rows per pass
// over `nr` sums (axpy form). Sums are raw: the driver applies alpha and beta. For s8 they wrap
// modulo 2^32 like the packed kernels.
template <class Kind>
struct LowpGemvKernelEntry {
  IsaLevel isa;
  int mr;
  int nr;
  LowpGemvDotAFn<Kind> dot_a;    // N = 1, op(A) rows contiguous along k
  LowpGemvDotBFn<Kind> dot_b;    // M = 1, op(B) columns contiguous along k
  LowpGemvAxpyAFn<Kind> axpy_a;  // N = 1, op(A) stored k-major
  LowpGemvAxpyBFn<Kind> axpy_b;  // M = 1, op(B) stored k-major (row-major B, no transpose)
};

// The registry (microkernel.h: MicroKernels<X>, FindMicroKernel<X>, ...) lists these entries.
template <class Kind>
  requires Kind::kLowPrecision
struct KernelEntries<Kind> {
  using Micro = LowpMicroKernelEntry<Kind>;
  using Gemv = LowpGemvKernelEntry<Kind>;
};

template <class Kind>
  requires Kind::kLowPrecision
const SnugTiles<Kind>& SnugTilesOf(const LowpMicroKernelEntry<Kind>& kernel) {
  return SnugTiles<Kind>::Of(kernel);
}

// Whether the CPU has the instructions `Kind`'s kernels at `isa` use beyond the ISA level itself:
// AVX512_BF16 for bf16 and AVX512_VNNI for s8 at avx512; nothing more below.
template <class Kind>
bool CpuRunsLowp(const CpuFeatures& cpu, IsaLevel isa);

// Whether the CPU has `Kind`'s AMX tile dot product (AMX_BF16 or AMX_INT8) and the OS lets this
// process use the tile registers (asked for once, machine/amx_permission.h).
template <class Kind>
bool CpuRunsLowpTiles(const CpuFeatures& cpu);

// k values per run of a packed A panel row for X's registered kernel (isa, mr, nr, k_unroll):
// a whole tile row for an AMX kernel, else X's k group (1 for f32 and f64, and where no such
// kernel is registered). Packed k blocks hold whole runs.
template <typename X>
int PackedAGroup(IsaLevel isa, int mr, int nr, int k_unroll) {
  if constexpr (GemmTypes<X>::kLowPrecision) {
    const auto* kernel = FindMicroKernel<X>(isa, mr, nr, k_unroll);
    return kernel != nullptr ? kernel->a_group : X::kGroup;
  } else {
    return 1;
  }
}

// Whether the CPU has what the kernel `entry` uses beyond its ISA level: the level's extension
// (CpuRunsLowp) and, for tile kernels, AMX.
template <class Kind>
bool CpuRunsLowpKernel(const CpuFeatures& cpu, const LowpMicroKernelEntry<Kind>& entry) {
  return CpuRunsLowp<Kind>(cpu, entry.isa) &&
         (!entry.tiles || CpuRunsLowpTiles<Kind>(cpu));
}

}  // namespace mmtune
