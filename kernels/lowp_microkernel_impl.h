// The ONE micro-kernel template of the low-precision family (bf16, s8), parameterized by a lowp
// traits type (simd/lowp_vec_*.h). Included only by the per-ISA translation units
// (ukernels_<isa>_lowp.cc), which instantiate it over their registry tables. As in
// microkernel_impl.h, no standard-library function templates: every out-of-line function here
// is instantiated with ISA-specific types only.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/activation_math.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/simd/unroll.h"

namespace mmtune::ukernel {

// C = alpha * tile + beta * C for the m x n corner of a tile of NR columns (row i at
// tile[i * NR]), element by element with any row and column stride. s8 wraps modulo 2^32 like
// the accumulation. A full-width corner of a row-major C takes loops the compiler vectorizes.
template <class Kind, int NR>
[[gnu::always_inline]] inline void WriteTile(const LowpMicroKernelArgs<Kind>& args,
                                             const typename Kind::C* tile) {
  using C = typename Kind::C;
  // In unsigned arithmetic for s8: it wraps, with no overflow to fear.
  using Math = std::conditional_t<std::is_same_v<C, float>, float, std::uint32_t>;
  const Math alpha = static_cast<Math>(args.alpha);
  const Math beta = static_cast<Math>(args.beta);
  auto write = [&]<bool kReadC>(int columns, std::int64_t col_stride)
                   __attribute__((always_inline)) {
    for (int i = 0; i < args.m; ++i) {
      const C* sums = tile + i * NR;
      C* row = args.c + i * args.row_stride;
      for (int j = 0; j < columns; ++j) {
        C& out = row[j * col_stride];
        Math value = alpha * static_cast<Math>(sums[j]);
        if constexpr (kReadC) value += beta * static_cast<Math>(out);
        out = static_cast<C>(value);
      }
    }
  };
  const bool read_c = args.beta != 0;  // C is only written when beta is 0 (NaN stays out)
  if (args.col_stride == 1 && args.n == NR) {
    if (read_c) {
      write.template operator()<true>(NR, 1);
    } else {
      write.template operator()<false>(NR, 1);
    }
  } else if (read_c) {
    write.template operator()<true>(args.n, args.col_stride);
  } else {
    write.template operator()<false>(args.n, args.col_stride);
  }
}

// The k loop of traits whose instruction multiplies 2 x 2 blocks (lowp_vec_neon.h: USMMLA,
// BFMMLA, marked by kPairedGroups): two groups of k per step, rows and columns in pairs, from the
// panels of the vector kernels (the traits interleave each pair's groups as they load them). It
// leaves the tile's rows in `acc` as the vector k loop does.
template <class Vec, int MR, int NV>
[[gnu::always_inline]] inline void PairedKLoop(const LowpMicroKernelArgs<typename Vec::Kind>& args,
                                               typename Vec::Acc (&acc)[MR][NV]) {
  using Kind = typename Vec::Kind;
  using A = typename Kind::A;
  using B = typename Kind::B;
  using Acc = typename Vec::Acc;
  constexpr int L = Vec::kLanes;
  constexpr int NR = NV * L;
  constexpr int G = Kind::kGroup;
  constexpr int P = MR / 2;  // row pairs
  constexpr int Q = 2 * NV;  // column pairs, two per vector
  static_assert(MR % 2 == 0 && L == 4, "paired tiles take rows and columns in pairs");

  Acc blocks[P][Q];
  simd::Unroll<P>([&](auto p) { simd::Unroll<Q>([&](auto q) { blocks[p][q] = Vec::Zero(); }); });
  // Groups g and g + 1: each pair of rows from A's packed panel (rows of a group side by side)
  // or from A in place (a row's groups side by side), B's from its panel's two group rows.
  auto step = [&]<bool kInPlace>(const A* a, const A* a_next, std::int64_t row, const B* b)
                  __attribute__((always_inline)) {
    typename Vec::BPair bp[Q];
    simd::Unroll<NV>([&](auto v) __attribute__((always_inline)) {
      Vec::PairColumns(b + v * L * G, b + NR * G + v * L * G, bp[2 * v], bp[2 * v + 1]);
    });
    simd::Unroll<P>([&](auto p) __attribute__((always_inline)) {
      typename Vec::APair ap;
      if constexpr (kInPlace) {
        ap = Vec::PairRowsInPlace(a + 2 * p * row, a + (2 * p + 1) * row);
      } else {
        ap = Vec::PairRowsPacked(a + 2 * p * G, a_next + 2 * p * G);
      }
      simd::Unroll<Q>([&](auto q) __attribute__((always_inline)) {
        blocks[p][q] = Vec::BlockDot(blocks[p][q], ap, bp[q]);
      });
    });
  };
  const std::int64_t b_ahead = std::int64_t{args.prefetch_b} * NR * G;
  const std::int64_t a_ahead = std::int64_t{args.prefetch_a} * MR * G;
  const A* a = args.a;
  const B* b = args.b;
  const bool in_place = args.a_row_stride != 0;
  std::int64_t g = 0;
  if (in_place) {
    for (; g + 2 <= args.groups; g += 2) {
      if (args.prefetch_b != 0) __builtin_prefetch(b + b_ahead, 0, 3);
      step.template operator()<true>(a, nullptr, args.a_row_stride, b);
      a += 2 * G;
      b += 2 * NR * G;
    }
  } else {
    for (; g + 2 <= args.groups; g += 2) {
      if (args.prefetch_a != 0) __builtin_prefetch(a + a_ahead, 0, 3);
      if (args.prefetch_b != 0) __builtin_prefetch(b + b_ahead, 0, 3);
      step.template operator()<false>(a, a + MR * G, 0, b);
      a += 2 * MR * G;
      b += 2 * NR * G;
    }
  }
  if (g < args.groups) {
    // An odd last group: paired with zeros, from copies, so nothing past it is read.
    A last_a[2 * MR * G] = {};
    B last_b[2 * NR * G] = {};
    const std::int64_t row = in_place ? args.a_row_stride : G;
    for (int i = 0; i < MR; ++i) {
      for (int t = 0; t < G; ++t) last_a[i * G + t] = a[i * row + t];
    }
    for (int j = 0; j < NR * G; ++j) last_b[j] = b[j];
    step.template operator()<false>(last_a, last_a + MR * G, 0, last_b);
  }
  simd::Unroll<P>([&](auto p) {
    simd::Unroll<NV>([&](auto v) {
      Vec::Unpair(blocks[p][2 * v], blocks[p][2 * v + 1], acc[2 * p][v], acc[2 * p + 1][v]);
    });
  });
}

// C tile (MR x NR, NR = NV vectors) = alpha * A panel * B panel + beta * C. The k loop runs over
// groups in registers; a whole tile of a row-major C is written from them, an edge tile or a
// column-major C goes through a small buffer and only its m x n corner is written, element by
// element, with any row and column stride. kEpilogue is the variant that applies args.epilogue
// (bf16) or args.dequantize (s8) to the tile in registers before writing it.
template <class Vec, int MR, int NV, int KU, bool kEpilogue = false>
[[gnu::flatten]] void LowpMicroKernel(const LowpMicroKernelArgs<typename Vec::Kind>& args) {
  using Kind = typename Vec::Kind;
  using Acc = typename Vec::Acc;
  using C = typename Kind::C;
  constexpr int L = Vec::kLanes;
  constexpr int NR = NV * L;
  constexpr int G = Kind::kGroup;

  Acc acc[MR][NV];
  simd::Unroll<MR>([&](auto i) { simd::Unroll<NV>([&](auto v) { acc[i][v] = Vec::Zero(); }); });

  if (args.prefetch_c) {
    for (int i = 0; i < args.m; ++i) {
      __builtin_prefetch(args.c + i * args.row_stride, 1, 3);
      __builtin_prefetch(args.c + i * args.row_stride + (args.n - 1) * args.col_stride, 1, 3);
    }
  }

  if constexpr (requires { Vec::kPairedGroups; }) {
    PairedKLoop<Vec, MR, NV>(args, acc);
  } else {
    // Tile row i's group at a + i * row, the next group `next` further on: (G, MR * G) in a packed
    // panel, (a_row_stride, G) in place.
    auto step = [&](const typename Kind::A* a, std::int64_t row, const typename Kind::B* b)
                    __attribute__((always_inline)) {
      typename Vec::BOperand bv[NV];
      simd::Unroll<NV>(
          [&](auto v) __attribute__((always_inline)) { bv[v] = Vec::LoadB(b + v * L * G); });
      simd::Unroll<MR>([&](auto i) __attribute__((always_inline)) {
        const typename Vec::AOperand av = Vec::LoadA(a + i * row);
        simd::Unroll<NV>([&](auto v) __attribute__((always_inline)) {
          acc[i][v] = Vec::Dot(acc[i][v], av, bv[v]);
        });
      });
    };
    const std::int64_t b_ahead = std::int64_t{args.prefetch_b} * NR * G;
    // As in the f32 kernel: a copy of the loop without prefetches for configs that turn them off.
    // A read in place is left to the hardware prefetchers (MR streams, each sequential).
    auto k_loop = [&]<bool kPrefetch, bool kInPlace>() __attribute__((always_inline)) {
      const std::int64_t row = kInPlace ? args.a_row_stride : G;
      constexpr std::int64_t kNext = kInPlace ? G : MR * G;
      const std::int64_t a_ahead = kInPlace ? 0 : std::int64_t{args.prefetch_a} * MR * G;
      const typename Kind::A* a = args.a;
      const typename Kind::B* b = args.b;
      std::int64_t g = 0;
      for (; g + KU <= args.groups; g += KU) {
        if constexpr (kPrefetch) {
          if constexpr (!kInPlace) __builtin_prefetch(a + a_ahead, 0, 3);
          __builtin_prefetch(b + b_ahead, 0, 3);
        }
        simd::Unroll<KU>([&](auto u) __attribute__((always_inline)) {
          step(a + u * kNext, row, b + u * NR * G);
        });
        a += KU * kNext;
        b += KU * NR * G;
      }
      for (; g < args.groups; ++g) {
        step(a, row, b);
        a += kNext;
        b += NR * G;
      }
    };
    const bool prefetch = args.prefetch_b != 0 || (args.prefetch_a != 0 && args.a_row_stride == 0);
    if (args.a_row_stride != 0) {
      if (prefetch) {
        k_loop.template operator()<true, true>();
      } else {
        k_loop.template operator()<false, true>();
      }
    } else if (prefetch) {
      k_loop.template operator()<true, false>();
    } else {
      k_loop.template operator()<false, false>();
    }
  }

  if constexpr (kEpilogue) {
    // bf16 (an f32 C): C = act(alpha * acc + beta * C + bias). s8: C's storage gets
    // act(scales[j] * (alpha * acc + beta * C + offsets[j]) + bias) as f32 (args.dequantize; C
    // holds the s32 sums of the k blocks before, where beta is 1). One copy
    // for each of the activations' two forms (activation_math.h: Form). A partial tile or a
    // column-major C reads C's old values and the per-column terms from zero-padded buffers and
    // leaves its results in one, copied to C after.
    constexpr bool kDequantize = !std::is_same_v<C, float>;
    using F = typename activation::Vectors32<sizeof(Acc)>::F;
    using I = typename activation::Vectors32<sizeof(Acc)>::I;
    using U = typename activation::Vectors32<sizeof(Acc)>::U;
    const TileEpilogue<float>& output = [&]() -> const TileEpilogue<float>& {
      if constexpr (kDequantize) {
        return args.dequantize.output;
      } else {
        return args.epilogue;
      }
    }();
    const bool whole = args.m == MR && args.n == NR && args.col_stride == 1;
    const bool read_c = args.beta != 0;
    const bool by_column = output.bias_kind == BiasKind::kPerColumn;
    const bool by_row = output.bias_kind == BiasKind::kPerRow;
    C staged[MR][NR];
    float padded_bias[NR];
    [[maybe_unused]] float padded_scales[NR];
    [[maybe_unused]] std::int32_t padded_offsets[NR];
    const float* column_bias = output.bias;
    [[maybe_unused]] const float* scales = args.dequantize.scales;
    [[maybe_unused]] const std::int32_t* offsets = args.dequantize.offsets;
    if (!whole) {
      for (int i = 0; i < MR; ++i) {
        for (int j = 0; j < NR; ++j) {
          const bool inside = read_c && i < args.m && j < args.n;
          staged[i][j] = inside ? args.c[i * args.row_stride + j * args.col_stride] : C(0);
        }
      }
      for (int j = 0; j < NR; ++j) {
        const bool inside = j < args.n;
        padded_bias[j] = by_column && inside ? output.bias[j] : 0.0f;
        if constexpr (kDequantize) {
          padded_scales[j] = inside ? scales[j] : 0.0f;
          padded_offsets[j] = inside ? offsets[j] : 0;
        }
      }
      column_bias = padded_bias;
      scales = padded_scales;
      offsets = padded_offsets;
    }
    auto load = []<typename V, typename T>(const T* p) __attribute__((always_inline)) {
      V x;
      __builtin_memcpy(&x, p, sizeof x);
      return x;
    };
    auto finish = [&]<bool kSigmoid>(const activation::Form<float>& form)
                      __attribute__((always_inline)) {
      const Acc alpha = Vec::Broadcast(args.alpha);
      const Acc beta = Vec::Broadcast(args.beta);
      const bool scale = args.alpha != 1;  // the common alpha skips its multiply-add
      simd::Unroll<MR>([&](auto i) {
        if (i >= args.m) return;
        C* const row = whole ? args.c + i * args.row_stride : &staged[i][0];
        const F row_bias = by_row ? activation::Splat<F>(output.bias[i]) : F{};
        simd::Unroll<NV>([&](auto v) {
          // The bias as one term, as the epilogue functions add it: a GEMM whose tiles take
          // both ways (packed and gemv, packed weights and not) gets the same bits from each.
          const F bias = by_column ? load.template operator()<F>(column_bias + v * L) : row_bias;
          F out;
          if constexpr (kDequantize) {
            // alpha * acc + beta * C (the sums of the k blocks before) + offset, modulo 2^32.
            const auto alpha_u = static_cast<std::uint32_t>(args.alpha);
            const auto beta_u = static_cast<std::uint32_t>(args.beta);
            U sum = (U)acc[i][v] * alpha_u;
            if (read_c) sum += load.template operator()<U>(row + v * L) * beta_u;
            sum += load.template operator()<U>(offsets + v * L);
            out = activation::MulAdd(load.template operator()<F>(scales + v * L),
                                     __builtin_convertvector((I)sum, F), bias);
          } else {
            Acc scaled = acc[i][v];
            if (scale) scaled = Vec::MulAdd(Vec::Zero(), scaled, alpha);
            if (read_c) scaled = Vec::MulAdd(scaled, Vec::LoadAcc(row + v * L), beta);
            out = scaled;
            out += bias;
          }
          out = form.template Apply<kSigmoid>(out);
          __builtin_memcpy(row + v * L, &out, sizeof out);
        });
      });
    };
    const activation::Form<float> form(output.activation);
    if (form.sigmoid) {
      finish.template operator()<true>(form);
    } else {
      finish.template operator()<false>(form);
    }
    if (!whole) {
      // m <= MR and n <= NR, spelled out for the compiler's bounds checks.
      const int rows = args.m < MR ? args.m : MR;
      const int columns = args.n < NR ? args.n : NR;
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < columns; ++j) {
          args.c[i * args.row_stride + j * args.col_stride] = staged[i][j];
        }
      }
    }
    return;
  }
  // A whole tile of a row-major C (every tile but the edges) goes from the registers to C; the
  // scale-free cases of the k blocks (alpha 1, beta 0 or 1) take no multiplication. The case is
  // chosen once, from locals: a store to C may alias `args` as far as the compiler knows, and
  // re-reading and testing beta between the stores slowed short k loops (docs/low-precision.md).
  if (args.m == MR && args.n == NR && args.col_stride == 1) {
    C* const c = args.c;
    const std::int64_t row_stride = args.row_stride;
    const bool scale = args.alpha != 1;
    const bool read_c = args.beta != 0;  // C is only written when beta is 0 (NaN stays out)
    const Acc alpha = Vec::Broadcast(args.alpha);
    const Acc beta = Vec::Broadcast(args.beta);
    // kAdd: C += the tile (alpha 1, beta 1); else alpha and beta as `scale` and `read_c` say.
    auto store = [&]<bool kOverwrite, bool kAdd>() __attribute__((always_inline)) {
      simd::Unroll<MR>([&](auto i) {
        C* const row = c + i * row_stride;
        simd::Unroll<NV>([&](auto v) {
          Acc out = acc[i][v];
          if constexpr (kAdd) {
            out = Vec::Add(out, Vec::LoadAcc(row + v * L));
          } else if constexpr (!kOverwrite) {
            if (scale) out = Vec::MulAdd(Vec::Zero(), out, alpha);
            if (read_c) out = Vec::MulAdd(out, Vec::LoadAcc(row + v * L), beta);
          }
          Vec::Store(row + v * L, out);
        });
      });
    };
    if (!scale && !read_c) {
      store.template operator()<true, false>();
    } else if (!scale && args.beta == 1) {
      store.template operator()<false, true>();
    } else {
      store.template operator()<false, false>();
    }
    return;
  }
  C tile[MR][NR];
  simd::Unroll<MR>([&](auto i) {
    simd::Unroll<NV>([&](auto v) { Vec::Store(&tile[i][v * L], acc[i][v]); });
  });
  WriteTile<Kind, NR>(args, &tile[0][0]);
}

template <class Vec, int MR, int NV, int KU>
constexpr LowpMicroKernelEntry<typename Vec::Kind> LowpEntry() {
  LowpMicroKernelEntry<typename Vec::Kind> entry{Vec::kIsa, MR, NV * Vec::kLanes, KU,
                                                 &LowpMicroKernel<Vec, MR, NV, KU>};
  entry.packed_epilogue = &LowpMicroKernel<Vec, MR, NV, KU, true>;
  if constexpr (requires { Vec::OperandRegisters(NV); }) {
    entry.fits_registers = MR * NV + Vec::OperandRegisters(NV) <= Vec::kRegisters;
  }
  return entry;
}

}  // namespace mmtune::ukernel
