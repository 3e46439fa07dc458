// The ONE micro-kernel template of the f32/f64 family and the GEMV templates, parameterized by a
// vector-traits type (simd/vec_*.h). Included only by the per-ISA translation units
// (ukernels_<isa>_<dtype>.cc), which instantiate it over their registry tables.
//
// No standard-library function templates here: an out-of-line copy of, say, std::min compiled
// with -mavx512f could be picked by the linker for every translation unit and fault on CPUs
// without AVX-512. Everything below is instantiated with ISA-specific types only.
//
// The kernels are [[gnu::flatten]]: every lambda and Unroll step inside must inline, or the
// accumulators end up in memory. Without it GCC 12's inliner gives up on the larger AVX-512
// tiles (8x48, 14x32, 24x16 with k unroll 4), making them several times slower
// (docs/kernels.md, Micro-kernels and the registry).
#pragma once

#include <cstdint>

#include "kernels/activation_math.h"
#include "kernels/cache_line.h"
#include "kernels/microkernel.h"
#include "kernels/simd/unroll.h"

namespace mmtune::ukernel {

using simd::Unroll;

// How a micro-kernel writes its tile: C = acc (alpha = 1, beta = 0), C = alpha * acc (beta = 0:
// C is never read), or C = alpha * acc + beta * C.
enum class StoreMode { kPlain, kScaled, kGeneral };

// C tile (MR x NR, NR = NV vectors) = alpha * op(A) * op(B) + beta * C. Accumulates the whole
// k loop in registers, then writes the m x n corner of the tile; partial vectors use masked
// loads/stores so nothing outside the tile is read or written.
//
// kEdge (in-place modes only) is the variant for a tile of fewer than MR rows or NR columns read
// where it lies. Where the ISA has cheap masked loads (Vec::kCheapMaskedLoads), it reads only the
// n columns of B of a tile with n < NR, each B vector under a mask set once before the k loop, so
// the direct driver reads partial column panels in place. Elsewhere B is read NR columns wide and
// the driver gives partial column panels a zero-padded copy (AVX2's vmaskmov loads were not
// measured against it; a per-step `lanes == L ? Load : LoadPartial` made GCC 12 store every
// accumulator to memory on every k step). With !kAllRows (m < MR), rows past m re-read row m - 1,
// so only op(A)'s m rows are touched: a full tile's FMAs but no copy, each row at an offset of
// its own. Tiles of all MR rows keep fixed row offsets (see EdgeMicroKernel).
//
// kPlain is the variant for the plain product of a whole tile (alpha = 1, beta = 0, no software
// prefetch), which the driver picks once a call: without the prefetch tests and the choice of
// store, which cost a few percent of a small call (a lean path inside the general kernel does
// not recover all of it; docs/kernels.md, Micro-kernels and the registry).
//
// kEpilogue is the variant that applies args.epilogue to the tile in registers before storing
// it: a copy of its own, so that the others carry none of its code.
//
// noinline: the kernels are called through the registry's pointers, and EdgeMicroKernel must
// call its two variants rather than merge their loops (see there).
template <class Vec, int MR, int NV, int KU, AMode kMode, bool kEdge = false,
          bool kAllRows = !kEdge, bool kPlain = false, bool kEpilogue = false>
[[gnu::flatten, gnu::noinline]] void MicroKernel(
    const typename Vec::Element* tile_a, const typename Vec::Element* tile_b,
    typename Vec::Element* tile_c, const MicroKernelArgs<typename Vec::Element>& args) {
  using T = typename Vec::Element;
  using V = typename Vec::V;
  constexpr int L = Vec::kLanes;
  constexpr int NR = NV * L;
  static_assert(MR * NV + NV + 1 <= Vec::kRegisters, "register tile does not fit");
  static_assert(!kEdge || kMode != AMode::kPacked, "packed tiles are zero-padded: no edge variant");
  static_assert(kEdge || kAllRows, "only the edge variant reads fewer than MR rows");
  static_assert(!kPlain || (!kEdge && kMode == AMode::kRows), "plain: whole in-place tiles");
  static_assert(!kEpilogue || (!kEdge && !kPlain), "epilogue: whole tiles or packed panels");

  V acc[MR][NV];
  Unroll<MR>([&](auto i) { Unroll<NV>([&](auto v) { acc[i][v] = Vec::Zero(); }); });

  // The fields the epilogue needs, read once: the C stores go through may_alias vector types,
  // so GCC would otherwise reload every field from `args` after each row's store.
  const int m = args.m;
  const int n = args.n;
  T* const c = tile_c;
  const std::int64_t ldc = args.ldc;

  if (!kPlain && args.prefetch_c) {
    for (int i = 0; i < m; ++i) {
      __builtin_prefetch(c + i * ldc, 1, 3);
      __builtin_prefetch(c + i * ldc + n - 1, 1, 3);
    }
  }

  const std::int64_t lda = args.lda;
  // Elements between consecutive k of A and of B.
  const std::int64_t a_step = kMode == AMode::kPacked ? MR : kMode == AMode::kRows ? 1 : lda;
  const std::int64_t b_step = kMode == AMode::kPacked ? NR : args.ldb;
  const std::int64_t a_ahead = args.prefetch_a * a_step;
  const std::int64_t b_ahead = args.prefetch_b * b_step;
  const std::int64_t next_panel = kMode == AMode::kPacked ? args.prefetch_next_panel : 0;

  // Tiles of fewer than MR rows: where row i of op(A) starts (row m - 1 for the rows past m).
  std::int64_t edge_row_offset[MR] = {};
  if constexpr (!kAllRows) {
    for (int i = 0; i < MR; ++i) {
      const std::int64_t row = i < m ? i : m - 1;
      edge_row_offset[i] = kMode == AMode::kRows ? row * lda : row;
    }
  }

  // Tiles of all MR rows read by rows address rows 8 and up from a second pointer, `ap_high` (row
  // 8 at k): from one pointer, a tile of more than 8 rows needs MR - 1 row-offset registers and
  // GCC 12 spills them inside the k loop, slowing the taller tiles; with two, the offsets
  // 1..7 * lda serve both halves. Elsewhere `ap_high` stays at `ap`, unused.
  constexpr int kLowRows = 8;
  constexpr bool kHighRows = kMode == AMode::kRows && kAllRows && MR > kLowRows;
  auto a_elem = [&](const T* ap, const T* ap_high, int i) -> T {
    if constexpr (!kAllRows) {
      return ap[edge_row_offset[i]];
    } else if constexpr (kMode == AMode::kRows) {
      return i < kLowRows ? ap[i * lda] : ap_high[(i - kLowRows) * lda];
    } else {
      return ap[i];
    }
  };
  // The columns of each vector of the tile (0..L) and, where masks are cheap, their lane masks:
  // set once for B's loads and C's stores.
  constexpr bool kMaskB = kEdge && Vec::kCheapMaskedLoads;
  int lanes[NV];
  typename Vec::MaskType column_mask[NV] = {};
  Unroll<NV>([&](auto v) {
    const int left = n - static_cast<int>(v) * L;
    lanes[v] = left < 0 ? 0 : left < L ? left : L;
    if constexpr (Vec::kCheapMaskedLoads) column_mask[v] = Vec::LaneMask(lanes[v]);
  });
  auto step = [&](const T* ap, const T* ap_high, const T* bp) __attribute__((always_inline)) {
    V bv[NV];
    Unroll<NV>([&](auto v) {
      if constexpr (kMaskB) {
        bv[v] = Vec::LoadMasked(bp + v * L, column_mask[v]);
      } else {
        bv[v] = Vec::Load(bp + v * L);
      }
    });
    Unroll<MR>([&](auto i) {
      const V av = Vec::Set1(a_elem(ap, ap_high, i));
      Unroll<NV>([&](auto v) { acc[i][v] = Vec::Fma(av, bv[v], acc[i][v]); });
    });
  };
  // Two copies of the k loop, so that a kernel without software prefetch carries no prefetch
  // instructions (they cost issue slots in the short loops of small matrices).
  auto k_loop = [&]<bool kPrefetch>() __attribute__((always_inline)) {
    const T* a = tile_a;
    const T* a_high = kHighRows ? tile_a + kLowRows * lda : tile_a;
    const T* b = tile_b;
    std::int64_t p = 0;
    for (; p + KU <= args.k; p += KU) {
      if constexpr (kPrefetch) {
        __builtin_prefetch(a + a_ahead, 0, 3);
        __builtin_prefetch(b + b_ahead, 0, 3);
        __builtin_prefetch(b + next_panel, 0, 2);
      }
      Unroll<KU>([&](auto u) { step(a + u * a_step, a_high + u * a_step, b + u * b_step); });
      a += KU * a_step;
      a_high += KU * a_step;
      b += KU * b_step;
    }
    for (; p < args.k; ++p) {
      step(a, a_high, b);
      a += a_step;
      a_high += a_step;
      b += b_step;
    }
  };
  if (!kPlain && (a_ahead != 0 || b_ahead != 0 || next_panel != 0)) {
    k_loop.template operator()<true>();
  } else {
    k_loop.template operator()<false>();
  }

  // C = alpha * acc + beta * C over the m x n corner, in one of six copies: the plain product
  // (alpha = 1, beta = 0, the common C = A * B) stores the accumulators as they are (the general
  // multiply takes an FMA slot per vector, a noticeable share of a small call), beta = 0 never
  // reads C, and a tile of all NR columns stores whole vectors. Everything a store depends on
  // is decided once, not per row: a test of beta and a mask built from n on every row slow
  // partial tiles with short k loops. In-place tiles of all rows write all MR rows (the driver
  // calls them only with m = MR).
  constexpr bool kWritesAllRows = kAllRows && kMode != AMode::kPacked;
  auto store_tile = [&]<StoreMode kStore, bool kAllColumns>() __attribute__((always_inline)) {
    const V alpha = Vec::Set1(args.alpha);
    const V beta = Vec::Set1(args.beta);
    Unroll<MR>([&](auto i) {
      if constexpr (!kWritesAllRows) {
        if (i >= m) return;
      }
      T* const row = c + i * ldc;
      Unroll<NV>([&](auto v) {
        T* const out = row + v * L;
        V result = kStore == StoreMode::kPlain ? acc[i][v] : Vec::Mul(acc[i][v], alpha);
        constexpr bool kReadC = kStore == StoreMode::kGeneral;
        if constexpr (kAllColumns) {
          if constexpr (kReadC) result = Vec::Fma(Vec::Load(out), beta, result);
          Vec::Store(out, result);
        } else if constexpr (Vec::kCheapMaskedLoads) {
          // Masked-off lanes are neither read nor written: a vector past n stores nothing.
          if constexpr (kReadC) {
            result = Vec::Fma(Vec::LoadMasked(out, column_mask[v]), beta, result);
          }
          Vec::StoreMasked(out, result, column_mask[v]);
        } else if (lanes[v] == L) {
          if constexpr (kReadC) result = Vec::Fma(Vec::Load(out), beta, result);
          Vec::Store(out, result);
        } else if (lanes[v] > 0) {
          if constexpr (kReadC) result = Vec::Fma(Vec::LoadPartial(out, lanes[v]), beta, result);
          Vec::StorePartial(out, result, lanes[v]);
        }
      });
    });
  };
  // C = act(alpha * acc + beta * C + bias) in one copy for each of the activations' two forms
  // (activation_math.h: Form), where the general store above takes six: beside an activation,
  // alpha's multiply and a test of beta and of the columns per vector cost little.
  const TileEpilogue<T>& epilogue = args.epilogue;
  auto store_finished = [&]<bool kSigmoid>(const activation::Form<T>& form)
                            __attribute__((always_inline)) {
    const V alpha = Vec::Set1(args.alpha);
    const V beta = Vec::Set1(args.beta);
    const bool scale = args.alpha != T(1);  // x * 1 is x: the common alpha skips its multiply
    const bool read_c = args.beta != T(0);
    const bool by_row = epilogue.bias_kind == BiasKind::kPerRow;
    V column_bias[NV];
    Unroll<NV>([&](auto v) __attribute__((always_inline)) {
      const T* const bias = epilogue.bias + v * L;
      column_bias[v] = Vec::Zero();
      if (epilogue.bias_kind != BiasKind::kPerColumn) return;
      if constexpr (Vec::kCheapMaskedLoads) {
        column_bias[v] = Vec::LoadMasked(bias, column_mask[v]);
      } else if (lanes[v] == L) {
        column_bias[v] = Vec::Load(bias);
      } else if (lanes[v] > 0) {
        column_bias[v] = Vec::LoadPartial(bias, lanes[v]);
      }
    });
    Unroll<MR>([&](auto i) __attribute__((always_inline)) {
      if constexpr (!kWritesAllRows) {
        if (i >= m) return;
      }
      T* const row = c + i * ldc;
      // The bias as one term, as the epilogue functions add it (the same bits either way).
      const V row_bias = by_row ? Vec::Set1(epilogue.bias[i]) : Vec::Zero();
      Unroll<NV>([&](auto v) __attribute__((always_inline)) {
        T* const out = row + v * L;
        if constexpr (!Vec::kCheapMaskedLoads) {
          if (lanes[v] == 0) return;
        }
        V result = acc[i][v];
        if (scale) result = Vec::Mul(result, alpha);
        if (read_c) {
          if constexpr (Vec::kCheapMaskedLoads) {
            result = Vec::Fma(Vec::LoadMasked(out, column_mask[v]), beta, result);
          } else {
            const V old = lanes[v] == L ? Vec::Load(out) : Vec::LoadPartial(out, lanes[v]);
            result = Vec::Fma(old, beta, result);
          }
        }
        result = form.template Apply<kSigmoid>(result + (by_row ? row_bias : column_bias[v]));
        if constexpr (Vec::kCheapMaskedLoads) {
          Vec::StoreMasked(out, result, column_mask[v]);
        } else if (lanes[v] == L) {
          Vec::Store(out, result);
        } else {
          Vec::StorePartial(out, result, lanes[v]);
        }
      });
    });
  };
  auto store_columns = [&]<StoreMode kStore>() __attribute__((always_inline)) {
    if (n == NR) {
      store_tile.template operator()<kStore, true>();
    } else {
      store_tile.template operator()<kStore, false>();
    }
  };
  if constexpr (kEpilogue) {
    const activation::Form<T> form(epilogue.activation);
    if (form.sigmoid) {
      store_finished.template operator()<true>(form);
    } else {
      store_finished.template operator()<false>(form);
    }
  } else if constexpr (kPlain) {
    store_tile.template operator()<StoreMode::kPlain, true>();
  } else if (args.beta != T(0)) {
    store_columns.template operator()<StoreMode::kGeneral>();
  } else if (args.alpha != T(1)) {
    store_columns.template operator()<StoreMode::kScaled>();
  } else {
    store_columns.template operator()<StoreMode::kPlain>();
  }
}

// The edge entry of the registry: a tile of all MR rows (only its columns partial) keeps the
// full tile's fixed row offsets; per-row offsets, one register each, spill in the k loop of the
// larger tiles and slow them. Two instances, not one kernel with both loops: GCC 12 keeps the
// accumulators of such a kernel in memory, several times slower.
template <class Vec, int MR, int NV, int KU, AMode kMode>
void EdgeMicroKernel(const typename Vec::Element* a, const typename Vec::Element* b,
                     typename Vec::Element* c, const MicroKernelArgs<typename Vec::Element>& args) {
  if (args.m == MR) {
    MicroKernel<Vec, MR, NV, KU, kMode, true, true>(a, b, c, args);
  } else {
    MicroKernel<Vec, MR, NV, KU, kMode, true, false>(a, b, c, args);
  }
}

// Elements of `p` before its next cache line starts (0 where it starts one, or where an element
// straddles lines). A stream that starts mid-line reads each of its vectors across two lines
// unless these are taken first. glibc's malloc returns large blocks 16 bytes past a page, and
// there GEMV reads its matrix clearly slower than on a line boundary unless the head is taken
// apart (docs/kernels.md, Families). A template of `Vec`, not of the element type, like
// everything here: each ISA's translation unit keeps its own copy.
template <class Vec>
inline std::int64_t ElementsBeforeLine(const typename Vec::Element* p) {
  constexpr auto kElementBytes = static_cast<std::int64_t>(sizeof(typename Vec::Element));
  const auto offset = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) %
                                                static_cast<std::uintptr_t>(kCacheLineBytes));
  if (offset % kElementBytes != 0) return 0;
  return (kCacheLineBytes - offset) % kCacheLineBytes / kElementBytes;
}

