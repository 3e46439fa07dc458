// Fused epilogues (mmtune/types.h: Epilogue): a bias and an activation applied to each C tile as
// it is finished, so that no pass over C of its own follows the GEMM. The vector micro-kernels
// apply it in their registers (microkernel.h: TileEpilogue; s8 the dequantization,
// lowp_microkernel.h: TileDequantize); the functions here serve the other tiles right after
// their kernel wrote them, while the tile is in L1 (AMX tile kernels: during the next tile's k
// steps). One function per C element type and ISA level (epilogue_impl.h, compiled with that
// level's flags in epilogue_<isa>.cc), so that the activations run in its vectors.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "machine/cpu_features.h"
#include "mmtune/types.h"

namespace mmtune {

// The m x n region of C at `c` (element (i, j) at c[i * row_stride + j * col_stride]) =
// act(C + bias) for one bias kind and activation: bias[j] for kPerColumn and bias[i] for
// kPerRow (already at the region's first column or row), none for kNone. s32 adds modulo 2^32.
template <typename C>
using EpilogueFn = void (*)(C* c, std::int64_t row_stride, std::int64_t col_stride,
                            std::int64_t m, std::int64_t n, const C* bias);

// For each bias kind and activation, by their enum values; null for an s32 gelu or silu.
template <typename C>
using EpilogueTable = std::array<std::array<EpilogueFn<C>, 4>, 3>;

// s8 products turned into f32 in the storage that held them (4 bytes each, the s32 C of the
// GEMM): out(i, j) = act(scales[j] * (C(i, j) + offsets[j]) + bias), offsets modulo 2^32 (a
// zero point's share), then `output`'s bias and activation as for an f32 C. Scales and offsets
// are already at the region's first column; the bias at its first column or row.
using DequantizeFn = void (*)(std::int32_t* c, std::int64_t row_stride, std::int64_t col_stride,
                              std::int64_t m, std::int64_t n, const float* scales,
                              const std::int32_t* offsets, const float* bias);
using DequantizeTable = std::array<std::array<DequantizeFn, 4>, 3>;

// A quantized layer's output (the runtime builds it from mmtune/types.h: Dequantization): one
// scale and one s32 offset per column of C, N of each, and the f32 epilogue that follows.
struct DequantizeToF32 {
  const float* column_scales = nullptr;
  const std::int32_t* column_offsets = nullptr;
  Epilogue<float> output;
};

// One ISA level's epilogue functions, a table per C element type. A tile's call goes straight
// to its function: tiles are small, and a dispatch inside each call costs more than relu.
struct EpilogueEntry {
  EpilogueTable<float> f32;
  EpilogueTable<double> f64;
  EpilogueTable<std::int32_t> s32;
  DequantizeTable dequantize;
};

template <typename C>
EpilogueFn<C> FindEpilogue(const EpilogueEntry& entry, BiasKind bias, Activation activation) {
  const auto row = static_cast<std::size_t>(bias);
  const auto column = static_cast<std::size_t>(activation);
  if constexpr (std::is_same_v<C, float>) return entry.f32[row][column];
  if constexpr (std::is_same_v<C, double>) return entry.f64[row][column];
  if constexpr (std::is_same_v<C, std::int32_t>) return entry.s32[row][column];
}

// Where an epilogue runs: whether `activation` exists for C elements of type C (s32: none and
// relu), and a problem's epilogue is well formed (a bias where one is asked for).
template <typename C>
Status CheckEpilogue(const Epilogue<C>& epilogue);
// A dequantizing epilogue is well formed: its scales and offsets are there, its output epilogue
// is (CheckEpilogue), and the s32 GEMM under it has no epilogue of its own and beta = 0 (C holds
// f32 values before the GEMM, not s32 ones to scale).
Status CheckDequantize(const DequantizeToF32& dequantize, const Epilogue<std::int32_t>& s32,
                       std::int32_t beta);

// The epilogue functions of `isa`, the generic ones where this build has none for it.
const EpilogueEntry& EpilogueKernels(IsaLevel isa);

// The bias of the region of C from `row` and `column` on: null where the epilogue has none.
template <typename T>
const T* BiasFrom(const Epilogue<T>& epilogue, std::int64_t row, std::int64_t column) {
  return epilogue.bias_kind == BiasKind::kPerColumn ? epilogue.bias + column
         : epilogue.bias_kind == BiasKind::kPerRow  ? epilogue.bias + row
                                                    : nullptr;
}

// A problem's epilogue bound to the functions of one ISA level: what the drivers call on each
// finished region of C, given that region's first row and column. Inactive (Empty) where the
// problem has none. An s32 C may instead be dequantized to f32 (`dequantize`, not null, in
// place of `epilogue`); other C types ignore it.
template <typename C>
class EpilogueCall {
 public:
  EpilogueCall() = default;
  EpilogueCall(const Epilogue<C>& epilogue, const DequantizeToF32* dequantize, IsaLevel isa);
  EpilogueCall(const Epilogue<C>& epilogue, IsaLevel isa) : EpilogueCall(epilogue, nullptr, isa) {}
  bool Active() const { return fn_ != nullptr || dequantize_fn_ != nullptr; }
  // What Apply applies, for kernels that apply it in their registers instead.
  const Epilogue<C>& terms() const { return epilogue_; }
  const DequantizeToF32* dequantization() const { return dequantize_; }
  void Apply(C* c, std::int64_t row_stride, std::int64_t col_stride, std::int64_t row,
             std::int64_t column, std::int64_t m, std::int64_t n) const {
    if constexpr (std::is_same_v<C, std::int32_t>) {
      if (dequantize_fn_ != nullptr) {
        const Epilogue<float>& out = dequantize_->output;
        dequantize_fn_(c, row_stride, col_stride, m, n, dequantize_->column_scales + column,
                       dequantize_->column_offsets + column, BiasFrom(out, row, column));
        return;
      }
    }
    fn_(c, row_stride, col_stride, m, n, BiasFrom(epilogue_, row, column));
  }

 private:
  Epilogue<C> epilogue_;
  EpilogueFn<C> fn_ = nullptr;
  const DequantizeToF32* dequantize_ = nullptr;
  DequantizeFn dequantize_fn_ = nullptr;
};

}  // namespace mmtune
