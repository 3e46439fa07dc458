// The GEMV templates of the low-precision family (bf16, s8): M = 1 or N = 1, memory-bound, so
// the matrix is streamed once, in place, with no packing. Parameterized by a lowp traits type
// (simd/lowp_vec_*.h) and included only by the per-ISA translation units (ukernels_<isa>_lowp.cc).
// As in lowp_microkernel_impl.h, every out-of-line function here is instantiated with
// ISA-specific types only (no inline helpers shared with other translation units, which the
// linker could merge across ISA flags).
//
//   dot form:  the matrix's rows run along k; each output is a dot product of a row with the
//              vector, kLanes groups per vector step, reduced across lanes at the end;
//   axpy form: the matrix's storage rows run along the output; each storage row is widened to
//              the accumulator type and multiplied by one broadcast vector element.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/lowp_microkernel.h"
#include "kernels/simd/unroll.h"

namespace mmtune::ukernel {

// Which operand is the streamed matrix: A (N = 1) or B (M = 1); the vector is the other one.
// (Partial specializations, not std::conditional: template arguments would drop the vector
// types' attributes.)
template <class Vec, bool kMatrixIsA>
struct LowpGemvOperands;
template <class Vec>
struct LowpGemvOperands<Vec, true> {
  using Mat = typename Vec::Kind::A;
  using X = typename Vec::Kind::B;
  using MatOperand = typename Vec::AOperand;
  using XOperand = typename Vec::BOperand;
};
template <class Vec>
struct LowpGemvOperands<Vec, false> {
  using Mat = typename Vec::Kind::B;
  using X = typename Vec::Kind::A;
  using MatOperand = typename Vec::BOperand;
  using XOperand = typename Vec::AOperand;
};

template <class Vec, bool kMatrixIsA>
struct LowpGemvSides : LowpGemvOperands<Vec, kMatrixIsA> {
  using Kind = typename Vec::Kind;
  using Acc = typename Vec::Acc;
  using typename LowpGemvOperands<Vec, kMatrixIsA>::Mat;
  using typename LowpGemvOperands<Vec, kMatrixIsA>::X;
  using typename LowpGemvOperands<Vec, kMatrixIsA>::MatOperand;
  using typename LowpGemvOperands<Vec, kMatrixIsA>::XOperand;

  static MatOperand LoadMat(const Mat* p) {
    if constexpr (kMatrixIsA) {
      return Vec::LoadAVector(p);
    } else {
      return Vec::LoadB(p);
    }
  }
  static XOperand LoadX(const X* p) {
    if constexpr (kMatrixIsA) {
      return Vec::LoadB(p);
    } else {
      return Vec::LoadAVector(p);
    }
  }
  static Acc Dot(Acc acc, const MatOperand& m, const XOperand& x) {
    if constexpr (kMatrixIsA) {
      return Vec::Dot(acc, m, x);
    } else {
      return Vec::Dot(acc, x, m);
    }
  }
  static Acc Widen(const Mat* p) {
    if constexpr (kMatrixIsA) {
      return Vec::WidenA(p);
    } else {
      return Vec::WidenB(p);
    }
  }