// GEMV, dot form: R rows of A at a time, each with KV vector accumulators along k. The k
// elements before row 0's first line boundary go first, a vector or part of one at a time, so
// the main loop reads whole lines (all R rows' where lda keeps them in step).
template <class Vec, int R, int KV>
[[gnu::flatten]] void GemvDotBlock(std::int64_t k, const typename Vec::Element* a, std::int64_t lda,
                  const typename Vec::Element* x, typename Vec::Element* sums) {
  using V = typename Vec::V;
  constexpr int L = Vec::kLanes;
  V acc[R][KV];
  Unroll<R>([&](auto r) { Unroll<KV>([&](auto u) { acc[r][u] = Vec::Zero(); }); });
  // Elements p up to `end` (at most L of them) into the first accumulators.
  auto partial_step = [&](std::int64_t p, std::int64_t end) __attribute__((always_inline)) {
    const int lanes = end - p < L ? static_cast<int>(end - p) : L;
    const V xv = lanes == L ? Vec::Load(x + p) : Vec::LoadPartial(x + p, lanes);
    Unroll<R>([&](auto r) {
      const V av = lanes == L ? Vec::Load(a + r * lda + p) : Vec::LoadPartial(a + r * lda + p, lanes);
      acc[r][0] = Vec::Fma(av, xv, acc[r][0]);
    });
  };
  const std::int64_t before_line = ElementsBeforeLine<Vec>(a);
  const std::int64_t head = before_line < k ? before_line : k;
  std::int64_t p = 0;
  for (; p < head; p += L) partial_step(p, head);
  p = head;
  for (; p + KV * L <= k; p += KV * L) {
    Unroll<KV>([&](auto u) {
      const V xv = Vec::Load(x + p + u * L);
      Unroll<R>([&](auto r) {
        acc[r][u] = Vec::Fma(Vec::Load(a + r * lda + p + u * L), xv, acc[r][u]);
      });
    });
  }
  for (; p < k; p += L) partial_step(p, k);
  Unroll<R>([&](auto r) {
    V total = acc[r][0];
    Unroll<KV - 1>([&](auto u) { total = total + acc[r][u + 1]; });
    sums[r] = Vec::ReduceAdd(total);
  });
}

template <class Vec, int R, int KV>
void GemvDot(std::int64_t rows, std::int64_t k, const typename Vec::Element* a, std::int64_t lda,
             const typename Vec::Element* x, typename Vec::Element* y, std::int64_t incy,
             typename Vec::Element alpha, typename Vec::Element beta) {
  using T = typename Vec::Element;
  T sums[R];
  auto finish = [&](std::int64_t row, T sum) {
    T& out = y[row * incy];
    out = beta == T(0) ? alpha * sum : alpha * sum + beta * out;
  };
  std::int64_t r = 0;
  for (; r + R <= rows; r += R) {
    GemvDotBlock<Vec, R, KV>(k, a + r * lda, lda, x, sums);
    for (int i = 0; i < R; ++i) finish(r + i, sums[i]);
  }
  for (; r < rows; ++r) {
    GemvDotBlock<Vec, 1, KV>(k, a + r * lda, lda, x, sums);
    finish(r, sums[0]);
  }
}

// GEMV, axpy form: streams `KR` rows of B per pass over the accumulator vector, NV vectors of it
// per step, so B is read sequentially and acc stays in L1/L2. The columns before B's first line
// boundary go first in each pass, so the main loop reads whole lines of B (of every row where
// ldb keeps them in step) and, where the caller gave acc the same offset within a line, of acc.
template <class Vec, int KR, int NV>
[[gnu::flatten]] void GemvAxpy(std::int64_t k, std::int64_t n, const typename Vec::Element* x, std::int64_t incx,
              const typename Vec::Element* b, std::int64_t ldb, typename Vec::Element* acc) {
  using T = typename Vec::Element;
  using V = typename Vec::V;
  constexpr int L = Vec::kLanes;
  const std::int64_t before_line = ElementsBeforeLine<Vec>(b);
  const std::int64_t head = before_line < n ? before_line : n;
  auto pass = [&]<int kRows>(std::int64_t p) __attribute__((always_inline)) {
    V xv[kRows];
    const T* rows[kRows];
    Unroll<kRows>([&](auto u) {
      xv[u] = Vec::Set1(x[(p + u) * incx]);
      rows[u] = b + (p + u) * ldb;
    });
    // Columns j up to `end` (at most L of them).
    auto partial_step = [&](std::int64_t j, std::int64_t end) __attribute__((always_inline)) {
      const int lanes = end - j < L ? static_cast<int>(end - j) : L;
      V sum = Vec::LoadPartial(acc + j, lanes);
      Unroll<kRows>([&](auto u) {
        sum = Vec::Fma(xv[u], Vec::LoadPartial(rows[u] + j, lanes), sum);
      });
      Vec::StorePartial(acc + j, sum, lanes);
    };
    std::int64_t j = 0;
    for (; j < head; j += L) partial_step(j, head);
    j = head;
    for (; j + NV * L <= n; j += NV * L) {
      Unroll<NV>([&](auto v) {
        V sum = Vec::Load(acc + j + v * L);
        Unroll<kRows>([&](auto u) { sum = Vec::Fma(xv[u], Vec::Load(rows[u] + j + v * L), sum); });
        Vec::Store(acc + j + v * L, sum);
      });
    }
    for (; j < n; j += L) partial_step(j, n);
  };
  std::int64_t p = 0;
  for (; p + KR <= k; p += KR) pass.template operator()<KR>(p);
  for (; p < k; ++p) pass.template operator()<1>(p);
}