  // One element as the accumulator's scalar type (f32 or s32), exactly.
  template <typename E>
  static typename Kind::Scalar ScalarOf(E value) {
    if constexpr (std::is_same_v<E, BFloat16>) {
      const std::uint32_t bits = static_cast<std::uint32_t>(value.bits) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      return f;
    } else {
      return static_cast<typename Kind::Scalar>(value);
    }
  }
  // sum + x * m, modulo 2^32 for s32 (unsigned arithmetic cannot overflow).
  static typename Kind::C MulAdd(typename Kind::C sum, typename Kind::Scalar x,
                                 typename Kind::Scalar m) {
    if constexpr (std::is_same_v<typename Kind::C, float>) {
      return sum + x * m;
    } else {
      return static_cast<typename Kind::C>(static_cast<std::uint32_t>(sum) +
                                           static_cast<std::uint32_t>(x) *
                                               static_cast<std::uint32_t>(m));
    }
  }
};

// Dot form, R rows at a time with KV vector steps of k in flight per row. The last partial step
// goes through zero-padded copies, so nothing past a row's k values is read.
template <class Vec, bool kMatrixIsA, int R, int KV>
[[gnu::flatten]] void LowpGemvDotRows(std::int64_t k, const typename LowpGemvSides<Vec, kMatrixIsA>::Mat* mat,
                     std::int64_t ld, const typename LowpGemvSides<Vec, kMatrixIsA>::X* x,
                     typename Vec::Kind::C* sums) {
  using S = LowpGemvSides<Vec, kMatrixIsA>;
  using Acc = typename Vec::Acc;
  constexpr int W = Vec::kLanes * Vec::Kind::kGroup;  // k values per vector step
  Acc acc[R][KV];
  simd::Unroll<R>([&](auto r) { simd::Unroll<KV>([&](auto u) { acc[r][u] = Vec::Zero(); }); });
  std::int64_t p = 0;
  for (; p + KV * W <= k; p += KV * W) {
    simd::Unroll<KV>([&](auto u) {
      const typename S::XOperand xv = S::LoadX(x + p + u * W);
      simd::Unroll<R>([&](auto r) {
        acc[r][u] = S::Dot(acc[r][u], S::LoadMat(mat + r * ld + p + u * W), xv);
      });
    });
  }
  for (; p + W <= k; p += W) {
    const typename S::XOperand xv = S::LoadX(x + p);
    simd::Unroll<R>([&](auto r) { acc[r][0] = S::Dot(acc[r][0], S::LoadMat(mat + r * ld + p), xv); });
  }
  if (p < k) {
    const int rest = static_cast<int>(k - p);
    typename S::X x_tail[W];
    typename S::Mat m_tail[W];
    for (int t = 0; t < W; ++t) x_tail[t] = t < rest ? x[p + t] : typename S::X{};
    const typename S::XOperand xv = S::LoadX(x_tail);
    simd::Unroll<R>([&](auto r) {
      for (int t = 0; t < W; ++t) m_tail[t] = t < rest ? mat[r * ld + p + t] : typename S::Mat{};
      acc[r][0] = S::Dot(acc[r][0], S::LoadMat(m_tail), xv);
    });
  }
  simd::Unroll<R>([&](auto r) {
    Acc total = acc[r][0];
    simd::Unroll<KV - 1>([&](auto u) { total = Vec::Add(total, acc[r][u + 1]); });
    sums[r] = Vec::ReduceAdd(total);
  });
}

template <class Vec, bool kMatrixIsA, int R, int KV>
void LowpGemvDot(std::int64_t rows, std::int64_t k,
                 const typename LowpGemvSides<Vec, kMatrixIsA>::Mat* mat, std::int64_t ld,
                 const typename LowpGemvSides<Vec, kMatrixIsA>::X* x,
                 typename Vec::Kind::C* sums) {
  std::int64_t r = 0;
  for (; r + R <= rows; r += R) LowpGemvDotRows<Vec, kMatrixIsA, R, KV>(k, mat + r * ld, ld, x, sums + r);
  for (; r < rows; ++r) LowpGemvDotRows<Vec, kMatrixIsA, 1, KV>(k, mat + r * ld, ld, x, sums + r);
}

// Axpy form: KR storage rows per pass over the sums, NV vectors of sums per step, so the matrix
// is read sequentially and the sums stay in L1/L2. Outputs past the last whole vector are
// computed one by one.
template <class Vec, bool kMatrixIsA, int KR, int NV>
[[gnu::flatten]] void LowpGemvAxpy(std::int64_t k, std::int64_t rows,
                  const typename LowpGemvSides<Vec, kMatrixIsA>::X* x, std::int64_t incx,
                  const typename LowpGemvSides<Vec, kMatrixIsA>::Mat* mat, std::int64_t ld,
                  typename Vec::Kind::C* sums) {
  using S = LowpGemvSides<Vec, kMatrixIsA>;
  using Acc = typename Vec::Acc;
  using Scalar = typename Vec::Kind::Scalar;
  constexpr int L = Vec::kLanes;
  auto pass = [&]<int kRows>(std::int64_t p) __attribute__((always_inline)) {
    Scalar xs[kRows];
    Acc xv[kRows];
    const typename S::Mat* line[kRows];
    simd::Unroll<kRows>([&](auto u) {
      xs[u] = S::ScalarOf(x[(p + u) * incx]);
      xv[u] = Vec::Broadcast(xs[u]);
      line[u] = mat + (p + u) * ld;
    });
    std::int64_t j = 0;
    for (; j + NV * L <= rows; j += NV * L) {
      simd::Unroll<NV>([&](auto v) {
        Acc sum = Vec::LoadAcc(sums + j + v * L);
        simd::Unroll<kRows>([&](auto u) { sum = Vec::MulAdd(sum, xv[u], S::Widen(line[u] + j + v * L)); });
        Vec::Store(sums + j + v * L, sum);
      });
    }
    for (; j + L <= rows; j += L) {
      Acc sum = Vec::LoadAcc(sums + j);
      simd::Unroll<kRows>([&](auto u) { sum = Vec::MulAdd(sum, xv[u], S::Widen(line[u] + j)); });
      Vec::Store(sums + j, sum);
    }
    for (; j < rows; ++j) {
      simd::Unroll<kRows>([&](auto u) { sums[j] = S::MulAdd(sums[j], xs[u], S::ScalarOf(line[u][j])); });
    }
  };
  std::int64_t p = 0;
  for (; p + KR <= k; p += KR) pass.template operator()<KR>(p);
  for (; p < k; ++p) pass.template operator()<1>(p);
}

// Registry row: one LowpGemvKernelEntry per (R, NV): R rows (dot) or storage rows (axpy) at a
// time, NV vectors along k (dot) or along the output (axpy) per step.
template <class Vec, int R, int NV>
constexpr LowpGemvKernelEntry<typename Vec::Kind> LowpGemvEntry() {
  return {Vec::kIsa,
          R,
          NV * Vec::kLanes,
          &LowpGemvDot<Vec, true, R, NV>,
          &LowpGemvDot<Vec, false, R, NV>,
          &LowpGemvAxpy<Vec, true, R, NV>,
          &LowpGemvAxpy<Vec, false, R, NV>};
}

}  // namespace mmtune::ukernel