// Registry rows: one MicroKernelEntry per (MR, NV, KU), one GemvKernelEntry per (R, V).
template <class Vec, int MR, int NV, int KU>
constexpr MicroKernelEntry<typename Vec::Element> Entry() {
  return {Vec::kIsa,
          MR,
          NV * Vec::kLanes,
          KU,
          &MicroKernel<Vec, MR, NV, KU, AMode::kPacked>,
          &MicroKernel<Vec, MR, NV, KU, AMode::kRows>,
          &MicroKernel<Vec, MR, NV, KU, AMode::kCols>,
          &EdgeMicroKernel<Vec, MR, NV, KU, AMode::kRows>,
          &EdgeMicroKernel<Vec, MR, NV, KU, AMode::kCols>,
          &MicroKernel<Vec, MR, NV, KU, AMode::kRows, false, true, true>,
          &MicroKernel<Vec, MR, NV, KU, AMode::kPacked, false, true, false, true>,
          &MicroKernel<Vec, MR, NV, KU, AMode::kRows, false, true, false, true>,
          Vec::kCheapMaskedLoads};
}

template <class Vec, int R, int NV>
constexpr GemvKernelEntry<typename Vec::Element> GemvEntry() {
  return {Vec::kIsa, R, NV * Vec::kLanes, &GemvDot<Vec, R, NV>, &GemvAxpy<Vec, R, NV>};
}

}  // namespace mmtune::ukernel
